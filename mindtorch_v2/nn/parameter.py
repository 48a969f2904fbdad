"""torch.nn.Parameter: a Tensor that a Module registers as one of its parameters."""
from ..eager.tensor import Tensor


def _alias(cls, data):
    """An instance of `cls` viewing data's storage and geometry, with no autograd history."""
    t = Tensor.__new__(cls)
    t._storage = data._storage
    t._shape, t._strides, t._offset, t._full = data._shape, data._strides, data._offset, data._full
    t._base = None
    t._grad_fn = None
    t._output_nr = 0
    t._rg = False
    t._grad = None
    t._retains_grad = False
    t._acc = None
    t._view_version = data._storage.version.value
    return t


class Parameter(Tensor):
    """A leaf Tensor sharing `data`'s storage, with requires_grad=True by default."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..eager.creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): expected a Tensor as data, got {type(data).__name__}")
        p = _alias(cls, data)
        p.requires_grad_(bool(requires_grad))
        return p

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__


class Buffer(Tensor):
    """torch.nn.Buffer: marks a Tensor assigned to a Module attribute as a buffer."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from ..eager.creation import empty
            data = empty(0)
        b = _alias(cls, data)
        b.persistent = persistent
        return b
