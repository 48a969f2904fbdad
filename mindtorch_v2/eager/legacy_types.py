"""The legacy tensor types: torch.FloatTensor, torch.LongTensor, ... (CPU, one dtype each).

As in torch, each is a class that is not a Tensor subclass: calling it builds a tensor of its dtype
(`LongTensor([1, 2])` from data, `FloatTensor(2, 3)` an uninitialised 2x3, `FloatTensor()` an empty
one, `FloatTensor(t)` an alias of a float32 tensor t), and `isinstance(x, torch.FloatTensor)` asks
whether x is a CPU float32 tensor (its metaclass answers). `x.type()` prints these names and
`x.type(torch.FloatTensor)` / `x.type("torch.FloatTensor")` convert to them (`legacy_dtype`).
"""
from .. import core
from .creation import empty, tensor
from .tensor import Size, Tensor

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
           "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]


class _TensorType(type):
    """The metaclass of the legacy types: isinstance checks dtype and device, calling builds a tensor."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu"

    def __call__(cls, *args, device=None, **kwargs):
        if kwargs:
            raise TypeError(f"new() received an invalid combination of arguments - got unexpected keyword "
                            f"argument(s) {', '.join(kwargs)}; {cls.__name__} takes (*size), (data), (Tensor other) "
                            f"or (), each with an optional device")
        if device is not None and core.device(device).type != "cpu":
            raise RuntimeError(f"legacy constructor expects device type: cpu but device type: "
                               f"{core.device(device).type} was passed")
        if not args:
            return empty(0, dtype=cls.dtype)
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return empty(*args, dtype=cls.dtype)
        if len(args) == 1:
            (arg,) = args
            if isinstance(arg, Size):
                return empty(tuple(arg), dtype=cls.dtype)
            if isinstance(arg, Tensor):
                if arg.dtype is not cls.dtype or arg.device.type != "cpu":
                    raise TypeError(f"expected a cpu {cls.dtype} tensor (got a {arg.device.type} {arg.dtype} one)")
                return arg.view_as(arg)
            return tensor(arg, dtype=cls.dtype)
        raise TypeError(f"new() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)}), but expected one of: (*, device), "
                        f"(tuple of ints size, *, device), (Tensor other), (object data, *, device)")

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


def _legacy_type(name, dtype):
    cls = _TensorType(name, (), {"dtype": dtype, "is_cuda": False, "is_sparse": False, "__module__": "torch",
                                 "__doc__": f"The legacy CPU {dtype} tensor type (see the module docstring)."})
    return cls


FloatTensor = _legacy_type("FloatTensor", core.float32)
DoubleTensor = _legacy_type("DoubleTensor", core.float64)
HalfTensor = _legacy_type("HalfTensor", core.float16)
BFloat16Tensor = _legacy_type("BFloat16Tensor", core.bfloat16)
ByteTensor = _legacy_type("ByteTensor", core.uint8)
CharTensor = _legacy_type("CharTensor", core.int8)
ShortTensor = _legacy_type("ShortTensor", core.int16)
IntTensor = _legacy_type("IntTensor", core.int32)
LongTensor = _legacy_type("LongTensor", core.int64)
BoolTensor = _legacy_type("BoolTensor", core.bool_)

_BY_NAME = {f"torch.{t.__name__}": t for t in (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor,
                                                CharTensor, ShortTensor, IntTensor, LongTensor, BoolTensor)}


def legacy_dtype(dtype):
    """The dtype a `Tensor.type(...)` argument names: a dtype, a legacy type, or its name ("torch.FloatTensor")."""
    if isinstance(dtype, _TensorType):
        return dtype.dtype
    if isinstance(dtype, str):
        if dtype not in _BY_NAME:
            raise ValueError(f"invalid type: '{dtype}'")
        return _BY_NAME[dtype].dtype
    return dtype
