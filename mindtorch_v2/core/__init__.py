"""mindtorch_v2.core: immutable arrays, primitives and composable transforms.

    from mindtorch_v2 import core
    f = lambda x: core.sum(core.tanh(x) ** 2)
    core.grad(f)(core.asarray([0.5, 1.0]))
"""
from . import dtypes, pytree
from .array import Array, ArrayBase
from .autodiff import grad, jvp, value_and_grad, vjp
from .devices import Device, device, cpu, meta, register_backend
from .dtypes import (DType, bool_, float16, float32, float64, int8, int16, int32, int64, promote_types,
                     result_type, uint8)
from .primitive import Primitive, Tracer, bind, primitives
from . import ops
from . import operators as _operators  # noqa: F401  (installs + - * / @ [] ... on arrays)
from .transforms import hessian, jacfwd, jacrev
from .batching import vmap
from . import backends as _backends  # noqa: F401  (registers cpu and, where present, npu)


def _export_ops():
    g = globals()
    # random stays in its own namespace (core.random.split is not an array split), as in jax.random
    for mod in (ops.elementwise, ops.shape, ops.reduction, ops.creation, ops.indexing, ops.linalg,
                ops.composite, *[m for m in ops.extra_modules() if m.__name__ != ops.__name__ + ".random"]):
        for name, val in vars(mod).items():
            if name.startswith("_") or name in g:
                continue
            if isinstance(val, Primitive) or (callable(val) and getattr(val, "__module__", "").startswith(__name__)):
                g[name] = val


_export_ops()
from .ops import random  # noqa: E402,F401  (functional random with explicit keys)
