"""Saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks, save_on_cpu).

While a pair (pack, unpack) is installed, every tensor the tape saves for backward (a primitive's VJP
reads and `ctx.save_for_backward` of a custom Function) is handed to `pack` when it is saved; the tape
keeps only what `pack` returned, and backward calls `unpack` on it each time it reads the value:

    with saved_tensors_hooks(lambda t: t.numpy().copy(), lambda a: torch.from_numpy(a)):
        y = x.exp()           # pack(exp's output) -> an ndarray is kept, not the tensor
    y.sum().backward()        # unpack(ndarray) -> the tensor exp's rule reads

As in PyTorch, a value kept through hooks is not version-checked (the hook decides what is kept), a
pack hook may not modify its input in place, and unpack must return a Tensor.
"""
import threading

_PACK_INPLACE = ("A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook "
                 "cannot be modified by in-place operations as this can lead to unexpected side-effects. Please "
                 "open an issue if you need to perform in-place operations on the input to a pack hook.")


class _Stack(threading.local):
    def __init__(self):
        self.hooks = []          # installed (pack, unpack) pairs, innermost last
        self.disabled = None     # the message of an active disable_saved_tensors_hooks, else None


_stack = _Stack()

# How many saved_tensors_hooks contexts are open, over all threads: while it is 0 (the usual case) no thread
# has hooks, and the tape skips the thread-local read (a thread ending inside a context leaves it above 0:
# the thread-local read then answers, still rightly).
installed = 0
_count_lock = threading.Lock()


def current():
    """The innermost (pack, unpack) pair, or None."""
    if installed == 0:
        return None
    hooks = _stack.hooks
    return hooks[-1] if hooks else None


def _count(delta):
    global installed
    with _count_lock:
        installed += delta


class saved_tensors_hooks:
    """Context manager: pack/unpack every tensor saved for backward inside it (see the module doc)."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _stack.disabled is not None:
            raise RuntimeError(_stack.disabled)
        _stack.hooks.append((self.pack_hook, self.unpack_hook))
        _count(1)
        return self

    def __exit__(self, *exc):
        _stack.hooks.pop()
        _count(-1)
        return False


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors on the CPU and bring them back to their device for backward. Every tensor here
    lives in host memory already (NumPy), so packing keeps a copy on "cpu" and unpacking moves it back
    to the device it came from; `pin_memory` has no meaning without an accelerator and is accepted."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(t):
            return t.device, t.to("cpu", copy=True)

        def unpack(packed):
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Inside it, installing saved_tensors_hooks raises RuntimeError(error_message)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self._prev = _stack.disabled
        _stack.disabled = self.error_message
        return self

    def __exit__(self, *exc):
        _stack.disabled = self._prev
        return False


def pack(hooks, tensor):
    """Run the pack hook on `tensor`, refusing a hook that writes into it."""
    counter = tensor._storage.version
    before = counter.value
    packed = hooks[0](tensor)
    if counter.value != before:
        raise RuntimeError(_PACK_INPLACE)
    return packed


def unpack(unpack_hook, packed):
    """The Tensor the unpack hook gives back for `packed`."""
    t = unpack_hook(packed)
    if not hasattr(type(t), "__mt_bind__"):  # the eager Tensor
        raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                        f"{type(t).__name__}")
    return t


def unpack_value(unpack_hook, packed):
    """The core value behind the unpacked Tensor (what a VJP rule reads)."""
    return unpack(unpack_hook, packed)._value()
