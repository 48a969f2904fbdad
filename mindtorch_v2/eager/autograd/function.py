"""torch.autograd.Function: a user-defined op with a hand-written backward.

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):              # runs with recording off
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):             # called by the engine through ExpBackward.apply
            y, = ctx.saved_tensors
            return g * y

    y = Exp.apply(x)   # y.grad_fn is an ExpBackward node; next_functions: x's edge

`apply` runs forward under no_grad, then, when grad mode is on and a Tensor
input requires grad, records ONE node. The engine runs ordinary nodes through
their primitive's VJP rules; a node like this one instead provides
`apply(grads, create_graph)` (the user's backward, with recording on when
create_graph is set, so a backward written in tensor ops is differentiable
again) and `release_variables()`.

Inside torch.func transforms (grad, vjp, jvp, vmap, jacrev, ...) the tape is off; there `apply` binds one
run-time primitive whose VJP is the user's backward, whose JVP is the user's jvp and whose batching rule is
the user's vmap (or, with generate_vmap_rule, the vmapped Function), as PyTorch's torch.func does (see
"inside torch.func transforms" below). Old-style Functions (forward(ctx, ...)) raise there, as in PyTorch.

PyTorch makes `ctx` and `grad_fn` one object. Here ctx is a separate
FunctionCtx so that attributes a user sets (ctx.seq, ctx.hooks, ...) never
clash with the fields the engine reads; the node forwards other attribute
reads and writes to its ctx, so `y.grad_fn.saved_tensors` works as in torch.
"""
import collections
import functools
import inspect
import weakref

from ... import core
from ...core import dtypes as _dt
from ...core import Primitive, VariadicVJP, broadcast_shapes, sum_to_shape
from .. import grad_mode, random_ops
from ..grad_mode import _state as _grad_state
from ..tensor import Tensor
from ..writeback import record_history
from . import graph, saved_hooks
from .engine import FREED_MSG

_LEAF_DIRTY = "a leaf Variable that requires grad has been used in an in-place operation."
_VIEW_LEAF_DIRTY = "a view of a leaf Variable that requires grad is being used in an in-place operation."


class _SavedTensor:
    """A tensor from save_for_backward with its version at save time (checked when unpacked).

    An output of the node itself is kept as a detached alias plus a weak reference to the node, as
    torch does, so that node -> ctx -> output -> node is no reference cycle (the graph is freed by
    refcounting alone); unpacking gives a tensor whose grad_fn is the node again.
    """

    __slots__ = ("tensor", "node_ref", "counter", "version", "desc", "producer", "output_nr", "unpack_hook")

    def __init__(self, tensor, node):
        hooks = saved_hooks.current()
        self.unpack_hook = None if hooks is None else hooks[1]
        if hooks is not None:  # kept as the pack hook's result, unpacked on each read, not version-checked
            with grad_mode.no_grad():
                self.tensor = saved_hooks.pack(hooks, tensor)
            return
        fn = tensor._grad_fn
        if fn is node:
            self.tensor = tensor.detach()
            self.node_ref = weakref.ref(node)
        else:
            self.tensor = tensor
            self.node_ref = None
        self.counter = tensor._storage.version
        self.version = self.counter.value
        self.desc = tensor._desc()
        self.producer = fn.name() if fn is not None else None
        self.output_nr = tensor._output_nr

    def unpack(self):
        if self.unpack_hook is not None:
            return saved_hooks.unpack(self.unpack_hook, self.tensor)
        current = self.counter.value
        if current != self.version:
            where = f", which is output {self.output_nr} of {self.producer}," if self.producer else ""
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: [{self.desc}]{where} is at version {current}; expected version {self.version} "
                "instead. Hint: the operation that failed was the backward of a custom autograd.Function; "
                "avoid modifying the tensors it saved in place.")
        if self.node_ref is None:
            return self.tensor
        t = self.tensor.detach()
        node = self.node_ref()
        if node is not None:
            t._grad_fn, t._output_nr, t._rg = node, self.output_nr, True
        return t


class FunctionCtx:
    """The `ctx` a custom Function's forward/backward receive: saved tensors and flags for backward."""

    def __init__(self):
        self.to_save = None
        self.dirty_tensors = None
        self.non_differentiable = None
        self.materialize_grads = True
        self.needs_input_grad = ()
        self._mt_saved = None
        self._mt_freed = False

    def save_for_backward(self, *tensors):
        """Keep tensors (or None) for backward; read them back with `ctx.saved_tensors`."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Keep tensors for jvp (torch.func.jvp, jacfwd): `ctx.saved_tensors` there."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Declare inputs that forward modified in place (they must also be returned as outputs)."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """Declare outputs that get no gradient (requires_grad=False; backward sees zeros for them)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        """With False, backward receives None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = bool(value)

    def mark_shared_storage(self, *pairs):
        raise RuntimeError("mark_shared_storage is deprecated. Tensors with shared storages are automatically "
                           "tracked. Note that calls to `set_()` are not tracked")

    @property
    def saved_tensors(self):
        """The tensors given to save_for_backward, after checking none was modified in place since."""
        if self._mt_freed:
            raise RuntimeError(FREED_MSG)
        if self._mt_saved is None:
            return ()
        return tuple(None if s is None else s.unpack() for s in self._mt_saved)

    saved_variables = saved_tensors


class BackwardCFunction:
    """The grad_fn of a custom Function's outputs (one subclass per Function: `<Name>Backward`)."""

    __slots__ = ("ctx", "next_functions", "seq", "pre_hooks", "hooks", "n_outputs", "in_meta", "out_meta",
                 "__weakref__")
    _forward_cls = None

    def __init__(self, ctx, next_functions, in_meta, out_meta):
        s = object.__setattr__
        s(self, "ctx", ctx)
        s(self, "next_functions", next_functions)  # one edge per Tensor input, as in torch
        s(self, "in_meta", in_meta)    # per forward arg: None (not a Tensor) or (shape, dtype)
        s(self, "out_meta", out_meta)  # per forward output: None (not a Tensor) or (shape, dtype, device)
        s(self, "n_outputs", len(out_meta))
        s(self, "seq", next(graph._seq))
        s(self, "pre_hooks", None)
        s(self, "hooks", None)

    def name(self):
        return type(self).__name__

    def __repr__(self):  # a Python class: the default object repr, as torch's custom-Function nodes print
        return object.__repr__(self)

    def __getattr__(self, name):
        if name == "ctx" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.ctx, name)

    def __setattr__(self, name, value):
        if name in _NODE_FIELDS:
            object.__setattr__(self, name, value)
        else:
            setattr(self.ctx, name, value)

    add_pre_hook = graph.Node.add_pre_hook
    register_hook = graph.Node.register_hook

    def release_variables(self):
        """Drop the saved tensors (backward without retain_graph); reading them again raises."""
        self.ctx._mt_saved = None
        self.ctx._mt_freed = True

    def apply(self, grads, create_graph):
        """Run the user's backward on the output grads; return one grad per Tensor input (or None)."""
        ctx = self.ctx
        args = []
        for g, meta in zip(grads, self.out_meta):
            if g is None:
                if meta is not None and ctx.materialize_grads:
                    shape, dtype, device = meta
                    g = Tensor._from_value(core.zeros(shape, dtype=dtype, device=device))
            elif not isinstance(g, Tensor):
                g = Tensor._from_value(g)
            args.append(g)
        res = _counted_grads(_user_backward(self._forward_cls)(ctx, *args), len(self.in_meta), self.name())
        out = []
        for i, (r, meta) in enumerate(zip(res, self.in_meta)):
            if meta is None:
                if r is not None:
                    raise RuntimeError(f"function {self.name()} returned a gradient different than None at "
                                       f"position {i + 1}, but the corresponding forward input was not a Variable")
                continue
            k = len(out)
            if r is None or self.next_functions[k][0] is None:
                out.append(None)
                continue
            if not isinstance(r, Tensor):
                raise TypeError(f"function {self.name()} returned a gradient of type {type(r).__name__} at "
                                f"position {i + 1}; expected a Tensor or None")
            r = _conform_grad(self.name(), r, k, meta)
            out.append(r if create_graph else r._value())
        return out


_NODE_FIELDS = frozenset(BackwardCFunction.__slots__)


def _conform_grad(name, r, k, meta):
    """A returned gradient summed to its input's shape (if it broadcasts to it) and cast to its dtype."""
    shape, dtype = meta
    if r._shape != shape:
        try:
            ok = broadcast_shapes(shape, r._shape) == r._shape
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(f"Function {name} returned an invalid gradient at index {k} - got "
                               f"{list(r._shape)} but expected shape compatible with {list(shape)}")
        r = sum_to_shape(r, shape)
    if r.dtype is not dtype:
        r = core.cast(r, dtype)
    return r


def _counted_grads(res, n, name):
    """What a user's backward returned as a tuple of n gradients (extra trailing Nones dropped), or PyTorch's
    error for another count."""
    if not isinstance(res, tuple):
        res = (res,)
    if len(res) > n and all(r is None for r in res[n:]):
        res = res[:n]
    if len(res) != n:
        raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected {n}, got "
                           f"{len(res)})")
    return res


def _user_backward(cls):
    backward_fn = cls.backward
    vjp_fn = cls.vjp
    if backward_fn is not Function.backward and vjp_fn is not Function.vjp:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
                           "should only implement one of them.")
    return vjp_fn if vjp_fn is not Function.vjp else backward_fn


class Function:
    """Base of user-defined ops: subclass with static `forward` and `backward`, call `.apply(*args)`."""

    _backward_cls = BackwardCFunction

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(cls.__name__ + "Backward", (BackwardCFunction,),
                                 {"__slots__": (), "_forward_cls": cls, "__module__": cls.__module__})

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    # torch.func.vmap: either a `vmap(info, in_dims, *args) -> (output, out_dims)` staticmethod, or
    # generate_vmap_rule = True (forward, backward and jvp are then vmapped as they are)
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError("To use autograd.Function with vmap, you must either override the vmap "
                                  "staticmethod or set generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward without recording; record one `<Name>Backward` node if an input needs a gradient.
        Inside torch.func transforms: one bind of function_p (see `_Call`)."""
        uses_setup = cls.setup_context is not Function.setup_context
        if _grad_state.transforms:
            return _apply_in_transform(cls, uses_setup, args, kwargs)
        if uses_setup:
            args, kwargs = _bind(cls.forward, args, kwargs, skip_ctx=False, defaults=True)
        elif kwargs:
            args, kwargs = _bind(cls.forward, args, kwargs, skip_ctx=True, defaults=False)
        ctx = FunctionCtx()
        needs = tuple(isinstance(a, Tensor) and a._rg for a in args)
        ctx.needs_input_grad = needs
        recording = grad_mode.tape_enabled() and any(needs)
        # input edges before forward: a dirty input's history is replaced below
        edges = tuple(a._edge() if need and recording else (None, 0)
                      for a, need in zip(args, needs) if isinstance(a, Tensor))
        with grad_mode.set_grad_enabled(False):
            if uses_setup:
                raw = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, raw)
            else:
                raw = cls.forward(ctx, *args, **kwargs)
        is_tuple = isinstance(raw, tuple)
        outs = raw if is_tuple else (raw,)
        node = None
        if recording:
            in_meta = tuple((a._shape, a.dtype) if isinstance(a, Tensor) else None for a in args)
            out_meta = tuple((o._shape, o.dtype, o.device) if isinstance(o, Tensor) else None for o in outs)
            node = cls._backward_cls(ctx, edges, in_meta, out_meta)
        outs = _wrap_outputs(ctx, node, args, outs)
        if node is not None:
            _pack_saved(ctx, node, outs)
        ctx.to_save = ctx.dirty_tensors = ctx.non_differentiable = None
        return outs if is_tuple else outs[0]


class InplaceFunction(Function):
    """A Function with an `inplace` flag (torch.autograd.function.InplaceFunction)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


_SIGNATURES = {}


def _bind(fn, args, kwargs, skip_ctx, defaults):
    """(positional args, leftover keyword args) for fn, keyword arguments bound to their positions."""
    sig = _SIGNATURES.get(fn)
    if sig is None:
        sig = _SIGNATURES[fn] = inspect.signature(fn)
    bound = sig.bind(None, *args, **kwargs) if skip_ctx else sig.bind(*args, **kwargs)
    if defaults:
        bound.apply_defaults()
    pos = bound.args[1:] if skip_ctx else bound.args
    return tuple(pos), dict(bound.kwargs)


def _wrap_outputs(ctx, node, args, outs):
    """Torch's output rules: inputs come back as aliases, dirty inputs are rebased, the rest get the edge."""
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    dirty = {id(t) for t in ctx.dirty_tensors or ()}
    nondiff = {id(t) for t in ctx.non_differentiable or ()}
    returned = {id(o) for o in outs}
    if dirty - returned:
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                           "The inputs that are modified inplace must all be outputs of the Function.")
    result = []
    for k, o in enumerate(outs):
        if not isinstance(o, Tensor):
            result.append(o)
            continue
        is_input = id(o) in input_ids
        is_dirty = id(o) in dirty
        differentiable = node is not None and id(o) not in nondiff and o.dtype.category >= _dt.FLOAT
        if not differentiable:
            if not o._rg:
                if is_input and not is_dirty:
                    o = _alias(o)
            elif is_input:
                o = o.detach()
            elif o._base is None:
                o.detach_()
        elif is_dirty:
            _rebase_dirty(o, node, k)
        else:
            if is_input:
                o = _alias(o)
            o._grad_fn, o._output_nr, o._rg = node, k, True
        result.append(o)
    return tuple(result)


def _alias(t):
    """A view of all of t (shares storage and version), so an output never is an input object itself."""
    shape, strides, offset = t._geometry()
    return t._view_of(shape, strides, offset)


def _rebase_dirty(t, node, k):
    """An input modified in place by forward: its history becomes this node (through its base for a view)."""
    if t._grad_fn is None and t._rg and t._base is None:
        raise RuntimeError(_LEAF_DIRTY)
    base = t._base
    if base is not None and base._grad_fn is None and base._rg:
        raise RuntimeError(_VIEW_LEAF_DIRTY)
    new = t.detach()
    new._grad_fn, new._output_nr, new._rg = node, k, True
    record_history(t, new)  # forward already wrote the value (and bumped the version)


def _pack_saved(ctx, node, outs):
    """Save ctx.to_save with versions taken now (after forward), naming each tensor's producer."""
    if not ctx.to_save:
        ctx._mt_saved = None
        return
    saved = []
    for t in ctx.to_save:
        if t is None:
            saved.append(None)
            continue
        saved.append(_SavedTensor(t, node))
    ctx._mt_saved = saved


# ---------------------------------------------------------------------------
# inside torch.func transforms
#
# There PyTorch runs a Function with the user's own rules (its custom_function_call); here one call is one bind
# of the run-time primitive function_p, whose static param `fn` holds that call (a _Call):
#
#     y = Scale.apply(x)             # x traced by torch.func.grad
#     -> function_p.bind(value of x, fn=_Call(Scale, (x,), {}))
#          lowering: Scale.forward on Tensors of the plain values (grad mode off, as the eager path)
#          VJP:      Scale.setup_context(ctx, inputs, output), then Scale.backward(ctx, *grads)
#          JVP:      Scale.setup_context(ctx, inputs, output), then Scale.jvp(ctx, *tangents)
#          batching: Scale.vmap(info, in_dims, *args), or with generate_vmap_rule one more bind of function_p
#                    whose fn is a _Vmapped(call, in_dims): forward, backward and jvp each run under vmap
#
# The rules run the user's code on Tensors wrapping the values they are given (tracers of the transforms
# below), so an outer grad differentiates the ops of backward (grad(grad(f))) and an outer vmap batches them,
# as in PyTorch. setup_context runs where backward or jvp needs it (once per rule call), not at forward time.

_NEEDS_SETUP_CONTEXT = ("In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
                        "...), it must override the setup_context staticmethod. For more details, please see "
                        "https://pytorch.org/docs/main/notes/extending.func.html")

VmapInfo = collections.namedtuple("VmapInfo", ["batch_size", "randomness"])
_TENSOR = object()  # marks a Tensor output in _Call.out_template


def _apply_in_transform(cls, uses_setup, args, kwargs):
    if not uses_setup:
        raise RuntimeError(_NEEDS_SETUP_CONTEXT)
    args, kwargs = _bind(cls.forward, args, kwargs, skip_ctx=False, defaults=True)
    vals = [a._value() for a in args if isinstance(a, Tensor)]
    call = _Call(cls, args, kwargs, vals)
    outs = function_p.bind(*vals, fn=call)
    return call.structure([Tensor._from_value(o) for o in outs])


class _TransformCtx(FunctionCtx):
    """The ctx of setup_context, backward and jvp under transforms: the saved tensors as they were given
    (values of this call alone: no versions to check, nothing freed); jvp reads those of save_for_forward."""

    def __init__(self, needs_input_grad, forward_mode):
        super().__init__()
        self.needs_input_grad = needs_input_grad
        self._mt_forward = forward_mode

    @property
    def saved_tensors(self):
        saved = self.to_save
        if self._mt_forward:
            saved = getattr(self, "saved_for_forward", saved)
        return tuple(saved or ())

    saved_variables = saved_tensors


class _Rules:
    """What function_p runs, for one call: forward (the lowering), input_grads (VJP), output_tangents (JVP),
    batch (vmap)."""

    __slots__ = ("_memo",)

    def __init__(self):
        self._memo = None

    def grads(self, g, out, primals):
        """input_grads, computed once for all of a node's inputs: the VJP rule of each input asks in turn, with
        the same arguments (remembered by identity while a node has more than one input)."""
        memo = self._memo
        if memo is not None and memo[0] is g and memo[1] is out and all(a is b for a, b in zip(memo[2], primals)):
            return memo[3]
        grads = self.input_grads(g, out, primals)
        self._memo = (g, out, primals, grads) if len(primals) > 1 else None
        return grads


class _Call(_Rules):
    """One Function.apply under transforms: the class, its arguments (the Tensors among them are the
    primitive's inputs, in order; the rest are constants) and, once known, its output structure."""

    __slots__ = ("cls", "args", "kwargs", "slots", "needs", "out_tuple", "out_template")

    def __init__(self, cls, args, kwargs, vals):
        super().__init__()
        self.cls = cls
        self.args = tuple(None if isinstance(a, Tensor) else a for a in args)  # Tensors: placed per call
        self.kwargs = kwargs
        self.slots = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        # needs_input_grad: a float Tensor traced by some transform (the level differentiated is not known here)
        it = iter(vals)
        self.needs = tuple(isinstance(a, Tensor) and _traced_float(next(it)) for a in args)
        self.out_tuple = None
        self.out_template = None

    def name(self):
        return self.cls.__name__ + "Backward"

    def _place(self, items, rest=None):
        """Per forward argument: the next of `items` at each Tensor slot; `rest` (None: the argument) elsewhere."""
        placed = list(self.args) if rest is None else [rest[0]] * len(self.args)
        for i, v in zip(self.slots, items):
            placed[i] = v
        return placed

    def _tensors(self, vals):
        return self._place([Tensor._from_value(v) for v in vals])

    def outputs(self, raw, what):
        """The values of the Tensors that forward (or the vmap rule) returned; the first call fixes the output
        structure."""
        is_tuple = isinstance(raw, tuple)
        outs = raw if is_tuple else (raw,)
        template = tuple(_TENSOR if isinstance(o, Tensor) else o for o in outs)
        if self.out_template is None:
            self.out_tuple, self.out_template = is_tuple, template
        elif is_tuple != self.out_tuple or len(template) != len(self.out_template) or any(
                (a is _TENSOR) != (b is _TENSOR) for a, b in zip(template, self.out_template)):
            raise RuntimeError(f"{self.cls.__name__}: the {what} returned outputs of another structure than "
                               "forward's")
        return tuple(o._value() for o in outs if isinstance(o, Tensor))

    def structure(self, tensors, fill=_TENSOR):
        """Tensors put in forward's output structure; non-Tensor outputs are the constants forward returned
        (or `fill`, when given)."""
        it = iter(tensors)
        outs = tuple(next(it) if c is _TENSOR else (c if fill is _TENSOR else fill) for c in self.out_template)
        return outs if self.out_tuple else outs[0]

    def _context(self, primals, out, forward_mode):
        ctx = _TransformCtx(self.needs, forward_mode)
        self.cls.setup_context(ctx, tuple(self._tensors(primals)),
                               self.structure([Tensor._from_value(o) for o in out]))
        return ctx

    def forward(self, vals):
        args = self._tensors(vals)
        with grad_mode.transform_region(False), grad_mode.set_grad_enabled(False):
            raw = self.cls.forward(*args, **self.kwargs)
        return self.outputs(raw, "forward")

    def input_grads(self, g, out, primals):
        name = self.name()
        with grad_mode.transform_region(False):
            ctx = self._context(primals, out, False)
            grads = self.structure([Tensor._from_value(x) for x in g], fill=None)
            res = _user_backward(self.cls)(ctx, *(grads if self.out_tuple else (grads,)))
        res = _counted_grads(res, len(self.args), name)
        slots = set(self.slots)
        for i, r in enumerate(res):
            if i not in slots and r is not None:
                raise RuntimeError(f"function {name} returned a gradient different than None at position {i + 1}, "
                                   "but the corresponding forward input was not a Variable")
        out_grads = []
        for k, (i, p) in enumerate(zip(self.slots, primals)):
            r = res[i]
            if r is None:
                out_grads.append(None)
                continue
            if not isinstance(r, Tensor):
                raise TypeError(f"function {name} returned a gradient of type {type(r).__name__} at position "
                                f"{i + 1}; expected a Tensor or None")
            out_grads.append(_conform_grad(name, r, k, (p.shape, p.dtype))._value())
        return out_grads

    def output_tangents(self, tangents, out, primals):
        with grad_mode.transform_region(False):
            ctx = self._context(primals, out, True)
            ts = []
            for t, p in zip(tangents, primals):  # PyTorch gives zeros for a float input without a tangent
                if t is None and _is_float(p):
                    t = core.zeros_like(p)
                ts.append(None if t is None else Tensor._from_value(t))
            res = self.cls.jvp(ctx, *self._place(ts, rest=(None,)))
        n = len(self.out_template)
        if not self.out_tuple:
            res = (res,)
        elif not isinstance(res, tuple) or len(res) != n:
            raise RuntimeError(f"{self.cls.__name__}.jvp: expected {n} tangents (one per output of forward), got "
                               f"{len(res) if isinstance(res, tuple) else type(res).__name__}")
        t_out = []
        it = iter(out)
        for r, c in zip(res, self.out_template):
            if c is not _TENSOR:
                continue
            o = next(it)
            if r is None:
                t_out.append(None)
                continue
            if not isinstance(r, Tensor) or tuple(r._shape) != tuple(o.shape):
                got = list(r._shape) if isinstance(r, Tensor) else type(r).__name__
                raise RuntimeError(f"{self.cls.__name__}.jvp returned an invalid tangent: got {got}, expected a "
                                   f"Tensor of shape {list(o.shape)}")
            v = r._value()
            t_out.append(v if v.dtype is o.dtype else core.cast(v, o.dtype))
        return tuple(t_out)

    def batch(self, vals, bdims):
        cls = self.cls
        own_rule = cls.vmap is not Function.vmap
        if cls.generate_vmap_rule:
            if own_rule:
                raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True "
                                   "and an overridden vmap staticmethod. Please set generate_vmap_rule=False or "
                                   "delete the overridden vmap staticmethod to avoid ambiguity. For more details, "
                                   "please see https://pytorch.org/docs/main/notes/extending.func.html")
            return _Vmapped.bind(self, vals, bdims)
        if not own_rule:
            raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
                               "override and implement the vmap staticmethod or set generate_vmap_rule=True. For "
                               "more details, please see https://pytorch.org/docs/main/notes/extending.func.html")
        info = VmapInfo(_batch_size(vals, bdims), _randomness())
        with grad_mode.transform_region(False):
            res = cls.vmap(info, tuple(self._place(bdims, rest=(None,))), *self._tensors(vals), **self.kwargs)
        msg = ("Expected the vmap staticmethod to have two returns, an output and out_dims with pytree structure "
               "compatible with the output. ")
        if not isinstance(res, tuple):
            raise RuntimeError(msg + f"Got a {type(res)} instead")
        if len(res) != 2:
            raise RuntimeError(msg + f"Got {len(res)} returns instead")
        out, out_dims = res
        outs = self.outputs(out, "vmap staticmethod")
        n = len(self.out_template)
        if isinstance(out_dims, (tuple, list)):
            if len(out_dims) != n:
                raise RuntimeError(msg + f"Got out_dims={out_dims!r} for {n} outputs")
            out_dims = [d for d, c in zip(out_dims, self.out_template) if c is _TENSOR]
        else:
            out_dims = [out_dims] * len(outs)
        dims = []
        for o, d in zip(outs, out_dims):
            if d is not None and not isinstance(d, int):
                raise RuntimeError(msg + f"Got out_dims={d!r}: each must be an int or None")
            dims.append(d if d is None else d % len(o.shape))
        return outs, tuple(dims)


class _Vmapped(_Rules):
    """generate_vmap_rule: the rules of `inner` (a _Call, or a _Vmapped for nested vmaps) vmapped over the
    inputs' batch axes `in_axes` (None: unbatched); every output is batched on axis 0."""

    __slots__ = ("inner", "in_axes", "size")

    def __init__(self, inner, in_axes, size):
        super().__init__()
        self.inner = inner
        self.in_axes = in_axes
        self.size = size

    @staticmethod
    def bind(inner, vals, bdims):
        """The batching rule of `inner`: one bind of function_p with the vmapped rules."""
        outs = function_p.bind(*vals, fn=_Vmapped(inner, tuple(bdims), _batch_size(vals, bdims)))
        return outs, (0,) * len(outs)

    def _vmap(self, f, in_axes):
        return core.vmap(f, in_axes=in_axes, out_axes=0, axis_size=self.size)

    def forward(self, vals):
        inner = self.inner
        return tuple(self._vmap(lambda *v: list(inner.forward(v)), self.in_axes)(*vals))

    def input_grads(self, g, out, primals):
        inner = self.inner

        def per_example(g, out, primals):
            res = inner.input_grads(tuple(g), tuple(out), tuple(primals))
            return [core.zeros_like(p) if r is None else r for r, p in zip(res, primals)]

        res = self._vmap(per_example, (0, 0, self.in_axes))(list(g), list(out), list(primals))
        # an unbatched input's cotangent is the sum over the batch
        return [core.sum(r, axis=0) if d is None else core.moveaxis(r, 0, d) for r, d in zip(res, self.in_axes)]

    def output_tangents(self, tangents, out, primals):
        inner = self.inner
        n = len(primals)
        idx = [i for i, p in enumerate(primals) if _is_float(p)]

        def per_example(ts, out, primals):
            full = [None] * n
            for i, t in zip(idx, ts):
                full[i] = t
            res = inner.output_tangents(full, tuple(out), tuple(primals))
            return [core.zeros_like(o) if r is None else r for r, o in zip(res, out)]

        ts = [core.zeros_like(primals[i]) if tangents[i] is None else tangents[i] for i in idx]
        axes = (tuple(self.in_axes[i] for i in idx), 0, self.in_axes)
        return tuple(self._vmap(per_example, axes)(ts, list(out), list(primals)))

    def batch(self, vals, bdims):
        return _Vmapped.bind(self, vals, bdims)


def _is_float(x):
    return x.dtype.category >= _dt.FLOAT


def _traced_float(v):
    return type(v) is not core.Array and _is_float(v)


def _batch_size(vals, bdims):
    return next(v.shape[d] for v, d in zip(vals, bdims) if d is not None)


def _randomness():
    """The randomness option of the innermost torch.func.vmap ("error" inside core's own vmaps: jacrev...)."""
    stack = getattr(random_ops._vmap_rng, "stack", None)
    return stack[-1][0] if stack else "error"


def _function_meta(*args, fn):
    outs = fn.forward(tuple(core.empty(a.shape, dtype=a.dtype, device=core.meta) for a in args))
    return tuple((o.shape, o.dtype) for o in outs)


def _function_vjp(i):
    def rule(g, out, *primals, fn):
        return fn.grads(g, out, primals)[i]
    return rule


def _function_jvp(tangents, out, *primals, fn):
    return fn.output_tangents(tangents, out, primals)


def _function_batch(vals, bdims, fn):
    return fn.batch(vals, bdims)


class _FunctionPrimitive(Primitive):
    """function_p: a custom Function called under torch.func transforms; all its rules are those of the
    `fn` param. Its lowering is forward itself on any device (the eager tape never records it: it is bound
    on values, inside transforms, where the tape is off)."""

    __slots__ = ()

    def __init__(self):
        super().__init__("autograd_function", _function_meta, vjp=VariadicVJP(_function_vjp), jvp=_function_jvp,
                         multiple_results=True, registered=False)
        self.batch = _function_batch

    def eval(self, args, params):
        return params["fn"].forward(args)


function_p = _FunctionPrimitive()


# ---------------------------------------------------------------------------
# once_differentiable


class _DelayedError(Function):
    """Identity whose backward raises: marks gradients of a once_differentiable backward."""

    @staticmethod
    def forward(ctx, *tensors):
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")


def once_differentiable(fn):
    """Decorate a backward that is not itself differentiable: it runs under no_grad, and
    differentiating its result again raises instead of silently giving a wrong answer."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with grad_mode.no_grad():
            outputs = fn(ctx, *args)
        if not grad_mode.tape_enabled():
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        if not isinstance(outputs, tuple):
            outputs = (outputs,)

        def fake_requires_grad(v):
            if isinstance(v, Tensor):
                v = v.detach()
                v.requires_grad = True
            return v
        return _DelayedError.apply(*[fake_requires_grad(v) for v in outputs])
    return wrapper
