"""torch.save: PyTorch's zip format (and, on request, its legacy pickle-stream format)."""
import collections
import io
import os
import pickle
import struct
import sys
import zipfile
import zlib

import numpy as np

from ..core import dtypes as _dt
from ..core.devices import Device
from ..eager.tensor import Size, Tensor
from ..eager.storage import DataStorage
from ..nn.parameter import Parameter
from . import names

ALIGNMENT = 64  # torch's records start at multiples of 64 bytes (so a memory map of one is aligned)
LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001
_CHUNK = 1 << 24


class _SavedStorage:
    """One storage written once, however many tensors view it."""

    __slots__ = ("key", "array", "dtype", "location")

    def __init__(self, key, array, dtype, location):
        self.key, self.array, self.dtype, self.location = key, array, dtype, location


class _TensorData:
    """A Parameter's `.data` as torch pickles it inside _rebuild_parameter: the plain tensor."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor


class TorchPickler(pickle._Pickler):
    """The pure-python pickler (the C one cannot write another library's globals) writing tensors as
    torch does: _rebuild_tensor_v2/_v3 over persistent storage ids, torch.Size, torch.<dtype>, torch.device."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol=2, legacy=False):
        super().__init__(file, protocol=protocol)
        self.storages = {}  # id(Storage) -> _SavedStorage
        self.legacy = legacy
        self._keep = []  # objects made here and memoised by id stay alive until the dump ends

    def persistent_id(self, obj):
        if type(obj) is not _SavedStorage:
            return None
        typed = obj.dtype in names.TYPED_STORAGE
        storage_type = names.STORAGE_GLOBALS[obj.dtype] if typed else names.UNTYPED_STORAGE
        numel = obj.array.size if typed else obj.array.nbytes
        pid = ("storage", storage_type, obj.key, obj.location, numel)
        return pid + (None,) if self.legacy else pid

    def reducer_override(self, obj):
        t = type(obj)
        if t is _TensorData:
            return self._tensor(obj.tensor, False)
        if isinstance(obj, Tensor):
            if isinstance(obj, Parameter):
                data = _TensorData(obj)
                self._keep.append(data)
                hooks = collections.OrderedDict()
                if obj.__dict__:  # attributes set on the parameter travel as its state, as torch saves them
                    return (names.REBUILD_PARAMETER_WITH_STATE, (data, obj.requires_grad, hooks, dict(obj.__dict__)))
                return (names.REBUILD_PARAMETER, (data, obj.requires_grad, hooks))
            return self._tensor(obj, obj.requires_grad)
        if t is Size:
            return (names.SIZE, (tuple(int(s) for s in obj),))
        if t is Device:
            return (names.DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index))
        return NotImplemented

    def _tensor(self, t, requires_grad):
        shape, strides, offset = t._geometry()
        if t.device.type == "meta":  # no data: dtype and geometry only, as torch writes meta tensors
            return (names.REBUILD_META, (t.dtype, tuple(shape), tuple(strides), requires_grad))
        saved = self._storage(t)
        hooks = collections.OrderedDict()
        if saved.dtype in names.TYPED_STORAGE:
            args = (saved, offset, tuple(shape), tuple(strides), requires_grad, hooks)
            return (names.REBUILD_TENSOR_V2, args)
        args = (saved, offset, tuple(shape), tuple(strides), requires_grad, hooks, names.DTYPE_GLOBALS[saved.dtype])
        return (names.REBUILD_TENSOR_V3, args)

    def _storage(self, t):
        storage = t._storage
        while type(storage) is DataStorage:
            storage = storage.target
        saved = self.storages.get(id(storage))
        if saved is None:
            value = storage.value
            device = value.device
            if device.type != "cpu":
                value = Tensor._from_value(value).to("cpu")._value()
            array = np.ascontiguousarray(np.asarray(value)).reshape(-1)
            if sys.byteorder != "little":
                array = array.byteswap()
            saved = _SavedStorage(str(len(self.storages)), array, t.dtype, str(device))
            self.storages[id(storage)] = saved
            self._keep.append(storage)
        return saved

    def save_torch_global(self, obj):
        """Write GLOBAL 'module name' for a torch name (memoised like any global)."""
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[names.Global] = save_torch_global

    def save_dtype(self, obj):
        self.save(names.DTYPE_GLOBALS[obj])

    dispatch[_dt.DType] = save_dtype


def _archive_name(f):
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        if stem and stem.isprintable() and "/" not in stem:
            return stem
    return "archive"


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Write `obj` to the path or binary file object `f` in PyTorch's checkpoint format."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            _save(obj, fh, _archive_name(f), pickle_protocol, _use_new_zipfile_serialization,
                  _disable_byteorder_record)
    else:
        _save(obj, f, "archive", pickle_protocol, _use_new_zipfile_serialization, _disable_byteorder_record)


def _save(obj, fh, archive, protocol, zip_format, no_byteorder):
    data = io.BytesIO()
    pickler = TorchPickler(data, protocol=protocol, legacy=not zip_format)
    pickler.dump(obj)
    storages = list(pickler.storages.values())
    if not zip_format:
        _write_legacy(fh, data.getvalue(), storages, protocol)
        return
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        write = _AlignedWriter(zf, archive)
        write("data.pkl", data.getvalue())
        write(".format_version", b"1")
        write(".storage_alignment", str(ALIGNMENT).encode())
        if not no_byteorder:
            write("byteorder", b"little")
        for s in storages:
            write(f"data/{s.key}", s.array)
        write("version", b"3\n")
        write(".data/serialization_id", _serialization_id(data.getvalue(), storages))


def _serialization_id(pickled, storages):
    """40 decimal digits identifying this checkpoint's contents (torch writes a random one)."""
    crc = zlib.crc32(pickled)
    for s in storages:
        crc = zlib.crc32(s.array.view(np.uint8).reshape(-1)[:4096], crc)
    return f"{crc:040d}".encode()


class _AlignedWriter:
    """Writes stored members whose data starts at a multiple of ALIGNMENT, padding the local header's
    extra field as PyTorch does (an 'FB' field of 'Z' bytes)."""

    def __init__(self, zf, archive):
        self.zf, self.archive = zf, archive

    def __call__(self, name, payload):
        name = f"{self.archive}/{name}"
        if isinstance(payload, np.ndarray):
            payload = payload.view(np.uint8).reshape(-1)
        nbytes = len(payload)
        info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        info.file_size = nbytes
        zip64 = nbytes * 1.05 > zipfile.ZIP64_LIMIT
        header = 30 + len(name.encode("utf-8")) + (20 if zip64 else 0) + 4
        pad = -(self.zf.start_dir + header) % ALIGNMENT
        info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
        with self.zf.open(info, "w", force_zip64=zip64) as out:
            view = memoryview(payload)
            for start in range(0, nbytes, _CHUNK):
                out.write(view[start:start + _CHUNK])


def _write_legacy(fh, pickled, storages, protocol):
    """PyTorch's pre-1.6 stream: magic, protocol, system info, the object, the storage keys, then per
    storage its element count (int64) and raw bytes."""
    info = {"protocol_version": LEGACY_PROTOCOL, "little_endian": True,
            "type_sizes": {"short": 2, "int": 4, "long": struct.calcsize("=l")}}
    for value in (LEGACY_MAGIC, LEGACY_PROTOCOL, info):
        pickle.dump(value, fh, protocol=protocol)
    fh.write(pickled)
    pickle.dump(sorted(s.key for s in storages), fh, protocol=protocol)
    for s in sorted(storages, key=lambda s: s.key):
        numel = s.array.size if s.dtype in names.TYPED_STORAGE else s.array.nbytes
        fh.write(struct.pack("<q", numel))
        fh.write(memoryview(s.array.view(np.uint8).reshape(-1)))
