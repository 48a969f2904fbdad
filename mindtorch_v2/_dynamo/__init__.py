"""torch._dynamo: the names libraries call as decorators or checks, and torch.compile's errors and config.

torch.compile's tracer plays dynamo's role (mindtorch_v2/_compile.py): `is_compiling()` is True while it
traces, `disable` keeps a function out of compiled code, `reset()` forgets compiled programs, `exc.Unsupported`
is what fullgraph=True raises at a graph break. Every shape is static (a new shape traces again), so
`mark_dynamic` and friends record nothing and return None, as torch's do on eager tensors; `config` holds
the settings libraries write (unknown names raise AttributeError, as torch's config does), and
`config.recompile_limit` bounds the traces per compiled function.
"""
from ..compiler import allow_in_graph, assume_constant_result, disable, is_compiling, reset
from . import config, eval_frame, exc, external_utils
from .eval_frame import OptimizedModule

__all__ = ["is_compiling", "disable", "allow_in_graph", "assume_constant_result", "reset", "mark_dynamic",
           "mark_static", "maybe_mark_dynamic", "mark_static_address", "config", "external_utils", "exc",
           "eval_frame", "OptimizedModule"]


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):  # noqa: A002
    """Record nothing and return None: eager tensors have no symbolic shapes."""


def maybe_mark_dynamic(t, index):
    """Record nothing and return None: eager tensors have no symbolic shapes."""


def mark_static(t, index=None):
    """Record nothing and return None: every shape is static here."""


def mark_static_address(t, guard=True):
    """Record nothing and return None: there are no compiled graphs to guard."""
