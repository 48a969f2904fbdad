"""torch.optim.SGD: stochastic gradient descent with momentum, dampening, Nesterov, weight decay."""
from .optimizer import _GroupwiseOptimizer, _descent_grad


class SGD(_GroupwiseOptimizer):
    """SGD; per step (torch's formula):

        g = -grad if maximize else grad;  g = g + weight_decay * p
        b = g.clone() on the first step, else momentum * b + (1 - dampening) * g
        g = g + momentum * b if nesterov else b          (when momentum != 0)
        p = p - lr * g
    """

    _CHECKED = ("lr", "momentum", "weight_decay", "nesterov", "differentiable")
    _NAN_PASSES = True
    _SETSTATE_DEFAULTS = {"nesterov": False, "maximize": False}

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr, momentum, dampening, nesterov = group["lr"], group["momentum"], group["dampening"], group["nesterov"]
        for p, d_p in self._params_with_grad(group):
            d_p = _descent_grad(p, d_p, group)
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = d_p.detach().clone()
                else:
                    buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
                d_p = d_p.add(buf, alpha=momentum) if nesterov else buf
            p.add_(d_p, alpha=-lr)
