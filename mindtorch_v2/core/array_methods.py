"""Python operators and a few methods on ArrayBase, shared by Arrays and tracers."""
from . import ops
from .array import ArrayBase


def _shape_args(args):
    return args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args


def _install():
    B = ArrayBase
    o = ops
    B.__add__ = lambda a, b: o.add(a, b)
    B.__radd__ = lambda a, b: o.add(b, a)
    B.__sub__ = lambda a, b: o.sub(a, b)
    B.__rsub__ = lambda a, b: o.sub(b, a)
    B.__mul__ = lambda a, b: o.mul(a, b)
    B.__rmul__ = lambda a, b: o.mul(b, a)
    B.__truediv__ = lambda a, b: o.div(a, b)
    B.__rtruediv__ = lambda a, b: o.div(b, a)
    B.__floordiv__ = lambda a, b: o.floor_divide(a, b)
    B.__rfloordiv__ = lambda a, b: o.floor_divide(b, a)
    B.__mod__ = lambda a, b: o.remainder(a, b)
    B.__rmod__ = lambda a, b: o.remainder(b, a)
    B.__pow__ = lambda a, b: o.pow(a, b)
    B.__rpow__ = lambda a, b: o.pow(b, a)
    B.__matmul__ = lambda a, b: o.matmul(a, b)
    B.__rmatmul__ = lambda a, b: o.matmul(b, a)
    B.__neg__ = lambda a: o.neg(a)
    B.__pos__ = lambda a: a
    B.__abs__ = lambda a: o.abs(a)
    # torch and jax.numpy: `~ & | ^` are bitwise (logical on bool, a TypeError on floats)
    B.__invert__ = lambda a: o.bitwise_not(a)
    B.__and__ = lambda a, b: o.bitwise_and(a, b)
    B.__rand__ = lambda a, b: o.bitwise_and(b, a)
    B.__or__ = lambda a, b: o.bitwise_or(a, b)
    B.__ror__ = lambda a, b: o.bitwise_or(b, a)
    B.__xor__ = lambda a, b: o.bitwise_xor(a, b)
    B.__rxor__ = lambda a, b: o.bitwise_xor(b, a)
    # `x == None` is False (and `!=` True), as for torch tensors, instead of a TypeError
    B.__eq__ = lambda a, b: o.eq(a, b) if b is not None else False
    B.__ne__ = lambda a, b: o.ne(a, b) if b is not None else True
    B.__lt__ = lambda a, b: o.lt(a, b)
    B.__le__ = lambda a, b: o.le(a, b)
    B.__gt__ = lambda a, b: o.gt(a, b)
    B.__ge__ = lambda a, b: o.ge(a, b)
    B.__getitem__ = lambda a, key: o.getitem(a, key)
    B.T = property(lambda a: o.transpose(a))
    B.mT = property(lambda a: o.swapaxes(a, -1, -2))
    B.reshape = lambda a, *shape: o.reshape(a, _shape_args(shape))
    B.transpose = lambda a, *axes: o.transpose(a, _shape_args(axes) if axes else None)
    B.astype = lambda a, dtype: o.cast(a, dtype)
    B.ravel = lambda a: o.reshape(a, (-1,))
    B.squeeze = lambda a, axis=None: o.squeeze(a, axis)
    for name in ("sum", "prod", "max", "min", "any", "all", "mean"):
        setattr(B, name, (lambda fn: lambda a, axis=None, keepdims=False: fn(a, axis, keepdims))(getattr(o, name)))
    B.var = lambda a, axis=None, ddof=0, keepdims=False: o.var(a, axis, ddof, keepdims)
    B.std = lambda a, axis=None, ddof=0, keepdims=False: o.std(a, axis, ddof, keepdims)
    B.argmax = lambda a, axis=None, keepdims=False: o.argmax(a, axis, keepdims)
    B.argmin = lambda a, axis=None, keepdims=False: o.argmin(a, axis, keepdims)
    B.cumsum = lambda a, axis=None: o.cumsum(a, axis)
    B.clip = lambda a, min=None, max=None: o.clamp(a, min, max)


_install()
