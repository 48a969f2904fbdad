"""Buffers on transparent huge pages, for the big buffers a compiled program uses on every call: the weights and
grads torch.compile's programs update in place, and a jit program's arena of intermediates.

A GEMM reading a weight matrix that a step's other work has pushed out of the caches pays a TLB miss per 4 KiB
page as well as the cache misses (a VM's nested page tables make each miss a long walk): (128, 784) x
(784, 512) float32 ran 1069 us warm and 1183 us with its operands flushed from cache on 4 KiB pages, 1052 us
on 2 MiB pages. NumPy advises huge pages for its own allocations of 4 MiB and more; these buffers are smaller
but live as long as the program that reuses them. Each 2 MiB page of a buffer is a huge page where the buffer
fills at least three quarters of it (at most a quarter of a page wasted: a 1.5 MiB weight gets one, a 1 MiB one
none, a 2.2 MiB one one huge page and its last 0.2 MiB on small pages). Where the kernel offers no transparent
huge pages (or the platform has no madvise) `empty` returns None and NumPy allocates.

An array here is a view of an anonymous private mapping (a `_Pages`, its `.base`), aligned to 2 MiB; the
mapping is unmapped when the array is freed. `owned` tells a donation check that such an array's memory is
its own, as `base is None` does for an array NumPy allocated.
"""
import math
import mmap
import sys

import numpy as np

__all__ = ["AVAILABLE", "empty", "empty_many", "owned", "on_huge_pages", "worth"]

_HUGE = 2 << 20
_ALIGN = 64  # (a buffer within a shared mapping starts on a cache line, as NumPy's do)


def _thp_enabled():
    """Whether the kernel gives transparent huge pages to a mapping that asks (its mode: always or madvise)."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            mode = f.read()
    except OSError:
        return False
    return "[always]" in mode or "[madvise]" in mode


AVAILABLE = hasattr(mmap, "MADV_HUGEPAGE") and hasattr(mmap, "MAP_PRIVATE") and _thp_enabled()


class _Pages(mmap.mmap):
    """An anonymous private mapping advised onto huge pages: the base of the arrays made here."""

    __slots__ = ()


def _huge_bytes(nbytes):
    """How much of a buffer of nbytes, from a 2 MiB boundary, goes on huge pages: its whole 2 MiB pages, and its
    last one where it fills three quarters of it."""
    whole = nbytes // _HUGE * _HUGE
    return whole + _HUGE if (nbytes - whole) * 4 >= _HUGE * 3 else whole


def worth(nbytes):
    """Whether a buffer of nbytes would get huge pages here."""
    return AVAILABLE and _huge_bytes(nbytes) > 0


def _mapping(nbytes):
    """(a _Pages of at least nbytes from a 2 MiB boundary, the offset of that boundary in it)."""
    # (virtual room for every 2 MiB page the buffer touches from a boundary: untouched pages cost no memory)
    pages = _Pages(-1, -(-nbytes // _HUGE) * _HUGE + _HUGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    probe = np.frombuffer(pages, np.uint8, count=1)  # (its address; the probe lets go of the mapping at once)
    offset = -probe.ctypes.data % _HUGE
    del probe
    try:
        pages.madvise(mmap.MADV_HUGEPAGE, offset, _huge_bytes(nbytes))
    except OSError:  # (a kernel or sandbox refusing the advice: the memory is good, only not on huge pages)
        pass
    return pages, offset


def empty(shape, dtype):
    """A new uninitialized C-ordered array on huge pages, or None (too small to be `worth` it, or no huge pages
    here)."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if not worth(nbytes):
        return None
    pages, offset = _mapping(nbytes)
    return np.ndarray(shape, dtype, buffer=pages, offset=offset)


def empty_many(specs):
    """New uninitialized C-ordered arrays of these (shape, dtype)s, on one huge-page mapping where together they
    are `worth` it, else NumPy's."""
    specs = [(tuple(shape), np.dtype(dtype)) for shape, dtype in specs]
    sizes = [-(-math.prod(shape) * dtype.itemsize // _ALIGN) * _ALIGN for shape, dtype in specs]
    if not worth(sum(sizes)):
        return [np.empty(shape, dtype) for shape, dtype in specs]
    pages, offset = _mapping(sum(sizes))
    out = []
    for (shape, dtype), size in zip(specs, sizes):
        out.append(np.ndarray(shape, dtype, buffer=pages, offset=offset))
        offset += size
    return out


def on_huge_pages(buf):
    """Whether buf is an array made here by `empty`."""
    return type(buf.base) is _Pages


def owned(buf):
    """Whether buf's memory is its own: NumPy's (no base), or a mapping made here by `empty` that nothing else
    holds. (getrefcount counts the array's own reference, `base` and its argument.)"""
    base = buf.base
    return base is None or (type(base) is _Pages and sys.getrefcount(base) <= 3)
