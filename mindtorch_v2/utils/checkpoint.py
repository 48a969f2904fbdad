"""torch.utils.checkpoint: activation checkpointing. A checkpointed function keeps no intermediate
activations for backward; backward runs it again to recompute them.

Two variants, as in PyTorch:
  * use_reentrant=False (recommended): the forward runs with saved_tensors_hooks whose pack hook keeps
    only a numbered handle. The first time backward unpacks a handle, the function is run again (same
    RNG state, grad and autocast modes) with a pack hook that collects what it saves, in the same order;
    each handle then yields its recomputed tensor (dropped once read, so memory stays low). It works with
    autograd.grad, backward(inputs=...), create_graph and nested checkpoints.
  * use_reentrant=True (PyTorch's default when use_reentrant is not given, with its warning): an
    autograd.Function that runs the function under no_grad and, in its backward, re-runs it with grad
    enabled and calls backward on that inner graph. It refuses autograd.grad and backward(inputs=...), as
    PyTorch's does.
"""
import contextlib
import enum
import warnings

from ..eager import autocast_state, grad_mode
from ..eager import random_ops as _rng
from ..eager.autograd import engine
from ..eager.autograd.function import Function
from ..eager.autograd.saved_hooks import saved_tensors_hooks
from ..eager.tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction", "check_backward_validity",
           "detach_variable", "noop_context_fn", "set_checkpoint_early_stop", "set_checkpoint_debug_enabled",
           "get_device_states", "set_device_states", "DefaultDeviceType", "CheckpointPolicy"]

_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if "
    "you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants.")
_REENTRANT_GRAD = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` parameter "
    "to .backward(). To resolve this error, you can either set use_reentrant=False, or call .backward() without "
    "passing the `inputs` argument.")


class CheckpointError(RuntimeError):
    """The recomputation did not save what the original forward saved."""


class CheckpointPolicy(enum.Enum):
    """Selective checkpointing's per-op decisions (PyTorch's names)."""
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3


class DefaultDeviceType:
    """The device type whose RNG state checkpoint preserves besides the CPU's ("cuda" by default in PyTorch;
    with no accelerator here, only the CPU generator's state is ever saved)."""
    _default_device_type = "cuda"

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        return DefaultDeviceType._default_device_type


def get_device_states(*args):
    """(devices, RNG states) of the accelerator devices among args' tensors: none exist here."""
    return [], []


def set_device_states(devices, states, *, device_type=None):
    if devices:
        raise RuntimeError(f"set_device_states: no accelerator RNG to restore for devices {list(devices)}")


_early_stop = [True]
_debug = [False]


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether a non-reentrant recomputation stops as soon as every saved tensor is recomputed."""
    prev, _early_stop[0] = _early_stop[0], bool(enable)
    try:
        yield
    finally:
        _early_stop[0] = prev


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    prev, _debug[0] = _debug[0], enabled
    try:
        yield
    finally:
        _debug[0] = prev


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def check_backward_validity(inputs):
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=3)


def detach_variable(inputs):
    """Detached copies of the tensors in `inputs` (a tuple), keeping each one's requires_grad."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for x in inputs:
        if not isinstance(x, Tensor):
            out.append(x)
            continue
        d = x.detach()
        d.requires_grad = x.requires_grad
        out.append(d)
    return tuple(out)


# ---------------------------------------------------------------------------
# the state a recomputation must reproduce


class _Modes:
    """RNG state (when preserved), grad mode and autocast table at forward time, reinstated to recompute."""

    def __init__(self, preserve_rng_state):
        self.generator = _rng.default_generator
        self.rng = self.generator.get_state() if preserve_rng_state else None
        self.grad = grad_mode.is_grad_enabled()
        self.autocast = {k: list(v) for k, v in autocast_state.table().items()}

    @contextlib.contextmanager
    def restored(self, grad=None):
        table = autocast_state.table()
        saved_autocast = {k: list(v) for k, v in table.items()}
        saved_rng = self.generator.get_state() if self.rng is not None else None
        if self.rng is not None:
            self.generator.set_state(self.rng)
        table.update({k: list(v) for k, v in self.autocast.items()})
        try:
            with grad_mode.set_grad_enabled(self.grad if grad is None else grad):
                yield
        finally:
            table.update(saved_autocast)
            if saved_rng is not None:
                self.generator.set_state(saved_rng)


# ---------------------------------------------------------------------------
# use_reentrant=True


class CheckpointFunction(Function):
    """checkpoint(use_reentrant=True): forward under no_grad; backward recomputes with grad and backprops."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.modes = _Modes(preserve_rng_state)
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[args[i] for i in ctx.tensor_indices])
        with grad_mode.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not engine.is_checkpoint_valid():
            raise RuntimeError(_REENTRANT_GRAD)
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = detach_variable(tuple(inputs))
        with ctx.modes.restored(grad=True):
            outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        from ..eager.autograd.api import backward
        backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(x.grad if isinstance(x, Tensor) else None for x in detached)


# ---------------------------------------------------------------------------
# use_reentrant=False


class _StopRecomputation(Exception):
    pass


class _Handle:
    """What the forward keeps for one saved tensor: its position and metadata, never the tensor."""

    __slots__ = ("frame", "index", "meta")

    def __init__(self, frame, index, meta):
        self.frame = frame
        self.index = index
        self.meta = meta


def _meta(t):
    return tuple(t.shape), t.dtype, t.device


class _Frame:
    """One checkpointed call: the function, its inputs and modes, and the recomputed tensors not yet read."""

    def __init__(self, fn, args, kwargs, modes, recompute_ctx, determinism_check, early_stop):
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.early_stop = early_stop
        self.modes = modes
        self.recompute_ctx = recompute_ctx
        self.check = determinism_check != "none"
        self.metas = []          # per saved tensor of the forward: (shape, dtype, device)
        self.recomputed = {}     # index -> tensor, filled by a recomputation, emptied as backward reads

    def pack(self, t):
        self.metas.append(_meta(t))
        return _Handle(self, len(self.metas) - 1, self.metas[-1])

    def unpack(self, handle):
        if handle.index not in self.recomputed:
            self._recompute()
        return self.recomputed.pop(handle.index)

    def _recompute(self):
        got = []
        total = len(self.metas)
        early = self.early_stop

        def collect(t):
            got.append(t.detach())
            if early and len(got) == total:
                raise _StopRecomputation
            return None

        try:
            with self.modes.restored(grad=True), saved_tensors_hooks(collect, _never_unpacked), self.recompute_ctx:
                self.fn(*self.args, **self.kwargs)
        except _StopRecomputation:
            pass
        if len(got) != total:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original forward and "
                f"recomputation.\nNumber of tensors saved during forward: {total}\nNumber of tensors saved during "
                f"recomputation: {len(got)}.\nThe function must run the same operations when it is recomputed "
                "(no control flow on values that change between the two runs).")
        for i, t in enumerate(got):
            if self.check and _meta(t) != self.metas[i]:
                raise CheckpointError(
                    "torch.utils.checkpoint: Recomputed values for the following tensors have different metadata "
                    f"than during the forward pass.\ntensor at position {i}:\nsaved metadata: {_describe(self.metas[i])}"
                    f"\nrecomputed metadata: {_describe(_meta(t))}")
            self.recomputed[i] = t


def _describe(meta):
    shape, dtype, device = meta
    return f"{{'shape': torch.Size({list(shape)}), 'dtype': {dtype}, 'device': {device}}}"


def _never_unpacked(_):
    raise CheckpointError("torch.utils.checkpoint: a tensor saved during recomputation was unpacked; "
                          "recomputed graphs are never run backward")


def _checkpoint_without_reentrant(fn, args, kwargs, preserve_rng_state, context_fn, determinism_check, early_stop):
    forward_ctx, recompute_ctx = context_fn()
    frame = _Frame(fn, args, kwargs, _Modes(preserve_rng_state), recompute_ctx, determinism_check, early_stop)
    with saved_tensors_hooks(frame.pack, _unpack_handle), forward_ctx:
        return fn(*args, **kwargs)


def _unpack_handle(handle):
    return handle.frame.unpack(handle)


# ---------------------------------------------------------------------------
# the entry points


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs) without keeping its activations for backward (recomputed there)."""
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    if use_reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    return _checkpoint_without_reentrant(function, args, kwargs, preserve_rng_state, context_fn, determinism_check,
                                         early_stop and _early_stop[0])


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a sequence of modules/functions in `segments` chunks, checkpointing all but the last chunk."""
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from ..nn import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    functions = list(functions)

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
