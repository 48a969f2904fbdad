"""torch.optim.Adadelta and Adamax."""
from ..eager.creation import tensor, zeros_like
from ..eager.ops import maximum
from .optimizer import Optimizer, _call_closure, _lerp_, _no_grad_step, _step_count


def _check(lr, eps, weight_decay):
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adadelta(Optimizer):
    """Adadelta; per step (torch's formula):

        g = -grad if maximize else grad;  g = g + weight_decay * p
        v = rho * v + (1 - rho) * g * g
        delta = sqrt(u + eps) / sqrt(v + eps) * g;  u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check(lr, eps, weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if differentiable:
            raise NotImplementedError("Adadelta(differentiable=True) is not supported")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    _SETSTATE_DEFAULTS = {"maximize": False}  # group keys older state may lack

    @_no_grad_step
    def step(self, closure=None):
        """Update every parameter that has a gradient; return closure()'s loss if a closure is given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr, rho, eps = group["lr"], group["rho"], group["eps"]
            weight_decay, maximize = group["weight_decay"], group["maximize"]
            for p, grad in self._params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = tensor(0.0)
                    state["square_avg"] = zeros_like(p)
                    state["acc_delta"] = zeros_like(p)
                _step_count(state)
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                square_avg.mul_(rho).add_(grad * (1 - rho) * grad)
                std = (square_avg + eps).sqrt()
                delta = (acc_delta + eps).sqrt() / std * grad
                acc_delta.mul_(rho).add_(delta * (1 - rho) * delta)
                p.add_(delta, alpha=-lr)
        return loss


class Adamax(Optimizer):
    """Adamax (Adam with the infinity norm); per step t (torch's formula):

        g = -grad if maximize else grad;  g = g + weight_decay * p
        m = lerp(m, g, 1 - beta1);  u = max(beta2 * u, |g| + eps)
        p = p - lr / (1 - beta1**t) * m / u
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check(lr, eps, weight_decay)
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if differentiable:
            raise NotImplementedError("Adamax(differentiable=True) is not supported")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    _SETSTATE_DEFAULTS = {"maximize": False}  # group keys older state may lack

    @_no_grad_step
    def step(self, closure=None):
        """Update every parameter that has a gradient; return closure()'s loss if a closure is given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
            beta1, beta2 = group["betas"]
            maximize = group["maximize"]
            for p, grad in self._params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = tensor(0.0)
                    state["exp_avg"] = zeros_like(p)
                    state["exp_inf"] = zeros_like(p)
                if maximize:
                    grad = -grad
                step = _step_count(state)
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                _lerp_(exp_avg, grad, 1 - beta1)
                exp_inf.copy_(maximum(exp_inf.mul_(beta2), grad.abs() + eps))
                clr = lr / (1 - beta1 ** step)
                p.add_(exp_avg / exp_inf, alpha=-clr)
        return loss
