"""The names PyTorch's checkpoints use for storages, dtypes and rebuild functions, both ways."""
from ..core import dtypes as _dt

# dtypes PyTorch saves through a typed storage (torch.<Name>Storage, numel in elements, _rebuild_tensor_v2);
# the rest (uint16/32/64, float8) go through torch.storage.UntypedStorage (numel in bytes, _rebuild_tensor_v3)
TYPED_STORAGE = {
    _dt.float32: "FloatStorage", _dt.float64: "DoubleStorage", _dt.float16: "HalfStorage",
    _dt.bfloat16: "BFloat16Storage", _dt.complex64: "ComplexFloatStorage", _dt.complex128: "ComplexDoubleStorage",
    _dt.bool_: "BoolStorage", _dt.uint8: "ByteStorage", _dt.int8: "CharStorage", _dt.int16: "ShortStorage",
    _dt.int32: "IntStorage", _dt.int64: "LongStorage",
}
DTYPE_BY_STORAGE = {name: dtype for dtype, name in TYPED_STORAGE.items()}


def torch_dtype_name(dtype):
    """The attribute of the torch module naming `dtype` (torch.bool for our bool_)."""
    return "bool" if dtype is _dt.bool_ else dtype.name


DTYPE_BY_TORCH_NAME = {torch_dtype_name(d): d for d in _dt.ALL}


class Global:
    """A global of PyTorch written into a pickle by its torch name (module, name)."""

    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module = module
        self.name = name

    def __repr__(self):
        return f"{self.module}.{self.name}"

    def __call__(self, *args):  # pickle's save_reduce insists on a callable; this one is only ever written
        raise TypeError(f"{self} is a name written into checkpoints, not callable here")


REBUILD_TENSOR_V2 = Global("torch._utils", "_rebuild_tensor_v2")
REBUILD_TENSOR_V3 = Global("torch._utils", "_rebuild_tensor_v3")
REBUILD_PARAMETER = Global("torch._utils", "_rebuild_parameter")
REBUILD_PARAMETER_WITH_STATE = Global("torch._utils", "_rebuild_parameter_with_state")
REBUILD_META = Global("torch._utils", "_rebuild_meta_tensor_no_storage")
ORDERED_DICT = Global("collections", "OrderedDict")
SIZE = Global("torch", "Size")
DEVICE = Global("torch", "device")
UNTYPED_STORAGE = Global("torch.storage", "UntypedStorage")
STORAGE_GLOBALS = {dtype: Global("torch", name) for dtype, name in TYPED_STORAGE.items()}
DTYPE_GLOBALS = {dtype: Global("torch", torch_dtype_name(dtype)) for dtype in _dt.ALL}


class StorageType:
    """What a storage-type global (torch.FloatStorage, torch.storage.UntypedStorage) loads as: its dtype,
    None for untyped (bytes)."""

    __slots__ = ("dtype", "name")

    def __init__(self, dtype, name):
        self.dtype = dtype
        self.name = name

    def __repr__(self):
        return self.name


STORAGE_TYPES = {f"torch.{name}": StorageType(dtype, f"torch.{name}") for dtype, name in TYPED_STORAGE.items()}
STORAGE_TYPES["torch.UntypedStorage"] = STORAGE_TYPES["torch.storage.UntypedStorage"] = StorageType(
    None, "torch.UntypedStorage")
