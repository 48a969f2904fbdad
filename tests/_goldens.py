"""PyTorch's recorded answers for the differential tests (tests/test_vs_torch_*.py).

The differential tests describe each case as a function of a library module `L` (torch or mindtorch_v2).
When recording, the function runs on real PyTorch and its result (tensors, dtypes, shapes, python values,
exceptions) is stored under a key; when testing, the stored result is read back and mindtorch_v2's result is
compared with it. PyTorch is therefore needed only to record, never to test.

Regenerate after changing a test (needs torch installed):

    python tests/record_goldens.py

Storage, per test module `tests/test_<name>.py`: `tests/goldens/<name>.json.gz` (the structure of every
result: containers, dtype names, shapes, python scalars, exception type names and messages) and
`tests/goldens/<name>.npz` (the values of every tensor and ndarray, concatenated per dtype).

Keys are "<test name with its parameters>#<n>", n counting the golden look-ups made by that test in order, so
a test must make the same look-ups in the same order each time it runs (inputs come from numpy with fixed
seeds, never from a random number generator of either library).
"""
import builtins
import gzip
import json
import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest

RECORD_ENV = "MINDTORCH_RECORD_GOLDENS"
GOLDEN_DIR = Path(__file__).resolve().parent / "goldens"
_MSG_CHARS = 300  # enough of an exception's message for its key words


def torch_lib():
    """The real torch module (only recording calls this)."""
    import torch
    return torch


def is_torch(L):
    return getattr(L, "__name__", "") == "torch"


def torch_tensor_type():
    mod = sys.modules.get("torch")
    return getattr(mod, "Tensor", None) if mod is not None else None


# ---------------------------------------------------------------------------
# decoded values: what a test compares against


class GTensor:
    """A recorded torch tensor: dtype name ("float32"), shape and values (a numpy array)."""
    __slots__ = ("dtype", "shape", "data")

    def __init__(self, dtype, shape, data):
        self.dtype, self.shape, self.data = dtype, tuple(shape), data

    def numpy(self):
        return self.data

    def __repr__(self):
        return f"GTensor({self.dtype}, {self.shape}, {self.data.tolist()!r})"


class GDtype:
    """A recorded torch dtype."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, GDtype) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __str__(self):
        return "torch." + self.name

    __repr__ = __str__


class GSize(tuple):
    """A recorded torch.Size."""


class GExc:
    """A recorded exception: its type name, the nearest builtin exception type above it, and its message."""
    __slots__ = ("type", "base", "msg")

    def __init__(self, type_, base, msg):
        self.type, self.base, self.msg = type_, base, msg

    def builtin(self):
        return getattr(builtins, self.base)

    def matches(self, err, exact=False):
        """err (raised by mindtorch) is of the recorded type: the same builtin type or a subclass of it
        (exact: the same type name)."""
        if exact:
            return type(err).__name__ == self.type
        if self.type in {c.__name__ for c in type(err).__mro__}:
            return True
        return self.type != self.base and isinstance(err, self.builtin())

    def __repr__(self):
        return f"{self.type}({self.msg!r})"


def _builtin_base(exc_type):
    for c in exc_type.__mro__:
        if getattr(builtins, c.__name__, None) is c:
            return c.__name__
    return "Exception"


# ---------------------------------------------------------------------------
# encoding (recording) and decoding


def _dtype_name(d):
    return str(d).rsplit(".", 1)[-1]


class _Arrays:
    """Flat per-dtype buffers holding every recorded array."""

    def __init__(self, buffers=None):
        self.buffers = buffers or {}
        self.parts = {}
        self.sizes = {}
        self.recent = {}

    def add(self, a):
        a = np.ascontiguousarray(a)
        key = a.dtype.name
        off = self.sizes.get(key, 0)
        self.parts.setdefault(key, []).append(a.reshape(-1))
        if a.size:  # an empty array shares its offset with the next one: nothing to look up
            self.recent[(key, off)] = a
        self.sizes[key] = off + a.size
        return key, off

    def get(self, dtype, shape, off):
        n = int(np.prod(shape, dtype=np.int64))
        if not n:
            return np.zeros(shape, dtype=dtype)
        if (dtype, off) in self.recent:  # recording: the array just added
            return self.recent[(dtype, off)].reshape(shape).copy()
        return self.buffers[dtype][off:off + n].reshape(shape).copy()

    def flat(self):
        return {k: np.concatenate(v) if v else np.zeros(0, k) for k, v in self.parts.items()}


def _tensor_values(t):
    t = t.detach()
    if t._is_zerotensor():  # torch's second-order grads may be ZeroTensors
        return np.zeros(tuple(t.shape), dtype=_dtype_name(t.dtype))
    return t.resolve_conj().resolve_neg().contiguous().numpy()


def encode(x, arrays):
    """A JSON-able tree for a torch / python / numpy value (raises on anything else)."""
    T = torch_tensor_type()
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, int) and type(x) is int:
        return x
    if type(x) is float:
        return x if math.isfinite(x) else {"f": repr(x)}
    if T is not None and isinstance(x, T):
        name, off = arrays.add(_tensor_values(x))
        return {"t": _dtype_name(x.dtype), "s": list(x.shape), "o": off, "b": name}
    if isinstance(x, BaseException):
        return {"exc": type(x).__name__, "base": _builtin_base(type(x)), "msg": str(x)[:_MSG_CHARS]}
    mod = sys.modules.get("torch")
    if mod is not None and isinstance(x, mod.dtype):
        return {"dtype": _dtype_name(x)}
    if mod is not None and isinstance(x, mod.Size):
        return {"size": list(x)}
    if isinstance(x, np.ndarray):
        name, off = arrays.add(x)
        return {"n": x.dtype.name, "s": list(x.shape), "o": off}
    if isinstance(x, np.generic):
        return {"np": x.dtype.name, "v": encode(x.item(), arrays)}
    if isinstance(x, bytes):
        return {"bytes": x.decode("latin1")}
    if isinstance(x, tuple):
        return {"tuple": [encode(v, arrays) for v in x]}
    if isinstance(x, list):
        return [encode(v, arrays) for v in x]
    if isinstance(x, dict):
        return {"dict": [[encode(k, arrays), encode(v, arrays)] for k, v in x.items()]}
    raise TypeError(f"cannot record a {type(x).__module__}.{type(x).__name__} as a golden value: {x!r}")


def decode(x, arrays):
    if isinstance(x, list):
        return [decode(v, arrays) for v in x]
    if not isinstance(x, dict):
        return x
    if "t" in x:
        return GTensor(x["t"], x["s"], arrays.get(x["b"], x["s"], x["o"]))
    if "n" in x:
        return arrays.get(x["n"], x["s"], x["o"])
    if "f" in x:
        return float(x["f"])
    if "tuple" in x:
        return tuple(decode(v, arrays) for v in x["tuple"])
    if "dict" in x:
        return {_hashable(decode(k, arrays)): decode(v, arrays) for k, v in x["dict"]}
    if "dtype" in x:
        return GDtype(x["dtype"])
    if "size" in x:
        return GSize(x["size"])
    if "exc" in x:
        return GExc(x["exc"], x["base"], x["msg"])
    if "np" in x:
        return getattr(np, x["np"])(decode(x["v"], arrays))
    if "bytes" in x:
        return x["bytes"].encode("latin1")
    raise ValueError(f"unknown golden record {x!r}")


def _hashable(k):
    return tuple(k) if isinstance(k, list) else k


# ---------------------------------------------------------------------------
# the store of one test module


class Goldens:
    """Recorded torch results of one test module, looked up by "<test>#<n>"."""

    def __init__(self, name):
        self.name = name
        self.recording = os.environ.get(RECORD_ENV) == "1"
        self.json_path = GOLDEN_DIR / f"{name}.json.gz"
        self.npz_path = GOLDEN_DIR / f"{name}.npz"
        self._records = {}
        self._arrays = _Arrays() if self.recording else None
        self._loaded = self.recording
        self._test = None
        self._count = 0

    def start(self, test_name):
        self._test = test_name
        self._count = 0
        if self.recording:  # torch's random initial parameters, the same at every recording
            torch_lib().manual_seed(0)

    def _load(self):
        if not self.json_path.exists():
            pytest.fail(f"missing {self.json_path}: run `python tests/record_goldens.py` where torch is installed")
        with gzip.open(self.json_path, "rt", encoding="utf-8") as f:
            self._records = json.load(f)["records"]
        with np.load(self.npz_path) as z:
            self._arrays = _Arrays({k: z[k] for k in z.files})
        self._loaded = True

    def __call__(self, thunk):
        """torch's answer for the next look-up of the running test: thunk() run on torch when recording
        (it must return a torch / python / numpy value, or an exception object), the stored answer otherwise.
        Either way the value comes back decoded (GTensor, GDtype, GSize, GExc, numpy arrays, python values)."""
        assert self._test is not None, "golden look-up outside a test"
        key = f"{self._test}#{self._count}"
        self._count += 1
        if self.recording:
            if key in self._records:
                raise AssertionError(f"golden key {key} recorded twice")
            self._records[key] = encode(thunk(), self._arrays)
        elif not self._loaded:
            self._load()
        if key not in self._records:
            pytest.fail(f"no PyTorch golden for {key}: run `python tests/record_goldens.py` where torch is "
                        f"installed (and commit tests/goldens/)")
        return decode(self._records[key], self._arrays)

    def save(self):
        if not self.recording or not self._records:
            return
        GOLDEN_DIR.mkdir(exist_ok=True)
        doc = {"module": f"tests/test_{self.name}.py", "records": dict(sorted(self._records.items()))}
        with gzip.GzipFile(self.json_path, "wb", mtime=0) as f:
            f.write(json.dumps(doc, separators=(",", ":")).encode("utf-8"))
        np.savez_compressed(self.npz_path, **self._arrays.flat())


def raised(fn):
    """The exception fn() raises (an object to record); fails if it raises none."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the exception is the result
        return e
    raise AssertionError(f"{fn} raised no exception")


def golden_fixtures(golden):
    """The two autouse fixtures a golden-backed test module needs: save the file after the module, and
    start each test's case counter. Bind them in the module: `_file, _case = golden_fixtures(GOLDEN)`."""
    @pytest.fixture(scope="module", autouse=True)
    def golden_file():
        yield
        golden.save()

    @pytest.fixture(autouse=True)
    def golden_case(request):
        golden.start(request.node.name)

    return golden_file, golden_case
