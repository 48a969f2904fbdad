"""glibc's malloc thresholds, set once at import so that the arrays of a training step reuse memory the process
already has rather than fault fresh pages in.

Every op's NumPy result is a new allocation, freed a moment or a step later. glibc starts with a 128 KiB mmap
threshold (bigger blocks are mapped and unmapped on each allocation) and a trim threshold (free memory at the top
of the heap beyond it goes back to the kernel), and raises both as it sees big blocks freed, up to 32 and 64
MiB. Until it has, and after any user setting that stops that adaptation, the next step faults the same pages
back in: a tiny GPT's eager training step (2 layers, 64 dims, 8 x 32 tokens) faulted ~700 pages a step and spent
1.4 ms of its 13.5 ms in the kernel. Setting glibc's own ceilings from the start (M_MMAP_THRESHOLD 32 MiB,
M_TRIM_THRESHOLD 64 MiB) gives the adapted state at once: 1 fault a step, 11.1 ms. Blocks up to 32 MiB come from
the heap, and up to 64 MiB of freed memory stays with the process per glibc arena (each thread that allocates may
have one, up to 8 per core), as glibc itself keeps once adapted.

(A top pad instead, tried first, stops glibc's adaptation without raising the mmap threshold: every block over 128
KiB was then mapped afresh, and a per-example-gradient step faulted 220,000 pages, 2x slower.)

glibc only (Linux): elsewhere, or where the user has set any of these (MALLOC_MMAP_THRESHOLD_,
MALLOC_TRIM_THRESHOLD_, MALLOC_TOP_PAD_, or glibc.malloc.* in GLIBC_TUNABLES), the allocator is left as it is.
"""
import ctypes
import os
import sys

__all__ = ["tune_heap"]

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # (glibc's malloc.h)
MMAP_THRESHOLD = 32 << 20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit: the most its adaptation reaches
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD  # what its adaptation sets beside it

_USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")


def tune_heap():
    """Set glibc's mmap and trim thresholds to the ceilings of its own adaptation; whether they were set."""
    if (not sys.platform.startswith("linux") or any(name in os.environ for name in _USER_SETTINGS)
            or "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", "")):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # (glibc's; musl and others have none)
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
