"""Thread-local grad mode: no_grad, enable_grad, set_grad_enabled, inference_mode."""
import functools
import threading

class _State(threading.local):
    enabled = True     # class attributes: each thread starts from these defaults
    inference = False
    # enabled and not inference, kept in step by _set_modes: one flag saying both that ops record and that
    # their results are normal (not inference) tensors
    recording = True


_state = _State()

# How many threads have `recording` off. While it is 0 (no thread inside no_grad or inference_mode, the
# usual case) every thread records, and the eager hot path tests this module global instead of reading
# the thread-local state. A thread that ends inside no_grad leaves it above 0: the slow path, still right.
threads_not_recording = 0
_count_lock = threading.Lock()


def is_grad_enabled():
    return _state.enabled


def _set(enabled):
    _set_modes(bool(enabled), _state.inference)


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
        self.prev = is_grad_enabled()
        self.prev_inf = is_inference_mode_enabled()
        if self.mode:
            _set_modes(False, True)
        else:  # inference_mode(False) inside an inference region: tensors made here are normal ones
            _set_modes(self.prev, False)

    def __exit__(self, *exc):
        _set_modes(self.prev, self.prev_inf)
        return False
