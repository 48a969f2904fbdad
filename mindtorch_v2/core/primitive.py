"""Primitive, bind, the registry and the stack of active transforms.

A Primitive holds everything about one operation: its meta rule (avals in ->
avals out, raising the clear error for bad input), one VJP rule per input
(written with core ops only), an optional JVP rule, and a lowering per backend.

`bind(prim, *arrays, **params)` is the one way to run a primitive:
  * plain Arrays: check the meta rule (cached per primitive, avals and params),
    then run the lowering for the arrays' device (meta: the meta rule alone);
  * values that define `__mt_bind__` (the eager Tensor) take the call over;
  * tracers: the innermost (highest-level) active transform processes it.
"""
import threading

import numpy as np

from . import array as _array
from . import dtypes as _dt
from .array import Array, ArrayBase
from .devices import is_available as _device_available
from .devices import meta as _meta_device
from .devices import unavailable as _unavailable

_REGISTRY = {}


class VariadicVJP:
    """The VJP rules of a primitive that takes any number of array inputs (concatenate, einsum):
    `make_rule(i)` builds input i's rule on first use; `rules[i]` returns it."""

    __slots__ = ("make_rule", "_rules")

    def __init__(self, make_rule):
        self.make_rule = make_rule
        self._rules = {}

    def __getitem__(self, i):
        rule = self._rules.get(i)
        if rule is None:
            rule = self._rules[i] = self.make_rule(i)
        return rule


class _AllInputs:
    """vjp_reads of rules that read every input, however many (einsum's operands): a set of all
    input positions (and not "out")."""

    __slots__ = ()

    def __contains__(self, r):
        return type(r) is int

    def __bool__(self):
        return True

    def __repr__(self):
        return "ALL_INPUTS"


ALL_INPUTS = _AllInputs()


class Primitive:
    """One operation. See the module docstring; rules are attached by family builders."""

    __slots__ = ("name", "narrow_native", "meta", "impls", "vjp", "vjp_reads", "vjp_reads_by_input", "jvp", "batch",
                 "multiple_results", "_cache", "linear", "staged", "__weakref__")

    def __init__(self, name, meta, *, vjp=None, vjp_reads=(), jvp=None, multiple_results=False, linear=False,
                 registered=True):
        # registered=False: a primitive made at run time (a torch.library custom op), kept out of the registry
        # of declared primitives that the property suite walks (and free to be redefined under its name)
        if registered and name in _REGISTRY:
            raise ValueError(f"primitive '{name}' is declared twice")
        self.name = name
        self.meta = meta
        self.impls = {}
        # vjp: a tuple with one rule per positional input, each `rule(g, out, *args, **params)` returning
        # the cotangent for that input (or None); None entries mean "no gradient". A variadic primitive
        # gives a VariadicVJP instead.
        self.vjp = vjp
        # what the VJP rules read: a tuple of input indices and/or "out" (the eager tape saves exactly
        # these), ALL_INPUTS, or one such tuple per input (what that input's rule reads): then only the
        # rules of inputs that need a gradient count, as PyTorch saves `other` for mul only if `self`
        # needs grad.
        if isinstance(vjp_reads, tuple) and vjp_reads and isinstance(vjp_reads[0], tuple):
            self.vjp_reads_by_input = vjp_reads
            self.vjp_reads = tuple(sorted({r for rs in vjp_reads for r in rs}, key=str))
        else:
            self.vjp_reads_by_input = None
            self.vjp_reads = vjp_reads
        # linear=True: the op is linear in its differentiable inputs (those with a VJP rule), so its JVP is
        # the op applied to the tangents (zeros for inputs without one), with the other inputs as they are.
        self.linear = linear
        if jvp is None and linear:
            jvp = self._linear_jvp
        self.jvp = jvp  # jvp(tangents, out, *args, **params) -> output tangent(s); None: derived from the VJP
        self.batch = None
        self.multiple_results = multiple_results
        self.narrow_native = False  # True: the cpu lowering handles bfloat16/float8 buffers itself (bitcast)
        # staged(*args, **params): the core ops a staged program (jit, torch.compile) records in place of this
        # primitive, for one that exists to save the eager front end its per-op work (linear), or None from it
        # where the primitive itself is recorded; None here: always itself
        self.staged = None
        self._cache = {}
        if registered:
            _REGISTRY[name] = self

    def _linear_jvp(self, tangents, out, *args, **params):
        vjp = self.vjp
        ins = [a if vjp[i] is None else (zeros_like(a) if t is None else t)
               for i, (t, a) in enumerate(zip(tangents, args))]
        return self.bind(*ins, **params)

    def def_impl(self, device_type):
        """Decorator: register the lowering of this primitive for a device type."""
        def register(fn):
            self.impls[device_type] = fn
            return fn
        return register

    def __repr__(self):
        return f"<primitive {self.name}>"

    def bind(self, *args, **params):
        for a in args:
            if type(a) is not Array:
                return _bind_general(self, args, params)
        return self.eval(args, params)

    def abstract_eval(self, args, params):
        """Output avals ((shape, dtype) or a tuple of them), from the cache or the meta rule."""
        return self._entry(args, params)[0]

    def _entry(self, args, params):
        # cache: (primitive, avals, devices, params) -> (output avals, lowering or None on meta)
        key = _cache_key(args, params)
        try:
            return self._cache[key]
        except KeyError:
            return self._fill(key, args, params)
        except TypeError:
            bad = [k for k, v in params.items() if not _hashable(v)]
            raise TypeError(f"{self.name}: static params must be hashable (use tuples, not lists): {bad}") from None

    def _fill(self, key, args, params):
        """The cache entry of a miss: the meta rule's avals and the lowering for the args' device."""
        device = args[0].device if args else params["device"]
        for a in args:
            if a.device is not device:
                raise RuntimeError(
                    f"{self.name}: expected all arrays on the same device, got {device} and {a.device}")
        out = self.meta(*args, **params)
        impl = None
        if device is not _meta_device:
            impl = self.impls.get(device.type)
            if impl is None:
                if not _device_available(device.type):
                    raise _unavailable(device)
                raise NotImplementedError(f"{self.name} has no lowering for device '{device}'")
            if device.type == "cpu" and not self.narrow_native and any(a.dtype.narrow for a in args):
                impl = _in_float32(impl)
        entry = (out, impl, device)
        if len(self._cache) < 4096:
            self._cache[key] = entry
        return entry

    def lower(self, arg, params, shape, dtype):
        """Run the lowering on one concrete Array whose output aval the caller already knows (the
        eager view read: its geometry is valid by construction), skipping the meta-rule cache."""
        device = arg.device
        if arg._buf is None:
            return _make(None, shape, dtype, device)
        impl = self.impls.get(device.type)
        if impl is None:
            return self.eval((arg,), params)  # raises the clear "no lowering for device" error
        return _make(impl(arg._buf, **params), shape, dtype, device)

    def eval(self, args, params):
        """Run on plain Arrays: meta rule (cached), then the lowering for their device."""
        # the cache hit is looked up here (every eager op's path); a miss or an unhashable param goes
        # through _entry, which fills the cache or raises the clear error
        try:
            out, impl, device = self._cache[_cache_key(args, params)]
        except (KeyError, TypeError):
            out, impl, device = self._entry(args, params)
        n = len(args)
        if impl is None:  # meta: the avals are the whole answer
            if self.multiple_results:
                return tuple(_make(None, s, d, device) for s, d in out)
            return _make(None, out[0], out[1], device)
        if n == 2:
            res = impl(args[0]._buf, args[1]._buf, **params) if params else impl(args[0]._buf, args[1]._buf)
        elif n == 1:
            res = impl(args[0]._buf, **params) if params else impl(args[0]._buf)
        else:
            res = impl(*[a._buf for a in args], **params)
        if self.multiple_results:
            return tuple(_wrap(r, s, d, device) for r, (s, d) in zip(res, out))
        shape, dtype = out
        if type(res) is not _ndarray or res.dtype is not dtype.np:
            return _wrap(res, shape, dtype, device)
        return _make(res, shape, dtype, device)


def _cache_key(args, params):
    """The meta-rule cache key: each arg's (shape, dtype, device), then the params' items."""
    n = len(args)
    if n == 2:
        a, b = args
        key = (a.shape, a.dtype, a.device, b.shape, b.dtype, b.device)
    elif n == 1:
        a = args[0]
        key = (a.shape, a.dtype, a.device)
    else:
        key = ()
        for a in args:
            key += (a.shape, a.dtype, a.device)
    return key + tuple(params.items()) if params else key


_make = _array.make
_ndarray = np.ndarray


def _in_float32(impl):
    """The lowering run on float32 copies of its narrow (bfloat16, float8) inputs, as PyTorch computes
    them on CPU; `eval` rounds the result back to the output dtype. Chosen once per cache entry, so
    other dtypes pay nothing."""
    def lowering(*bufs, **params):
        return impl(*[b.astype(np.float32) if b.dtype in _NARROW else b for b in bufs], **params)
    return lowering


_NARROW = frozenset(d.np for d in _dt.ALL if d.narrow)


def _wrap(buf, shape, dtype, device):
    # lowerings may return numpy scalars or a wider dtype (np.sum of int8); shapes are
    # checked against the meta rules by the property suite, not on this hot path
    if type(buf) is not np.ndarray:
        buf = np.asarray(buf)
    if buf.dtype != dtype.np:
        buf = buf.astype(dtype.np)
    return _make(buf, shape, dtype, device)


def _hashable(v):
    try:
        hash(v)
        return True
    except TypeError:
        return False


def bind(prim, *args, **params):
    """Run primitive `prim` on `args` (see module docstring)."""
    return prim.bind(*args, **params)


def primitives():
    """All declared primitives, by name."""
    return dict(_REGISTRY)


# ---------------------------------------------------------------------------
# transform stack and tracers


class MainTrace:
    """One active transform: its level in the stack and its interpreter."""

    __slots__ = ("level", "trace")

    def __init__(self, level, trace):
        self.level = level
        self.trace = trace


class _TransformStack(threading.local):
    def __init__(self):
        self.mains = []


_STACK = _TransformStack()  # per thread, like the eager grad mode


class new_main:
    """Context manager pushing a transform interpreter at the next level."""

    __slots__ = ("trace_type", "main")

    def __init__(self, trace_type):
        self.trace_type = trace_type

    def __enter__(self):
        stack = _STACK.mains
        main = MainTrace(len(stack), None)
        main.trace = self.trace_type(main)
        stack.append(main)
        self.main = main
        return main

    def __exit__(self, *exc):
        popped = _STACK.mains.pop()
        if popped is not self.main:
            raise RuntimeError("transform stack corrupted: transforms exited out of order")
        popped.trace.finished = True
        return False


class Trace:
    """An interpreter for binds on its own tracers. `transform` names it in errors."""

    __slots__ = ("main", "finished")
    transform = "a transform"
    concrete_hint = ""  # what else a ConcretizationTypeError suggests (jit: static arguments)

    def __init__(self, main):
        self.main = main
        self.finished = False

    def process(self, prim, args, params):
        raise NotImplementedError


class UnexpectedTracerError(TypeError):
    """A tracer was used after the transform that made it had returned (it leaked out of the function,
    e.g. stored in a global or a closure), as JAX's UnexpectedTracerError."""


class ConcretizationTypeError(TypeError):
    """A traced value was used where Python needs a concrete one (if, int(), .item()), as JAX's. `transform`
    names the transform that traces it ("jit", "vmap", ...)."""

    def __init__(self, message, transform=None):
        super().__init__(message)
        self.transform = transform


class Tracer(ArrayBase):
    """A value flowing through a transform. Subclasses give `shape`, `dtype` and `device`.

    Python conversions (bool, int, float, complex, index, item, tolist) read `concrete()`: the transforms that
    carry a concrete value (grad, vjp and jvp trace concrete primals) give it, so Python control flow on them
    works as in JAX, and the converted value is a constant (no derivative flows through a Python number);
    the others (vmap: one value per batch element; jit: none) raise ConcretizationTypeError. A NumPy
    conversion is refused under every transform: it would drop the derivative or the batch silently."""

    __slots__ = ("_main",)

    def concrete(self, what):
        """The concrete Array under this traced value, or ConcretizationTypeError naming `what` (the conversion
        that needs it)."""
        trace = self._main.trace
        raise ConcretizationTypeError(
            f"{what} needs a concrete value, but this array is traced by {trace.transform} (shape {self.shape}, "
            f"dtype {self.dtype.name}): Python control flow and conversions cannot depend on traced values. Use "
            f"core.where (or compute both branches){trace.concrete_hint}.", trace.transform)

    def __bool__(self):
        return bool(self.concrete("the truth value of an array (if/while/and/or)"))

    def __int__(self):
        return int(self.concrete("int()"))

    def __float__(self):
        return float(self.concrete("float()"))

    def __complex__(self):
        return complex(self.concrete("complex()").item())

    def __index__(self):
        return self.concrete("use as an index (__index__)").__index__()

    def item(self):
        return self.concrete("item()").item()

    def tolist(self):
        return self.concrete("tolist()").tolist()

    def __array__(self, dtype=None, copy=None):
        transform = self._main.trace.transform
        raise ConcretizationTypeError(
            f"a traced array cannot be converted to a numpy array (traced by {transform}, shape {self.shape}): the "
            "conversion would drop what the transform carries. Use core ops on it, or .item()/float() for a "
            "concrete scalar where the transform has one (grad, vjp, jvp).", transform)

    def __repr__(self):
        return f"{type(self).__name__}(shape={self.shape}, dtype={self.dtype.name}, level={self._main.level})"


def _bind_general(prim, args, params):
    top = None
    for a in args:
        hook = getattr(type(a), "__mt_bind__", None)
        if hook is not None:
            return hook(prim, args, params)
        if isinstance(a, Tracer):
            main = a._main
            if main.trace.finished:
                _leaked(prim, a)
            if top is None or main.level > top.level:
                top = main
        elif type(a) is not Array:
            raise TypeError(f"{prim.name}: expected arrays as positional arguments, got {type(a).__name__}")
    if top is None:
        return prim.eval(args, params)
    return top.trace.process(prim, args, params)



def _leaked(prim, tracer):
    raise UnexpectedTracerError(
        f"{prim.name}: encountered a tracer of {tracer._main.trace.transform} (level {tracer._main.level}) after "
        f"that transform had returned: {tracer!r}. A value computed inside a transformed function leaked out "
        "(stored in a global, an attribute or a closure). Return it from the function instead.")


# ---------------------------------------------------------------------------
# zeros: owned here (as JAX's ad_util owns them), for the interpreters and the rules


def zeros_like(x):
    """Zeros with x's shape, dtype and device: a broadcast 0, no buffer allocated (meta: no buffer)."""
    return _array.constant(_np_zeros(x.dtype.np, x.shape), x.shape, x.dtype, x.device)


def _np_zeros(np_dtype, shape):
    return np.broadcast_to(np.zeros((), np_dtype), shape)
