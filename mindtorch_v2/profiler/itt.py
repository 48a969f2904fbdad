"""torch.profiler.itt: Intel ITT annotations for VTune. No ITT runtime is linked here, so
is_available() is False and the annotations do nothing (PyTorch's behaviour without VTune collecting)."""
from contextlib import contextmanager

__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]


def is_available():
    """Whether ITT is available: False in this build."""
    return False


def range_push(msg):
    """Open a nested ITT range named `msg` (no-op)."""


def range_pop():
    """Close the innermost ITT range (no-op)."""


def mark(msg):
    """An instantaneous ITT event named `msg` (no-op)."""


@contextmanager
def range(msg, *args, **kwargs):  # noqa: A001
    """A context in an ITT range named msg.format(*args, **kwargs) (no-op)."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
