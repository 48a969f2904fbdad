"""torch.optim.Rprop: resilient backpropagation."""
from ..eager.creation import ones_like
from ..eager.ops import where
from .optimizer import _GroupwiseOptimizer


class Rprop(_GroupwiseOptimizer):
    """Resilient backprop; per step (torch's formula):

        s = sign(g * prev);  step_size *= etaplus where s > 0, etaminus where s < 0;  clamped to step_sizes
        g = 0 where s < 0;  p = p - sign(g) * step_size;  prev = g
    """

    _CHECKED = ("lr", "etas", "differentiable")
    _SETSTATE_DEFAULTS = {"maximize": False}

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        buffers = ("prev", ("step_size", group["lr"]))
        for p, grad, state, _ in self._stepped_params(group, buffers):
            if group["maximize"]:
                grad = -grad
            prev, step_size = state["prev"], state["step_size"]
            sign = (grad * prev).sign()
            ones = ones_like(sign)  # the etas in the parameter's dtype (two python scalars would give float32)
            factor = where(sign > 0, ones * etaplus, where(sign < 0, ones * etaminus, ones))
            step_size.mul_(factor).clamp_(step_size_min, step_size_max)
            grad = where(sign < 0, 0.0, grad)
            p.add_(grad.sign() * step_size, alpha=-1)
            prev.copy_(grad)
