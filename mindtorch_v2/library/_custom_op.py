"""A user-defined operator is a core Primitive, built from the user's callables:

    @torch.library.custom_op("mylib::numpy_sin", mutates_args=())
    def numpy_sin(x: Tensor) -> Tensor:                   # the cpu lowering
        return torch.from_numpy(np.sin(x.numpy()))
    numpy_sin.register_fake(lambda x: torch.empty_like(x))            # the meta rule
    numpy_sin.register_autograd(backward, setup_context=setup)        # the VJP rules (JVP: their transpose)
    numpy_sin.register_vmap(rule)                                     # the batching rule (else: a loop)

Calling the op binds that primitive like any other: eager autograd records one node whose backward is
the user's (setup_context + backward, run when the gradient is needed, on the saved inputs and output),
`torch.func` transforms interpret it, meta tensors run the fake. The primitive's positional inputs are
the op's tensors, flattened (a Tensor[] argument contributes each element); everything else travels in
one hashable static param `spec` (see `_flatten`).

A mutating op (mutates_args) is functional underneath: the kernel writes into private copies of the
mutated arguments, the primitive returns their new values after the op's own outputs, and the call
writes them back into the caller's tensors (one version bump each), as any in-place op does.
"""
import contextlib
import inspect
import threading
import warnings

import numpy as np

from .. import core
from ..core import dtypes as _dt
from ..core.array import make as _make_array
from ..core.primitive import Primitive, VariadicVJP
from ..eager import grad_mode
from ..eager.tensor import Tensor
from ..eager.writeback import write
from .._ops import _OPS, OpOverload



class _UserError(Exception):
    """Carries an exception raised by user code (kernel, fake, vmap rule) through the eager bind hook,
    which would otherwise turn a ValueError or TypeError into torch's RuntimeError for core errors."""

    def __init__(self, exc):
        super().__init__(exc)
        self.exc = exc


def _call_user(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except (ValueError, TypeError) as e:
        raise _UserError(e) from e


# ---------------------------------------------------------------------------
# flattening the arguments: tensors are the primitive's inputs, the rest is the static `spec`
#
#   f(x, [a, b], 3, None)  with schema (Tensor x, Tensor[] ys, int n, Tensor? w)
#   -> flat (x, a, b), spec (("t",), ("l", 2), ("c", 3), ("c", None))


def _freeze(v):
    if isinstance(v, list):
        return ("cl", tuple(_freeze(x)[1] for x in v))
    if isinstance(v, tuple):
        return ("ct", tuple(_freeze(x)[1] for x in v))
    return ("c", v)


def _flatten(schema, values):
    flat, spec = [], []
    for arg, v in zip(schema.args, values):
        if arg.is_tensor and isinstance(v, Tensor) and not arg.is_list:
            flat.append(v)
            spec.append(("t",))
        elif arg.is_tensor and arg.is_list and v is not None:
            if not isinstance(v, (list, tuple)):
                raise TypeError(f"argument {arg.name} must be a list of Tensors, got {type(v).__name__}")
            mask = tuple(isinstance(t, Tensor) for t in v)
            for t, m in zip(v, mask):
                if not m and t is not None:
                    raise TypeError(f"argument {arg.name} must be a list of Tensors, got an element of type "
                                    f"{type(t).__name__}")
            flat.extend(t for t in v if t is not None)
            spec.append(("l", mask))
        else:
            if arg.is_tensor and not (v is None and arg.optional):
                raise TypeError(f"argument {arg.name} must be a Tensor, got {type(v).__name__}")
            spec.append(_freeze(v))
    return flat, tuple(spec)


def _unflatten(schema, spec, flat):
    """(positional args, keyword-only args, flat position -> schema Arg) from the primitive's inputs."""
    args, kwargs, owners = [], {}, []
    i = 0
    for arg, s in zip(schema.args, spec):
        kind = s[0]
        if kind == "t":
            v = flat[i]
            owners.append(arg)
            i += 1
        elif kind == "l":
            v = []
            for m in s[1]:
                if m:
                    v.append(flat[i])
                    owners.append(arg)
                    i += 1
                else:
                    v.append(None)
        elif kind == "cl":
            v = list(s[1])
        elif kind == "ct":
            v = tuple(s[1])
        else:
            v = s[1]
        if arg.kwarg_only:
            kwargs[arg.name] = v
        else:
            args.append(v)
    return args, kwargs, owners


# ---------------------------------------------------------------------------
# the Tensors the user's kernel sees


class _MutableArg(Tensor):
    """A mutated argument as the kernel sees it: a private copy whose `numpy()` is writable (and is the
    tensor's memory), so `np.sin(x.numpy(), out=out.numpy())` works as in PyTorch."""

    __slots__ = ()

    def numpy(self, force=False):
        v = self._value()
        own = self.__dict__.get("_mt_buf")
        if own is not None and v._buf is own:
            return own
        if v._buf is None:
            raise RuntimeError("cannot convert a meta tensor to numpy: meta tensors hold no data")
        own = np.array(v._buf, copy=True)
        self._storage.value = _make_array(own, v.shape, v.dtype, v.device)
        self.__dict__["_mt_buf"] = own
        return own


def _kernel_inputs(vals, owners):
    ts = []
    for v, arg in zip(vals, owners):
        if arg.mutable:
            t = _MutableArg._from_value(v)
            t.__dict__["_mt_buf"] = None
        else:
            t = Tensor._from_value(v)
        ts.append(t)
    return ts


def _finish_mutable(t):
    buf = t.__dict__.get("_mt_buf")
    if buf is not None:
        buf.flags.writeable = False  # its Array is now an ordinary immutable value
    return t._value()


# ---------------------------------------------------------------------------
# get_ctx(): the context of a running fake


class FakeImplCtx:
    """What `torch.library.get_ctx()` returns inside a fake implementation."""

    def __init__(self, op):
        self._op = op

    def new_dynamic_size(self, *, min=0, max=None):
        """A data-dependent output size: meta tensors cannot represent one (there is no FakeTensor mode)."""
        raise NotImplementedError(
            f"{self._op._qualname}: You're trying to run this operator with meta Tensors (as opposed to "
            "FakeTensors), but this operator may return an output Tensor with data-dependent shape. Meta Tensors "
            "don't support operators with outputs that have data-dependent shapes, and mindtorch_v2 has no "
            "FakeTensor mode. If your operator does not return an output with data-dependent shape, make sure "
            "the fake implementation does not call torch.library.get_ctx().new_dynamic_size().")

    create_unbacked_symint = new_dynamic_size


_fake_state = threading.local()


def get_ctx():
    """The FakeImplCtx of the fake implementation running now (None outside one)."""
    stack = getattr(_fake_state, "stack", None)
    return stack[-1] if stack else None


class _AutogradCtx:
    """The `ctx` of setup_context / backward: saved tensors and any attributes the user sets."""

    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad
        self._saved = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        """Keep tensors (or None) for backward: `ctx.saved_tensors`."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._saved = tensors

    @property
    def saved_tensors(self):
        return tuple(self._saved)

    def mark_non_differentiable(self, *args):
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)

    def mark_dirty(self, *args):
        raise RuntimeError("mark_dirty is not allowed in a custom op's setup_context: declare mutated "
                           "arguments with mutates_args instead")


class VmapInfo:
    """`info` of a register_vmap rule: the batch size and torch.vmap's randomness option."""

    __slots__ = ("batch_size", "randomness")

    def __init__(self, batch_size, randomness):
        self.batch_size = batch_size
        self.randomness = randomness

    def __repr__(self):
        return f"VmapInfo(batch_size={self.batch_size}, randomness='{self.randomness}')"


def _current_randomness():
    from ..eager import random_ops
    stack = getattr(random_ops._vmap_rng, "stack", None)
    return stack[-1][0] if stack else "error"


class _AllAndOut:
    """vjp_reads of a custom op: the user's setup_context may save any input and the output."""

    __slots__ = ()

    def __contains__(self, r):
        return type(r) is int or r == "out"

    def __bool__(self):
        return True


_READS = _AllAndOut()
_below_autograd = threading.local()


# ---------------------------------------------------------------------------
# the primitive


class _OpPrimitive(Primitive):
    """The Primitive of a user-defined op. Its cpu (and other device) run is the user's kernel, called
    directly (as PyTorch's eager calls never run the fake); on meta it is the fake."""

    __slots__ = ("op",)

    def __init__(self, op, multiple_results):
        super().__init__(op._qualname, self._meta_rule, vjp=VariadicVJP(self._make_vjp), vjp_reads=_READS,
                         multiple_results=multiple_results, registered=False)
        self.op = op
        self.batch = self._batch_rule

    def eval(self, args, params):
        return self.op._run(args, params["spec"])

    def _meta_rule(self, *args, spec):
        metas = tuple(_make_array(None, a.shape, a.dtype, core.meta) for a in args)
        out = self.op._run_fake(metas, spec)
        if self.multiple_results:
            return tuple((o.shape, o.dtype) for o in out)
        return out.shape, out.dtype

    def _make_vjp(self, i):
        op = self.op

        def rule(g, out, *primals, spec):
            return op._input_grads(g, out, primals, spec)[i]
        return rule

    def _batch_rule(self, vals, bdims, spec):
        return self.op._batch(vals, bdims, spec)


_DEVICE_KEYS = {"CPU": "cpu", "CUDA": "cuda", "PrivateUse1": "npu", "NPU": "npu", "MPS": "mps", "XPU": "xpu",
                "Meta": "meta"}


class CustomOpDef:
    """One user-defined operator (what torch.library.custom_op returns; Library.define makes one too):
    schema, kernels per device type, fake, autograd and vmap rules, and the primitive built from them."""

    def __init__(self, qualname, schema):
        self._qualname = qualname
        self._namespace, self._name = qualname.split("::")
        schema.name = qualname
        self._schema = schema
        self._kernels = {}          # device type (None: every device) -> kernel
        self._disabled = set()      # device types switched off by set_kernel_enabled
        self._abstract_fn = None    # the fake (meta) implementation
        self._setup_context_fn = None
        self._backward_fn = None
        self._vmap_fn = None
        self._composite = None      # CompositeImplicitAutograd: called as is, its own ops give autograd
        self._autograd_impl = None  # an "Autograd" dispatch-key kernel (Library.impl)
        self._memo = None
        self._signature = None
        self._library = None        # the Library that defined it (Library.define), if any
        self._prim = _OpPrimitive(self, multiple_results=schema.returns_tuple or schema.returns == ["Tensor[]"]
                                  or bool(schema.mutated) or not schema.returns)
        _OPS[qualname] = self

    # -- calling -----------------------------------------------------------------------------------

    def _values(self, args, kwargs):
        sig = self._signature
        if sig is None:
            sig = self._signature = _signature_of(self._schema)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self._qualname}() {e}") from None
        bound.apply_defaults()
        return [bound.arguments[a.name] for a in self._schema.args]

    def __call__(self, *args, **kwargs):
        if self._autograd_impl is not None and not getattr(_below_autograd, "on", False):
            _below_autograd.on = True
            try:
                return self._autograd_impl(*args, **kwargs)
            finally:
                _below_autograd.on = False
        if self._composite is not None:
            return self._composite(*args, **kwargs)
        values = self._values(args, kwargs)
        flat, spec = _flatten(self._schema, values)
        try:
            res = self._prim.bind(*flat, spec=spec)
        except _UserError as e:
            raise e.exc.with_traceback(e.exc.__traceback__) from None
        res = list(Tensor._wrap(res)) if self._prim.multiple_results else [Tensor._wrap(res)]
        mutated = [t for t, arg in zip(flat, _unflatten(self._schema, spec, flat)[2]) if arg.mutable]
        if mutated:
            n = len(res) - len(mutated)
            for t, new in zip(mutated, res[n:]):
                # torch's custom ops leave a mutated tensor's autograd history as it was (they allow no
                # autograd formula on mutating ops): version bump, no history
                write(t, new, record=False)
            res = res[:n]
        return self._structure(res)

    def _structure(self, res):
        """The primitive's outputs (a list) in the schema's return structure."""
        schema = self._schema
        if not schema.returns:
            return None
        if schema.returns_tuple:
            return tuple(res)
        if schema.returns == ["Tensor[]"]:
            return list(res)
        return res[0]

    # -- the kernel, on concrete arrays ---------------------------------------------------------------

    def _run(self, vals, spec):
        device = vals[0].device if vals else core.cpu
        if any(v.device is core.meta for v in vals):
            if "meta" in self._kernels:
                return self._run_kernel(self._kernels["meta"], vals, spec)
            return self._run_fake(vals, spec)
        kernel = None
        if device.type not in self._disabled:
            kernel = self._kernels.get(device.type, self._kernels.get(None))
        if kernel is None:
            have = sorted(k.upper() if k else "CompositeExplicitAutograd" for k in self._kernels)
            raise NotImplementedError(
                f"Could not run '{self._qualname}' with arguments from the '{device.type.upper()}' backend. "
                f"'{self._qualname}' is only available for these backends: [{', '.join(have + ['Meta'])}].")
        return self._run_kernel(kernel, vals, spec)

    def _run_kernel(self, kernel, vals, spec):
        schema = self._schema
        _, _, owners = _unflatten(schema, spec, vals)
        ts = _kernel_inputs(vals, owners)
        args, kwargs, _ = _unflatten(schema, spec, ts)
        versions = [t._storage.version.value for t in ts]
        with grad_mode.no_grad():
            res = _call_user(kernel, *args, **kwargs)
        outs = self._check_outputs(res, "kernel")
        storages = {id(t._storage) for t in ts}
        for o in outs:
            if id(o._storage) in storages:
                raise RuntimeError(_ALIAS_MSG.format(name=self._name))
        if len({id(o._storage) for o in outs}) != len(outs):
            raise RuntimeError(_ALIAS_MSG.format(name=self._name))
        for t, arg, v0 in zip(ts, owners, versions):
            if not arg.mutable and t._storage.version.value != v0:
                raise RuntimeError(f"{self._qualname}: Argument {arg.name} is not defined as mutable but was "
                                   "mutated (add it to mutates_args)")
        res = [o._value() for o in outs] + [_finish_mutable(t) for t, arg in zip(ts, owners) if arg.mutable]
        for r in res:
            if not isinstance(r, core.Array):
                raise RuntimeError(f"{self._qualname}: the kernel returned a traced tensor; kernels run on "
                                   "concrete tensors (write transforms with register_autograd/register_vmap)")
        return tuple(res) if self._prim.multiple_results else res[0]

    def _check_outputs(self, res, what):
        """The kernel's (or fake's) result as a list of Tensors, checked against the schema."""
        schema = self._schema
        if not schema.returns:
            if res is not None:
                raise RuntimeError(f"{self._qualname}: the {what} must return None (the schema returns "
                                   f"nothing), got {type(res).__name__}")
            return []
        if schema.returns_tuple:
            if not isinstance(res, (tuple, list)) or len(res) != len(schema.returns):
                raise RuntimeError(f"{self._qualname}: the {what} must return a tuple of {len(schema.returns)} "
                                   f"Tensors, got {type(res).__name__}")
            outs = list(res)
        elif schema.returns == ["Tensor[]"]:
            if not isinstance(res, (tuple, list)):
                raise RuntimeError(f"{self._qualname}: the {what} must return a list of Tensors, got "
                                   f"{type(res).__name__}")
            outs = list(res)
        else:
            outs = [res]
        for o in outs:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"{self._qualname}: the {what} must return Tensors, got {type(o).__name__}")
        return outs

    def _run_fake(self, vals, spec):
        """The fake implementation on meta tensors (vals are meta arrays)."""
        fake = self._abstract_fn
        if fake is None and self._library is not None:
            raise NotImplementedError(
                f"{self._qualname}: attempted to run this operator with Meta tensors, but there was no fake impl "
                "or Meta kernel registered (torch.library.register_fake, or Library.impl with 'Meta').")
        if fake is None:
            raise RuntimeError(f"There was no fake impl registered for {self!r}. This is necessary for "
                               "torch.compile/export/fx tracing to work. Please use "
                               f"`{self._name}.register_fake` to add an fake impl.")
        schema = self._schema
        ts = [Tensor._from_value(v) for v in vals]
        args, kwargs, owners = _unflatten(schema, spec, ts)
        stack = _fake_state.__dict__.setdefault("stack", [])
        stack.append(FakeImplCtx(self))
        try:
            with grad_mode.no_grad():
                res = _call_user(fake, *args, **kwargs)
        finally:
            stack.pop()
        outs = [o._value() for o in self._check_outputs(res, "fake implementation")]
        outs = [o if o.device is core.meta else _make_array(None, o.shape, o.dtype, core.meta) for o in outs]
        outs += [v for v, arg in zip(vals, owners) if arg.mutable]  # shapes of mutated args do not change
        return tuple(outs) if self._prim.multiple_results else outs[0]

    # -- autograd: the VJP rules -------------------------------------------------------------------

    def _input_grads(self, g, out, primals, spec):
        """One gradient per flat input, from the user's setup_context and backward. Every input's rule
        asks for the same call, so the last one is remembered (by identity of its arguments)."""
        memo = self._memo
        if memo is not None and memo[0] is g and memo[1] is out and len(memo[2]) == len(primals) \
                and all(a is b for a, b in zip(memo[2], primals)):
            return memo[3]
        grads = self._run_backward(g, out, primals, spec)
        # (kept until the next backward of this op; a one-input op asks once, so keeps nothing)
        self._memo = (g, out, primals, grads) if len(primals) > 1 else None
        return grads

    def _run_backward(self, g, out, primals, spec):
        if self._backward_fn is None:
            raise RuntimeError(f"Trying to backward through {self._namespace}.{self._name}.default but no autograd "
                               "formula was registered. Please use register_autograd to add one.")
        schema = self._schema
        gs = g if self._prim.multiple_results else (g,)
        outs = out if self._prim.multiple_results else (out,)
        tensor_mode = any(isinstance(x, Tensor) for x in gs)  # create_graph backward: keep Tensors
        wrap = _as_tensor
        ins = [wrap(p) for p in primals]
        args, kwargs, owners = _unflatten(schema, spec, ins)
        output = self._structure([wrap(o) for o in outs]) if out is not None else None
        needs = tuple(isinstance(a, Tensor) and a.dtype.category >= _dt.FLOAT for a in args)
        ctx = _AutogradCtx(needs)
        if self._setup_context_fn is not None:
            if _takes_keyword_only_inputs(self._setup_context_fn):
                self._setup_context_fn(ctx=ctx, inputs=tuple(args), keyword_only_inputs=kwargs, output=output)
            else:
                self._setup_context_fn(ctx=ctx, inputs=tuple(args), output=output)
        grads_out = [wrap(x) for x in gs]
        if self._prim.multiple_results and schema.returns == ["Tensor[]"]:
            res = self._backward_fn(ctx, grads_out)
        else:
            res = self._backward_fn(ctx, *grads_out)
        return self._flat_grads(res, args, spec, ins, tensor_mode)

    def _flat_grads(self, res, args, spec, ins, tensor_mode):
        name = f"GeneratedBackwardFor_{self._namespace}_{self._name}_defaultBackward"
        if not isinstance(res, tuple):
            res = (res,)
        positional = [(a, s) for a, s in zip(self._schema.args, spec) if not a.kwarg_only]
        if len(res) != len(positional):
            raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected "
                               f"{len(positional)}, got {len(res)})")
        flat = []
        for k, (r, (arg, s)) in enumerate(zip(res, positional)):
            if s[0] == "t":
                flat.append(_conform(name, r, ins[len(flat)], len(flat), tensor_mode))
            elif s[0] == "l":
                n = sum(s[1])
                if r is None:
                    r = [None] * n
                r = [x for x, m in zip(r, s[1]) if m] if len(r) == len(s[1]) else r
                for x in r:
                    flat.append(_conform(name, x, ins[len(flat)], len(flat), tensor_mode))
            elif r is not None:
                raise RuntimeError(f"function {name} returned a gradient different than None at position {k + 1}, "
                                   "but the corresponding forward input was not a Variable")
        return flat

    # -- vmap: the batching rule -------------------------------------------------------------------

    def _batch(self, vals, bdims, spec):
        size = next(v.shape[d] for v, d in zip(vals, bdims) if d is not None)
        if self._vmap_fn is None:
            return self._batch_loop(vals, bdims, spec, size)
        schema = self._schema
        ts = [Tensor._from_value(v) for v in vals]
        args, kwargs, owners = _unflatten(schema, spec, ts)
        dims, _, _ = _unflatten(schema, spec, list(bdims))
        in_dims = tuple(d if s[0] in ("t", "l") else None
                        for d, s, a in zip(dims, spec, schema.args) if not a.kwarg_only)
        res = _call_user(self._vmap_fn, VmapInfo(size, _current_randomness()), in_dims, *args, **kwargs)
        if not isinstance(res, tuple) or len(res) != 2:
            raise RuntimeError("Expected the vmap staticmethod to have two returns, an output and out_dims with "
                               f"pytree structure compatible with the output. Got a {type(res)} instead")
        out, out_dims = res
        outs = self._check_outputs(out, "vmap rule")
        if isinstance(out_dims, (tuple, list)):
            out_dims = list(out_dims)
            if len(out_dims) != len(outs):
                raise RuntimeError(f"{self._qualname}: the vmap rule returned {len(out_dims)} out_dims for "
                                   f"{len(outs)} outputs")
        else:
            out_dims = [out_dims] * len(outs)
        values = [o._value() for o in outs]
        for t, arg, d in zip(ts, owners, bdims):  # mutated args: their (batched) new values
            if arg.mutable:
                values.append(t._value())
                out_dims.append(d)
        if self._prim.multiple_results:
            return tuple(values), tuple(out_dims)
        return values[0], out_dims[0]

    def _batch_loop(self, vals, bdims, spec, size):
        """No vmap rule: run the op once per batch element and stack (PyTorch's fallback, also warned)."""
        warnings.warn(f"There is a performance drop because we have not yet implemented the batching rule for "
                      f"{self._qualname}. Please register one with register_vmap.", UserWarning, stacklevel=2)
        results = []
        for b in range(size):
            sl = [v if d is None else core.squeeze(core.slice_axis(v, d, b, b + 1), d) for v, d in zip(vals, bdims)]
            r = self._prim.bind(*sl, spec=spec)
            results.append(r if self._prim.multiple_results else (r,))
        stacked = tuple(core.stack([r[k] for r in results]) for k in range(len(results[0])))
        if self._prim.multiple_results:
            return stacked, (0,) * len(stacked)
        return stacked[0], 0

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    # -- registration --------------------------------------------------------------------------------

    @property
    def _opoverload(self):
        return OpOverload(self._qualname, "default")

    def register_fake(self, fn=None, /, *, _stacklevel=1):
        """Register the fake (meta) implementation: output shapes and dtypes from meta input tensors.
        Usable as a decorator; returns fn."""
        def register(fn):
            if not callable(fn):
                raise TypeError(f"register_fake: expected a callable, got {type(fn).__name__}")
            self._abstract_fn = fn
            self._prim._cache.clear()
            return fn
        return register if fn is None else register(fn)

    def register_kernel(self, device_types, fn=None, /):
        """Register the implementation for device types ("cpu", "npu", ... or None for all).
        Usable as a decorator; returns fn."""
        types = _device_types(device_types)

        def register(fn):
            if not callable(fn):
                raise TypeError(f"register_kernel: expected a callable, got {type(fn).__name__}")
            for t in types:
                self._kernels[t] = fn
            return fn
        return register if fn is None else register(fn)

    def register_autograd(self, backward, /, *, setup_context=None):
        """Register the backward formula: `setup_context(ctx, inputs, output)` saves what backward needs,
        `backward(ctx, *grads)` returns one gradient per positional input (None for non-Tensors)."""
        if self._schema.mutated:
            raise RuntimeError(f"Cannot register autograd formula for non-functional operator {self!r} with "
                               f"schema {self._schema}. Please create a functional operator and register an "
                               "autograd formula for that.")
        if not callable(backward):
            raise TypeError(f"Expected backward to be a function, got {type(backward).__name__}")
        if setup_context is not None and not callable(setup_context):
            raise TypeError(f"Expected setup_context to be a function, got {type(setup_context).__name__}")
        self._backward_fn = backward
        self._setup_context_fn = setup_context
        self._memo = None

    def register_vmap(self, fn=None, /):
        """Register the batching rule `fn(info, in_dims, *args, **kwargs) -> (output, out_dims)`.
        Usable as a decorator; returns fn."""
        def register(fn):
            if not callable(fn):
                raise TypeError(f"register_vmap: expected a callable, got {type(fn).__name__}")
            self._vmap_fn = fn
            return fn
        return register if fn is None else register(fn)

    def register_torch_dispatch(self, torch_dispatch_class, fn=None, /):
        """Not supported: mindtorch_v2 has no __torch_dispatch__ subclasses or modes to dispatch on."""
        raise NotImplementedError("register_torch_dispatch: mindtorch_v2 has no __torch_dispatch__ tensor "
                                  "subclasses or modes; use register_kernel / register_vmap / register_autograd")

    @contextlib.contextmanager
    def set_kernel_enabled(self, device_type, enabled=True):
        """Context manager switching the kernel of `device_type` off (enabled=False) or on."""
        was_disabled = device_type in self._disabled
        if enabled:
            self._disabled.discard(device_type)
        else:
            self._disabled.add(device_type)
        try:
            yield
        finally:
            if was_disabled:
                self._disabled.add(device_type)
            else:
                self._disabled.discard(device_type)


def _device_types(device_types):
    if device_types is None:
        return (None,)
    if isinstance(device_types, str):
        device_types = (device_types,)
    out = []
    for t in device_types:
        if not isinstance(t, str):
            raise ValueError(f"device_types must be a str or a sequence of str, got {type(t).__name__}")
        out.append(t.split(":")[0])
    return tuple(out)


def resolve_op(op):
    """The CustomOpDef of op: a 'ns::name' str, a CustomOpDef, or a torch.ops packet/overload."""
    if isinstance(op, CustomOpDef):
        return op
    target = getattr(op, "_mt_op", None)
    if isinstance(target, CustomOpDef):
        return target
    if isinstance(op, str):
        found = _OPS.get(op)
        if found is None:
            raise RuntimeError(f"Operator '{op}' does not exist: define it first (torch.library.custom_op or "
                               "Library.define)")
        return found
    raise ValueError(f"expected an operator (a 'ns::name' str, a CustomOpDef or a torch.ops op), got "
                     f"{type(op).__name__}")


def _as_tensor(v):
    return v if isinstance(v, Tensor) or v is None else Tensor._from_value(v)


def _conform(name, r, like, k, tensor_mode):
    """A returned gradient: None, or a Tensor summed to its input's shape (when it broadcasts) and cast to
    its dtype; a core value unless the backward runs on Tensors (create_graph)."""
    if r is None:
        return None
    if not isinstance(r, Tensor):
        raise TypeError(f"function {name} returned a gradient of type {type(r).__name__} at index {k}; expected "
                        "a Tensor or None")
    shape = like._shape
    v = r._value() if not tensor_mode else r
    if r._shape != shape:
        try:
            ok = core.broadcast_shapes(shape, r._shape) == tuple(r._shape)
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(f"Function {name} returned an invalid gradient at index {k} - got {list(r._shape)} "
                               f"but expected shape compatible with {list(shape)}")
        v = core.sum_to_shape(v, shape)
    if v.dtype is not like.dtype:
        v = core.cast(v, like.dtype)
    if tensor_mode and not isinstance(v, Tensor):
        v = Tensor._wrap(v)
    return v


def _takes_keyword_only_inputs(fn):
    try:
        return "keyword_only_inputs" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _signature_of(schema):
    params = []
    for a in schema.args:
        kind = inspect.Parameter.KEYWORD_ONLY if a.kwarg_only else inspect.Parameter.POSITIONAL_OR_KEYWORD
        default = a.default if a.has_default else inspect.Parameter.empty
        params.append(inspect.Parameter(a.name, kind, default=default))
    return inspect.Signature(params)


_ALIAS_MSG = ("{name} (with implementation in mindtorch_v2.library): The output of this custom operator (1) must "
              "not also be an input to this custom operator and (2) may not alias any inputs to this custom "
              "operator or other returns. The most common way to trigger this error is if we have y = custom_op(x) "
              "and y and x are the same Tensor. Please instead return a clone of the offending output tensor(s) "
              "(e.g. return x.clone()) or refactor the custom operator to not return y.")
