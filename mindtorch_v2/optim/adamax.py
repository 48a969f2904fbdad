"""torch.optim.Adamax: Adam with the infinity norm."""
from ..eager.ops import maximum
from .optimizer import _GroupwiseOptimizer, _descent_grad, _lerp_

_BUFFERS = ("exp_avg", "exp_inf")


class Adamax(_GroupwiseOptimizer):
    """Adamax; per step t (torch's formula):

        g = -grad if maximize else grad;  g = g + weight_decay * p
        m = lerp(m, g, 1 - beta1);  u = max(beta2 * u, |g| + eps)
        p = p - lr / (1 - beta1**t) * m / u
    """

    _CHECKED = ("lr", "eps", "betas", "weight_decay", "differentiable")
    _SETSTATE_DEFAULTS = {"maximize": False}  # group keys older state may lack

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        for p, grad, state, step in self._stepped_params(group, _BUFFERS):
            grad = _descent_grad(p, grad, group)
            exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
            _lerp_(exp_avg, grad, 1 - beta1)
            exp_inf.copy_(maximum(exp_inf.mul_(beta2), grad.abs() + eps))
            clr = lr / (1 - beta1 ** step)
            p.add_(exp_avg / exp_inf, alpha=-clr)
