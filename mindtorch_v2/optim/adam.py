"""torch.optim.Adam and AdamW (decoupled weight decay)."""
import math

from ..eager.creation import tensor, zeros_like
from ..eager.ops import maximum
from .optimizer import Optimizer, _call_closure, _lerp_, _no_grad_step, _step_count


class Adam(Optimizer):
    """Adam; per step t (torch's formula):

        g = -grad if maximize else grad;  g = g + weight_decay * p
            (with decoupled_weight_decay, as AdamW always has, p *= 1 - lr * wd instead)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g;  vmax = max(vmax, v) with amsgrad
        denom = sqrt(v or vmax) / sqrt(1 - beta2**t) + eps
        p = p - lr / (1 - beta1**t) * m / denom
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
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
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    _SETSTATE_DEFAULTS = {"amsgrad": False, "maximize": False, "decoupled_weight_decay": False}  # group keys older state may lack

    @_no_grad_step
    def step(self, closure=None):
        """Update every parameter that has a gradient; return closure()'s loss if a closure is given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
            beta1, beta2 = group["betas"]
            amsgrad, maximize = group["amsgrad"], group["maximize"]
            decoupled = group["decoupled_weight_decay"]
            for p, grad in self._params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = tensor(0.0)
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                    if amsgrad:
                        state["max_exp_avg_sq"] = zeros_like(p)
                if maximize:
                    grad = -grad
                step = _step_count(state)
                if weight_decay != 0 and not decoupled:
                    grad = grad.add(p, alpha=weight_decay)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                _lerp_(exp_avg, grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).add_(grad * (1 - beta2) * grad)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
                if amsgrad:
                    max_sq = state["max_exp_avg_sq"]
                    max_sq.copy_(maximum(max_sq, exp_avg_sq))
                    denom = max_sq.sqrt() / bias_correction2_sqrt + eps
                else:
                    denom = exp_avg_sq.sqrt() / bias_correction2_sqrt + eps
                if weight_decay != 0 and decoupled:
                    # torch decays first; nothing in between reads p, and decaying here keeps fewer
                    # parameter-sized temporaries alive at once (fewer fresh pages from the allocator)
                    p.mul_(1 - lr * weight_decay)
                p.add_(exp_avg / denom, alpha=-(lr / bias_correction1))
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay: p *= 1 - lr * weight_decay before the Adam update (default 1e-2)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         foreach=foreach, maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True  # AdamW always decouples, also for state saved by Adam
