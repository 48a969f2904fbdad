"""torch.functionalize(): a context in which in-place ops never write a buffer.

Every in-place op is always functionalized (computed out of place, then written
back with as_strided_scatter). Outside this context the cpu writeback may reuse
a base buffer that its Storage owns alone (copy-on-write with ownership, so
writing a row of a large tensor costs O(row)). Inside it, every writeback makes
a new base value: the form tracers and backends without in-place kernels need.
"""
import functools
import threading

_state = threading.local()


def is_functionalizing():
    return getattr(_state, "depth", 0) > 0


class functionalize:
    """Context manager (and decorator) disabling buffer reuse for in-place writebacks."""

    def __enter__(self):
        _state.depth = getattr(_state, "depth", 0) + 1
        return self

    def __exit__(self, *exc):
        _state.depth -= 1
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with functionalize():
                return fn(*args, **kwargs)
        return wrapper
