"""One flat vector from many parameters, and back."""
from ...eager.ops import cat
from ...eager.tensor import Tensor

from ...eager.tensor import Tensor


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated (differentiable, like cat of views)."""
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Set each parameter's data to its slice of vec (in order); the parameters then alias vec, as in torch."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
