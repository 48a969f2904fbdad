"""The torch names the distributions are written with, imported by name from their defining modules.

The distribution modules read `torch.log(x)`, `torch.Size(...)`, `torch.linalg.cholesky(a)` as PyTorch's own
torch.distributions does; `from . import _torch as torch` gives them this namespace. The top package imports
torch.distributions, so importing the top package back here would be an import cycle.
"""
import math

from ..core.dtypes import bool_ as bool  # noqa: A004
from ..core.dtypes import finfo, float16, float32, float64, int64  # noqa: F401
from ..core.dtypes import int64 as long  # noqa: F401
from ..eager.creation import (  # noqa: F401
    arange, as_tensor, empty, eye, full, full_like, get_default_dtype, ones, ones_like, tensor, zeros, zeros_like,
)
from ..eager.random_ops import Generator, bernoulli, multinomial, normal, rand, randn  # noqa: F401
from ..eager.grad_mode import enable_grad, no_grad, is_grad_enabled  # noqa: F401
from ..eager.linalg_ops import cholesky_inverse  # noqa: F401
from ..eager.math_ops import atan, atanh, digamma, erfc, erfinv, lgamma, logit, polygamma, xlogy  # noqa: F401
from ..eager.ops import (  # noqa: F401
    abs, all, any, broadcast_shapes, broadcast_tensors, cat, ceil, clamp, cumsum, diag, erf, exp, expm1, flip, floor,
    gather, ge, gt, isclose, le, log, log1p, log_softmax, logsumexp, lt, matmul, max, maximum, min, minimum, pow,
    rsqrt, sigmoid, sign, softmax, sqrt, square, stack, sum, tan, tanh, where,
)
from ..eager.reductions import cumprod  # noqa: F401
from ..eager.shape_ops import diag_embed  # noqa: F401
from ..eager.tensor import Size, Tensor  # noqa: F401
from ..eager.views import transpose  # noqa: F401
from .. import autograd, linalg, special  # noqa: F401
from ..nn import functional as _functional

inf = math.inf
nan = math.nan


def is_tensor(obj):
    return isinstance(obj, Tensor)


class nn:  # noqa: N801 - torch.nn.functional, the only part of torch.nn the distributions use
    functional = _functional
