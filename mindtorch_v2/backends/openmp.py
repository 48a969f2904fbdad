"""torch.backends.openmp: True when an OpenMP runtime is loaded in the process (NumPy's BLAS may use one)."""
from ._blas import loaded

__all__ = ["is_available"]


def is_available():
    return loaded("user_api", "openmp")
