"""torch.backends: the switches scripts set, answering truthfully for a NumPy-on-CPU package.

The cuda/cudnn/mps flags are accepted and kept (nothing here reads them: there is no GPU); mkl/openmp report
what the BLAS NumPy is linked to actually is; opt_einsum reports NumPy's own contraction-path optimizer,
which core's einsum uses.
"""
from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
