"""Devices and the backend registry.

A Device is interned by its type string ("cpu", "meta", "npu"). A backend
registers itself under a device type; primitives register one lowering per
backend. `meta` has no backend at all: every op on meta runs its meta rule only.
"""
import threading


class Device:
    """A device, interned: `Device("cpu") is Device("cpu") is device("cpu")` (also torch.device)."""

    __slots__ = ("type", "index")

    def __new__(cls, spec, index=None):
        if type(spec) is Device:
            return spec
        if index is not None:
            spec = f"{spec}:{int(index)}"
        return device(spec)

    @classmethod
    def _create(cls, type_, index):
        d = object.__new__(cls)
        d.type = type_
        d.index = index
        return d

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, TypeError):
                return False
        return self is other

    __hash__ = object.__hash__  # interned: identity hashing (C speed; devices key the bind cache)

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __reduce__(self):
        return (device, (str(self),))

    # `with torch.device("meta"):` -- factory functions called without a device inside create on this one
    def __enter__(self):
        _default.__dict__.setdefault("stack", []).append(self)
        return self

    def __exit__(self, *exc):
        _default.stack.pop()
        return False

    @staticmethod
    def get_default():
        """The device factory functions use when given none (the innermost `with device`, else the one
        set_default set, else None: the core's own default, cpu). Per thread, as in PyTorch."""
        stack = getattr(_default, "stack", None)
        if stack:
            return stack[-1]
        return getattr(_default, "base", None)

    @staticmethod
    def set_default(spec):
        """Set (or with None, clear) this thread's default device under any `with device` blocks."""
        _default.base = None if spec is None else Device(spec)


_default = threading.local()


# PyTorch's device types (every one can be named, as `torch.device("cuda")` can without CUDA), and npu.
# Arrays live only where a backend is registered (cpu, npu with the Ascend runtime) or on meta; using
# another device raises `unavailable(device)`'s error, PyTorch's for that type.
TORCH_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
               "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
KNOWN_TYPES = TORCH_TYPES + ("npu",)
_DEVICES = {}


class NotCompiledError(AssertionError, RuntimeError):
    """A device type this build has no support for (PyTorch raises AssertionError for cuda and xpu)."""


def unavailable(dev):
    """The error for making an array on `dev` when no backend serves its type."""
    t = dev.type
    if t in ("cuda", "xpu"):
        return NotCompiledError(f"Torch not compiled with {t.upper()} enabled")
    if t == "mps":
        return RuntimeError("PyTorch is not linked with support for mps devices")
    if t == "npu":
        return RuntimeError(f"device '{dev}' is not available: no backend is registered for it "
                            "(npu needs the Ascend runtime)")
    return RuntimeError(f"device '{dev}' is not available: mindtorch_v2 has no backend for '{t}' devices "
                        "(it runs on cpu and meta, and npu with the Ascend runtime)")


def device(spec):
    """Return the interned Device for 'cpu', 'meta', 'npu', 'cuda:0', ... or a Device."""
    if type(spec) is Device:
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"expected a device string like 'cpu' or 'meta', got {spec!r}")
    d = _DEVICES.get(spec)
    if d is not None:
        return d
    type_, _, index = spec.partition(":")
    if type_ not in KNOWN_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(KNOWN_TYPES)} device type at start of device string: {spec}")
    if index and not index.isdigit():
        raise RuntimeError(f"invalid device string '{spec}'")
    d = _DEVICES[spec] = Device._create(type_, int(index) if index else None)
    return d


cpu = device("cpu")
meta = device("meta")

# device type -> backend module/object with `to_buffer(numpy_array)` and `to_numpy(buffer)`
_BACKENDS = {}


def register_backend(device_type, backend):
    _BACKENDS[device_type] = backend


def backend_for(dev):
    try:
        return _BACKENDS[dev.type]
    except KeyError:
        raise unavailable(dev) from None


def is_available(device_type):
    return device_type == "meta" or device_type in _BACKENDS
