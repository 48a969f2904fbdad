"""torch._dynamo: the names libraries call as decorators or checks.

There is no dynamo here (mindtorch_v2 runs eagerly): the checks answer False, the decorators return the
function unchanged, `mark_dynamic` and friends return None as torch's do on eager tensors, and `config`
holds the settings libraries write (unknown names raise AttributeError, as torch's config does).
"""
from ..compiler import allow_in_graph, assume_constant_result, disable, is_compiling, reset
from . import config, external_utils

__all__ = ["is_compiling", "disable", "allow_in_graph", "assume_constant_result", "reset", "mark_dynamic",
           "mark_static", "maybe_mark_dynamic", "mark_static_address", "config", "external_utils"]


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):  # noqa: A002
    """Record nothing and return None: eager tensors have no symbolic shapes."""


def maybe_mark_dynamic(t, index):
    """Record nothing and return None: eager tensors have no symbolic shapes."""


def mark_static(t, index=None):
    """Record nothing and return None: every shape is static here."""


def mark_static_address(t, guard=True):
    """Record nothing and return None: there are no compiled graphs to guard."""
