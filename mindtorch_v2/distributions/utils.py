"""Helpers shared by the distributions: parameter broadcasting, the probs <-> logits maps, the cached
property the parameterisations use, and reductions over trailing event dimensions."""
from numbers import Number

from . import _torch as torch

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]


def _show(x):
    """x as torch's f-strings show it: a 0-d tensor as its python number."""
    return x.item() if isinstance(x, torch.Tensor) and x.dim() == 0 else x


def broadcast_all(*values):
    """The values as tensors of one broadcast shape; python numbers take the tensors' dtype (else the default)."""
    tensors = [v for v in values if isinstance(v, torch.Tensor)]
    for v in values:
        if not isinstance(v, (torch.Tensor, Number)):
            raise ValueError("Input arguments must all be instances of Number, torch.Tensor or objects "
                             "implementing __torch_function__.")
    like = tensors[0] if tensors else None
    dtype = like.dtype if like is not None else torch.get_default_dtype()
    device = like.device if like is not None else None
    as_t = [v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=dtype, device=device) for v in values]
    return tuple(torch.broadcast_tensors(*as_t))


def all_true(valid):
    """Whether every element of the bool tensor is true. Under torch.func.grad the check reads the concrete
    values; a value that vmap batches or torch.compile traces has no one truth to read: the check passes
    there, as PyTorch's does under vmap."""
    try:
        return bool(valid.all())
    except TypeError:  # (torch.compile's trace: ConcretizationTypeError)
        return True
    except RuntimeError as exc:
        if not str(exc).startswith("vmap:"):
            raise
        return True


def cholesky(matrix):
    """The lower Cholesky factor; on meta tensors through cholesky_ex, which needs no data for its shape."""
    if matrix.device.type == "meta":
        return torch.linalg.cholesky_ex(matrix).L
    return torch.linalg.cholesky(matrix)


def sum_rightmost(value, n):
    """value summed over its n rightmost dimensions (n <= 0: unchanged)."""
    return value.reshape(tuple(value.shape[:value.dim() - n]) + (-1,)).sum(-1) if n > 0 else value


def clamp_probs(probs):
    """probs kept inside (0, 1) by the dtype's resolution, so logs and logits stay finite."""
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from log-odds (binary) or unnormalised log-probabilities (categorical)."""
    return torch.sigmoid(logits) if is_binary else torch.softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    """Log-odds (binary) or log-probabilities (categorical) of probabilities, clamped away from 0 and 1."""
    p = clamp_probs(probs)
    return torch.log(p) - torch.log1p(-p) if is_binary else torch.log(p)


class lazy_property:  # noqa: N801 - torch's name
    """A property computed on first read and then stored on the instance (which shadows it)."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        with torch.enable_grad():
            value = self.fn(obj)
        obj.__dict__[self.fn.__name__] = value
        return value


def _tril_positions(n, diag):
    import numpy as np
    return np.tril_indices(n, diag)


def tril_matrix_to_vec(mat, diag=0):
    """The entries of mat on and below diagonal `diag`, row by row, as the last dimension."""
    rows, cols = _tril_positions(mat.shape[-1], diag)
    return mat[..., torch.tensor(rows), torch.tensor(cols)]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of tril_matrix_to_vec: a square matrix with vec below diagonal `diag`, zeros elsewhere."""
    import math
    m = vec.shape[-1]
    n = round((math.sqrt(1 + 8 * m) - 1) / 2) - diag  # m = (n + diag)(n + diag + 1) / 2
    rows, cols = _tril_positions(n, diag)
    flat = torch.zeros(tuple(vec.shape[:-1]) + (n * n,), dtype=vec.dtype, device=vec.device)
    index = torch.tensor(rows * n + cols).expand(tuple(vec.shape))
    return flat.scatter(-1, index, vec).reshape(tuple(vec.shape[:-1]) + (n, n))
