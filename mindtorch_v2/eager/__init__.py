"""The eager layer: mutable Tensors over shared Storage, functionalized in-place ops, tape autograd."""
from . import creation, inplace, methods, ops, views
from .tensor import Size, Tensor

views.install(Tensor)
ops.install(Tensor)
methods.install(Tensor)
creation.install(Tensor)
