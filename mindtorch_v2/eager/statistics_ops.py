"""Norms, distances and moments over eager ops: dist, pdist, renorm, cov, corrcoef (ported from ATen's
composites, so the values and the gradients come from the ops they are made of)."""
import warnings

import numpy as np

from .. import core
from ..core import dtypes as _dt
from .complex_ops import complex as _complex
from .declare import torch_op
from .ops import clamp, index_select, mm, norm, sqrt, sub, sum, true_divide, where
from .tensor import Tensor, _dim

__all__ = ["dist", "renorm", "cov", "corrcoef", "pdist"]


@torch_op(out=True)
def dist(input, other, p=2):
    """The p-norm of input - other (broadcast)."""
    diff = sub(input, other)
    if diff.dtype.category < _dt.FLOAT:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{diff.dtype.scalar_name} instead.")
    return norm(diff, p)


@torch_op(inplace=True, out=True)
def renorm(input, p, dim, maxnorm):
    """input with each slice along dim whose p-norm exceeds maxnorm scaled down to norm maxnorm."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dtype.category < _dt.FLOAT:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{input.dtype.scalar_name}")
    if input.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    d = _dim(dim, input.ndim)
    norms = norm(input, p, tuple(i for i in range(input.ndim) if i != d), keepdim=True)
    factor = where(norms > maxnorm, true_divide(maxnorm, norms + 1e-7), 1.0)
    return input * factor.to(input.dtype)


@torch_op
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in input's rows (observations in its columns), with optional
    integer frequency weights and float observation weights; squeezed as torch squeezes it."""
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    if input.dtype is _dt.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, n, fweights.dtype.category == _dt.INT, "integral")
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n, aweights.dtype.category == _dt.FLOAT, "floating point")
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = n
    else:
        w_sum = sum(w)
        if n and not bool(w_sum != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = true_divide(sum(x * w if w is not None else x, 1), w_sum)
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - true_divide(correction * sum(w * aweights), w_sum)
    else:
        norm_factor = w_sum - correction
    if bool(norm_factor <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=3)
        norm_factor = 0 if w is None else norm_factor * 0
    x = x - avg.unsqueeze(1)
    c = mm(x, (x * w if w is not None else x).t().conj())
    return true_divide(c, norm_factor).squeeze()


def _check_weights(name, w, n, dtype_ok, kind):
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with {w.ndim} "
                           "dimensions")
    if not dtype_ok:
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{w.dtype.scalar_name} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {n}")
    if n and not bool(w.min() >= 0):
        raise RuntimeError(f"cov(): {name} cannot be negative")


@torch_op
def corrcoef(input):
    """Pearson's correlation coefficients of input's rows (cov normalized, clipped to [-1, 1])."""
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return true_divide(c, c)
    d = c.diagonal()
    stddev = sqrt(d.real if d.is_complex() else d)
    c = true_divide(c, stddev.reshape(-1, 1))
    c = true_divide(c, stddev.reshape(1, -1))
    if c.is_complex():
        return _complex(clamp(c.real, -1, 1), clamp(c.imag, -1, 1))
    return clamp(c, -1, 1)



@torch_op(method=False)
def pdist(input, p=2):
    """The p-norm distances between every pair of input's rows (i < j, row-major), as a 1-D tensor."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if input.dtype.category != _dt.FLOAT:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    i, j = np.triu_indices(input.shape[0], 1)
    rows = [Tensor._from_value(core.asarray(k.astype(np.int64), device=input.device)) for k in (i, j)]
    diff = sub(index_select(input, 0, rows[0]), index_select(input, 0, rows[1]))
    same = (diff == 0).all(1, keepdim=True)  # equal rows: distance 0 with gradient 0, as torch's kernel
    return where(same.squeeze(1), 0.0, norm(where(same, 1.0, diff), p, 1))
