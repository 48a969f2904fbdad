"""The eager layer: mutable Tensors over shared Storage, functionalized in-place ops, tape autograd.

Importing it runs every declaration of the torch surface (see declare.py): the Tensor methods are set
by the `@torch_op` / `@tensor_method` declarations in these modules.
"""
from . import creation, inplace, methods, ops, views  # noqa: F401
from .autograd import api  # noqa: F401  (Tensor.backward)
from .tensor import Size, Tensor  # noqa: F401
