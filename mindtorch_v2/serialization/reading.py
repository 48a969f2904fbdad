"""torch.load: PyTorch's zip and legacy formats, unpickled by a restricted unpickler unless weights_only=False.

Every size the file declares is checked against the file's length before anything is allocated, members
must be stored (never compressed), unique, and inside the file; every tensor view is checked against its
storage's bounds. Problems raise RuntimeError (the container) or pickle.UnpicklingError (data.pkl).
"""
import _compat_pickle
import collections
import contextlib
import io
import os
import pickle
import struct
import zipfile
import zlib

import numpy as np

from .. import core
from ..core import dtypes as _dt
from ..core.array import make as _make_array
from ..eager.storage import UntypedStorage
from ..eager.tensor import Size, Tensor
from ..nn.parameter import Parameter
from . import mindtorch_format, names, writing

_BLOCKED_MODULES = ("sys", "os", "posix", "nt")
_user_globals = set()


def add_safe_globals(safe_globals):
    """Allow these globals (objects, or (object, "module.name") pairs) in weights_only loads."""
    global _user_globals
    _user_globals = _user_globals | set(safe_globals)


def get_safe_globals():
    return list(_user_globals)


def clear_safe_globals():
    global _user_globals
    _user_globals = set()


@contextlib.contextmanager
def safe_globals(globals_list):
    """Within the block, these globals are allowed too."""
    global _user_globals
    saved = _user_globals
    _user_globals = _user_globals | set(globals_list)
    try:
        yield
    finally:
        _user_globals = saved


def _user_allowed():
    out = {}
    for g in _user_globals:
        if isinstance(g, tuple):
            out[g[1]] = g[0]
        else:
            out[f"{g.__module__}.{g.__qualname__}"] = g
    return out


_WEIGHTS_ONLY_HEAD = (
    "Weights only load failed. This file can still be loaded, to do so you have two options, \x1b[1mdo those "
    "steps only if you trust the source of the checkpoint\x1b[0m. \n\t(1) In PyTorch 2.6, we changed the default "
    "value of the `weights_only` argument in `torch.load` from `False` to `True`. Re-running `torch.load` with "
    "`weights_only` set to `False` will likely succeed, but it can result in arbitrary code execution. Do it only "
    "if you got the file from a trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please "
    "check the recommended steps in the following error message.\n\tWeightsUnpickler error: ")
_WEIGHTS_ONLY_TAIL = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
                      "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
_BLOCKED_HEAD = (
    "Weights only load failed. In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely "
    "succeed, but it can result in arbitrary code execution. Do it only if you got the file from a trusted "
    "source.\n\n\n")


def _weights_only_error(problem):
    return pickle.UnpicklingError(_WEIGHTS_ONLY_HEAD + problem + _WEIGHTS_ONLY_TAIL)


# ---------------------------------------------------------------------------
# rebuilding tensors


class _Invalid(Exception):
    """A problem with the file; load reports it as the RuntimeError users see."""


class LoadedStorage:
    """A storage record of the file: bytes read (or memory-mapped) on first use, then one base tensor
    that every tensor viewing the storage shares."""

    __slots__ = ("loader", "key", "location", "dtype", "numel", "base", "unit")

    def __init__(self, loader, key, location, dtype, numel):
        self.loader, self.key, self.location, self.dtype, self.numel = loader, key, location, dtype, numel
        self.unit = 1 if dtype is None else dtype.itemsize  # the bytes per element the file counts in
        self.base = None

    def tensor(self, dtype):
        """The 1-d base tensor of this storage in `dtype` (which an untyped storage takes from its tensor)."""
        if self.base is None:
            if self.dtype is None:
                if self.numel % dtype.itemsize:
                    raise pickle.UnpicklingError(f"storage {self.key} of {self.numel} bytes does not hold whole "
                                                 f"{dtype} elements")
                self.dtype, self.numel = dtype, self.numel // dtype.itemsize
            self.base = self.loader.storage_tensor(self)
        if self.base.dtype is not dtype:
            raise pickle.UnpicklingError(f"storage {self.key} is viewed as {self.base.dtype} and as {dtype}")
        return self.base


def _int(x, what):
    if type(x) is not int:
        raise pickle.UnpicklingError(f"{what} must be an int, got {type(x).__name__}")
    return x


def rebuild_tensor(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None, dtype=None,
                   metadata=None):
    """torch._utils._rebuild_tensor_v2/_v3: a tensor viewing `storage`, its geometry checked against the
    storage's bounds (a view past the end would read memory the file never gave)."""
    if type(storage) is not LoadedStorage:
        raise pickle.UnpicklingError(f"_rebuild_tensor: expected a storage, got {type(storage).__name__}")
    if dtype is None:
        dtype = storage.dtype
    if type(dtype) is not _dt.DType:
        raise pickle.UnpicklingError("_rebuild_tensor: an untyped storage needs a dtype")
    if not (isinstance(size, tuple) and isinstance(stride, tuple) and len(size) == len(stride)):
        raise pickle.UnpicklingError(f"_rebuild_tensor: size {size!r} and stride {stride!r} do not match")
    size = tuple(_int(n, "a size") for n in size)
    stride = tuple(_int(s, "a stride") for s in stride)
    offset = _int(storage_offset, "the storage offset")
    base = storage.tensor(dtype)
    numel = base.numel()
    if offset < 0 or any(n < 0 for n in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"_rebuild_tensor: negative size, stride or offset in size {size}, stride {stride}, "
                           f"offset {offset}")
    if all(size):
        end = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
    else:
        end = offset
    if end > numel:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
                           f"and itemsize {dtype.itemsize} requiring a storage size of {end * dtype.itemsize} are "
                           f"out of bounds for storage of size {numel * dtype.itemsize}")
    t = base._view_of(size, stride, offset).detach()
    if requires_grad is True:
        if dtype.category not in (_dt.FLOAT, _dt.COMPLEX):
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad_(True)
    return t


def rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    return rebuild_tensor(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype)


def rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    """torch._utils._rebuild_parameter(_with_state): the state holds attributes set on the parameter."""
    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError(f"_rebuild_parameter: expected a tensor, got {type(data).__name__}")
    if state is not None and not (isinstance(state, dict) and all(type(k) is str for k in state)):
        raise pickle.UnpicklingError("_rebuild_parameter_with_state: the state must be a dict of attribute names")
    param = Parameter(data, requires_grad=bool(requires_grad))
    for name, value in (state or {}).items():
        setattr(param, name, value)
    return param


def rebuild_meta_tensor(dtype, size, stride, requires_grad=False):
    """torch._utils._rebuild_meta_tensor_no_storage: a meta tensor of that dtype and geometry."""
    if type(dtype) is not _dt.DType or not isinstance(size, tuple) or not isinstance(stride, tuple) \
            or len(size) != len(stride):
        raise pickle.UnpicklingError("_rebuild_meta_tensor_no_storage: expected a dtype, a size and a stride")
    size = tuple(_int(n, "a size") for n in size)
    stride = tuple(_int(s, "a stride") for s in stride)
    if any(n < 0 for n in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"_rebuild_meta_tensor_no_storage: negative size or stride in {size}, {stride}")
    numel = (sum((n - 1) * s for n, s in zip(size, stride)) + 1) if all(size) else 0
    base = Tensor._from_value(core.zeros((numel,), dtype=dtype, device="meta"))
    t = base._view_of(size, stride, 0).detach()
    if requires_grad is True:
        t.requires_grad_(True)
    return t


def _size(sizes=()):
    if not isinstance(sizes, (tuple, list)) or not all(type(s) is int for s in sizes):
        raise pickle.UnpicklingError("torch.Size expects a tuple of ints")
    return Size(sizes)


def _device(kind, index=None):
    if type(kind) is not str or (index is not None and type(index) is not int):
        raise pickle.UnpicklingError("torch.device expects a string and an optional int index")
    spec = kind if index is None else f"{kind}:{index}"
    try:
        return core.device(spec)
    except (RuntimeError, TypeError, ValueError):
        return spec  # a device this build lacks (cuda:0) stays its name


def _encode(text, encoding="latin1"):
    """_codecs.encode as protocol 2 writes bytes: (str, 'latin1') only."""
    if type(text) is not str or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError("_codecs.encode is allowed only as pickle writes bytes")
    return text.encode("latin1")


def _complex(real=0.0, imag=0.0):
    if type(real) not in (int, float) or type(imag) not in (int, float):
        raise pickle.UnpicklingError("complex expects two numbers")
    return complex(real, imag)


def _container(kind):
    def build(items=()):
        if not isinstance(items, (list, tuple, set, frozenset)):
            raise pickle.UnpicklingError(f"{kind.__name__} expects a list or tuple")
        return kind(items)
    return build


_REBUILDS = {
    "torch._utils._rebuild_tensor_v2": rebuild_tensor,
    "torch._utils._rebuild_tensor_v3": rebuild_tensor_v3,
    "torch._utils._rebuild_tensor": rebuild_tensor,
    "torch._utils._rebuild_parameter": rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": rebuild_parameter,
    "torch._utils._rebuild_meta_tensor_no_storage": rebuild_meta_tensor,
    "torch.Size": _size,
    "torch.device": _device,
}
SAFE_GLOBALS = dict(_REBUILDS)
SAFE_GLOBALS.update({"collections.OrderedDict": collections.OrderedDict, "builtins.set": _container(set),
                     "builtins.frozenset": _container(frozenset), "builtins.complex": _complex,
                     "_codecs.encode": _encode})
SAFE_GLOBALS.update({f"torch.{n}": d for n, d in names.DTYPE_BY_TORCH_NAME.items()})
SAFE_GLOBALS.update(names.STORAGE_TYPES)


class WeightsUnpickler(pickle._Unpickler):
    """The pure-python unpickler with only data opcodes: globals come from SAFE_GLOBALS or the user's
    safe globals, REDUCE calls only those, BUILD sets attributes only on an OrderedDict (a state_dict's
    _metadata) or a user-allowed class, and the opcodes that import or instantiate by other routes are gone."""

    dispatch = dict(pickle._Unpickler.dispatch)
    for _op in (pickle.INST, pickle.OBJ, pickle.EXT1, pickle.EXT2, pickle.EXT4, pickle.PERSID):
        del dispatch[_op[0]]

    def __init__(self, file, persistent_load):
        super().__init__(file, encoding="utf-8")
        self._persistent_load = persistent_load
        self._user = _user_allowed()

    def persistent_load(self, pid):
        return self._persistent_load(pid)

    def find_class(self, module, name):
        if self.proto < 3:  # protocol 2 (torch.save's) names Python 3's builtins by their Python 2 names
            if (module, name) in _compat_pickle.NAME_MAPPING:
                module, name = _compat_pickle.NAME_MAPPING[(module, name)]
            module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        full = f"{module}.{name}"
        if full in SAFE_GLOBALS:
            return SAFE_GLOBALS[full]
        if full in self._user:
            return self._user[full]
        if module in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(f"{_BLOCKED_HEAD}Trying to load unsupported GLOBAL {full} whose module "
                                         f"{module} is blocked.{_WEIGHTS_ONLY_TAIL}")
        raise _weights_only_error(
            f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
            f"`torch.serialization.add_safe_globals([{full}])` or the `torch.serialization.safe_globals([{full}])` "
            "context manager to allowlist this global if you trust this class/function.")

    def load_build(self):
        inst = self.stack[-2]
        if type(inst) is collections.OrderedDict or type(inst) in self._user.values():
            return super().load_build()
        raise _weights_only_error(f"Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
                                  f"`add_safe_globals`, but got {type(inst)}")

    dispatch[pickle.BUILD[0]] = load_build

    def load_newobj(self):
        args = self.stack.pop()
        cls = self.stack[-1]
        if cls not in self._user.values() or not isinstance(cls, type):
            raise _weights_only_error(f"Trying to instantiate unsupported class {cls!r}")
        self.stack[-1] = cls.__new__(cls, *args)

    dispatch[pickle.NEWOBJ[0]] = load_newobj

    def load_newobj_ex(self):
        raise _weights_only_error("Unsupported operand NEWOBJ_EX")

    dispatch[pickle.NEWOBJ_EX[0]] = load_newobj_ex


class FullUnpickler(pickle.Unpickler):
    """weights_only=False: any global, torch's own names mapped to ours."""

    def __init__(self, file, persistent_load, **kwargs):
        super().__init__(file, **kwargs)
        self._persistent_load = persistent_load

    def persistent_load(self, pid):
        return self._persistent_load(pid)

    def find_class(self, module, name):
        full = f"{module}.{name}"
        if full in SAFE_GLOBALS:
            return SAFE_GLOBALS[full]
        if module == "torch" or module.startswith("torch."):
            module = __package__.rpartition(".")[0] + module[len("torch"):]
        return super().find_class(module, name)


# ---------------------------------------------------------------------------
# the containers


class _Loader:
    """Reads one checkpoint: validates its container, then unpickles data.pkl with storages on demand."""

    def __init__(self, fh, size, path, map_location, mmap_file):
        self.fh, self.size, self.path, self.map_location = fh, size, path, map_location
        self.mmap_file = mmap_file
        self.storages = {}
        self.members = {}
        self.prefix = None
        self.legacy_data = {}

    # zip ---------------------------------------------------------------
    def open_zip(self, zf):
        seen = set()
        for info in zf.infolist():
            if info.filename in seen:
                raise _Invalid(f"the archive holds {info.filename!r} twice")
            seen.add(info.filename)
            if info.compress_type != zipfile.ZIP_STORED:
                raise _Invalid(f"member {info.filename!r} is compressed; PyTorch's checkpoints store members")
            if info.flag_bits & 0x1:
                raise _Invalid(f"member {info.filename!r} is encrypted")
            if info.file_size != info.compress_size or info.header_offset + 30 + info.file_size > self.size:
                raise _Invalid(f"member {info.filename!r} declares {info.file_size} bytes, more than the file holds")
            self.members[info.filename] = info
        pkls = [n for n in self.members if n.endswith("/data.pkl") and n.count("/") == 1]
        if len(pkls) != 1:
            raise _Invalid("the archive has no (or more than one) <archive>/data.pkl")
        self.prefix = pkls[0][:-len("data.pkl")]
        if any(not n.startswith(self.prefix) for n in self.members):
            raise _Invalid("the archive's members are not all under one directory")
        byteorder = self.members.get(self.prefix + "byteorder")
        if byteorder is not None and self.read_member(byteorder) not in (b"little",):
            raise _Invalid("the checkpoint is big-endian; only little-endian checkpoints load")

    def member_offset(self, info):
        """Where a member's data begins, from its local header (checked against the central directory)."""
        self.fh.seek(info.header_offset)
        header = self.fh.read(30)
        if len(header) != 30 or header[:4] != b"PK\x03\x04":
            raise _Invalid(f"member {info.filename!r} has a bad local header")
        n, m = struct.unpack("<HH", header[26:30])
        name = self.fh.read(n)
        if name.decode("utf-8", "replace") != info.filename and name.decode("cp437") != info.filename:
            raise _Invalid(f"member {info.filename!r}'s local header names {name!r}")
        start = info.header_offset + 30 + n + m
        if start + info.file_size > self.size:
            raise _Invalid(f"member {info.filename!r} reaches past the end of the file")
        return start

    def read_member(self, info, out=None):
        start = self.member_offset(info)
        self.fh.seek(start)
        if out is None:
            data = self.fh.read(info.file_size)
            got = len(data)
        else:
            got = self.fh.readinto(memoryview(out).cast("B"))
            data = out
        if got != info.file_size:
            raise _Invalid(f"member {info.filename!r} is truncated")
        if zlib.crc32(memoryview(data).cast("B")) != info.CRC:
            raise _Invalid(f"member {info.filename!r} fails its CRC check (the file is corrupt)")
        return data

    def zip_record(self, storage, nbytes):
        info = self.members.get(f"{self.prefix}data/{storage.key}")
        if info is None:
            raise _Invalid(f"the data of storage {storage.key!r} is missing")
        if info.file_size != nbytes:
            raise _Invalid(f"storage {storage.key!r} declares {nbytes} bytes, its record holds {info.file_size}")
        if self.mmap_file is not None:
            start = self.member_offset(info)
            return np.memmap(self.mmap_file, dtype=np.uint8, mode="r", offset=start, shape=(nbytes,))
        buf = np.empty(nbytes, np.uint8)
        self.read_member(info, buf)
        return buf

    # both ----------------------------------------------------------------
    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) in (5, 6) and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
        storage_type, key, location, numel = pid[1:5]
        if type(storage_type) is not names.StorageType:
            raise pickle.UnpicklingError(f"unsupported storage type {storage_type!r}")
        if type(key) is not str or type(location) is not str or type(numel) is not int or numel < 0:
            raise pickle.UnpicklingError(f"invalid storage id {pid!r}")
        if len(pid) == 6 and pid[5] is not None:
            raise pickle.UnpicklingError("storage views of the legacy format are not supported")
        s = self.storages.get(key)
        if s is None:
            itemsize = 1 if storage_type.dtype is None else storage_type.dtype.itemsize
            if numel * itemsize > self.size:
                raise RuntimeError(f"{self.path}: storage {key} declares {numel * itemsize} bytes, more than the "
                                   f"file's {self.size}")
            s = self.storages[key] = LoadedStorage(self, key, location, storage_type.dtype, numel)
        elif s.location != location:
            raise pickle.UnpicklingError(f"storage {key} is named with two locations")
        return s

    def storage_tensor(self, storage):
        dtype = storage.dtype
        nbytes = storage.numel * dtype.itemsize
        if self.prefix is not None:
            raw = self.zip_record(storage, nbytes)
        else:  # the legacy format's data follows the pickle: read into this buffer once unpickled
            raw = self.legacy_data[storage.key] = np.zeros(nbytes, np.uint8)
        array = raw.view(dtype.np)
        if self.mmap_file is None:
            array.flags.writeable = True
        base = Tensor._from_value(_make_array(array, (storage.numel,), dtype, core.device("cpu")))
        return self.place(base, storage.location)

    def place(self, t, location):
        ml = self.map_location
        if callable(ml) and not isinstance(ml, (str, dict, core.Device)):
            # torch's callable form: map_location(storage, location) -> a storage (or None: as saved)
            out = ml(UntypedStorage(t._storage), location)
            if isinstance(out, UntypedStorage):
                return t if out._storage is t._storage else Tensor._from_value(out._storage.value)
            if isinstance(out, Tensor):
                return out
            if out is not None:
                raise TypeError(f"map_location returned {type(out).__name__}; expected a storage or None")
            target = location
        elif isinstance(ml, dict):
            target = ml.get(location, location)
        elif ml is None:
            target = location
        else:
            target = str(ml)
        if target.startswith("cuda"):
            raise RuntimeError("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
                               "is False. If you are running on a CPU-only machine, please use torch.load with "
                               "map_location=torch.device('cpu') to map your storages to the CPU.")
        device = core.device(target)
        return t if device is t.device else t.to(device)

    def unpickle(self, data, weights_only, pickle_load_args):
        stream = io.BytesIO(data) if isinstance(data, (bytes, bytearray)) else data
        if weights_only:
            return WeightsUnpickler(stream, self.persistent_load).load()
        return FullUnpickler(stream, self.persistent_load, **pickle_load_args).load()


# ---------------------------------------------------------------------------
# load

_BROKEN = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, struct.error, zlib.error,
           NotImplementedError, RecursionError, OverflowError, OSError, KeyError, IndexError, TypeError,
           AttributeError, UnicodeDecodeError)
_WEIGHTS_ONLY_FALSE_WARNING = (
    "You are using `torch.load` with `weights_only=False`, which can result in arbitrary code execution; load "
    "only checkpoints you trust.")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """The object saved in the path or binary file object `f` (PyTorch's zip or legacy format, or a
    mindtorch_v2 checkpoint of the earlier zip+npy+JSON format).

    weights_only (default True, as PyTorch 2.6+): only tensors, storages, Parameters, containers, numbers,
    strings, dtypes, devices, torch.Size and the globals allowed by add_safe_globals/safe_globals load.
    map_location: None, a device or its string, a dict from saved to wanted locations, or a callable
    (tensor, location) -> tensor or None. mmap: storages are read-only memory maps of the file.
    """
    if weights_only is None:
        weights_only = os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0") in ("0", "")
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        with open(path, "rb") as fh:
            return _load(fh, path, map_location, weights_only, path if mmap else None, pickle_load_args)
    name = getattr(f, "name", None)
    name = name if isinstance(name, str) else "the file object"
    if mmap:
        if not isinstance(getattr(f, "name", None), str):
            raise ValueError("f must be a file path in order to use the mmap argument")
        mmap_file = f.name
    else:
        mmap_file = None
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load(f, name, map_location, weights_only, mmap_file, pickle_load_args)


def _load(fh, name, map_location, weights_only, mmap_file, pickle_load_args):
    start = fh.tell()
    fh.seek(0, os.SEEK_END)
    size = fh.tell() - start
    fh.seek(start)
    if start:  # an archive later in a stream: read it on its own
        fh = io.BytesIO(fh.read())
        mmap_file = None
    loader = _Loader(fh, size, name, map_location, mmap_file)
    try:
        if size == 0:
            raise _Invalid("the file is empty")
        if zipfile.is_zipfile(fh):
            fh.seek(0)
            zf = zipfile.ZipFile(fh)
            if mindtorch_format.DOC_NAME in zf.namelist():
                fh.seek(0)
                return mindtorch_format.load_stream(fh, name, map_location)
            loader.open_zip(zf)
            data = loader.read_member(loader.members[loader.prefix + "data.pkl"])
            return loader.unpickle(data, weights_only, pickle_load_args)
        if mmap_file is not None:
            raise RuntimeError("mmap can only be used with files saved with "
                               "`torch.save(_use_new_zipfile_serialization=True), please torch.save your "
                               "checkpoint with this option in order to use mmap.")
        fh.seek(0)
        if fh.read(1) != b"\x80":
            raise _Invalid("it is neither a zip archive nor a legacy (pickle) checkpoint; truncated or corrupt?")
        fh.seek(0)
        return _load_legacy(loader, fh, weights_only, pickle_load_args)
    except _Invalid as e:
        raise RuntimeError(f"{name} is not a valid checkpoint: {e}") from None
    except pickle.UnpicklingError:
        raise
    except _BROKEN as e:
        raise RuntimeError(f"{name} is not a valid checkpoint: {type(e).__name__}: {e}") from e


def _load_legacy(loader, fh, weights_only, pickle_load_args):
    def header():
        return WeightsUnpickler(fh, loader.persistent_load).load()

    if header() != writing.LEGACY_MAGIC:
        raise RuntimeError("Invalid magic number; corrupt file?")
    if header() != writing.LEGACY_PROTOCOL:
        raise RuntimeError("Invalid protocol version")
    info = header()
    if not isinstance(info, dict) or info.get("little_endian") is not True:
        raise _Invalid("only little-endian legacy checkpoints load")
    result = loader.unpickle(fh, weights_only, pickle_load_args)
    keys = header()
    if not isinstance(keys, list):
        raise _Invalid("the storage key list is missing")
    for key in keys:
        s = loader.storages.get(key)
        if s is None or type(key) is not str:
            raise _Invalid(f"storage key {key!r} was not used by the object")
        head = fh.read(8)
        if len(head) != 8:
            raise _Invalid("the file is truncated")
        (numel,) = struct.unpack("<q", head)
        nbytes = numel * s.unit
        if numel < 0 or nbytes > loader.size - fh.tell():
            raise _Invalid(f"storage {key!r} declares {numel} elements, more than the file holds")
        buf = loader.legacy_data.get(key)
        if buf is None:  # a storage no tensor used: skip its bytes
            fh.seek(nbytes, os.SEEK_CUR)
            continue
        if buf.nbytes != nbytes:
            raise _Invalid(f"storage {key!r} holds {nbytes} bytes, its tensors need {buf.nbytes}")
        buf.flags.writeable = True  # ours alone: filled in place under the tensors built while unpickling
        if fh.readinto(memoryview(buf)) != nbytes:
            raise _Invalid("the file is truncated")
    return result
