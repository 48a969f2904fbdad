"""torch.optim.Adagrad."""
from .optimizer import _GroupwiseOptimizer, _descent_grad


def _sum_buffer(group):
    return (("sum", group["initial_accumulator_value"]),)


class Adagrad(_GroupwiseOptimizer):
    """Adagrad; per step t (torch's formula):

        g = -grad if maximize else grad;  g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g;  p = p - clr * g / (sqrt(s) + eps)
    The sums start at initial_accumulator_value and are made when the optimizer is built.
    """

    _CHECKED = ("lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps", "differentiable")
    _SETSTATE_DEFAULTS = {"maximize": False}

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, _sum_buffer(group))

    def share_memory(self):
        pass  # one process: nothing to share

    def _update_group(self, group):
        lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
        # the sums are made here only for params added with add_param_group
        for p, grad, state, step in self._stepped_params(group, _sum_buffer(group)):
            grad = _descent_grad(p, grad, group)
            clr = lr / (1 + (step - 1) * lr_decay)
            state_sum = state["sum"]
            state_sum.add_(grad * grad)
            p.add_(grad / (state_sum.sqrt() + eps), alpha=-clr)
