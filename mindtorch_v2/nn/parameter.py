"""torch.nn.Parameter: a Tensor that a Module registers as one of its parameters."""
from ..eager.tensor import Tensor


class Parameter(Tensor):
    """A leaf Tensor sharing `data`'s storage, with requires_grad=True by default."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..eager.creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): expected a Tensor as data, got {type(data).__name__}")
        p = data._alias(cls)
        p.requires_grad_(bool(requires_grad))
        return p

    def __deepcopy__(self, memo):
        """A Parameter over a clone of the data with the same requires_grad; as torch, neither the grad
        nor other attributes are copied (tied weights stay tied through the memo)."""
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(Tensor._from_value(self._value()), self._rg)
        memo[id(self)] = result
        return result

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__


class Buffer(Tensor):
    """torch.nn.Buffer: marks a Tensor assigned to a Module attribute as a buffer."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from ..eager.creation import empty
            data = empty(0)
        b = data._alias(cls)
        b.persistent = persistent
        return b
