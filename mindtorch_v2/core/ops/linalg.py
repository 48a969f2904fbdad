"""Linear algebra: matmul (NumPy semantics: batch dims broadcast, 1-D operands
promoted and squeezed back), and composites on it."""
import numpy as np

from ._family import move_to_front
from ..primitive import Primitive
from . import _family
from ._family import broadcast_shapes, sum_to_shape
from .elementwise import add
from .shape import expand_dims, reshape, squeeze, swapaxes

__all__ = ["matmul_p", "matmul", "dot", "outer"]


def _matmul_meta(a, b):
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"matmul: primitive operands must be at least 2-D, got {a.shape} and {b.shape}")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} are not aligned "
                         f"({a.shape[-1]} != {b.shape[-2]})")
    d = _family.same_dtype("matmul", a, b)
    try:
        batch = broadcast_shapes("matmul", a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} cannot broadcast: batch dimensions "
                         f"{a.shape[:-2]} and {b.shape[:-2]} differ") from None
    return batch + (a.shape[-2], b.shape[-1]), d


def _mT(x):
    return swapaxes(x, -1, -2)


def _matmul_jvp(ts, out, a, b):
    ta, tb = ts
    res = None
    if ta is not None:
        res = matmul_p.bind(ta, b)
    if tb is not None:
        t = matmul_p.bind(a, tb)
        res = t if res is None else add(res, t)
    return _family.broadcast_to_shape(res, out.shape)


matmul_p = Primitive(
    "matmul", _matmul_meta, vjp_reads=((1,), (0,)), jvp=_matmul_jvp,
    vjp=(lambda g, out, a, b: sum_to_shape(matmul_p.bind(g, _mT(b)), a.shape),
         lambda g, out, a, b: sum_to_shape(matmul_p.bind(_mT(a), g), b.shape)))
def _matmul_batch(vals, bdims):
    """Batch axis first on batched operands, logical ranks aligned; numpy broadcasting does the rest."""
    ranks = [len(v.shape) - (d is not None) for v, d in zip(vals, bdims)]
    rank = max(ranks)
    args = []
    for v, d, r in zip(vals, bdims, ranks):
        if d is not None:
            v = move_to_front(v, d)
            if r < rank:
                v = reshape(v, (v.shape[0],) + (1,) * (rank - r) + tuple(v.shape[1:]))
        args.append(v)
    return matmul_p.bind(*args), 0


matmul_p.batch = _matmul_batch
@matmul_p.def_impl("cpu")
def _matmul_cpu(a, b):
    if not (a.size and b.size):
        return np.matmul(a, b)
    if a.shape[-1] == 1:
        # an outer product per batch element (what per-example gradients are): numpy's batched
        # matmul has no BLAS path for an inner size of 1 (~4x slower here), and a broadcast
        # multiply ~1.7x slower, than einsum's sum-of-products loop
        return np.einsum("...ik,...kj->...ij", a, b)
    if b.ndim == 2 and a.ndim > 2:
        # a batch of matrices against one matrix: one GEMM over the folded batch, not one per matrix
        return np.matmul(a.reshape(-1, a.shape[-1]), b).reshape(a.shape[:-1] + (b.shape[-1],))
    if a.ndim == 2 and b.ndim > 2:
        # one matrix against a batch (a VJP under vmap): fold the batch into the columns of one GEMM
        k, n = b.shape[-2], b.shape[-1]
        cols = np.moveaxis(b, -2, 0).reshape(k, -1)
        return np.moveaxis((a @ cols).reshape((a.shape[0],) + b.shape[:-2] + (n,)), 0, -2)
    return np.matmul(a, b)


def matmul(a, b):
    """Matrix product with NumPy semantics (1-D operands are vectors, batch dims broadcast)."""
    a, b = _family.promote("matmul", a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: both operands must be at least 1-D, got shapes {a.shape} and {b.shape}")
    if a.ndim >= 2 and b.ndim >= 2:
        return matmul_p.bind(a, b)
    if a.ndim == 1 and b.ndim == 1 and a.shape[0] != b.shape[0]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} are not aligned ({a.shape[0]} != {b.shape[0]})")
    a2 = expand_dims(a, 0) if a.ndim == 1 else a
    b2 = expand_dims(b, 1) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} are not aligned ({a2.shape[-1]} != {b2.shape[-2]})")
    out = matmul_p.bind(a2, b2)
    if b.ndim == 1:
        out = squeeze(out, -1)
    if a.ndim == 1:
        out = squeeze(out, -2 if b.ndim != 1 else -1)
    return out


def dot(a, b):
    return matmul(a, b)


def outer(a, b):
    return matmul(expand_dims(a, 1), expand_dims(b, 0))
