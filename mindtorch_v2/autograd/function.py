"""torch.autograd.function: custom autograd Functions."""
from ..eager.autograd.function import (BackwardCFunction, Function, FunctionCtx, InplaceFunction,  # noqa: F401
                                       once_differentiable)
