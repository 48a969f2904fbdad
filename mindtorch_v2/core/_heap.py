"""glibc's heap padding, set once at import so that the arrays of a training step reuse memory the process already
has rather than fault fresh pages in.

Every op's NumPy result is a new allocation, freed a moment or a step later. glibc returns the free memory at the
top of its heap to the kernel (trimming it) as soon as it exceeds a small threshold, and the next step's
allocations fault the same pages back in: a tiny GPT's eager training step (2 layers, 64 dims, 8 x 32 tokens)
faulted ~700 pages a step and spent 1.4 ms of its 13.5 ms in the kernel. With a 16 MiB top pad (64 MiB measured
the same) the heap keeps that much free memory at its top: no faults, 11.4 ms a step. Memory a step touches and
frees stays with the process, up to the pad per glibc arena: each thread that allocates may have an arena of its
own (up to 8 per core), so a program allocating from many threads keeps more (pages never touched cost nothing).

glibc only (Linux): elsewhere, or where the user has set the top pad (MALLOC_TOP_PAD_, or glibc.malloc.top_pad in
GLIBC_TUNABLES), the allocator is left as it is.
"""
import ctypes
import os
import sys

__all__ = ["pad_heap"]

_M_TOP_PAD = -2  # (glibc's malloc.h)
TOP_PAD = 16 << 20


def pad_heap(nbytes=TOP_PAD):
    """Set glibc's M_TOP_PAD to nbytes; whether it was set."""
    if (not sys.platform.startswith("linux") or "MALLOC_TOP_PAD_" in os.environ
            or "glibc.malloc.top_pad" in os.environ.get("GLIBC_TUNABLES", "")):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # (glibc's; musl and others have none)
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return mallopt(_M_TOP_PAD, nbytes) == 1
