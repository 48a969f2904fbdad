"""The two view primitives functionalization lowers to: `as_strided` reads a view of a base's
row-major layout; `as_strided_scatter` returns a new base with the view region replaced.
"""
import builtins

import numpy as np

from ..primitive import Primitive, zeros_like as _zeros_aval
from . import _family
from ._family import all_front, move_to_front
from .creation import arange
from .indexing import index_add
from .shape import _operand, broadcast_to, reshape

__all__ = ["as_strided_p", "as_strided_scatter_p", "as_strided", "as_strided_scatter"]

_as_strided_np = np.lib.stride_tricks.as_strided
_prod = _family.prod


def _check_strided(name, base, shape, strides, offset):
    if len(shape) != len(strides):
        raise ValueError(f"{name}: shape {shape} and strides {strides} have different lengths")
    if builtins.any(s < 0 for s in shape) or builtins.any(st < 0 for st in strides) or offset < 0:
        raise ValueError(f"{name}: shape, strides and offset must be non-negative, got {shape}, {strides}, {offset}")
    if _prod(shape) == 0:
        return
    last = offset + builtins.sum((s - 1) * st for s, st in zip(shape, strides))
    if last >= base.size:
        raise ValueError(
            f"{name}: view (shape {shape}, strides {strides}, offset {offset}) reaches element {last} "
            f"of a base with only {base.size} elements")


def _as_strided_meta(base, *, shape, strides, offset):
    _check_strided("as_strided", base, shape, strides, offset)
    return shape, base.dtype


def _flat_view(flat, shape, strides, offset):
    """A read-only strided view of a contiguous 1-D buffer (the ndarray constructor: ~10x
    cheaper than numpy's as_strided helper, which matters on the eager view-read path)."""
    item = flat.itemsize
    if not flat.size or 0 in shape:  # an empty view may sit at any offset (torch's x[3:, 4:])
        return _as_strided_np(flat[:0], shape, tuple(st * item for st in strides), writeable=False)
    view = np.ndarray(shape, flat.dtype, buffer=flat, offset=offset * item,
                      strides=tuple(st * item for st in strides))
    view.flags.writeable = False
    return view


def _strided_positions(base, shape, strides, offset):
    """The flat base position of every view element, as a constant int64 array."""
    return as_strided_p.bind(arange(_prod(base.shape), device=base.device), shape=shape, strides=strides, offset=offset)


def _as_strided_vjp(g, out, base, *, shape, strides, offset):
    # overlapping views (stride 0) send several view elements to one base element: sum them
    pos = reshape(_strided_positions(base, shape, strides, offset), (-1,))
    flat = index_add(reshape(_zeros_aval(base), (-1,)), pos, reshape(g, (-1,)), axis=0)
    return reshape(flat, base.shape)


as_strided_p = Primitive("as_strided", _as_strided_meta, linear=True,
                         vjp=(_as_strided_vjp,))


def _strided_batch_params(base, shape, strides, offset):
    """Batch element b's base is the b-th row-major block of the batched base."""
    n = _prod(base.shape[1:])
    return {"shape": (base.shape[0],) + shape, "strides": (n,) + strides, "offset": offset}


as_strided_p.batch = lambda vals, bdims, *, shape, strides, offset: (as_strided_p.bind(
    move_to_front(vals[0], bdims[0]), **_strided_batch_params(move_to_front(vals[0], bdims[0]), shape, strides,
                                                              offset)), 0)


def _as_strided_direct(e):
    """jit: the view built straight on the base's buffer, its byte strides worked out once (a torch.compile'd
    program reads every transposed weight through one of these)."""
    base, p = e.invars[0], e.params
    item = base.dtype.np.itemsize
    shape, strides, offset = p["shape"], tuple(st * item for st in p["strides"]), p["offset"] * item
    if 0 in shape or 0 in base.shape:
        return None

    def view(base):
        v = np.ndarray(shape, base.dtype, buffer=base if base.flags.c_contiguous else np.ascontiguousarray(base),
                       offset=offset, strides=strides)
        v.flags.writeable = False
        return v
    return view


@as_strided_p.def_impl("cpu")
@_family.specialized(_as_strided_direct)
def _as_strided_cpu(base, *, shape, strides, offset):
    return _flat_view(np.ascontiguousarray(base).reshape(-1), shape, strides, offset)


def _as_strided_scatter_meta(base, src, *, shape, strides, offset, donate=False):
    _check_strided("as_strided_scatter", base, shape, strides, offset)
    if src.shape != shape:
        raise ValueError(f"as_strided_scatter: source shape {src.shape} does not match the view shape {shape}")
    _family.same_dtype("as_strided_scatter", base, src)
    return base.shape, base.dtype


def _as_strided_scatter_jvp(ts, out, base, src, *, shape, strides, offset, donate=False):
    # written out (not derived from linear=True) because a tangent is never donated
    tb = _zeros_aval(base) if ts[0] is None else ts[0]
    tsrc = _zeros_aval(src) if ts[1] is None else ts[1]
    return as_strided_scatter_p.bind(tb, tsrc, shape=shape, strides=strides, offset=offset)


# `donate=True` says the caller (the eager Storage) is the base buffer's sole owner, so the
# lowering may write the view region in place: O(view) instead of O(base). Rules never donate.
as_strided_scatter_p = Primitive(
    "as_strided_scatter", _as_strided_scatter_meta, linear=True,
    jvp=_as_strided_scatter_jvp,
    vjp=(lambda g, out, base, src, *, shape, strides, offset, donate=False: as_strided_scatter_p.bind(
        g, _zeros_aval(src), shape=shape, strides=strides, offset=offset),
         lambda g, out, base, src, *, shape, strides, offset, donate=False: as_strided_p.bind(
        g, shape=shape, strides=strides, offset=offset)))


def _as_strided_scatter_batch(vals, bdims, *, shape, strides, offset, donate=False):
    (base, src), _ = all_front(vals, bdims)
    return as_strided_scatter_p.bind(base, src, **_strided_batch_params(base, shape, strides, offset)), 0


as_strided_scatter_p.batch = _as_strided_scatter_batch


@as_strided_scatter_p.def_impl("cpu")
def _as_strided_scatter_cpu(base, src, *, shape, strides, offset, donate=False):
    # The one place a buffer is written: a fresh copy of the base, or with donate=True the
    # base itself, which its owner guarantees nobody else can observe.
    if donate and base.flags.c_contiguous and base.flags.writeable:
        out = base
    else:
        out = np.array(base, copy=True, order="C")
    flat = out.reshape(-1)
    item = flat.itemsize
    if flat.size and 0 not in shape:
        view = np.ndarray(shape, flat.dtype, buffer=flat, offset=offset * item,
                          strides=tuple(st * item for st in strides))
        view[...] = src
    return out


def as_strided(base, shape, strides, offset=0):
    """A view of base's row-major elements: element i is at offset + sum(i_k * strides_k)."""
    base = _operand(base)
    return as_strided_p.bind(base, shape=tuple(int(s) for s in shape),
                             strides=tuple(int(s) for s in strides), offset=int(offset))


def as_strided_scatter(base, src, shape, strides, offset=0):
    """A new base equal to `base` with the view (shape, strides, offset) replaced by src."""
    base = _operand(base)
    src = _operand(src)
    if src.dtype is not base.dtype:
        src = _family.cast(src, base.dtype)
    shape = tuple(int(s) for s in shape)
    if src.shape != shape:
        src = broadcast_to(src, shape)
    return as_strided_scatter_p.bind(base, src, shape=shape, strides=tuple(int(s) for s in strides),
                                     offset=int(offset))
