"""torch.optim.Adagrad."""
from ..eager.creation import full_like, tensor
from .optimizer import Optimizer, _call_closure, _no_grad_step, _step_count


class Adagrad(Optimizer):
    """Adagrad; per step t (torch's formula):

        g = -grad if maximize else grad;  g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g;  p = p - clr * g / (sqrt(s) + eps)
    The sums start at initial_accumulator_value and are made when the optimizer is built.
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if differentiable:
            raise NotImplementedError("Adagrad(differentiable=True) is not supported")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p, group):
        state = self.state[p]
        state["step"] = tensor(0.0)
        state["sum"] = full_like(p, group["initial_accumulator_value"])
        return state

    _SETSTATE_DEFAULTS = {"maximize": False}  # group keys older state may lack

    def share_memory(self):
        pass  # one process: nothing to share

    @_no_grad_step
    def step(self, closure=None):
        """Update every parameter that has a gradient; return closure()'s loss if a closure is given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
            weight_decay, maximize = group["weight_decay"], group["maximize"]
            for p, grad in self._params_with_grad(group):
                state = self.state[p]
                if "sum" not in state:  # a param added with add_param_group after construction
                    state = self._init_state(p, group)
                step = _step_count(state)
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                clr = lr / (1 + (step - 1) * lr_decay)
                state_sum = state["sum"]
                state_sum.add_(grad * grad)
                p.add_(grad / (state_sum.sqrt() + eps), alpha=-clr)
        return loss
