"""Search family: searchsorted (one primitive: integer valued, no derivative) and the composites on it
and on sort: digitize, isin, and the unique family (unique, unique_all, unique_counts, unique_inverse,
unique_values, unique_consecutive).

The unique outputs have data-dependent sizes. As jnp.unique, they need `size=` (the number of unique
entries to return, padded with `fill_value` or cut) to run under transforms or on meta arrays; without
it, the size is read from a concrete input and the rest is the same composite of sort / cumsum / scatter.
"""
import collections

import numpy as np

from .. import dtypes as dt
from ..primitive import Primitive, Tracer
from . import _family
from ._family import all_front, normalize_axis
from .creation import arange, asarray, full, zeros
from .elementwise import cast, eq, ge, imag, logical_not, minimum, ne, real, sub, where
from .indexing import argsort, index_add, scatter_p, sort, sort_with_indices, take, take_along_axis
from .reduction import any as _any, cumsum, min as _min
from .shape import broadcast_to, concatenate, moveaxis, reshape, slice_axis, stack

__all__ = [
    "searchsorted_p", "searchsorted", "nonzero", "digitize", "isin", "unique", "unique_all", "unique_counts",
    "unique_inverse", "unique_values", "unique_consecutive",
]


# ---------------------------------------------------------------------------
# searchsorted: a (..., M) sorted along its last axis; v (..., K) with a's leading axes, or any shape
# when a is 1-D. Non-differentiable (integer valued), as in JAX and PyTorch.


def _searchsorted_meta(a, v, *, side, dtype):
    if a.ndim == 0:
        raise ValueError("searchsorted: the sorted sequence must have at least one dimension")
    if a.ndim > 1 and (v.ndim != a.ndim or v.shape[:-1] != a.shape[:-1]):
        raise ValueError(f"searchsorted: the leading dimensions of the sorted sequence {a.shape} and of the "
                         f"values {v.shape} must match (or the sorted sequence must be 1-D)")
    _family.same_dtype("searchsorted", a, v)
    if a.dtype is dt.bool_ or a.dtype.category not in (dt.INT, dt.FLOAT):
        raise TypeError(f"searchsorted: not supported for {a.dtype.name} arrays")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if dtype not in (dt.int32, dt.int64):
        raise TypeError(f"searchsorted: the output dtype must be int32 or int64, got {dtype}")
    return v.shape, dtype


searchsorted_p = Primitive("searchsorted", _searchsorted_meta)


def _searchsorted_batch(vals, bdims, *, side, dtype):
    a, v = vals
    if bdims[0] is None and len(a.shape) == 1:  # elementwise in v
        return searchsorted_p.bind(a, v, side=side, dtype=dtype), bdims[1]
    (a, v), b = all_front(vals, bdims)
    if len(a.shape) == 2:  # a 1-D sequence per batch element: v's entries as one row per element
        n = _family.prod(v.shape[1:])
        out = searchsorted_p.bind(a, reshape(v, (b, n)), side=side, dtype=dtype)
        return reshape(out, tuple(v.shape)), 0
    return searchsorted_p.bind(a, v, side=side, dtype=dtype), 0


searchsorted_p.batch = _searchsorted_batch


@searchsorted_p.def_impl("cpu")
def _searchsorted_cpu(a, v, *, side, dtype):
    if a.ndim == 1:
        return np.searchsorted(a, v, side=side).astype(dtype.np)
    rows = _family.prod(a.shape[:-1])
    a2 = a.reshape(rows, a.shape[-1])
    v2 = v.reshape(rows, v.shape[-1])
    out = np.empty(v2.shape, dtype.np)
    for i in range(rows):
        out[i] = np.searchsorted(a2[i], v2[i], side=side)
    return out.reshape(v.shape)


def _promoted(name, *xs):
    """Operands promoted together; lists and tuples (array-likes, as jnp takes them) become arrays."""
    return _family.promote(name, *[asarray(x) if isinstance(x, (list, tuple)) else x for x in xs])


def searchsorted(a, v, side="left", sorter=None, *, dtype=dt.int64):
    """Indices where v's entries would be inserted into `a` (sorted along its last axis) to keep it
    sorted: side='left' the first such place, 'right' the last. `sorter`: indices that sort `a`."""
    a, v = _promoted("searchsorted", a, v)
    if sorter is not None:
        sorter = sorter if _family.is_arraylike(sorter) else asarray(sorter, device=a.device)
        if sorter.shape != a.shape:
            raise ValueError(f"searchsorted: sorter shape {sorter.shape} must match the sorted sequence's "
                             f"{a.shape}")
        a = take_along_axis(a, sorter, a.ndim - 1)
    return searchsorted_p.bind(a, v, side=side, dtype=dt.canonicalize(dtype))


def digitize(x, bins, right=False):
    """The index of the bin of each entry of x (NumPy's digitize; bins increasing or decreasing)."""
    x, bins = _promoted("digitize", x, bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be 1-D, got shape {bins.shape}")
    side = "left" if right else "right"
    n = bins.shape[0]
    if n < 2:
        return searchsorted(bins, x, side)
    up = searchsorted(bins, x, side)
    down = sub(n, searchsorted(slice_axis(bins, 0, None, None, -1), x, side))
    increasing = reshape(ge(slice_axis(bins, 0, n - 1, n), slice_axis(bins, 0, 0, 1)), ())
    return where(increasing, up, down)


def isin(element, test_elements, assume_unique=False, invert=False):
    """Whether each entry of `element` occurs in `test_elements` (logical_not of that with invert)."""
    x, t = _promoted("isin", element, test_elements)
    t = reshape(t, (-1,))
    n = t.shape[0]
    if n == 0:
        found = full(tuple(x.shape), False, dtype=dt.bool_, device=x.device)
    else:
        s = sort(t)
        i = minimum(searchsorted(s, x), n - 1)
        found = eq(take(s, i), x)
    return logical_not(found) if invert else found


# ---------------------------------------------------------------------------
# unique


def _static_size(name, x, is_new, size):
    """The number of unique entries: `size` when given, else read from concrete data."""
    if size is not None:
        return int(size)
    if isinstance(x, Tracer) or isinstance(is_new, Tracer):
        raise TypeError(f"{name}: the output size depends on the input's values, which are not known under "
                        "a transform; pass size= (and fill_value=), as jnp.unique needs")
    if x.device.type == "meta":
        raise ValueError(f"{name}: the output size depends on the input's values, which a meta array does "
                         "not have; pass size= (and fill_value=)")
    return int(np.count_nonzero(np.asarray(is_new)))


def _groups(rows, is_new, size, fill_value, order=None):
    """From rows (n, ...) in group order with `is_new` marking each group's first row: (values (size, ...),
    group id per row (n,), counts (size,)). Rows of groups past `size` are dropped; missing ones filled."""
    n = rows.shape[0]
    gid = sub(cumsum(cast(is_new, dt.int64), 0), 1)
    slot = minimum(gid, size)  # groups past `size` write into a spare slot that is cut off
    shape = (size + 1,) + tuple(rows.shape[1:])
    if fill_value is None and n:  # jnp's default: the minimum entry (complex: the first, smallest in NumPy's order)
        low = slice_axis(rows, 0, 0, 1) if rows.dtype.category == dt.COMPLEX else _min(rows)
        buf = broadcast_to(low, shape)
    elif _family.is_arraylike(fill_value):
        buf = broadcast_to(cast(fill_value, rows.dtype), shape)
    else:
        buf = full(shape, 0 if fill_value is None else fill_value, dtype=rows.dtype, device=rows.device)
    idx = reshape(slot, (n,) + (1,) * (rows.ndim - 1))
    idx = broadcast_to(idx, tuple(rows.shape))
    values = slice_axis(scatter_p.bind(buf, idx, rows, axis=0), 0, 0, size)
    counts = slice_axis(index_add(zeros((size + 1,), dtype=dt.int64, device=rows.device), slot,
                                  full((n,), 1, dtype=dt.int64, device=rows.device)), 0, 0, size)
    return values, gid, counts


def _rows(x, axis):
    """x as rows (n, rest...) along `axis` (the flattened x when None)."""
    if axis is None:
        return reshape(x, (-1,)), None
    axis = normalize_axis(axis, x.ndim, "unique")
    return moveaxis(x, axis, 0), axis


def _row_is_new(rows):
    """Per row of `rows` (n, ...): whether it differs from the row before (the first row: True)."""
    n = rows.shape[0]
    if n == 0:
        return zeros((0,), dtype=dt.bool_, device=rows.device)
    diff = ne(slice_axis(rows, 0, 1, n), slice_axis(rows, 0, 0, n - 1))
    if rows.ndim > 1:
        diff = _any(diff, tuple(range(1, rows.ndim)))
    return concatenate([full((1,), True, dtype=dt.bool_, device=rows.device), diff], 0)


def _lexsort_rows(rows):
    """The stable permutation sorting rows (n, ...) lexicographically (first column most significant)."""
    n = rows.shape[0]
    flat = reshape(rows, (n, _family.prod(rows.shape[1:])))
    perm = arange(n, device=rows.device)
    for c in reversed(range(flat.shape[1])):
        col = take(slice_axis(flat, 1, c, c + 1), perm, axis=0)
        perm = take(perm, reshape(argsort(reshape(col, (n,))), (n,)))
    return perm


def _unique(name, x, axis, size, fill_value, consecutive):
    x = _family.as_operand(x)
    if not _family.is_arraylike(x):
        x = asarray(x)
    rows, axis = _rows(x, axis)
    n = rows.shape[0]
    if consecutive:
        perm = None
        ordered = rows
    elif rows.ndim == 1 and rows.dtype.category == dt.COMPLEX:  # NumPy's order: by real part, then imaginary
        perm = _lexsort_rows(stack([real(rows), imag(rows)], 1))
        ordered = take(rows, perm, axis=0)
    elif rows.ndim == 1:
        ordered, perm = sort_with_indices(rows)
    else:
        perm = _lexsort_rows(rows)
        ordered = take(rows, perm, axis=0)
    is_new = _row_is_new(ordered)
    size = _static_size(name, x, is_new, size)
    values, gid, counts = _groups(ordered, is_new, size, fill_value)
    if perm is None:
        inverse = gid
    else:  # the group of row perm[k] is gid[k]
        inverse = scatter_p.bind(zeros((n,), dtype=dt.int64, device=x.device), perm, gid, axis=0)
    if axis is None:
        inverse = reshape(inverse, tuple(x.shape))
    else:
        values = moveaxis(values, 0, axis)
    first = None
    if perm is not None:  # the index of each group's first occurrence in x: the smallest perm in it
        big = full((size + 1,), n, dtype=dt.int64, device=x.device)
        first = slice_axis(_scatter_min(big, minimum(gid, size), perm), 0, 0, size)
    return values, first, inverse, counts


def _scatter_min(buf, idx, vals):
    # the group's first occurrence: stable sorts keep each group's rows in their original order, so the
    # first row of the group is its smallest index; scattering in reverse lets that write land last
    rev = arange(idx.shape[0] - 1, -1, -1, device=buf.device)
    return scatter_p.bind(buf, take(idx, rev), take(vals, rev), axis=0)


def unique(x, return_index=False, return_inverse=False, return_counts=False, axis=None, *, size=None,
           fill_value=None):
    """The sorted unique entries of x (rows along `axis`), with optionally the index of each one's first
    occurrence, the inverse (x's entries as indices into the result) and the counts, as jnp.unique.
    size=: return exactly that many (padded with fill_value, default the minimum) so that it traces."""
    values, first, inverse, counts = _unique("unique", x, axis, size, fill_value, consecutive=False)
    out = (values,)
    if return_index:
        out += (first,)
    if return_inverse:
        out += (inverse,)
    if return_counts:
        out += (counts,)
    return out[0] if len(out) == 1 else out


def unique_consecutive(x, return_inverse=False, return_counts=False, axis=None, *, size=None, fill_value=None):
    """x with each run of equal consecutive entries (rows along `axis`) collapsed to one (torch's
    unique_consecutive); optionally the inverse and the run lengths."""
    values, _, inverse, counts = _unique("unique_consecutive", x, axis, size, fill_value, consecutive=True)
    out = (values,)
    if return_inverse:
        out += (inverse,)
    if return_counts:
        out += (counts,)
    return out[0] if len(out) == 1 else out


UniqueAllResult = collections.namedtuple("UniqueAllResult", "values indices inverse_indices counts")
UniqueCountsResult = collections.namedtuple("UniqueCountsResult", "values counts")
UniqueInverseResult = collections.namedtuple("UniqueInverseResult", "values inverse_indices")


def unique_values(x, /, *, size=None, fill_value=None):
    """The Array API's unique_values: the sorted unique entries of the flattened x (each NaN is unique)."""
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size=None, fill_value=None):
    """The Array API's unique_counts: (values, counts) as a named tuple."""
    return UniqueCountsResult(*unique(x, return_counts=True, size=size, fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
    """The Array API's unique_inverse: (values, inverse_indices of x's shape) as a named tuple."""
    return UniqueInverseResult(*unique(x, return_inverse=True, size=size, fill_value=fill_value))


def nonzero(x, /):
    """A tuple of index arrays (int64), one per axis, of x's nonzero entries in row-major order. The
    result's length depends on the data, so x must be concrete (not a tracer nor a meta array)."""
    x = _family.as_operand(x)
    if not _family.is_arraylike(x):
        x = asarray(x)
    if x.ndim == 0:
        raise ValueError("nonzero: zero-dimensional arrays are not supported (the Array API standard)")
    if isinstance(x, Tracer) or x.device.type == "meta":
        raise ValueError("nonzero: the number of nonzero entries depends on the data; it needs a concrete "
                         "array (use core.where or a fixed-size form under transforms and on meta)")
    return tuple(asarray(i.astype(np.int64), device=x.device) for i in np.nonzero(np.asarray(x)))


def unique_all(x, /, *, size=None, fill_value=None):
    """The Array API's unique_all: (values, indices of first occurrences, inverse_indices, counts) as a
    named tuple."""
    return UniqueAllResult(*unique(x, True, True, True, size=size, fill_value=fill_value))
