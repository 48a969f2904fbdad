"""What BLAS and OpenMP runtimes NumPy has loaded, as threadpoolctl sees them."""
import threadpoolctl

__all__ = ["loaded"]


def loaded(key, value):
    """Whether a loaded thread-pool library has info[key] == value (e.g. internal_api "mkl")."""
    return any(info.get(key) == value for info in threadpoolctl.threadpool_info())
