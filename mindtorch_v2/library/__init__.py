"""torch.library: user-defined operators that work under autograd, meta tensors and torch.func.

    @torch.library.custom_op("mylib::numpy_sin", mutates_args=())
    def numpy_sin(x: Tensor) -> Tensor:
        return torch.from_numpy(np.sin(x.numpy()))

    @numpy_sin.register_fake
    def _(x):
        return torch.empty_like(x)

    numpy_sin.register_autograd(lambda ctx, g: g * ctx.saved_tensors[0].cos(),
                                setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0]))
    torch.ops.mylib.numpy_sin(x)      # the same op

Each op becomes one core Primitive (see _custom_op.py). The older `Library(ns, kind).define/.impl`
API makes the same kind of op.
"""
import re

from ._custom_op import _OPS, CustomOpDef, FakeImplCtx, VmapInfo, _device_types, get_ctx, resolve_op
from ._opcheck import OpCheckError, opcheck
from . import _schema

__all__ = ["custom_op", "register_fake", "register_autograd", "register_kernel", "register_vmap",
           "register_torch_dispatch", "opcheck", "infer_schema", "get_ctx", "Library", "define", "impl",
           "CustomOpDef", "OpCheckError", "FakeImplCtx", "VmapInfo", "fallthrough_kernel"]

_RESERVED_NAMESPACES = ("prim",)
_IDENT = re.compile(r"^[A-Za-z_]\w*$")
_OP_NAME = re.compile(r"^[A-Za-z_]\w*(\.\w+)?$")


def _split_qualname(qualname):
    if not isinstance(qualname, str):
        raise ValueError(f"expected an operator name 'namespace::name' as a str, got {type(qualname).__name__}")
    parts = qualname.split("::")
    if len(parts) != 2:
        raise ValueError(f"expected the operator name to be of the form 'namespace::name' (one '::'), got "
                         f"'{qualname}'")
    ns, name = parts
    if ns in _RESERVED_NAMESPACES:
        raise ValueError(f"{ns} is a reserved namespace. Please try creating a library with another name.")
    if not _IDENT.match(ns):
        raise RuntimeError(f"expected eof but found a character that is not allowed in namespace '{ns}' (of "
                           f"'{qualname}'): namespaces are identifiers")
    if not _OP_NAME.match(name):
        raise RuntimeError(f"expected eof but found a character that is not allowed in operator name '{name}' "
                           f"(of '{qualname}'): operator names are identifiers")
    return ns, name


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Define a custom operator from fn (its type hints give the schema); as a decorator or a function.
    Returns a CustomOpDef: call it like fn; add register_fake / register_autograd / register_vmap."""
    ns, opname = _split_qualname(name)

    def inner(fn):
        mutates = _schema.check_mutates_args(mutates_args)
        if schema is None:
            parsed = _schema.infer(fn, mutates)
        else:
            parsed = _schema.parse(schema)
            declared = {a.name for a in parsed.mutated}
            expected = set(a.name for a in parsed.args if a.is_tensor) if mutates == "unknown" else set(mutates)
            if declared != expected:
                raise ValueError(f"Attempted to create a custom op with `mutates_args={mutates_args}` and "
                                 f"`schema={schema}. The schema suggests that the op mutates {declared}which is "
                                 "different from what was provided to us in `mutates_args`. Please make these "
                                 "consistent.")
        _check_returns(parsed, name)
        op = CustomOpDef(f"{ns}::{opname}", parsed)
        op._init_fn = fn
        op.register_kernel(device_types, fn)
        op.__wrapped__ = fn
        op.__doc__ = fn.__doc__
        op.__name__ = getattr(fn, "__name__", opname)
        return op

    return inner if fn is None else inner(fn)


def _check_returns(schema, name):
    for r in schema.returns:
        if r not in ("Tensor", "Tensor[]"):
            raise NotImplementedError(f"{name}: custom ops returning {r} are not supported by mindtorch_v2 (an op's "
                                      "results are tensors here); return a Tensor instead")
    if schema.returns_tuple and "Tensor[]" in schema.returns:
        raise NotImplementedError(f"{name}: a tuple return containing Tensor[] is not supported by mindtorch_v2")


def infer_schema(prototype_function, /, *, mutates_args, op_name=None, tags=None):
    """The schema string of a function from its type hints: '(Tensor x, SymInt n) -> Tensor'."""
    return str(_schema.infer(prototype_function, mutates_args, op_name))


# ---------------------------------------------------------------------------
# the module-level register functions: op given as "ns::name", a CustomOpDef or a torch.ops object


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1):
    """Register the fake (meta) implementation of op; usable as a decorator."""
    return resolve_op(op).register_fake(func)


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """Register the backward formula of op (see CustomOpDef.register_autograd)."""
    return resolve_op(op).register_autograd(backward, setup_context=setup_context)


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Register op's implementation for device types; usable as a decorator."""
    return resolve_op(op).register_kernel(device_types, func)


def register_vmap(op, func=None, /, *, lib=None):
    """Register op's batching rule for torch.vmap; usable as a decorator."""
    return resolve_op(op).register_vmap(func)


def register_torch_dispatch(op, torch_dispatch_class, func=None, /, *, lib=None):
    """Not supported (no __torch_dispatch__ here): raises NotImplementedError."""
    return resolve_op(op).register_torch_dispatch(torch_dispatch_class, func)


# ---------------------------------------------------------------------------
# the older API: Library(ns, kind).define(schema) / .impl(name, fn, dispatch_key)

_DEF_NAMESPACES = set()
_DEVICE_KEYS = {"CPU": "cpu", "CUDA": "cuda", "PrivateUse1": "npu", "NPU": "npu", "MPS": "mps", "XPU": "xpu"}
_AUTOGRAD_KEYS = ("Autograd", "AutogradCPU", "AutogradCUDA", "AutogradPrivateUse1")


def fallthrough_kernel():
    """A dummy kernel for Library.impl (torch's fallthrough); registering it changes nothing here."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


class Library:
    """A registration block for operators in namespace `ns`: kind "DEF" (the one place its ops are
    defined), "FRAGMENT" (more definitions) or "IMPL" (implementations only)."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if ns in _RESERVED_NAMESPACES and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library with another name.")
        if kind == "DEF":
            if ns in _DEF_NAMESPACES:
                raise RuntimeError(f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; "
                                   "please put all of your definitions in a single TORCH_LIBRARY block. If you "
                                   "were trying to specify implementations, consider using TORCH_LIBRARY_IMPL "
                                   "(or Library(ns, 'IMPL')); if you need to define more ops, use "
                                   "Library(ns, 'FRAGMENT').")
            _DEF_NAMESPACES.add(ns)
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._op_defs = set()
        self._destroyed = False

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        """Define an operator from a schema string 'name(Tensor x, int n) -> Tensor'; returns its name."""
        if self.kind == "IMPL":
            raise RuntimeError(f"Library(ns='{self.ns}', kind='IMPL') cannot define operators; use 'DEF' or "
                               "'FRAGMENT'")
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        parsed = _schema.parse(schema)
        if parsed.name is None:
            raise RuntimeError(f"Library.define: the schema needs an operator name, got '{schema}'")
        qualname = f"{self.ns}::{parsed.name}"
        _split_qualname(qualname)
        if qualname in _OPS and getattr(_OPS[qualname], "_library", None) is not None \
                and not _OPS[qualname]._library._destroyed:
            raise RuntimeError(f"Tried to register an operator ({qualname}) with the same name and overload name "
                               "multiple times.")
        _check_returns(parsed, qualname)
        name = parsed.name
        op = CustomOpDef(qualname, parsed)
        op._library = self
        self._op_defs.add(qualname)
        return name

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False):
        """Register fn as op_name's implementation for a dispatch key ("CPU", "Meta",
        "CompositeExplicitAutograd", "CompositeImplicitAutograd", "Autograd", ...)."""
        if with_keyset:
            raise NotImplementedError("Library.impl(with_keyset=True): there are no dispatch key sets here")
        if isinstance(op_name, str):
            qualname = op_name if "::" in op_name else f"{self.ns}::{op_name}"
        else:
            qualname = resolve_op(op_name)._qualname
        op = resolve_op(qualname)
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        if fn is fallthrough_kernel:
            return
        if key == "CompositeImplicitAutograd":
            op._composite = fn
        elif key == "CompositeExplicitAutograd":
            op._kernels[None] = fn
        elif key == "Meta":
            op._abstract_fn = fn
        elif key in _DEVICE_KEYS:
            op._kernels[_DEVICE_KEYS[key]] = fn
        elif key in _AUTOGRAD_KEYS:
            op._autograd_impl = fn
        else:
            raise NotImplementedError(f"Library.impl: dispatch key '{key}' is not supported here")

    def fallback(self, fn, dispatch_key="", *, with_keyset=False):
        raise NotImplementedError("Library.fallback: there is no dispatcher to fall back in")

    def _destroy(self):
        for q in self._op_defs:
            if _OPS.get(q) is not None and getattr(_OPS[q], "_library", None) is self:
                del _OPS[q]
        self._op_defs = set()
        if self.kind == "DEF":
            _DEF_NAMESPACES.discard(self.ns)
        self._destroyed = True


_FRAGMENTS = {}


def _fragment(ns):
    lib = _FRAGMENTS.get(ns)
    if lib is None:
        lib = _FRAGMENTS[ns] = Library(ns, "FRAGMENT")
    return lib


def define(qualname, schema, *, lib=None, tags=()):
    """Define operator 'ns::name' with a schema '(Tensor x) -> Tensor' (torch.library.define)."""
    ns, name = _split_qualname(qualname)
    if lib is None:
        lib = _fragment(ns)
    lib.define(name + schema)
    return _OPS[f"{ns}::{name}"]


def impl(qualname, types, func=None, *, lib=None):
    """Register an implementation for device types of op 'ns::name' (torch.library.impl); also the older
    form impl(lib, name, dispatch_key). Usable as a decorator."""
    if isinstance(qualname, Library):
        library, name, key = qualname, types, func or ""

        def register_old(fn):
            library.impl(name, fn, key)
            return fn
        return register_old
    op = resolve_op(qualname)

    def register(fn):
        keys = (types,) if isinstance(types, str) else tuple(types)
        for k in keys:
            if k in ("CompositeImplicitAutograd", "CompositeExplicitAutograd", "Meta") or k in _DEVICE_KEYS \
                    or k in _AUTOGRAD_KEYS:
                Library(op._namespace, "FRAGMENT").impl(op._name, fn, k)
            else:
                op.register_kernel(_device_types(k), fn)
        return fn
    return register if func is None else register(func)
