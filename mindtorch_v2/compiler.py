"""torch.compiler: compile, the checks code asks while being compiled, and the decorators around compiled regions.

`torch.compile` traces eager code into the staging IR and runs it compiled (mindtorch_v2/_compile.py says
how). `is_compiling()` answers True while that trace runs. `disable(fn)` keeps fn out of compiled code: a
call to it inside a trace is a graph break, so the whole call runs eagerly (with a warning; under
fullgraph=True it raises torch._dynamo.exc.Unsupported).
"""
import functools

from . import _compile
from ._dynamo.eval_frame import compile

__all__ = ["compile", "is_compiling", "is_dynamo_compiling", "is_exporting", "disable", "allow_in_graph",
           "assume_constant_result", "reset"]


def is_compiling():
    """True while torch.compile traces code."""
    return _compile.is_compiling()


def is_dynamo_compiling():
    """True while torch.compile traces code (the same trace plays dynamo's role)."""
    return _compile.is_compiling()


def is_exporting():
    """Return False: there is no torch.export."""
    return False


def disable(fn=None, recursive=True, *, reason=None):
    """fn kept out of compiled code (as a decorator, with or without arguments): called outside a trace it
    runs as is; called inside one, the enclosing compiled call runs eagerly instead (a graph break)."""
    if fn is None:
        return lambda f: disable(f, recursive, reason=reason)
    if isinstance(fn, _compile.CompiledFunction):
        fn = fn._fn

    @functools.wraps(fn)
    def eager_only(*args, **kwargs):
        if _compile.is_compiling():
            why = f" ({reason})" if reason else ""
            raise _compile.GraphBreak(f"a call to {getattr(fn, '__qualname__', fn)!s}, which "
                                      f"torch.compiler.disable keeps out of compiled code{why}")
        return fn(*args, **kwargs)
    eager_only._mt_compile_disabled = True
    return eager_only


def allow_in_graph(fn):
    """Return fn unchanged: its tensor ops are traced like any other code."""
    return fn


def assume_constant_result(fn):
    """Return fn unchanged: a call inside a trace is traced (its tensor results are not baked in)."""
    return fn


def reset():
    """Forget every compiled program and warning (torch._dynamo.reset / torch.compiler.reset)."""
    _compile.reset()
