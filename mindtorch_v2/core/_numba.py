"""numba, where installed (the `fast` extra), for the few cpu lowerings that gain from a compiled loop.

Imported lazily: `import numba` costs ~0.3 s, which a program that never reaches such a lowering should not pay.
"""
import importlib
import importlib.util


def available():
    """Whether numba is installed."""
    return importlib.util.find_spec("numba") is not None


def njit(fn, cache=True, **options):
    """fn compiled by numba.njit (None without numba). error_model="numpy": 1/0 is inf, as the ufuncs give, never
    an exception. The on-disk cache (next to the module, or numba's user-wide directory on a read-only install)
    saves the compile in later processes; where no directory is writable, it compiles per process. cache=False
    for a function with no source file (jit's generated kernels)."""
    if not available():
        return None
    numba = importlib.import_module("numba")
    if cache:
        try:
            return numba.njit(error_model="numpy", cache=True, **options)(fn)
        except RuntimeError:
            pass
    return numba.njit(error_model="numpy", cache=False, **options)(fn)


def reshape_errors():
    """What a compiled function that reshapes its arrays raises, before it writes anything, for a
    non-contiguous one: numba's typing error, or the reshape's own at run time."""
    return importlib.import_module("numba.core.errors").TypingError, NotImplementedError
