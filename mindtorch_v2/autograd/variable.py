"""torch.autograd.Variable: the pre-0.4 wrapper, today a name for Tensor.

As in torch, `isinstance(t, Variable)` holds for every Tensor, and `Variable(t, requires_grad=False)` returns
a new leaf sharing t's storage (t detached) with the requested requires_grad; `Variable()` is an empty
float tensor. The result is a plain Tensor, never a Variable subclass instance.
"""
import warnings

from ..eager.creation import empty
from ..eager.tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)

    def __call__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            return empty(0).requires_grad_(bool(requires_grad))
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(bool(requires_grad))


class Variable(metaclass=_VariableMeta):
    """The legacy autograd wrapper; calling it returns a Tensor (see the module docstring)."""
