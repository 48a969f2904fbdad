"""torch.optim.NAdam: Adam with Nesterov momentum."""
from .optimizer import _GroupwiseOptimizer, _descent_grad, _get_value, _update_moments

_BUFFERS = ("exp_avg", "exp_avg_sq")
_SCALARS = (("mu_product", 1.0),)


class NAdam(_GroupwiseOptimizer):
    """NAdam; per step t (torch's formula):

        mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay));  mu_product *= mu_t (a float32 state tensor)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g;  denom = sqrt(v / (1 - beta2**t)) + eps
        p = p - lr (1 - mu_t) / (1 - mu_product) * g / denom - lr mu_{t+1} / (1 - mu_product mu_{t+1}) * m / denom
    """

    _CHECKED = ("lr", "eps", "betas", "weight_decay", "momentum_decay", "differentiable")
    _SETSTATE_DEFAULTS = {"maximize": False, "decoupled_weight_decay": False}

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr, eps, momentum_decay = group["lr"], group["eps"], group["momentum_decay"]
        beta1, beta2 = group["betas"]
        decoupled = group["decoupled_weight_decay"]
        for p, grad, state, step in self._stepped_params(group, _BUFFERS, _SCALARS):
            grad = _descent_grad(p, grad, group, decoupled)
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            mu_product = state["mu_product"]
            mu_product.mul_(mu)
            exp_avg, exp_avg_sq = _update_moments(state, grad, beta1, beta2)
            denom = (exp_avg_sq / (1 - beta2 ** step)).sqrt() + eps
            product = _get_value(mu_product)
            p.add_(grad / denom, alpha=-lr * (1.0 - mu) / (1.0 - product))
            p.add_(exp_avg / denom, alpha=-lr * mu_next / (1.0 - product * mu_next))
