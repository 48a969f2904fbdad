"""torch.autograd.graph: the Node type of grad_fn objects."""
from ..eager.autograd.graph import AccumulateGrad, Node, RemovableHandle  # noqa: F401
