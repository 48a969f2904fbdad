"""torch.autograd.graph: the Node type of grad_fn objects, gradient edges, and saved-tensor hooks."""
from typing import NamedTuple

from ..eager.autograd.graph import AccumulateGrad, Node, RemovableHandle  # noqa: F401
from ..eager.autograd.saved_hooks import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks  # noqa: F401
from ..eager.tensor import Tensor

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "increment_version", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks"]


class GradientEdge(NamedTuple):
    """An edge of the graph: the node a gradient flows into and which of its outputs."""
    node: object
    output_nr: int


def get_gradient_edge(tensor):
    """The edge the gradient of `tensor` flows along (its grad_fn, or the leaf's AccumulateGrad)."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    return GradientEdge(*tensor._edge())


def increment_version(tensor):
    """Bump the version counter of `tensor` (and of every view sharing its storage), as an in-place write
    would; tensors saved for backward at the old version then refuse to be used."""
    for t in (tensor if isinstance(tensor, (list, tuple)) else (tensor,)):
        if not isinstance(t, Tensor):
            raise TypeError(f"increment_version expects a Tensor, got {type(t).__name__}")
        t._storage.version.value += 1
