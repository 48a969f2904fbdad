"""Indexing primitives: take / index_add (whole slices along an axis), gather /
scatter_add / scatter (torch.gather-style, element by element), sort; and the
composites built on them: argsort, topk, `getitem` (NumPy indexing with
ints, slices, None, Ellipsis, integer arrays and concrete boolean masks), and its
writing forms index_put (set or accumulate) and masked_scatter.
"""
import builtins
import functools

import numpy as np

from .. import _numba
from .. import dtypes as dt
from ..array import Array as _Array
from ._family import all_front, move_to_front
from ..primitive import Primitive, Tracer
from . import _family
from .creation import arange, asarray
from .elementwise import add, cast, eq, lt, maximum, minimum, mul, sub, where
from ._family import normalize_axis
from .reduction import cumsum, max as _max, min as _min, prod as _prod
from .shape import broadcast_to, expand_dims, reshape, squeeze, static_slice, transpose

__all__ = [
    "take_p", "index_add_p", "take", "index_add", "gather_p", "scatter_add_p", "scatter_p", "gather",
    "take_along_axis", "scatter_add", "scatter", "sort_p", "sort", "sort_with_indices", "argsort", "topk", "getitem", "index_put",
    "masked_scatter", "at_update", "check_index_p", "check_index",
]


_zeros = _family.zeros_like


def _require_int(name, idx):
    if idx.dtype.category != dt.INT:
        raise TypeError(f"{name}: indices must be an integer array, got {idx.dtype.name}")


def _out_of_range(idx, lo, hi):
    """The first value of idx outside [lo, hi), or None."""
    if idx.size and (idx.min() < lo or idx.max() >= hi):
        return int(idx[(idx < lo) | (idx >= hi)].flat[0])
    return None


def _check_bounds(name, idx, size, axis):
    bad = _out_of_range(idx, -size, size)
    if bad is not None:
        raise IndexError(f"{name}: index {bad} is out of bounds for axis {axis} with size {size}")


# ---------------------------------------------------------------------------
# check_index: a bounds check of index values that a traced program keeps (torch.compile, jit): the torch
# face checks concrete indices itself and refuses negative ones where PyTorch does (gather, embedding,
# cross_entropy's targets), which take and gather would wrap; a traced index is checked by this op when the
# program runs. The identity on idx, else `error` (IndexError or RuntimeError) with message.format(bad value).


def _check_index_meta(idx, *, lo, hi, error, message):
    _require_int("check_index", idx)
    if error not in ("IndexError", "RuntimeError"):
        raise ValueError(f"check_index: error must be 'IndexError' or 'RuntimeError', got {error!r}")
    return idx.shape, idx.dtype


check_index_p = Primitive("check_index", _check_index_meta)
check_index_p.batch = lambda vals, bdims, **params: (check_index_p.bind(vals[0], **params), bdims[0])


@check_index_p.def_impl("cpu")
def _check_index_cpu(idx, *, lo, hi, error, message):
    bad = _out_of_range(idx, lo, hi)
    if bad is not None:
        raise (IndexError if error == "IndexError" else RuntimeError)(message.format(bad))
    return idx


def check_index(idx, *, lo, hi, error="IndexError", message="index {} is out of bounds"):
    """idx, checked when it is computed: every value in [lo, hi), else `error` (see check_index_p)."""
    return check_index_p.bind(idx, lo=int(lo), hi=int(hi), error=error, message=message)


# ---------------------------------------------------------------------------
# take / index_add: whole slices along one axis


def _take_meta(x, idx, *, axis):
    _require_int("take", idx)
    if not 0 <= axis < max(x.ndim, 1) or x.ndim == 0:
        raise IndexError(f"take: axis {axis} is out of range for an array of {x.ndim} dimensions")
    return x.shape[:axis] + idx.shape + x.shape[axis + 1:], x.dtype


take_p = Primitive(
    "take", _take_meta, linear=True, vjp_reads=(1,),
    vjp=(lambda g, out, x, idx, *, axis: index_add_p.bind(_zeros(x), idx, g, axis=axis), None))


def _merge_rows(x, axis, idx):
    """For batched indices: x (B, ...) with `axis` (logical) merged into the batch axis, and the
    indices offset so that row b * n + i is x[b, ..., i, ...]. Returns (rows, flat indices, perm)."""
    b, n = x.shape[0], x.shape[axis + 1]
    if type(idx) is _Array and idx._buf is not None:  # concrete: an index must not reach another batch row
        _check_bounds("take", np.asarray(idx), n, axis)
    perm = (0, axis + 1) + tuple(d for d in range(1, len(x.shape)) if d != axis + 1)
    rows = reshape(transpose(x, perm), (b * n,) + tuple(x.shape[d] for d in perm[2:]))
    idx = where(lt(idx, 0), add(idx, n), idx)
    offsets = reshape(mul(arange(b, device=idx.device), n), (b,) + (1,) * (len(idx.shape) - 1))
    return rows, add(idx, offsets), perm


def _take_batch(vals, bdims, *, axis):
    if bdims[1] is None:
        return take_p.bind(move_to_front(vals[0], bdims[0]), vals[1], axis=axis + 1), 0
    (x, idx), _ = all_front(vals, bdims)
    rows, flat, _ = _merge_rows(x, axis, idx)
    out = take_p.bind(rows, flat, axis=0)  # (B, *idx, *before, *after)
    ni = len(idx.shape) - 1
    perm = (0,) + tuple(range(1 + ni, 1 + ni + axis)) + tuple(range(1, 1 + ni)) + tuple(
        range(1 + ni + axis, len(out.shape)))
    return transpose(out, perm), 0


take_p.batch = _take_batch


@take_p.def_impl("cpu")
def _take_cpu(x, idx, *, axis):
    _check_bounds("take", idx, x.shape[axis], axis)
    return np.take(x, idx, axis=axis)


def _index_add_meta(x, idx, updates, *, axis):
    _require_int("index_add", idx)
    if not 0 <= axis < x.ndim:
        raise IndexError(f"index_add: axis {axis} is out of range for an array of {x.ndim} dimensions")
    expect = x.shape[:axis] + idx.shape + x.shape[axis + 1:]
    if updates.shape != expect:
        raise ValueError(f"index_add: updates shape {updates.shape} does not match the expected {expect}")
    _family.same_dtype("index_add", x, updates)
    return x.shape, x.dtype


index_add_p = Primitive(
    "index_add", _index_add_meta, linear=True, vjp_reads=(1,),
    vjp=(lambda g, out, x, idx, u, *, axis: g, None,
         lambda g, out, x, idx, u, *, axis: take_p.bind(g, idx, axis=axis)))


def _index_add_batch(vals, bdims, *, axis):
    if bdims[1] is None:
        (x, u), _ = all_front([vals[0], vals[2]], [bdims[0], bdims[2]])
        return index_add_p.bind(x, vals[1], u, axis=axis + 1), 0
    (x, idx, u), b = all_front(vals, bdims)
    rows, flat, perm = _merge_rows(x, axis, idx)
    ni = len(idx.shape) - 1
    uperm = (0,) + tuple(range(1 + axis, 1 + axis + ni)) + tuple(range(1, 1 + axis)) + tuple(
        range(1 + axis + ni, len(u.shape)))
    u = transpose(u, uperm)
    lead = 1
    for d in u.shape[:1 + ni]:
        lead *= d
    u = reshape(u, (lead,) + tuple(rows.shape[1:]))  # (not -1: it cannot be inferred when u is empty)
    out = index_add_p.bind(rows, reshape(flat, (-1,)), u, axis=0)
    out = reshape(out, (b, x.shape[axis + 1]) + tuple(rows.shape[1:]))
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return transpose(out, tuple(inv)), 0


index_add_p.batch = _index_add_batch


def _add_rows_loop(idx, rows, acc):
    for j in range(idx.shape[0]):
        i = idx[j]
        for c in range(rows.shape[1]):
            acc[i, c] += rows[j, c]


@functools.cache
def _add_rows_kernel():
    """_add_rows_loop compiled by numba (None without numba)."""
    return _numba.njit(_add_rows_loop)


def _rows_summed(idx, rows, n):
    """acc[i] = the sum of rows[j] over j with idx[j] == i, in float64, added in j order (as add.at adds).
    With numba one loop in j order (an embedding's gradient, 256 rows of 64: ~5 us); else a stable sort and a
    segmented sum (reduceat, ~20x add.at)."""
    kernel = _add_rows_kernel() if rows.size >= 1024 else None
    if kernel is not None:
        acc = np.zeros((n,) + rows.shape[1:], np.float64)
        kernel(idx, np.ascontiguousarray(rows).reshape(len(idx), -1), acc.reshape(n, -1))
        return acc
    order = np.argsort(idx, kind="stable")
    sorted_idx = idx[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_idx[1:] != sorted_idx[:-1])))
    acc = np.zeros((n,) + rows.shape[1:], np.float64)
    acc[sorted_idx[starts]] = np.add.reduceat(rows[order].astype(np.float64), starts, axis=0)
    return acc


@index_add_p.def_impl("cpu")
def _index_add_cpu(x, idx, updates, *, axis):
    _check_bounds("index_add", idx, x.shape[axis], axis)
    if x.dtype.kind == "f":  # the updates summed exactly (float64), added to x with one rounding: the same
        # numbers whichever path runs (vmap's batched call takes the general one)
        if x.ndim == 1 and idx.ndim == 1:  # bincount is ~10x faster than add.at
            acc = np.bincount(idx % x.shape[0], weights=updates, minlength=x.shape[0])
        elif idx.ndim == 1 and idx.size:  # rows (an embedding's gradient): one segmented sum, ~20x add.at
            if axis == 0:  # (np.moveaxis costs ~3 us a call)
                acc = _rows_summed(idx % x.shape[0], updates, x.shape[0])
            else:
                acc = np.moveaxis(_rows_summed(idx % x.shape[axis], np.moveaxis(updates, axis, 0), x.shape[axis]),
                                  0, axis)
        else:
            acc = np.zeros(x.shape, np.float64)
            np.add.at(acc, (slice(None),) * axis + (idx,), updates)
        return (x + acc).astype(x.dtype)
    out = np.array(x, copy=True)
    np.add.at(out, (slice(None),) * axis + (idx,), updates)
    return out


def take(x, indices, axis=None):
    """Slices of x at `indices` along `axis` (of the flattened x when None); negative indices wrap."""
    x = _family.as_operand(x)
    idx = _index_array(indices, x.device)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    return take_p.bind(x, idx, axis=normalize_axis(axis, x.ndim, "take"))


def index_add(x, indices, updates, axis=0):
    """x plus `updates` added at `indices` along `axis` (duplicates accumulate)."""
    x, updates = _family.promote("index_add", x, updates)
    idx = _index_array(indices, x.device)
    axis = normalize_axis(axis, x.ndim, "index_add")
    want = x.shape[:axis] + idx.shape + x.shape[axis + 1:]
    if updates.shape != want:
        updates = broadcast_to(updates, want)
    return index_add_p.bind(x, idx, updates, axis=axis)


def _index_array(indices, device):
    """Indices as an integer array; lists and numpy arrays are made on `device` (x's device)."""
    idx = indices if _family.is_arraylike(indices) else asarray(indices, device=device)
    if idx.dtype.category != dt.INT:
        raise TypeError(f"indices must be integers, got {idx.dtype.name}")
    return idx


# ---------------------------------------------------------------------------
# gather / scatter_add / scatter: torch.gather semantics along one axis


def _gather_like_meta(name, x, idx, axis):
    _require_int(name, idx)
    if idx.ndim != x.ndim:
        raise ValueError(f"{name}: index must have as many dimensions as the input ({x.ndim}), got {idx.ndim}")
    if not 0 <= axis < max(x.ndim, 1):
        raise IndexError(f"{name}: axis {axis} is out of range for an array of {x.ndim} dimensions")
    for d, (a, b) in enumerate(zip(idx.shape, x.shape)):
        if d != axis and a > b:
            raise ValueError(f"{name}: index shape {idx.shape} exceeds input shape {x.shape} at dimension {d}")


def _gather_meta(x, idx, *, axis):
    _gather_like_meta("gather", x, idx, axis)
    return idx.shape, x.dtype


def _grid(idx, axis):
    """The full numpy index tuple addressing x[..., idx, ...] element by element."""
    grids = list(np.indices(idx.shape, sparse=True))
    grids[axis] = idx
    return tuple(grids)


gather_p = Primitive(
    "gather", _gather_meta, linear=True, vjp_reads=(1,),
    vjp=(lambda g, out, x, idx, *, axis: scatter_add_p.bind(_zeros(x), idx, g, axis=axis), None))


def _as_1d(*arrays):
    """0-d operands (torch allows them, axis 0) as 1-element vectors for the numpy lowerings."""
    return [a.reshape(1) for a in arrays]


def _along_axis_batch(prim):
    """gather / scatter / scatter_add: index has x's rank, so the batch axis just leads both."""
    def rule(vals, bdims, *, axis):
        args, b = all_front(vals, bdims)
        if len(args[0].shape) == 1:  # 0-d operands
            out = prim.bind(*[reshape(a, (b, 1)) for a in args], axis=1)
            return reshape(out, (b,)), 0
        return prim.bind(*args, axis=axis + 1), 0
    return rule


gather_p.batch = _along_axis_batch(gather_p)


def _on_grid(name, body):
    """jit's specialization of gather / scatter_add for an equation's avals: the index grid built once (np.indices
    costs ~5 us a call), the bounds checked per call, then body(x, index tuple, unique, *rest), `unique` when
    each index addresses a position of its own (one index per line along the axis). None for 0-d operands."""
    def rule(e):
        x, idx = e.invars[:2]
        axis = e.params["axis"]
        if not x.shape:
            return None
        grids = tuple(np.indices(idx.shape, sparse=True))
        before, after, size, unique = grids[:axis], grids[axis + 1:], x.shape[axis], idx.shape[axis] == 1

        def run(x, idx, *rest):
            _check_bounds(name, idx, size, axis)
            return body(x, (*before, idx, *after), unique, *rest)
        return run
    return rule


@gather_p.def_impl("cpu")
@_family.specialized(_on_grid("gather", lambda x, where, unique: x[where]))
def _gather_cpu(x, idx, *, axis):
    if x.ndim == 0:
        return _gather_cpu(*_as_1d(x, idx), axis=0).reshape(())
    _check_bounds("gather", idx, x.shape[axis], axis)
    return x[_grid(idx, axis)]


def _scatter_meta(name):
    def meta(x, idx, updates, *, axis):
        _gather_like_meta(name, x, idx, axis)
        if updates.shape != idx.shape:
            raise ValueError(f"{name}: updates shape {updates.shape} does not match index shape {idx.shape}")
        _family.same_dtype(name, x, updates)
        return x.shape, x.dtype
    return meta


scatter_add_p = Primitive(
    "scatter_add", _scatter_meta("scatter_add"), linear=True, vjp_reads=(1,),
    vjp=(lambda g, out, x, idx, u, *, axis: g, None,
         lambda g, out, x, idx, u, *, axis: gather_p.bind(g, idx, axis=axis)))


scatter_add_p.batch = _along_axis_batch(scatter_add_p)


def _add_into(out, where, updates, unique):
    """out[where] += updates, each position as often as it is named (np.add.at's sums); where each index
    addresses its own position (one index per line along the axis, as cross_entropy's target), a gather, an
    add and a store give those sums without add.at's per-element loop (~10 us less at 128 rows)."""
    if unique:
        out[where] += updates
    else:
        np.add.at(out, where, updates)
    return out


@scatter_add_p.def_impl("cpu")
@_family.specialized(_on_grid("scatter_add", lambda x, where, unique, updates: _add_into(
    np.array(x, copy=True), where, updates, unique)))
def _scatter_add_cpu(x, idx, updates, *, axis):
    if x.ndim == 0:
        return _scatter_add_cpu(*_as_1d(x, idx, updates), axis=0).reshape(())
    _check_bounds("scatter_add", idx, x.shape[axis], axis)
    return _add_into(np.array(x, copy=True), _grid(idx, axis), updates, idx.shape[axis] == 1)


# scatter replaces; with duplicate indices the last write wins (as NumPy's assignment)
scatter_p = Primitive(
    "scatter", _scatter_meta("scatter"), linear=True, vjp_reads=(1,),
    vjp=(lambda g, out, x, idx, u, *, axis: scatter_p.bind(g, idx, _zeros(u), axis=axis), None,
         lambda g, out, x, idx, u, *, axis: gather_p.bind(g, idx, axis=axis)))


scatter_p.batch = _along_axis_batch(scatter_p)


@scatter_p.def_impl("cpu")
def _scatter_cpu(x, idx, updates, *, axis):
    if x.ndim == 0:
        return _scatter_cpu(*_as_1d(x, idx, updates), axis=0).reshape(())
    _check_bounds("scatter", idx, x.shape[axis], axis)
    out = np.array(x, copy=True)
    out[_grid(idx, axis)] = updates
    return out


def _gather_args(name, x, axis, indices):
    x = _family.as_operand(x)
    idx = _index_array(indices, x.device)
    return x, idx, normalize_axis(axis, max(x.ndim, 1), name)


def gather(x, axis, indices):
    """out[i][j] = x[i][indices[i][j]] for axis=1 (torch.gather)."""
    x, idx, axis = _gather_args("gather", x, axis, indices)
    return gather_p.bind(x, idx, axis=axis)


def take_along_axis(x, indices, axis=-1):
    """NumPy's take_along_axis: gather with indices broadcast against x (along the last axis by default, as the
    standard's)."""
    x, idx, axis = _gather_args("take_along_axis", x, axis, indices)
    shape = tuple(i if d == axis else builtins.max(i, s) for d, (i, s) in enumerate(zip(idx.shape, x.shape)))
    return gather_p.bind(x, broadcast_to(idx, shape), axis=axis)


def _scatter_args(name, x, axis, indices, updates):
    x, idx, axis = _gather_args(name, x, axis, indices)
    (updates,) = [u for u in _family.promote(name, updates, x)[:1]]
    if updates.dtype is not x.dtype:
        updates = _family.cast(updates, x.dtype)
    if updates.shape != idx.shape:
        if builtins.all(u >= i for u, i in zip(updates.shape, idx.shape)) and updates.ndim == idx.ndim:
            updates = static_slice(updates, tuple(slice(0, i) for i in idx.shape))
        else:
            updates = broadcast_to(updates, idx.shape)
    return x, idx, updates, axis


def scatter_add(x, axis, indices, updates):
    """x with updates[i][j] added at x[i][indices[i][j]] for axis=1 (torch.scatter_add)."""
    x, idx, updates, axis = _scatter_args("scatter_add", x, axis, indices, updates)
    return scatter_add_p.bind(x, idx, updates, axis=axis)


def scatter(x, axis, indices, updates):
    """x with x[i][indices[i][j]] = updates[i][j] for axis=1 (torch.scatter)."""
    x, idx, updates, axis = _scatter_args("scatter", x, axis, indices, updates)
    return scatter_p.bind(x, idx, updates, axis=axis)


# ---------------------------------------------------------------------------
# sort


def _sort_meta(x, *, axis, descending):
    if x.dtype.category == dt.COMPLEX:
        raise TypeError("sort: not supported for complex arrays (they have no order)")
    if x.ndim and not 0 <= axis < x.ndim:
        raise IndexError(f"sort: axis {axis} is out of range for an array of {x.ndim} dimensions")
    return (x.shape, x.dtype), (x.shape, dt.int64)


def _sort_vjp(g, out, x, *, axis, descending):
    return scatter_add_p.bind(_zeros(x), out[1], g[0], axis=axis) if x.ndim else g[0]


sort_p = Primitive(
    "sort", _sort_meta, multiple_results=True, vjp=(_sort_vjp,), vjp_reads=("out",),
    jvp=lambda ts, out, x, *, axis, descending: (gather_p.bind(ts[0], out[1], axis=axis) if x.ndim else ts[0], None))


def _sort_batch(vals, bdims, *, axis, descending):
    x = move_to_front(vals[0], bdims[0])
    if len(x.shape) == 1:  # 0-d values sort to themselves
        v, i = sort_p.bind(reshape(x, (x.shape[0], 1)), axis=1, descending=descending)
        return (reshape(v, (x.shape[0],)), reshape(i, (x.shape[0],))), (0, 0)
    return sort_p.bind(x, axis=axis + 1, descending=descending), (0, 0)


sort_p.batch = _sort_batch


@sort_p.def_impl("cpu")
def _sort_cpu(x, *, axis, descending):
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    if descending:
        # stable descending: ties keep their original order, as torch.sort(stable=True)
        n = x.shape[axis]
        idx = n - 1 - np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)
    else:
        idx = np.argsort(x, axis=axis, kind="stable")
    return np.take_along_axis(x, idx, axis), idx


def sort_with_indices(x, axis=-1, descending=False):
    """(values, indices) sorted along `axis` (stable): torch.sort's pair."""
    x = _family.as_operand(x)
    axis = normalize_axis(axis, x.ndim, "sort") if x.ndim else 0
    return sort_p.bind(x, axis=axis, descending=bool(descending))


def sort(x, axis=-1, descending=False, *, stable=True):
    """x sorted along `axis` (always stable, so `stable` is accepted either way), as the standard's sort."""
    return sort_with_indices(x, axis, descending)[0]


def argsort(x, axis=-1, descending=False, *, stable=True):
    """Indices that sort x along `axis` (always stable, so `stable` is accepted either way)."""
    return sort_with_indices(x, axis, descending)[1]


def topk(x, k, axis=-1, largest=True):
    """(values, indices) of the k largest (or smallest) entries along `axis`, sorted."""
    x = _family.as_operand(x)
    axis = normalize_axis(axis, x.ndim, "topk")
    size = x.shape[axis] if x.ndim else 1  # a 0-d array is one element along axis 0, as in torch
    if not 0 <= k <= size:
        raise ValueError(f"topk: k={k} is out of range for a dimension of size {size}")
    if x.ndim == 0:
        if k == 0:
            raise ValueError("topk: k=0 is not supported for a 0-d array")
        return sort_with_indices(x)
    values, idx = sort_with_indices(x, axis, descending=largest)
    sl = tuple(slice(0, k) if d == axis else slice(None) for d in range(x.ndim))
    return static_slice(values, sl), static_slice(idx, sl)


# ---------------------------------------------------------------------------
# getitem: NumPy indexing decomposed into slice / squeeze / expand_dims / take


def _is_index_array(k):
    return _family.is_arraylike(k) or isinstance(k, (list, np.ndarray))


class _NewAxisTake:
    """A 0-d boolean mask: a new axis of size 1 (True) or 0 (False), as in NumPy and PyTorch."""

    def __init__(self, keep):
        self.keep = bool(keep)


def _expand_key(key, ndim, device):
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if (isinstance(k, (np.ndarray, np.bool_)) or _family.is_arraylike(k) and not isinstance(k, Tracer)) and \
                getattr(k, "dtype", None) in (np.bool_, dt.bool_) and len(getattr(k, "shape", ())) == 0 \
                and getattr(getattr(k, "device", None), "type", "cpu") != "meta":
            out.append(_NewAxisTake(np.asarray(k)))
            continue
        if isinstance(k, (list, np.ndarray)):
            k = np.asarray(k)
            if k.dtype == np.bool_:  # a concrete mask selects its nonzero positions
                out.extend(asarray(nz, device=device) for nz in np.nonzero(k))
                continue
            if k.size == 0:
                k = k.astype(np.int64)  # `x[[]]` selects nothing
            k = asarray(k, device=device)  # lists and numpy indices are made on x's device
        elif _family.is_arraylike(k) and not isinstance(k, Tracer) and k.dtype is dt.bool_:
            if k.device.type == "meta":
                raise IndexError("boolean mask indexing needs data; it is not supported on meta arrays")
            out.extend(asarray(nz, device=k.device) for nz in np.nonzero(np.asarray(k)))
            continue
        elif isinstance(k, Tracer) and k.dtype is dt.bool_:
            raise IndexError("boolean mask indexing needs concrete values; use core.where under transforms")
        out.append(k)
    n_ellipsis = builtins.sum(1 for k in out if k is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = builtins.sum(1 for k in out if k is not None and k is not Ellipsis and type(k) is not _NewAxisTake)
    if consumed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {consumed} were indexed")
    if n_ellipsis:
        i = next(j for j, k in enumerate(out) if k is Ellipsis)  # not list.index: it compares arrays with ==
        out[i:i + 1] = [slice(None)] * (ndim - consumed)
    else:
        out.extend([slice(None)] * (ndim - consumed))
    return out


def getitem(x, key):
    """x[key] with NumPy semantics (basic indexing gives views' values, integer arrays gather)."""
    x = _family.as_operand(x)
    key = _expand_key(key, x.ndim, x.device)
    has_array = builtins.any(_is_index_array(k) or type(k) is _NewAxisTake for k in key)
    slices, squeeze_axes, new_axes, adv = [], [], [], []
    axis = 0      # axis of x
    out_axis = 0  # axis of the result after basic indexing (None inserted, ints kept or dropped)
    for k in key:
        if k is None:
            new_axes.append(out_axis)
            out_axis += 1
            continue
        if type(k) is _NewAxisTake:  # a new axis, indexed by [0] (keep) or [] (drop)
            new_axes.append(out_axis)
            adv.append((out_axis, asarray(np.arange(int(k.keep)), device=x.device)))
            out_axis += 1
            continue
        size = x.shape[axis]
        if isinstance(k, slice):
            slices.append(k)
        elif isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
            i = int(k)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {size}")
            i %= size
            slices.append(slice(i, i + 1))
            if has_array:
                adv.append((out_axis, asarray(0, device=x.device)))
            else:
                squeeze_axes.append(out_axis)
        elif _is_index_array(k):
            idx = _index_array(k, x.device)
            if not isinstance(idx, Tracer) and idx.device.type != "meta":
                _check_bounds("index", np.asarray(idx), size, axis)
            slices.append(slice(None))
            adv.append((out_axis, idx))
        else:
            raise IndexError(f"unsupported index {k!r} of type {type(k).__name__}")
        axis += 1
        out_axis += 1
    x = static_slice(x, tuple(slices))
    if new_axes:
        x = expand_dims(x, tuple(new_axes))
    if adv:
        x = _advanced(x, adv)
    elif squeeze_axes:
        x = squeeze(x, tuple(squeeze_axes))
    return x


def _advanced(x, adv):
    axes = [a for a, _ in adv]
    try:
        bshape = _family.broadcast_shapes("index", *[i.shape for _, i in adv])
    except ValueError:  # an IndexError, as in NumPy and torch
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                         + " ".join(str(tuple(i.shape)) for _, i in adv)) from None
    # flat index into the advanced axes, moved to the front: sum_k idx_k * stride_k
    flat = None
    stride = 1
    for a, idx in reversed(adv):
        size = x.shape[a]
        idx = where(lt(idx, 0), add(idx, size), idx)
        term = mul(idx, stride) if stride != 1 else idx
        flat = term if flat is None else add(flat, term)
        stride *= size
    flat = broadcast_to(flat, bshape)
    rest = [d for d in range(x.ndim) if d not in axes]
    moved = transpose(x, axes + rest)
    moved = reshape(moved, (stride,) + tuple(x.shape[d] for d in rest))
    out = take_p.bind(moved, flat, axis=0)
    contiguous = axes == list(range(axes[0], axes[0] + len(axes)))
    if contiguous and axes[0] > 0:
        nb = len(bshape)
        first = axes[0]
        perm = list(range(nb, nb + first)) + list(range(nb)) + list(range(nb + first, out.ndim))
        out = transpose(out, perm)
    return out



# ---------------------------------------------------------------------------
# index_put / masked_scatter: the writing forms of advanced indexing (linear in x and in the values)


def index_put(x, indices, values, accumulate=False):
    """x with x[indices] = values (or += values with `accumulate`, where duplicate indices sum); `indices`
    a tuple of integer arrays (or concrete boolean masks) for x's leading axes, broadcast together."""
    x = _family.as_operand(x)
    if not _family.is_arraylike(x):
        x = asarray(x)
    values = _family.as_operand(values)
    values = values if _family.is_arraylike(values) else asarray(values, dtype=x.dtype, device=x.device)
    if values.dtype is not x.dtype:
        values = cast(values, x.dtype)
    idx = []
    for k in (indices if isinstance(indices, (tuple, list)) else (indices,)):
        if isinstance(k, np.ndarray) and k.dtype == np.bool_ or (
                _family.is_arraylike(k) and not isinstance(k, Tracer) and k.dtype is dt.bool_):
            if getattr(getattr(k, "device", None), "type", "cpu") == "meta":
                raise IndexError("index_put: boolean masks need data; they are not supported on meta arrays")
            idx.extend(asarray(nz, device=x.device) for nz in np.nonzero(np.asarray(k)))
        else:
            idx.append(_index_array(k, x.device))
    if len(idx) > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but {len(idx)} were indexed")
    try:
        bshape = _family.broadcast_shapes("index_put", *[i.shape for i in idx])
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                         + " ".join(str(tuple(i.shape)) for i in idx)) from None
    rest = tuple(x.shape[len(idx):])
    flat, stride = None, 1
    for axis in reversed(range(len(idx))):
        i, size = idx[axis], x.shape[axis]
        if not isinstance(i, Tracer) and i.device.type != "meta":
            _check_bounds("index_put", np.asarray(i), size, axis)
        i = where(lt(i, 0), add(i, size), i)
        term = mul(i, stride) if stride != 1 else i
        flat = term if flat is None else add(flat, term)
        stride *= size
    k = _family.prod(bshape)
    if flat is None:  # no index: the whole x
        flat = asarray(0, dtype=dt.int64, device=x.device)
    flat = reshape(broadcast_to(flat, bshape), (k,))
    try:
        values = broadcast_to(values, bshape + rest)
    except ValueError:
        raise ValueError(f"index_put: shape mismatch: value tensor of shape {list(values.shape)} cannot be "
                         f"broadcast to indexing result of shape {list(bshape + rest)}") from None
    values = reshape(values, (k,) + rest)
    rows = reshape(x, (stride,) + rest)
    if accumulate:
        out = index_add_p.bind(rows, flat, values, axis=0)
    else:
        where_to = broadcast_to(reshape(flat, (k,) + (1,) * len(rest)), (k,) + rest)
        out = scatter_p.bind(rows, where_to, values, axis=0)
    return reshape(out, tuple(x.shape))


def masked_scatter(x, mask, source):
    """x with the entries where `mask` (broadcast to x) holds replaced, in row-major order, by the first
    entries of `source` (torch.masked_scatter). A running count of the mask picks each source entry, so
    this traces; the count is checked against source's size when the mask is concrete."""
    x = _family.as_operand(x)
    mask = _family.as_operand(mask)
    if not _family.is_arraylike(mask):
        mask = asarray(mask, device=x.device)
    if mask.dtype is not dt.bool_:
        raise TypeError(f"masked_scatter: the mask must be a bool array, got {mask.dtype.name}")
    source = _family.as_operand(source)
    if source.dtype is not x.dtype:
        source = cast(source, x.dtype)
    shape = tuple(x.shape)
    mask = broadcast_to(mask, shape)
    m = reshape(mask, (-1,))
    src = reshape(source, (-1,))
    s = src.shape[0]
    if type(mask) is _Array and mask._buf is not None:
        if int(np.count_nonzero(mask._buf)) > s:
            raise ValueError("masked_scatter: the source has fewer elements than the mask has ones")
    if s == 0:
        return x
    pos = sub(cumsum(cast(m, dt.int64), 0), 1)
    pos = minimum(maximum(pos, 0), s - 1)
    return where(mask, reshape(take_p.bind(src, pos, axis=0), shape), x)



# ---------------------------------------------------------------------------
# functional update, JAX's `x.at[key].set(v)` (core arrays are immutable): x[key] names a set of flat
# positions of x (arange indexed like x, so every index getitem takes works, traced ones included);
# the values, broadcast to x[key]'s shape, go there by scatter (set), index_add (add; duplicates sum) or
# a one-hot reduction (multiply, min, max; duplicates combine). The one-hot form is O(len(key) * x.size):
# it is written with where and the reductions so that its derivatives and batching come from theirs.

_AT_MODES = ("set", "add", "multiply", "min", "max")


def at_update(x, key, values, mode):
    """x with x[key] replaced by `values` (mode 'set'), or combined with them ('add', 'multiply', 'min',
    'max'); values are cast to x's dtype and broadcast to x[key]'s shape. x itself is unchanged."""
    if mode not in _AT_MODES:
        raise ValueError(f"at_update: mode must be one of {', '.join(_AT_MODES)}, got {mode!r}")
    x = _family.as_operand(x)
    if not _family.is_arraylike(x):
        x = asarray(x)
    n = _family.prod(x.shape)
    pos = getitem(reshape(arange(n, dtype=dt.int64, device=x.device), tuple(x.shape)), key)
    values = _family.as_operand(values)
    values = cast(values, x.dtype) if _family.is_arraylike(values) else asarray(values, dtype=x.dtype, device=x.device)
    try:
        values = broadcast_to(values, tuple(pos.shape))
    except ValueError:
        raise ValueError(f"at[].{mode}: values of shape {tuple(values.shape)} cannot be broadcast to the "
                         f"indexed shape {tuple(pos.shape)}") from None
    k = _family.prod(pos.shape)
    if k == 0:
        return x
    flat, pos, values = reshape(x, (n,)), reshape(pos, (k,)), reshape(values, (k,))
    if mode == "set":
        out = scatter_p.bind(flat, pos, values, axis=0)
    elif mode == "add":
        out = index_add_p.bind(flat, pos, values, axis=0)
    else:
        hit = eq(reshape(pos, (k, 1)), reshape(arange(n, dtype=dt.int64, device=x.device), (1, n)))
        column = reshape(values, (k, 1))
        if mode == "multiply":
            out = mul(flat, _prod(where(hit, column, asarray(1, dtype=x.dtype, device=x.device)), 0))
        else:
            rows = where(hit, column, broadcast_to(reshape(flat, (1, n)), (k, n)))
            out = minimum(flat, _min(rows, 0)) if mode == "min" else maximum(flat, _max(rows, 0))
    return reshape(out, tuple(x.shape))
