"""torch.autograd.gradcheck: finite-difference checks of gradients."""
from ..eager.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401
