"""mindtorch_v2: `import mindtorch_v2 as torch` runs ordinary PyTorch code on NumPy.

The eager front end (Tensor, autograd, nn, optim, utils.data) is built on
`mindtorch_v2.core`, a pure functional core with composable transforms.

Where a name comes from
-----------------------
Every public name is defined once and imported here by name from the module that defines it
(nothing is built by reflection). A torch op is declared once, on its def in an eager module:

    @torch_op(inplace=True, out=True)          # mindtorch_v2/eager/ops.py
    def add(input, other, *, alpha=1): ...

which gives torch.add (with out=), Tensor.add and Tensor.add_; `aliases=("subtract",)` adds other
names, `method=False` makes a function only. An op a helper builds is one line of the same form
(`exp = torch_op(_unary(core.exp), name="exp", inplace=True, out=True)`). A method that is not a torch
function with self first (operators, `to`, `view`) is a def under `@tensor_method`. Adding an op is
that declaration plus its name in the module's `__all__`, imported below. `inspect.getsource(
torch.Tensor.add_)` shows the declaration. eager/declare.py says how the forms are derived.

Layers (tests/test_layering.py enforces them, and that no import cycle exists): core never imports
above itself; its machinery (primitive, autodiff, batching, pytree) imports no op family; eager uses
only core's public names; nn, optim, utils, func and autograd import from the defining modules,
never this package.
"""
from . import core
from .core import Device as device
from .core import dtypes as _dt
from . import eager  # noqa: F401  (runs the declarations of the torch surface)
from .eager.grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                              set_grad_enabled)
from .eager.functionalize import functionalize
from .eager.tensor import Size, Tensor

__version__ = "0.1.0"

# dtypes: the core's interned DType objects under torch's names
bool = _dt.bool_  # noqa: A001
uint8 = _dt.uint8
int8 = _dt.int8
int16 = short = _dt.int16
int32 = int = _dt.int32  # noqa: A001
int64 = long = _dt.int64
float16 = half = _dt.float16
float32 = float = _dt.float32  # noqa: A001
float64 = double = _dt.float64
dtype = _dt.DType


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.is_floating_point()


def numel(input):
    return input.numel()


def clone(input, memory_format=None):
    return input.clone()


from .eager.creation import get_default_dtype, set_default_dtype  # noqa: E402
from .eager.creation import (Generator, arange, as_tensor, bernoulli, default_generator, empty, empty_like, eye,  # noqa
                             from_numpy, full, full_like, initial_seed, linspace, manual_seed, multinomial, normal,
                             ones, ones_like, rand, rand_like, randint, randint_like, randn, randn_like, randperm,
                             seed, tensor, zeros, zeros_like)

from .eager.ops import (abs, absolute, add, addmm, all, allclose, amax, amin, any, argmax, argmin, argsort, bitwise_and, bitwise_not,
    bitwise_or, bitwise_xor, bmm, broadcast_shapes, broadcast_tensors, broadcast_to, can_cast, cat,
    cdist, ceil, clamp, clamp_max, clamp_min, clip, concat, concatenate, cos, count_nonzero, cumsum,
    diag, div, divide, dot, einsum, eq, equal, erf, exp, expm1, flip, floor, floor_divide, fmod, gather,
    ge, ger, gt, hstack, index_add, index_select, inner, isclose, isfinite, isinf, isnan, le, lerp, log,
    log10, log1p, log2, log_softmax, logical_and, logical_not, logical_or, logical_xor, logsumexp, lt,
    masked_fill, masked_select, matmul, max, maximum, mean, min, minimum, mm, mul, multiply, mv, ne,
    neg, negative, nonzero, norm, outer, pow, prod, promote_types, reciprocal, relu, remainder, repeat,
    result_type, roll, round, rsqrt, rsub, scatter, scatter_add, sigmoid, sign, sin, softmax, sort,
    sqrt, square, stack, std, sub, subtract, sum, take, take_along_dim, tan, tanh, tile, topk, trace,
    tril, triu, true_divide, trunc, var, vstack, where)  # noqa: E402,F401,A004
from .eager.views import (chunk, diagonal, flatten, moveaxis, movedim, narrow, permute, reshape, select, split, squeeze,
    swapaxes, swapdims, t, transpose, unbind, unflatten, unsqueeze)  # noqa: E402,F401,A004

from . import autograd, npu  # noqa: E402,F401
from . import optim  # noqa: E402,F401
from .serialization import load, save  # noqa: E402,F401
from . import utils  # noqa: E402,F401
from . import func  # noqa: E402,F401
from .func import vmap  # noqa: E402,F401
from . import nn  # noqa: E402,F401
