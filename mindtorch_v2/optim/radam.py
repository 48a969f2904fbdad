"""torch.optim.RAdam: Adam with a rectified adaptive learning rate."""
from .._compile import is_compiling
from ..eager.ops import where
from .optimizer import _GroupwiseOptimizer, _descent_grad, _update_moments

_BUFFERS = ("exp_avg", "exp_avg_sq")


class RAdam(_GroupwiseOptimizer):
    """RAdam; per step t (torch's formula):

        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g;  m_hat = m / (1 - beta1**t)
        rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
        p = p - lr * m_hat * r_t * sqrt(1 - beta2**t) / (sqrt(v) + eps)   when rho_t > 5, with the rectification
            r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t));  else p = p - lr * m_hat
    """

    _CHECKED = ("lr", "eps", "betas", "weight_decay", "differentiable")
    _SETSTATE_DEFAULTS = {"maximize": False, "decoupled_weight_decay": False}

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        decoupled = group["decoupled_weight_decay"]
        for p, grad, state, step in self._stepped_params(group, _BUFFERS):
            grad = _descent_grad(p, grad, group, decoupled)
            exp_avg, exp_avg_sq = _update_moments(state, grad, beta1, beta2)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            corrected = exp_avg / bias_correction1
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            if is_compiling():  # (the step count is traced: both updates, chosen by where)
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)).clamp(min=0) ** 0.5
                adaptive = (bias_correction2 ** 0.5) / (exp_avg_sq.sqrt() + eps)
                p.add_(where(rho_t > 5.0, corrected * lr * adaptive * rect, corrected * lr), alpha=-1.0)
            elif rho_t > 5.0:
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                adaptive = (bias_correction2 ** 0.5) / (exp_avg_sq.sqrt() + eps)
                p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
            else:
                p.add_(corrected * lr, alpha=-1.0)
