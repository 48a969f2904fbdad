"""torch.optim.Rprop and ASGD."""
from ..eager.creation import full_like, ones_like, tensor, zeros_like
from ..eager.ops import where
from .optimizer import Optimizer, _call_closure, _no_grad_step, _step_count


class Rprop(Optimizer):
    """Resilient backprop; per step (torch's formula):

        s = sign(g * prev);  step_size *= etaplus where s > 0, etaminus where s < 0;  clamped to step_sizes
        g = 0 where s < 0;  p = p - sign(g) * step_size;  prev = g
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        if differentiable:
            raise NotImplementedError("Rprop(differentiable=True) is not supported")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    _SETSTATE_DEFAULTS = {"maximize": False}  # group keys older state may lack

    @_no_grad_step
    def step(self, closure=None):
        """Update every parameter that has a gradient; return closure()'s loss if a closure is given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            for p, grad in self._params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = tensor(0.0)
                    state["prev"] = zeros_like(p)
                    state["step_size"] = full_like(grad, group["lr"])
                _step_count(state)
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
        return loss


class ASGD(Optimizer):
    """Averaged SGD; per step t (torch's formula; eta and mu are float32 state tensors):

        g = g + weight_decay * p;  p = p * (1 - lambd * eta) - eta * g
        ax = ax + (p - ax) * mu  (ax = p while mu == 1)
        eta = lr / (1 + lambd * lr * t) ** alpha;  mu = 1 / max(1, t - t0)
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None, maximize=False,
                 differentiable=False, capturable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if differentiable:
            raise NotImplementedError("ASGD(differentiable=True) is not supported")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    _SETSTATE_DEFAULTS = {"maximize": False}  # group keys older state may lack

    @_no_grad_step
    def step(self, closure=None):
        """Update every parameter that has a gradient; return closure()'s loss if a closure is given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
            weight_decay = group["weight_decay"]
            for p, grad in self._params_with_grad(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = tensor(0.0)
                    state["eta"] = tensor(float(lr))
                    state["mu"] = tensor(1.0)
                    state["ax"] = zeros_like(p)
                if group["maximize"]:
                    grad = -grad
                step = _step_count(state)
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                eta, mu, ax = state["eta"], state["mu"], state["ax"]
                eta_value = eta.item()
                p.mul_(1 - lambd * eta_value)
                p.add_(grad, alpha=-eta_value)
                if mu.item() != 1:
                    ax.add_((p - ax) * mu.to(p.dtype))
                else:
                    ax.copy_(p)
                eta.fill_(lr / ((1 + lambd * lr * step) ** alpha))
                mu.fill_(1 / max(1, step - t0))
        return loss
