"""torch.backends.mkl: True only when NumPy's BLAS is Intel MKL."""
from ._blas import loaded

__all__ = ["is_available"]


def is_available():
    return loaded("internal_api", "mkl")
