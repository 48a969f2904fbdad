"""Thread-local grad mode: no_grad, enable_grad, set_grad_enabled, inference_mode.

Inside a torch.func transform the function runs on traced values, and the eager tape is off (`enabled`
False: nothing records). The grad mode the user's code sees there is `visible`: on inside grad, vjp and jacrev
(as functorch's, which enable it), as outside inside vmap and jvp. Switching it (no_grad, enable_grad)
pauses or resumes the reverse-mode transforms then active (core.pause_reverse): what is computed under
no_grad inside torch.func.grad is a constant to it, as in PyTorch."""
import functools
import threading

from .. import core


class _State(threading.local):
    enabled = True     # class attributes: each thread starts from these defaults
    inference = False
    # enabled and not inference, kept in step by _set_modes: one flag saying both that ops record and that
    # their results are normal (not inference) tensors
    recording = True
    transforms = 0     # torch.func transforms running a function on this thread (the tape is off there)
    visible = True     # the grad mode the user's code sees inside them
    written = None     # inside one: (storage, old value, old version) of each traced write over a concrete value


_state = _State()

# How many threads have `recording` off. While it is 0 (no thread inside no_grad or inference_mode, the
# usual case) every thread records, and the eager hot path tests this module global instead of reading
# the thread-local state. A thread that ends inside no_grad leaves it above 0: the slow path, still right.
threads_not_recording = 0
_count_lock = threading.Lock()


def is_grad_enabled():
    """torch.is_grad_enabled: the grad mode (inside a torch.func transform, the one the user's code sees)."""
    state = _state
    return state.visible if state.transforms else state.enabled


def tape_enabled():
    """Whether ops on tensors requiring grad record on the eager tape: the grad mode, off inside torch.func
    transforms (what the eager layer asks before recording)."""
    return _state.enabled


def _set(enabled):
    enabled = bool(enabled)
    if _state.transforms:  # the tape stays off; the reverse-mode transforms follow the mode the user sets
        _state.visible = enabled
        core.pause_reverse(not enabled)
    else:
        _set_modes(enabled, _state.inference)


class transform_region:
    """Where a torch.func transform runs the user's function: the eager tape off, and the grad mode the
    function sees on for a reverse-mode transform (grad, vjp, jacrev), else as it was.

    It also notes each in-place write of a traced value over a concrete one (writeback.write). `check()`,
    once the function's results are read and its own tensors let go, undoes those whose tensor is still
    alive: a captured tensor (defined outside the transform: a module's running stats, a global buffer),
    which would otherwise be left holding a dead tracer, and raises PyTorch's RuntimeError."""

    __slots__ = ("reverse", "prev", "written")

    def __init__(self, reverse):
        self.reverse = reverse
        self.written = ()

    def __enter__(self):
        state = _state
        self.prev = (state.transforms, state.visible, state.enabled, state.written)
        visible = True if self.reverse else is_grad_enabled()
        if not state.transforms:
            _set_modes(False, state.inference)
        state.transforms += 1
        state.visible = visible
        state.written = []

    def __exit__(self, *exc):
        state = _state
        self.written = state.written
        state.transforms, state.visible, enabled, state.written = self.prev
        if not state.transforms:
            _set_modes(enabled, state.inference)
        if exc[0] is not None:
            self.undo()
        return False

    def undo(self):
        """Put back what the region wrote into tensors still alive; their shapes."""
        shapes = []
        for ref, value, version in reversed(self.written):
            st = ref()
            if st is not None and type(st.value) is not core.Array:
                st.value = value
                st.version.value = version
                shapes.append(list(value.shape))
        self.written = ()
        return shapes

    def check(self):
        shapes = self.undo()
        if shapes:
            raise RuntimeError(
                "During a torch.func transform (grad, vjp, jvp, vmap, ...), the function provided wrote in place into "
                f"a captured Tensor (of shape {shapes[0]}): one defined outside of the function transform. We don't "
                "support this (the write is undone): pass the tensor as an input of the function, or write into a "
                "clone of it.")


def _set_modes(enabled, inference):
    global threads_not_recording
    state = _state
    was = state.recording
    state.enabled = enabled
    state.inference = inference
    now = state.recording = enabled and not inference
    if now != was:
        with _count_lock:
            threads_not_recording += -1 if now else 1


def recording():
    """Whether ops on tensors requiring grad record on this thread (grad mode on, outside inference mode)."""
    return threads_not_recording == 0 or _state.recording


def is_inference_mode_enabled():
    return _state.inference


class _Mode:
    """Base for grad-mode contexts: usable as a context manager and as a decorator."""

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return fn(*args, **kwargs)
        return wrapper

    def _args(self):
        return ()


class _BareDecorator(_Mode):
    """A mode usable as `@no_grad` without parentheses too (torch's _NoParamDecoratorContextManager)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        if not callable(orig_func):
            raise TypeError(f"{cls.__name__}() takes no arguments besides a function to decorate")
        return cls()(orig_func)


class no_grad(_BareDecorator):
    """Disable gradient recording inside the block."""

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set(False)

    def __exit__(self, *exc):
        _set(self.prev)
        return False


class enable_grad(_BareDecorator):
    """Enable gradient recording inside the block."""

    def __enter__(self):
        self.prev = is_grad_enabled()
        _set(True)

    def __exit__(self, *exc):
        _set(self.prev)
        return False


class set_grad_enabled(_Mode):
    """Set gradient recording on or off; also works as a plain function call."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self.prev = is_grad_enabled()
        _set(self.mode)

    def _args(self):
        return (self.mode,)

    def __call__(self, fn):
        _set(self.prev)  # used as a decorator: the constructor's switch must not leak
        return super().__call__(fn)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set(self.prev)
        return False


class inference_mode(_Mode):
    """Like no_grad (tensors made inside never record history)."""

    def __new__(cls, mode=True):
        if callable(mode):  # @torch.inference_mode without parentheses
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def _args(self):
        return (self.mode,)

    def __enter__(self):
        if self.mode and _state.transforms:
            raise RuntimeError("inference_mode is not supported inside a torch.func transform (grad, vmap, ...): "
                               "tensors made in it cannot take part in the transform's computation. Use "
                               "torch.no_grad() instead.")
        self.prev = None
        if _state.transforms:  # inference_mode(False) there: the mode stays as it is
            return
        self.prev = is_grad_enabled()
        self.prev_inf = is_inference_mode_enabled()
        if self.mode:
            _set_modes(False, True)
        else:  # inference_mode(False) inside an inference region: tensors made here are normal ones
            _set_modes(self.prev, False)

    def __exit__(self, *exc):
        if self.prev is not None:
            _set_modes(self.prev, self.prev_inf)
        return False
