"""The zip+npy+JSON checkpoint format mindtorch_v2 wrote before it wrote PyTorch's: read-only now (see __init__).

Layout of the archive (stored, uncompressed, like torch's own zip format):

    mindtorch_checkpoint/data.json       {"format": "mindtorch_v2.save", "version": 1,
                                          "tensors": [record, ...], "root": <value>}
    mindtorch_checkpoint/tensors/<i>.npy one per record with data (meta tensors have none)

A record is {"kind": "tensor"|"ndarray"|"storage", "dtype", "shape", ...}; tensors add
"device", "requires_grad" and "parameter". Tensors that share a storage (views of one
base, or the detached copies of a tied weight in a state_dict) are saved as torch saves
them: one "storage" record with the base's data (version 2 files), and per tensor a
"view": {"storage": <record index>, "strides", "offset"} instead of data of its own, so
after loading they share memory again. Files without shared storages stay version 1. A <value> is JSON: null, booleans,
ints, strings and finite floats stand for themselves, a JSON list is a python
list, and everything else is a one-key object naming its kind, e.g.
{"tensor": 0}, {"tuple": [...]}, {"dict": [[key, value], ...]}, {"float": "nan"}.
Saving `{"a": t, "b": t}` writes t once; loading gives one tensor under both keys.

Loading parses JSON and .npy headers only (numpy's reader with allow_pickle=False),
so a checkpoint cannot run code. Anything unexpected is a RuntimeError saying the
file "is not a valid mindtorch checkpoint" and what is wrong with it.
"""
import base64
import collections
import importlib
import io
import json
import math
import os
import struct
import sys
import zipfile
import zlib

import numpy as np
from numpy.lib import format as _npy

from .. import core
from ..core import dtypes as _dt
from ..core.devices import Device
from ..eager import creation as _creation
from ..eager.tensor import Size, Tensor

FORMAT = "mindtorch_v2.save"
VERSION = 2  # the newest version written; 1 (no storage records) is still written when it suffices
_READABLE = (1, 2)
_PREFIX = "mindtorch_checkpoint/"
_DOC = _PREFIX + "data.json"
_NDARRAY_KINDS = "biufc"  # plain numeric numpy arrays; never object, string or structured dtypes


def _stored(np_dtype):
    """The dtype a .npy member holds: ml_dtypes' bfloat16/float8 (which .npy cannot name) as their bits,
    an unsigned integer of the same size; every other dtype as itself."""
    np_dtype = np.dtype(np_dtype)
    return np.dtype(f"u{np_dtype.itemsize}") if np_dtype in _NARROW else np_dtype


_NARROW = frozenset(d.np for d in _dt.ALL if d.narrow)
_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _data_name(index):
    return f"{_PREFIX}tensors/{index}.npy"


_PARAMETER_MODULE = __package__.rpartition(".")[0] + ".nn.parameter"


def _parameter_class(import_it):
    """torch.nn.parameter.Parameter, or None when that module is absent (or, unless import_it, not imported)."""
    module = sys.modules.get(_PARAMETER_MODULE)
    if module is None and import_it:
        try:
            module = importlib.import_module(_PARAMETER_MODULE)
        except ImportError:
            return None
    return getattr(module, "Parameter", None)


# ---------------------------------------------------------------------------
# save


class _Encoder:
    """Turns a python object into the JSON value plus the list of arrays to write."""

    def __init__(self):
        self.records = []
        self.arrays = []  # numpy array (or None for meta tensors) per record
        self._memo = {}  # id(tensor or ndarray) -> record index
        self._keep = []  # keeps memoised objects alive so their ids stay unique
        self._active = set()  # ids of containers being encoded (cycle check)
        self._parameter = None
        self._by_storage = {}  # id(storage) -> (storage, [(record index, tensor)]) for cpu tensors

    def encode(self, obj, path):
        if obj is None or obj is True or obj is False:
            return obj
        t = type(obj)
        if t is str or t is int:
            return obj
        if t is float:
            return obj if math.isfinite(obj) else {"float": repr(obj)}
        if isinstance(obj, Tensor):
            return {"tensor": self._tensor(obj, path)}
        if t is list or t is tuple or t is dict or t is collections.OrderedDict or t is set or t is frozenset:
            return self._container(obj, path)
        if t is Size:
            return {"size": [int(s) for s in obj]}
        if t is _dt.DType:
            return {"dtype": obj.name}
        if t is Device:
            return {"device": str(obj)}
        if t is bytes:
            return {"bytes": base64.b64encode(obj).decode("ascii")}
        if t is complex:
            return {"complex": [self.encode(obj.real, path), self.encode(obj.imag, path)]}
        if t is np.ndarray:
            return {"ndarray": self._ndarray(obj, path)}
        if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":
            return {"numpy_scalar": [obj.dtype.str, self.encode(obj.item(), path)]}
        raise TypeError(f"torch.save: cannot save an object of type {t.__module__}.{t.__qualname__} at {path}; "
                        "supported are tensors, numpy arrays, None, bool, int, float, complex, str, bytes, list, "
                        "tuple, dict, OrderedDict, set, torch.Size, torch.dtype and torch.device "
                        "(mindtorch checkpoints hold no pickled objects)")

    def _container(self, obj, path):
        if id(obj) in self._active:
            raise ValueError(f"torch.save: {path} contains itself (a reference cycle cannot be saved)")
        self._active.add(id(obj))
        try:
            t = type(obj)
            if t is list:
                return [self.encode(x, f"{path}[{i}]") for i, x in enumerate(obj)]
            if t is tuple:
                return {"tuple": [self.encode(x, f"{path}[{i}]") for i, x in enumerate(obj)]}
            if t is set or t is frozenset:
                return {t.__name__: [self.encode(x, f"{path}<item>") for x in obj]}
            items = [[self.encode(k, f"{path}<key {k!r}>"), self.encode(v, f"{path}[{k!r}]")] for k, v in obj.items()]
            if t is dict:
                return {"dict": items}
            out = {"odict": items}
            metadata = getattr(obj, "_metadata", None)  # nn.Module.state_dict() keeps versions here
            if metadata is not None:
                out["metadata"] = self.encode(metadata, f"{path}._metadata")
            return out
        finally:
            self._active.discard(id(obj))

    def _remember(self, obj, record, array):
        index = self._memo[id(obj)] = len(self.records)
        self._keep.append(obj)
        self.records.append(record)
        self.arrays.append(array)
        return index

    def _tensor(self, t, path):
        index = self._memo.get(id(t))
        if index is not None:
            return index
        if self._parameter is None:
            self._parameter = _parameter_class(import_it=False) or ()  # a Parameter implies its module is loaded
        d = t.detach()
        device = d.device
        record = {"kind": "tensor", "dtype": t.dtype.name, "shape": [int(s) for s in t.shape],
                  "device": str(device), "requires_grad": bool(t.requires_grad),
                  "parameter": bool(self._parameter) and isinstance(t, self._parameter)}
        if device.type == "meta":
            array = None
        else:
            if device.type != "cpu":
                d = d.to("cpu")
            array = np.asarray(d._value(), order="C")  # a view alone is saved as its own values
        index = self._remember(t, record, array)
        if device.type == "cpu":
            storage = d._storage
            self._by_storage.setdefault(id(storage), (storage, []))[1].append((index, d))
        return index

    def share_storages(self):
        """Turn the tensors that share a storage into views of one storage record; returns the file version."""
        version = 1
        for storage, members in self._by_storage.values():
            if len(members) < 2:
                continue
            version = VERSION
            base = storage.value
            sindex = len(self.records)
            self.records.append({"kind": "storage", "dtype": base.dtype.name, "shape": [int(s) for s in base.shape],
                                 "device": "cpu"})
            self.arrays.append(np.asarray(base, order="C"))
            for index, d in members:
                _, strides, offset = d._geometry()
                self.records[index]["view"] = {"storage": sindex, "strides": [int(s) for s in strides],
                                               "offset": int(offset)}
                self.arrays[index] = None
        return version

    def _ndarray(self, a, path):
        index = self._memo.get(id(a))
        if index is not None:
            return index
        if a.dtype.kind not in _NDARRAY_KINDS or a.dtype.fields is not None:
            raise TypeError(f"torch.save: cannot save a numpy array of dtype {a.dtype} at {path}; only numeric "
                            "and bool arrays are supported")
        record = {"kind": "ndarray", "dtype": a.dtype.str, "shape": [int(s) for s in a.shape]}
        return self._remember(a, record, np.asarray(a, order="C"))


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Write `obj` (tensors inside nested containers) to the path or binary file object `f`."""
    enc = _Encoder()
    root = enc.encode(obj, "obj")
    version = enc.share_storages()
    doc = {"format": FORMAT, "version": version, "tensors": enc.records, "root": root}
    text = json.dumps(doc, allow_nan=False, separators=(",", ":"))
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            _write(fh, text, enc.arrays)
    else:
        _write(f, text, enc.arrays)


def _entry(name):
    return zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # a fixed date: same object, same bytes


def _write(fh, text, arrays):
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        zf.writestr(_entry(_DOC), text.encode("ascii"))
        for i, array in enumerate(arrays):
            if array is not None:
                with zf.open(_entry(_data_name(i)), "w", force_zip64=array.nbytes > 2 ** 30) as out:
                    _npy.write_array(out, array.view(_stored(array.dtype)), allow_pickle=False)


# ---------------------------------------------------------------------------
# load


class _Invalid(Exception):
    """A problem with the file's contents; load turns it into the RuntimeError users see."""


def _reject_constant(name):
    raise _Invalid(f"the JSON document uses the non-standard constant {name}")


def _unique_keys(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise _Invalid(f"the JSON document repeats the key {k!r}")
        out[k] = v
    return out


def _expect(cond, problem):
    if not cond:
        raise _Invalid(problem)


def _is_int(x):
    return type(x) is int


class _Decoder:
    """Rebuilds the saved object from the JSON document, reading arrays only when referenced."""

    def __init__(self, zf, records, map_location):
        _expect(type(records) is list, "'tensors' is not a list")
        self.zf = zf
        self.records = records
        self.map_location = map_location
        self._loaded = {}
        self._storages = {}  # storage record index -> the placed base tensor

    def decode(self, node, path):
        t = type(node)
        if node is None or t is bool or t is int or t is str or t is float:
            return node
        if t is list:
            return [self.decode(x, f"{path}[{i}]") for i, x in enumerate(node)]
        _expect(t is dict, f"unexpected JSON value at {path}")
        tag = next(iter(node), None)
        if tag == "odict":
            _expect(set(node) <= {"odict", "metadata"}, f"unexpected keys {sorted(node)} at {path}")
        else:
            _expect(len(node) == 1, f"expected one key at {path}, found {sorted(node)}")
        handler = _DECODERS.get(tag)
        _expect(handler is not None, f"unknown entry {tag!r} at {path}")
        return handler(self, node, path)

    def _list(self, value, path):
        _expect(type(value) is list, f"expected a list at {path}")
        return [self.decode(x, f"{path}[{i}]") for i, x in enumerate(value)]

    def _items(self, value, path):
        _expect(type(value) is list, f"expected a list of [key, value] pairs at {path}")
        out = []
        for pair in value:
            _expect(type(pair) is list and len(pair) == 2, f"expected a [key, value] pair at {path}")
            key = self.decode(pair[0], f"{path}<key>")
            _expect(_hashable(key), f"unhashable dict key at {path}")
            out.append((key, self.decode(pair[1], f"{path}[{key!r}]")))
        return out

    def tensor(self, index, path, kind):
        _expect(_is_int(index) and 0 <= index < len(self.records), f"tensor reference {index!r} at {path} "
                f"is out of range (the file holds {len(self.records)})")
        record = self.records[index]
        _expect(type(record) is dict and record.get("kind") == kind,
                f"entry {index} of 'tensors' is not a {kind} record")
        if index in self._loaded:
            return self._loaded[index]
        if kind == "tensor":
            value = self._build_tensor(index, record)
        else:
            _expect(set(record) == {"kind", "dtype", "shape"}, f"ndarray record {index} has keys {sorted(record)}")
            value = self._read_array(index, _ndarray_dtype(record["dtype"], index), _shape(record["shape"], index))
        self._loaded[index] = value
        return value

    def _build_tensor(self, index, record):
        keys = {"kind", "dtype", "shape", "device", "requires_grad", "parameter"}
        _expect(set(record) == keys or set(record) == keys | {"view"}, f"tensor record {index} has keys "
                f"{sorted(record)}")
        try:
            dtype = _dt.from_name(record["dtype"])
        except (KeyError, TypeError):
            raise _Invalid(f"tensor record {index} has unknown dtype {record['dtype']!r}") from None
        shape = _shape(record["shape"], index)
        requires_grad, parameter = record["requires_grad"], record["parameter"]
        _expect(type(requires_grad) is bool and type(parameter) is bool, f"tensor record {index} has non-boolean "
                "requires_grad/parameter flags")
        _expect(not requires_grad or dtype.category == _dt.FLOAT,
                f"tensor record {index} requires grad but has dtype {dtype}")
        location = record["device"]
        _expect(type(location) is str, f"tensor record {index} has a non-string device")
        try:
            saved_device = core.device(location)
        except (RuntimeError, TypeError) as e:
            raise _Invalid(f"tensor record {index} has device {location!r}: {e}") from None

        if "view" in record:
            t = self._view(index, record["view"], dtype, shape)
        else:
            if saved_device.type == "meta":
                t = _creation.empty(shape, dtype=dtype, device="meta")
            else:
                t = _creation.from_numpy(self._read_array(index, dtype.np, shape))
            t = self._place(t, saved_device, location)
        if parameter:
            cls = _parameter_class(import_it=True)
            if cls is not None:
                return cls(t, requires_grad=requires_grad)
        if requires_grad and t.is_leaf:
            t.requires_grad_(True)
        return t

    def _view(self, index, view, dtype, shape):
        """A tensor sharing the memory of a storage record (a leaf: no autograd link to the others)."""
        _expect(type(view) is dict and set(view) == {"storage", "strides", "offset"},
                f"tensor record {index} has an invalid view")
        sindex, strides, offset = view["storage"], view["strides"], view["offset"]
        _expect(_is_int(sindex) and 0 <= sindex < len(self.records) and type(self.records[sindex]) is dict
                and self.records[sindex].get("kind") == "storage", f"tensor record {index} views {sindex!r}, "
                "not a storage record")
        base = self._storage(sindex)
        _expect(base.dtype is dtype, f"tensor record {index} has dtype {dtype}, its storage {base.dtype}")
        _expect(type(strides) is list and len(strides) == len(shape) and all(_is_int(s) and s >= 0 for s in strides)
                and _is_int(offset) and offset >= 0, f"tensor record {index} has an invalid view geometry")
        extent = offset + sum((n - 1) * st for n, st in zip(shape, strides)) if all(shape) else 0
        _expect(extent < max(base.numel(), 1) or not all(shape),
                f"tensor record {index} reaches past the end of its storage")
        return base._view_of(shape, strides, offset).detach()

    def _storage(self, sindex):
        base = self._storages.get(sindex)
        if base is None:
            record = self.records[sindex]
            _expect(set(record) == {"kind", "dtype", "shape", "device"} and record["device"] == "cpu",
                    f"storage record {sindex} has keys {sorted(record)}")
            try:
                dtype = _dt.from_name(record["dtype"])
            except (KeyError, TypeError):
                raise _Invalid(f"storage record {sindex} has unknown dtype {record['dtype']!r}") from None
            array = self._read_array(sindex, dtype.np, _shape(record["shape"], sindex))
            base = self._storages[sindex] = self._place(_creation.from_numpy(array), core.device("cpu"), "cpu")
        return base

    def _place(self, t, saved_device, location):
        ml = self.map_location
        if ml is None:
            target = saved_device
        elif callable(ml):
            out = ml(t, location)  # torch calls map_location(storage, location); None means "as saved"
            if out is not None:
                return out
            target = saved_device
        elif isinstance(ml, dict):
            target = ml.get(location, location)
        else:
            target = ml
        target = core.device(target)
        if target is t.device:
            return t
        if t.device.type == "meta":
            raise RuntimeError(f"torch.load: a tensor saved on the meta device has no data to put on {target}")
        return t.to(target)

    def _read_array(self, index, dtype, shape):
        name = _data_name(index)
        try:
            info = self.zf.getinfo(name)
        except KeyError:
            raise _Invalid(f"the data of tensor {index} ({name}) is missing") from None
        with self.zf.open(info) as fp:  # check the header before numpy allocates what it declares
            version = _npy.read_magic(fp)
            _expect(version in ((1, 0), (2, 0)), f"{name} has unsupported .npy version {version}")
            header = (_npy.read_array_header_1_0 if version == (1, 0) else _npy.read_array_header_2_0)(fp)
            stored_shape, fortran_order, stored_dtype = header
            data_offset = fp.tell()
        _expect(stored_dtype.kind in _NDARRAY_KINDS and stored_dtype.fields is None and not stored_dtype.hasobject
                and stored_dtype.newbyteorder("<") == _stored(dtype).newbyteorder("<"),
                f"{name} holds dtype {stored_dtype}, the record says {np.dtype(dtype)}")
        _expect(tuple(stored_shape) == shape, f"{name} holds shape {tuple(stored_shape)}, the record says {shape}")
        nbytes = math.prod(shape) * stored_dtype.itemsize
        _expect(info.file_size == data_offset + nbytes,
                f"{name} is {info.file_size} bytes, expected {data_offset + nbytes} for shape {shape}")
        with self.zf.open(info) as fp:
            array = _npy.read_array(fp, allow_pickle=False)
            _expect(fp.read(1) == b"", f"{name} has trailing data")  # also completes the CRC check
        array = np.asarray(array.reshape(shape), order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
        if not array.dtype.isnative:
            array = array.astype(array.dtype.newbyteorder("="))
        return array.view(dtype)


def _hashable(x):
    try:
        hash(x)
    except TypeError:
        return False
    return True


def _shape(shape, index):
    _expect(type(shape) is list and all(_is_int(s) and s >= 0 for s in shape),
            f"record {index} has an invalid shape {shape!r}")
    return tuple(shape)


def _ndarray_dtype(name, index):
    try:
        dtype = np.dtype(name) if type(name) is str else None
    except TypeError:
        dtype = None
    _expect(dtype is not None and dtype.kind in _NDARRAY_KINDS and dtype.fields is None,
            f"ndarray record {index} has unsupported dtype {name!r}")
    return dtype


def _float(value, path):
    if type(value) is str:
        _expect(value in _NONFINITE, f"invalid float {value!r} at {path}")
        return _NONFINITE[value]
    _expect(type(value) in (int, float), f"invalid float {value!r} at {path}")
    return float(value)


def _odict(dec, node, path):
    out = collections.OrderedDict(dec._items(node["odict"], path))
    if "metadata" in node:
        out._metadata = dec.decode(node["metadata"], f"{path}._metadata")
    return out


def _numpy_scalar(dec, node, path):
    value = node["numpy_scalar"]
    _expect(type(value) is list and len(value) == 2 and type(value[0]) is str, f"invalid numpy scalar at {path}")
    dtype = _ndarray_dtype(value[0], path)
    _expect(dtype.kind != "c", f"invalid numpy scalar at {path}")
    item = dec.decode(value[1], path)
    _expect(type(item) in (bool, int, float), f"invalid numpy scalar at {path}")
    try:
        return np.array(item, dtype=dtype)[()]
    except OverflowError:
        raise _Invalid(f"numpy scalar {item!r} at {path} does not fit {dtype}") from None


def _size(dec, node, path):
    value = node["size"]
    _expect(type(value) is list and all(_is_int(s) for s in value), f"invalid torch.Size at {path}")
    return Size(value)


def _dtype(dec, node, path):
    try:
        return _dt.from_name(node["dtype"])
    except (KeyError, TypeError):
        raise _Invalid(f"unknown dtype {node['dtype']!r} at {path}") from None


def _device(dec, node, path):
    try:
        return core.device(node["device"])
    except (RuntimeError, TypeError):
        raise _Invalid(f"invalid device {node['device']!r} at {path}") from None


def _bytes(dec, node, path):
    value = node["bytes"]
    _expect(type(value) is str, f"invalid bytes at {path}")
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise _Invalid(f"invalid base64 bytes at {path}") from None


def _complex(dec, node, path):
    value = node["complex"]
    _expect(type(value) is list and len(value) == 2, f"invalid complex at {path}")
    parts = [dec.decode(v, path) for v in value]
    _expect(all(type(p) in (int, float) for p in parts), f"invalid complex at {path}")
    return complex(*parts)


def _hashables(dec, node, path, kind):
    items = dec._list(node[kind], path)
    _expect(all(_hashable(x) for x in items), f"unhashable item in the {kind} at {path}")
    return set(items) if kind == "set" else frozenset(items)


_DECODERS = {
    "tensor": lambda dec, node, path: dec.tensor(node["tensor"], path, "tensor"),
    "ndarray": lambda dec, node, path: dec.tensor(node["ndarray"], path, "ndarray"),
    "tuple": lambda dec, node, path: tuple(dec._list(node["tuple"], path)),
    "dict": lambda dec, node, path: dict(dec._items(node["dict"], path)),
    "odict": _odict,
    "set": lambda dec, node, path: _hashables(dec, node, path, "set"),
    "frozenset": lambda dec, node, path: _hashables(dec, node, path, "frozenset"),
    "float": lambda dec, node, path: _float(node["float"], path),
    "numpy_scalar": _numpy_scalar,
    "size": _size,
    "dtype": _dtype,
    "device": _device,
    "bytes": _bytes,
    "complex": _complex,
}

# what a broken archive raises inside zipfile / numpy / json; all become "not a valid checkpoint"
_BROKEN = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, struct.error, zlib.error,
           NotImplementedError, RecursionError, OverflowError)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """The object saved by `save` in the path or binary file object `f`, with fresh tensors.

    map_location: None (the saved devices), "cpu"/"meta"/a device, a dict from saved
    to wanted device strings, or a callable(tensor, saved_location) returning a tensor or None.
    Files are never unpickled, so `weights_only` makes no difference.
    """
    if isinstance(f, (str, os.PathLike)):
        name = os.fspath(f)
        with open(f, "rb") as fh:
            return _load(fh, name, map_location)
    name = getattr(f, "name", None)
    name = name if isinstance(name, str) else "the file object"
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load(f, name, map_location)


def _load(fh, name, map_location):
    try:
        return _load_archive(fh, map_location)
    except _Invalid as e:
        raise RuntimeError(f"{name} is not a valid mindtorch checkpoint: {e}") from None
    except _BROKEN as e:
        raise RuntimeError(f"{name} is not a valid mindtorch checkpoint: {type(e).__name__}: {e}") from e


def _load_archive(fh, map_location):
    start = fh.tell()
    head = fh.read(4)
    fh.seek(start)
    _expect(head, "the file is empty")
    if not zipfile.is_zipfile(fh):
        if head[:1] == b"\x80":
            raise _Invalid("it starts like a pickle (a legacy PyTorch checkpoint?); mindtorch never unpickles")
        raise _Invalid("it is not a zip archive (truncated or not written by torch.save?)")
    fh.seek(start)
    with zipfile.ZipFile(fh, "r") as zf:
        names = zf.namelist()
        if _DOC not in names:
            if any(n.endswith("/data.pkl") for n in names):
                raise _Invalid("it is a PyTorch (pickle-based) checkpoint; mindtorch never unpickles. "
                               "Re-save its tensors with numpy/safetensors, or load it in PyTorch")
            raise _Invalid(f"the archive has no {_DOC}")
        try:
            doc = json.loads(zf.read(_DOC).decode("utf-8"), parse_constant=_reject_constant,
                             object_pairs_hook=_unique_keys)
        except UnicodeDecodeError:
            raise _Invalid(f"{_DOC} is not UTF-8 text") from None
        except json.JSONDecodeError as e:
            raise _Invalid(f"{_DOC} is not valid JSON ({e})") from None
        _expect(type(doc) is dict and doc.get("format") == FORMAT, f"{_DOC} does not describe a {FORMAT} file")
        _expect(doc.get("version") in _READABLE, f"unsupported format version {doc.get('version')!r} "
                f"(this mindtorch reads versions {', '.join(map(str, _READABLE))})")
        _expect(set(doc) == {"format", "version", "tensors", "root"}, f"{_DOC} has keys {sorted(doc)}")
        return _Decoder(zf, doc["tensors"], map_location).decode(doc["root"], "obj")


DOC_NAME = _DOC


def load_stream(fh, name, map_location):
    """The object in a seekable binary stream holding this format (torch.load detects it by DOC_NAME)."""
    return _load(fh, name, map_location)
