"""torch.optim.ASGD: averaged stochastic gradient descent."""
from .._compile import is_compiling
from .optimizer import _GroupwiseOptimizer, _descent_grad, _get_value


class ASGD(_GroupwiseOptimizer):
    """Averaged SGD; per step t (torch's formula; eta and mu are float32 state tensors):

        g = g + weight_decay * p;  p = p * (1 - lambd * eta) - eta * g
        ax = ax + (p - ax) * mu  (ax = p while mu == 1)
        eta = lr / (1 + lambd * lr * t) ** alpha;  mu = 1 / max(1, t - t0)
    """

    _CHECKED = ("lr", "weight_decay", "differentiable")
    _SETSTATE_DEFAULTS = {"maximize": False}

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None, maximize=False,
                 differentiable=False, capturable=False):
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        scalars = (("eta", lr), ("mu", 1.0))
        for p, grad, state, step in self._stepped_params(group, ("ax",), scalars):
            grad = _descent_grad(p, grad, group)
            eta, mu, ax = state["eta"], state["mu"], state["ax"]
            eta_value = _get_value(eta)
            p.mul_(1 - lambd * eta_value)
            p.add_(grad, alpha=-eta_value)
            if is_compiling() or mu.item() != 1:  # (compiled: the average's update, which is the copy at mu 1)
                ax.add_((p - ax) * mu.to(p.dtype))
            else:
                ax.copy_(p)
            eta.fill_(lr / ((1 + lambd * lr * step) ** alpha))
            mu.fill_(1 / ((step - t0).clamp(min=1) if is_compiling() else max(1, step - t0)))
