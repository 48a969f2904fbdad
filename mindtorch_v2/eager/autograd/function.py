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

PyTorch makes `ctx` and `grad_fn` one object. Here ctx is a separate
FunctionCtx so that attributes a user sets (ctx.seq, ctx.hooks, ...) never
clash with the fields the engine reads; the node forwards other attribute
reads and writes to its ctx, so `y.grad_fn.saved_tensors` works as in torch.
"""
import functools
import inspect
import weakref

from ... import core
from ...core import dtypes as _dt
from ...core import broadcast_shapes, sum_to_shape
from .. import grad_mode
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
        """Kept for API compatibility (forward-mode AD of Functions is not supported)."""
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
        res = _user_backward(self._forward_cls)(ctx, *args)
        if not isinstance(res, tuple):
            res = (res,)
        n = len(self.in_meta)
        if len(res) > n and all(r is None for r in res[n:]):
            res = res[:n]
        if len(res) != n:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(res)})")
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
            r = _conform_grad(self, r, k, meta)
            out.append(r if create_graph else r._value())
        return out


_NODE_FIELDS = frozenset(BackwardCFunction.__slots__)


def _conform_grad(node, r, k, meta):
    """A returned gradient summed to its input's shape (if it broadcasts to it) and cast to its dtype."""
    shape, dtype = meta
    if r._shape != shape:
        try:
            ok = broadcast_shapes(shape, r._shape) == r._shape
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {k} - got "
                               f"{list(r._shape)} but expected shape compatible with {list(shape)}")
        r = sum_to_shape(r, shape)
    if r.dtype is not dtype:
        r = core.cast(r, dtype)
    return r


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
                                  "with forward mode AD (not supported by mindtorch_v2 eager mode).")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward without recording; record one `<Name>Backward` node if an input needs a gradient."""
        uses_setup = cls.setup_context is not Function.setup_context
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
