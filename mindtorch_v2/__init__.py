"""mindtorch_v2: `import mindtorch_v2 as torch` runs ordinary PyTorch code on NumPy.

The eager front end (Tensor, autograd, nn, optim, utils.data) is built on
`mindtorch_v2.core`, a pure functional core with composable transforms.
"""
from . import core
from .core import dtypes as _dt
from .core.devices import Device as device
from .eager import creation as _creation
from .eager import ops as _ops
from .eager import views as _views
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


def _export(module, names=None):
    g = globals()
    for name in names or [n for n in vars(module) if not n.startswith("_")]:
        val = getattr(module, name)
        if callable(val) and name not in g:
            g[name] = val


from .eager.creation import get_default_dtype, set_default_dtype  # noqa: E402
from .eager.creation import (Generator, arange, as_tensor, bernoulli, default_generator, empty, empty_like, eye,  # noqa
                             from_numpy, full, full_like, initial_seed, linspace, manual_seed, multinomial, normal,
                             ones, ones_like, rand, rand_like, randint, randint_like, randn, randn_like, randperm,
                             seed, tensor, zeros, zeros_like)

_export(_ops, _ops._METHODS + ["concat", "concatenate", "cat", "stack", "hstack", "vstack", "broadcast_tensors",
                               "broadcast_shapes", "einsum", "where", "cdist", "ger", "rsub",
                               "result_type", "promote_types", "can_cast"])
for _name in ("reshape", "transpose", "permute", "squeeze", "unsqueeze", "flatten", "unflatten", "narrow", "select",
              "split", "chunk", "unbind", "diagonal", "movedim", "t", "swapaxes", "moveaxis"):
    globals()[_name] = getattr(_views, {"swapaxes": "transpose", "moveaxis": "movedim"}.get(_name, _name))
del _name

from . import autograd, npu  # noqa: E402,F401
from . import optim  # noqa: E402,F401
from .serialization import load, save  # noqa: E402,F401
from . import utils  # noqa: E402,F401
from . import func  # noqa: E402,F401
from .func import vmap  # noqa: E402,F401
from . import nn  # noqa: E402,F401
