"""The eager layer: mutable Tensors over shared Storage, functionalized in-place ops, tape autograd.

Importing it runs every declaration of the torch surface (see declare.py): the Tensor methods are set
by the `@torch_op` / `@tensor_method` declarations in these modules.
"""
from . import (complex_ops, creation, inplace, linalg_ops, math_ops, methods, ops, pointwise_ops,  # noqa: F401
               random_ops, reductions, selection_ops, shape_ops, statistics_ops, views, windows)
from .autograd import api  # noqa: F401  (Tensor.backward)
from .tensor import Size, Tensor  # noqa: F401
