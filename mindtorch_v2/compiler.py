"""torch.compiler: the checks and decorators libraries wrap around compiled regions.

mindtorch_v2 runs eagerly and has no graph compiler, so nothing is ever being compiled or exported:
`is_compiling()` and `is_exporting()` answer False, and the decorators return the function unchanged
(which is what torch's do to the eager behaviour of a function).
"""

__all__ = ["is_compiling", "is_dynamo_compiling", "is_exporting", "disable", "allow_in_graph",
           "assume_constant_result", "reset"]


def is_compiling():
    """Return False: code here never runs under a graph compiler."""
    return False


def is_dynamo_compiling():
    """Return False: there is no dynamo tracing."""
    return False


def is_exporting():
    """Return False: there is no torch.export."""
    return False


def disable(fn=None, recursive=True, *, reason=None):
    """Return fn unchanged (as a decorator, with or without arguments): it already runs eagerly."""
    if fn is None:
        return lambda f: f
    return fn


def allow_in_graph(fn):
    """Return fn unchanged: there is no graph to allow it in."""
    return fn


def assume_constant_result(fn):
    """Return fn unchanged: eager calls compute the result every time."""
    return fn


def reset():
    """Clear compilation caches: there are none, so this does nothing."""
