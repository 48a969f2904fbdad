"""torch.autograd: backward, grad, Function, gradcheck, grad modes."""
from ..eager.autograd.api import backward, grad
from ..eager.autograd.graph import Node
from ..eager.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from . import function, graph  # noqa: F401
from . import functional  # noqa: F401  (torch.autograd.functional)
from . import profiler, profiler_util  # noqa: F401  (torch.autograd.profiler, torch.autograd.profiler_util)
from .function import Function, FunctionCtx, InplaceFunction, once_differentiable  # noqa: F401
# as in torch, the gradcheck function shadows the gradcheck module in this namespace
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401

from . import variable  # noqa: F401
from .variable import Variable  # noqa: F401
