"""Layout family: composites that rearrange, join, split, repeat and build arrays (jax.numpy names:
meshgrid, rot90, diff, repeat, atleast_1d/2d/3d, block_diag, column_stack, hstack, vstack, dstack, split,
array_split, hsplit, vsplit, dsplit, unstack, tril_indices, triu_indices, logspace, diagonal), torch's
cartesian_prod and combinations, and the scatter forms of views (diag_embed, diagonal_scatter,
select_scatter, slice_scatter). No primitives of their own: their derivatives come from reshape /
transpose / slice / take / where / concatenate, so they are linear in every array input.
"""
import builtins
import itertools

import numpy as np

from .. import dtypes as dt
from ..primitive import Tracer
from . import _family
from ._family import normalize_axis
from .creation import arange, asarray, linspace, zeros
from .elementwise import cast, eq, logical_xor, lt, pow, sub, where
from .indexing import take
from .reduction import cumsum
from .search import searchsorted
from .shape import (broadcast_to, concatenate, expand_dims, flip, pad, reshape, slice_axis,
                    slice_scatter_p, squeeze, stack, transpose)

__all__ = [
    "meshgrid", "rot90", "diff", "repeat", "atleast_1d", "atleast_2d", "atleast_3d", "block_diag",
    "column_stack", "hstack", "vstack", "dstack", "split", "array_split", "hsplit", "vsplit", "dsplit",
    "unstack", "tril_indices", "triu_indices", "logspace", "cartesian_prod", "combinations", "diagonal",
    "diag_embed", "diagonal_scatter", "select_scatter", "slice_scatter",
]


def _operand(x):
    x = _family.as_operand(x)
    if not _family.is_arraylike(x):
        x = asarray(x)
    return x


# ---------------------------------------------------------------------------
# grids, rotations, differences, repeats


def meshgrid(*xs, indexing="xy"):
    """Coordinate arrays from 1-D vectors: with indexing='ij' output i varies along axis i; 'xy'
    (NumPy's and jnp's default) swaps the first two axes."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [_operand(x) for x in xs]
    for x in xs:
        if x.ndim > 1:
            raise ValueError(f"meshgrid: expected 0-D or 1-D arrays, got shape {x.shape}")
    xs = [reshape(x, (-1,)) for x in xs]
    sizes = [x.shape[0] for x in xs]
    swap = indexing == "xy" and len(xs) >= 2
    if swap:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, x in enumerate(xs):
        axis = {0: 1, 1: 0}.get(i, i) if swap else i
        shape = [1] * len(xs)
        shape[axis] = x.shape[0]
        out.append(broadcast_to(reshape(x, tuple(shape)), tuple(sizes)))
    return out


def rot90(x, k=1, axes=(0, 1)):
    """x rotated by 90 degrees k times in the plane of `axes`, from the first axis towards the second."""
    x = _operand(x)
    if len(axes) != 2:
        raise ValueError(f"rot90: expected two axes, got {tuple(axes)}")
    if x.ndim < 2:
        raise ValueError(f"rot90: expected an array of at least 2 dimensions, got {x.ndim}")
    a, b = (normalize_axis(ax, x.ndim, "rot90") for ax in axes)
    if a == b:
        raise ValueError(f"rot90: the axes must differ, got {tuple(axes)}")
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return flip(x, (a, b))
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    if k == 1:
        return transpose(flip(x, b), perm)
    return flip(transpose(x, perm), b)


def diff(x, n=1, axis=-1, prepend=None, append=None):
    """The n-th forward difference along `axis` (x[i+1] - x[i], n times), after joining prepend / append
    (scalars are broadcast to one slice); bool arrays give logical_xor, as in NumPy and torch."""
    x = _operand(x)
    if x.ndim == 0:
        raise ValueError("diff: expected an array of at least one dimension")
    axis = normalize_axis(axis, x.ndim, "diff")
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    parts = []
    for extra in (prepend, x, append):
        if extra is None:
            continue
        extra = _operand(extra)
        if extra.ndim == 0:
            shape = list(x.shape)
            shape[axis] = 1
            extra = broadcast_to(extra, tuple(shape))
        parts.append(extra)
    if len(parts) > 1:
        x = concatenate(parts, axis)
    for _ in range(n):
        m = x.shape[axis]
        if m == 0:
            break
        hi, lo = slice_axis(x, axis, 1, m), slice_axis(x, axis, 0, m - 1)
        x = logical_xor(hi, lo) if x.dtype is dt.bool_ else sub(hi, lo)
    return x


def repeat(x, repeats, axis=None, *, total_repeat_length=None):
    """Each entry (slice along `axis`; of the flattened x when None) repeated `repeats` times; repeats an
    int or one count per entry. Counts that are traced need `total_repeat_length` (the output's length)."""
    x = _operand(x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = normalize_axis(axis, x.ndim, "repeat")
    n = x.shape[axis]
    if isinstance(repeats, (int, np.integer)) and not isinstance(repeats, bool):
        r = int(repeats)
        if r < 0:
            raise ValueError(f"repeat: repeats must be non-negative, got {r}")
        y = expand_dims(x, axis + 1)
        shape = list(y.shape)
        shape[axis + 1] = r
        y = broadcast_to(y, tuple(shape))
        shape = list(x.shape)
        shape[axis] = n * r
        return reshape(y, tuple(shape))
    reps = repeats if _family.is_arraylike(repeats) else asarray(repeats, device=x.device)
    if reps.dtype.category != dt.INT:
        raise TypeError(f"repeat: repeats must be integers, got {reps.dtype.name}")
    if reps.ndim > 1:
        raise ValueError(f"repeat: repeats must be 0-D or 1-D, got shape {reps.shape}")
    if reps.ndim == 0 or reps.shape[0] == 1 and n != 1:
        reps = broadcast_to(reshape(reps, (1,)), (n,))
    if reps.shape[0] != n:
        raise ValueError(f"repeat: {reps.shape[0]} repeats for an axis of size {n}")
    if total_repeat_length is None:
        if isinstance(reps, Tracer) or reps.device.type == "meta":
            raise TypeError("repeat: the output length depends on the values of repeats, which are not known "
                            "here; pass total_repeat_length=")
        counts = np.asarray(reps).astype(np.int64)
        if (counts < 0).any():
            raise ValueError("repeat: repeats must be non-negative")
        idx = asarray(np.repeat(np.arange(n, dtype=np.int64), counts), device=x.device)
    else:  # entry i fills the output positions [cumsum[i-1], cumsum[i]): a search of each position
        ends = cumsum(cast(reps, dt.int64), 0)
        idx = searchsorted(ends, arange(int(total_repeat_length), device=x.device), side="right")
        idx = where(lt(idx, n), idx, n - 1) if n else idx  # positions past the counts' sum: the last entry
    return take(x, idx, axis=axis)


def atleast_1d(*xs):
    """Each input with at least one dimension (0-d -> (1,)); one array for one input, else a list."""
    out = [reshape(x, (1,)) if x.ndim == 0 else x for x in map(_operand, xs)]
    return out[0] if len(out) == 1 else out


def atleast_2d(*xs):
    """Each input with at least two dimensions ((n,) -> (1, n))."""
    out = [reshape(x, (1,) * (2 - x.ndim) + tuple(x.shape)) if x.ndim < 2 else x for x in map(_operand, xs)]
    return out[0] if len(out) == 1 else out


def atleast_3d(*xs):
    """Each input with at least three dimensions ((n,) -> (1, n, 1), (m, n) -> (m, n, 1)), as NumPy."""
    out = []
    for x in map(_operand, xs):
        if x.ndim == 0:
            x = reshape(x, (1, 1, 1))
        elif x.ndim == 1:
            x = reshape(x, (1, x.shape[0], 1))
        elif x.ndim == 2:
            x = reshape(x, tuple(x.shape) + (1,))
        out.append(x)
    return out[0] if len(out) == 1 else out


# ---------------------------------------------------------------------------
# joining and splitting


def block_diag(*arrays):
    """The block-diagonal matrix of the inputs (0-d and 1-d ones as one-row matrices), dtypes promoted."""
    if not arrays:
        return zeros((1, 0))
    arrays = _family.promote("block_diag", *arrays)
    mats = []
    for a in arrays:
        if a.ndim > 2:
            raise ValueError(f"block_diag: expected arrays of at most 2 dimensions, got shape {a.shape}")
        mats.append(atleast_2d(a))
    width = builtins.sum(m.shape[1] for m in mats)
    rows, col = [], 0
    for m in mats:
        rows.append(pad(m, ((0, 0), (col, width - col - m.shape[1]))))
        col += m.shape[1]
    return concatenate(rows, 0)


def column_stack(arrays):
    """1-D (and 0-d) arrays as columns, 2-D ones as they are, joined along axis 1."""
    cols = []
    for a in map(_operand, arrays):
        cols.append(reshape(a, (-1, 1)) if a.ndim < 2 else a)
    return concatenate(cols, 1)


def hstack(arrays):
    """Join along axis 1 (axis 0 for 1-D arrays), after atleast_1d."""
    arrays = [atleast_1d(a) for a in arrays]
    return concatenate(arrays, 0 if arrays and arrays[0].ndim == 1 else 1)


def vstack(arrays):
    """Join along axis 0, after atleast_2d."""
    return concatenate([atleast_2d(a) for a in arrays], 0)


def dstack(arrays):
    """Join along axis 2, after atleast_3d."""
    return concatenate([atleast_3d(a) for a in arrays], 2)


def _split_points(name, n, indices_or_sections, equal):
    """The [start, stop) pairs of the pieces of an axis of size n."""
    if isinstance(indices_or_sections, (int, np.integer)) and not isinstance(indices_or_sections, bool):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError(f"{name}: the number of sections must be positive, got {k}")
        if equal and n % k:
            raise ValueError(f"{name}: an axis of size {n} cannot be split into {k} equal sections")
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        starts = [builtins.sum(sizes[:i]) for i in range(k)]
        return [(s, s + z) for s, z in zip(starts, sizes)]
    idx = indices_or_sections
    if _family.is_arraylike(idx):
        if isinstance(idx, Tracer) or idx.device.type == "meta":
            raise TypeError(f"{name}: split indices must be concrete")
        idx = np.asarray(idx).reshape(-1).tolist()
    idx = [int(i) for i in idx]
    bounds = [0] + idx + [n]
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        a = builtins.min(builtins.max(a + n if a < 0 else a, 0), n)
        b = builtins.min(builtins.max(b + n if b < 0 else b, 0), n)
        out.append((a, builtins.max(a, b)))
    return out


def array_split(x, indices_or_sections, axis=0):
    """x split along `axis` into k nearly equal pieces (the first n % k one longer) or at the given
    indices (NumPy's array_split; torch's tensor_split)."""
    x = _operand(x)
    axis = normalize_axis(axis, x.ndim, "array_split")
    return [slice_axis(x, axis, a, b) for a, b in _split_points("array_split", x.shape[axis], indices_or_sections,
                                                                  equal=False)]


def split(x, indices_or_sections, axis=0):
    """As array_split, but a number of sections must divide the axis (NumPy's split)."""
    x = _operand(x)
    axis = normalize_axis(axis, x.ndim, "split")
    return [slice_axis(x, axis, a, b) for a, b in _split_points("split", x.shape[axis], indices_or_sections,
                                                                  equal=True)]


def hsplit(x, indices_or_sections):
    """split along axis 1 (axis 0 for 1-D arrays)."""
    x = _operand(x)
    if x.ndim == 0:
        raise ValueError("hsplit: expected an array of at least 1 dimension")
    return split(x, indices_or_sections, 1 if x.ndim > 1 else 0)


def vsplit(x, indices_or_sections):
    """split along axis 0 (arrays of at least 2 dimensions)."""
    x = _operand(x)
    if x.ndim < 2:
        raise ValueError(f"vsplit: expected an array of at least 2 dimensions, got {x.ndim}")
    return split(x, indices_or_sections, 0)


def dsplit(x, indices_or_sections):
    """split along axis 2 (arrays of at least 3 dimensions)."""
    x = _operand(x)
    if x.ndim < 3:
        raise ValueError(f"dsplit: expected an array of at least 3 dimensions, got {x.ndim}")
    return split(x, indices_or_sections, 2)


def unstack(x, axis=0):
    """The slices of x along `axis`, as a tuple (the inverse of stack)."""
    x = _operand(x)
    axis = normalize_axis(axis, x.ndim, "unstack")
    return tuple(squeeze(slice_axis(x, axis, i, i + 1), (axis,)) for i in range(x.shape[axis]))


# ---------------------------------------------------------------------------
# index and value grids


def _indices_of(name, fn, n, k, m, device):
    if n < 0 or (m is not None and m < 0):
        raise ValueError(f"{name}: sizes must be non-negative, got {n} and {m}")
    rows, cols = fn(int(n), int(k), None if m is None else int(m))
    return asarray(rows.astype(np.int64), device=device), asarray(cols.astype(np.int64), device=device)


def tril_indices(n, k=0, m=None, *, device=None):
    """(rows, cols) of the lower triangle (on and below the k-th diagonal) of an n x m matrix."""
    return _indices_of("tril_indices", np.tril_indices, n, k, m, device)


def triu_indices(n, k=0, m=None, *, device=None):
    """(rows, cols) of the upper triangle (on and above the k-th diagonal) of an n x m matrix."""
    return _indices_of("triu_indices", np.triu_indices, n, k, m, device)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, *, device=None):
    """base ** linspace(start, stop, num): `num` points spaced evenly on a log scale (float32 by default)."""
    if num < 0:
        raise ValueError(f"logspace: number of steps must be non-negative, got {num}")
    dtype = dt.canonicalize(dtype) or dt.default_float
    if not endpoint and num:
        stop = start + (stop - start) * (num - 1) / num
    exps = linspace(start, stop, num, dtype=dt.float64, device=device)
    out = pow(asarray(float(base), dtype=dt.float64, device=exps.device), exps)
    return cast(out, dtype)


def cartesian_prod(*xs):
    """The cartesian product of 1-D arrays as rows (n1 * n2 * ..., len(xs)); one array: itself."""
    xs = _family.promote("cartesian_prod", *xs)
    for x in xs:
        if x.ndim != 1:
            raise ValueError(f"cartesian_prod: expected 1-D arrays, got shape {x.shape}")
    if len(xs) == 1:
        return xs[0]
    grids = meshgrid(*xs, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], 1)


def combinations(x, r=2, with_replacement=False):
    """The length-r combinations of the entries of the 1-D x as rows (itertools' order)."""
    x = _operand(x)
    if x.ndim != 1:
        raise ValueError(f"combinations: expected a 1-D array, got shape {x.shape}")
    if r < 0:
        raise ValueError(f"combinations: r must be non-negative, got {r}")
    make = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    if r == 0:  # torch: an empty vector
        idx = np.zeros((0,), np.int64)
    else:
        idx = np.array(list(make(range(x.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return take(x, asarray(idx, device=x.device))


# ---------------------------------------------------------------------------
# diagonals and the scatter forms of views


def _plane_last(x, axis1, axis2, name):
    """x with axes axis1, axis2 moved last, and the permutation that undoes it."""
    a, b = normalize_axis(axis1, x.ndim, name), normalize_axis(axis2, x.ndim, name)
    if a == b:
        raise ValueError(f"{name}: axis1 and axis2 cannot be the same ({axis1}, {axis2})")
    perm = [i for i in range(x.ndim) if i not in (a, b)] + [a, b]
    inv = [0] * x.ndim
    for i, p in enumerate(perm):
        inv[p] = i
    return transpose(x, tuple(perm)), tuple(inv)


def _diag_len(r, c, offset):
    return builtins.max(builtins.min(r, c - offset) if offset >= 0 else builtins.min(r + offset, c), 0)


def diagonal(x, offset=0, axis1=0, axis2=1):
    """The `offset` diagonal of the planes (axis1, axis2) of x, as a last axis."""
    x = _operand(x)
    y, _ = _plane_last(x, axis1, axis2, "diagonal")
    r, c = y.shape[-2], y.shape[-1]
    n = _diag_len(r, c, offset)
    i = np.arange(n, dtype=np.int64)
    flat = i * c + i + offset if offset >= 0 else (i - offset) * c + i
    y = reshape(y, tuple(y.shape[:-2]) + (r * c,))
    return take(y, asarray(flat, device=x.device), axis=y.ndim - 1)


def diagonal_scatter(x, src, offset=0, axis1=0, axis2=1):
    """x with its `offset` diagonal in the planes (axis1, axis2) replaced by src (shaped as diagonal's
    result)."""
    x = _operand(x)
    src = _operand(src)
    if src.dtype is not x.dtype:
        src = cast(src, x.dtype)
    y, inv = _plane_last(x, axis1, axis2, "diagonal_scatter")
    r, c = y.shape[-2], y.shape[-1]
    n = _diag_len(r, c, offset)
    want = tuple(y.shape[:-2]) + (n,)
    if tuple(src.shape) != want:
        raise ValueError(f"diagonal_scatter: source shape {tuple(src.shape)} does not match the diagonal's "
                         f"shape {want}")
    rows = reshape(arange(r, device=x.device), (r, 1))
    cols = reshape(arange(c, device=x.device), (1, c))
    mask = eq(sub(cols, rows), offset)
    lead = ((0, 0),) * (src.ndim - 1)
    if offset >= 0:  # entry (i, i + offset) holds src[i]: src along the rows
        v = expand_dims(pad(src, lead + ((0, r - n),)), src.ndim)
    else:            # entry (j - offset, j) holds src[j]: src along the columns
        v = expand_dims(pad(src, lead + ((0, c - n),)), src.ndim - 1)
    return transpose(where(mask, v, y), inv)


def diag_embed(x, offset=0, axis1=-2, axis2=-1):
    """Matrices whose `offset` diagonal (in the output's axes axis1, axis2) holds x's last axis."""
    x = _operand(x)
    if x.ndim == 0:
        raise ValueError("diag_embed: expected an array of at least 1 dimension")
    nd = x.ndim + 1
    a, b = normalize_axis(axis1, nd, "diag_embed"), normalize_axis(axis2, nd, "diag_embed")
    if a == b:
        raise ValueError(f"diag_embed: axis1 and axis2 cannot be the same ({axis1}, {axis2})")
    m = x.shape[-1] + builtins.abs(offset)
    out = diagonal_scatter(zeros(tuple(x.shape[:-1]) + (m, m), dtype=x.dtype, device=x.device), x, offset,
                           nd - 2, nd - 1)
    perm = [None] * nd
    perm[a], perm[b] = nd - 2, nd - 1
    rest = iter(range(nd - 2))
    return transpose(out, tuple(p if p is not None else next(rest) for p in perm))


def slice_scatter(x, src, axis=0, start=None, stop=None, step=1):
    """x with x[..., start:stop:step, ...] (along `axis`, step > 0) replaced by src."""
    x = _operand(x)
    src = _operand(src)
    if src.dtype is not x.dtype:
        src = cast(src, x.dtype)
    axis = normalize_axis(axis, x.ndim, "slice_scatter")
    if step is None:
        step = 1
    if step <= 0:
        raise ValueError(f"slice_scatter: step must be positive, got {step}")
    a, b, _ = slice(start, stop, step).indices(x.shape[axis])
    b = builtins.max(a, b)
    starts = tuple(a if d == axis else 0 for d in range(x.ndim))
    stops = tuple(b if d == axis else s for d, s in enumerate(x.shape))
    steps = tuple(step if d == axis else 1 for d in range(x.ndim))
    return slice_scatter_p.bind(x, src, starts=starts, stops=stops, steps=steps)


def select_scatter(x, src, axis, index):
    """x with x[..., index, ...] (along `axis`) replaced by src (x's shape without that axis)."""
    x = _operand(x)
    src = _operand(src)
    axis = normalize_axis(axis, x.ndim, "select_scatter")
    n = x.shape[axis]
    if not -n <= index < n:
        raise IndexError(f"select_scatter: index {index} is out of range for an axis of size {n}")
    index %= n
    want = x.shape[:axis] + x.shape[axis + 1:]
    if tuple(src.shape) != want:
        raise ValueError(f"select_scatter: source shape {tuple(src.shape)} does not match the slice's shape {want}")
    return slice_scatter(x, expand_dims(src, axis), axis, index, index + 1)
