"""torch.optim.Adadelta."""
from .optimizer import _GroupwiseOptimizer, _descent_grad

_BUFFERS = ("square_avg", "acc_delta")


class Adadelta(_GroupwiseOptimizer):
    """Adadelta; per step (torch's formula):

        g = -grad if maximize else grad;  g = g + weight_decay * p
        v = rho * v + (1 - rho) * g * g
        delta = sqrt(u + eps) / sqrt(v + eps) * g;  u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta
    """

    _CHECKED = ("lr", "rho", "eps", "weight_decay", "differentiable")
    _SETSTATE_DEFAULTS = {"maximize": False}  # group keys older state may lack

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr, rho, eps = group["lr"], group["rho"], group["eps"]
        for p, grad, state, _ in self._stepped_params(group, _BUFFERS):
            grad = _descent_grad(p, grad, group)
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            square_avg.mul_(rho).add_(grad * (1 - rho) * grad)
            std = (square_avg + eps).sqrt()
            delta = (acc_delta + eps).sqrt() / std * grad
            acc_delta.mul_(rho).add_(delta * (1 - rho) * delta)
            p.add_(delta, alpha=-lr)
