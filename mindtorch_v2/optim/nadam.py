"""torch.optim.NAdam and RAdam (Adam with Nesterov momentum / with a rectified adaptive lr)."""
from ..eager.creation import tensor, zeros_like
from .optimizer import Optimizer, _call_closure, _lerp_, _no_grad_step, _step_count


class _AdamFamily(Optimizer):
    """The argument checks and state of NAdam and RAdam."""

    def _check(self, lr, betas, eps, weight_decay, differentiable):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if differentiable:
            raise NotImplementedError(f"{type(self).__name__}(differentiable=True) is not supported")

    _SETSTATE_DEFAULTS = {"maximize": False, "decoupled_weight_decay": False}  # group keys older state may lack

    def _decayed_grad(self, p, grad, group):
        """The gradient after maximize and (L2 or decoupled) weight decay; decoupled decay shrinks p here."""
        lr, weight_decay = group["lr"], group["weight_decay"]
        if group["maximize"]:
            grad = -grad
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(p, alpha=weight_decay)
        return grad


class NAdam(_AdamFamily):
    """NAdam; per step t (torch's formula):

        mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay));  mu_product *= mu_t (a float32 state tensor)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g;  denom = sqrt(v / (1 - beta2**t)) + eps
        p = p - lr (1 - mu_t) / (1 - mu_product) * g / denom - lr mu_{t+1} / (1 - mu_product mu_{t+1}) * m / denom
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        self._check(lr, betas, eps, weight_decay, differentiable)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self, closure=None):
        """Update every parameter that has a gradient; return closure()'s loss if a closure is given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr, eps, momentum_decay = group["lr"], group["eps"], group["momentum_decay"]
            beta1, beta2 = group["betas"]
            for p, grad in self._params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = tensor(0.0)
                    state["mu_product"] = tensor(1.0)
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                step = _step_count(state)
                grad = self._decayed_grad(p, grad, group)
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                mu_product = state["mu_product"]
                mu_product.mul_(mu)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                _lerp_(exp_avg, grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).add_(grad * (1 - beta2) * grad)
                denom = (exp_avg_sq / (1 - beta2 ** step)).sqrt() + eps
                product = mu_product.item()
                p.add_(grad / denom, alpha=-lr * (1.0 - mu) / (1.0 - product))
                p.add_(exp_avg / denom, alpha=-lr * mu_next / (1.0 - product * mu_next))
        return loss


class RAdam(_AdamFamily):
    """RAdam; per step t (torch's formula):

        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g;  m_hat = m / (1 - beta1**t)
        rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
        p = p - lr * m_hat * r_t * sqrt(1 - beta2**t) / (sqrt(v) + eps)   when rho_t > 5, with the rectification
            r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t));  else p = p - lr * m_hat
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        self._check(lr, betas, eps, weight_decay, differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self, closure=None):
        """Update every parameter that has a gradient; return closure()'s loss if a closure is given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr, eps = group["lr"], group["eps"]
            beta1, beta2 = group["betas"]
            for p, grad in self._params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = tensor(0.0)
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                step = _step_count(state)
                grad = self._decayed_grad(p, grad, group)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                _lerp_(exp_avg, grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).add_(grad * (1 - beta2) * grad)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                corrected = exp_avg / bias_correction1
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    adaptive = (bias_correction2 ** 0.5) / (exp_avg_sq.sqrt() + eps)
                    p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
                else:
                    p.add_(corrected * lr, alpha=-1.0)
        return loss
