"""torch.backends.cpu: the SIMD level the CPU kernels were built for (NumPy dispatches at run time)."""
__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    return "DEFAULT"
