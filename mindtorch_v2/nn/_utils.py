"""Helpers shared by the implementation modules of torch.nn.functional (argument tuples, torch's type words,
concrete values for argument checks, the inplace=True pattern, contractions along an axis)."""
import numbers

import numpy as np

from ..core import Array, pad
from ..eager.grad_mode import is_grad_enabled
from ..eager.ops import matmul


def ntuple(v, k, name):
    """v as a k-tuple of ints: an int or a 1-sequence repeated, or k ints (else RuntimeError naming `name`)."""
    if isinstance(v, numbers.Integral):
        return (int(v),) * k
    v = tuple(int(a) for a in v)
    if len(v) == 1:
        return v * k
    if len(v) != k:
        raise RuntimeError(f"{name} must have {k} elements, got {v}")
    return v



def concrete(t):
    """t's values as a numpy array when they are concrete (not traced, not meta), for argument checks only."""
    v = t._value()
    if type(v) is Array and t.device.type != "meta":
        return np.asarray(v)
    return None


def inplace_result(input, out, inplace):
    """out, or input overwritten with out for the inplace=True variants."""
    if inplace:
        return input.copy_(out)
    return out


def inplace_source(input, inplace):
    """What an activation reads its values from: input itself, or for inplace=True a copy of it when autograd
    records, since the graph would otherwise save the tensor the writeback overwrites (torch's in-place
    activations save the original input the same way)."""
    if inplace and input.requires_grad and is_grad_enabled():
        return input.clone()
    return input


def along(x, axis, m):
    """x with its `axis` contracted against the (out, in) matrix m."""
    return matmul(x.movedim(axis, -1), m.t()).movedim(-1, axis)


def pad_last(x, widths, value):
    """x padded on the last axis by widths = (left, right) with value."""
    return pad(x, ((0, 0),) * (x.ndim - 1) + (tuple(widths),), value=value)
