"""torch.optim.RMSprop (optionally centered, with momentum)."""
from .optimizer import _GroupwiseOptimizer, _descent_grad, _lerp_


class RMSprop(_GroupwiseOptimizer):
    """RMSprop; per step (torch's formula):

        g = -grad if maximize else grad;  g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        avg = sqrt(v - ga * ga) with ga = lerp(ga, g, 1 - alpha) when centered, else sqrt(v);  avg = avg + eps
        b = momentum * b + g / avg;  p = p - lr * b        (momentum > 0)
        p = p - lr * g / avg                                (otherwise)
    """

    _CHECKED = ("lr", "eps", "momentum", "weight_decay", "alpha", "differentiable")
    _SETSTATE_DEFAULTS = {"momentum": 0, "centered": False, "maximize": False}

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        momentum, centered = group["momentum"], group["centered"]
        buffers = ("square_avg",) + ("momentum_buffer",) * (momentum > 0) + ("grad_avg",) * centered
        for p, grad, state, _ in self._stepped_params(group, buffers):
            grad = _descent_grad(p, grad, group)
            square_avg = state["square_avg"]
            square_avg.mul_(alpha).add_(grad * (1 - alpha) * grad)
            if centered:
                grad_avg = _lerp_(state["grad_avg"], grad, 1 - alpha)
                avg = (square_avg - grad_avg * grad_avg).sqrt()
            else:
                avg = square_avg.sqrt()
            avg = avg + eps
            if momentum > 0:
                buf = state["momentum_buffer"]
                buf.mul_(momentum).add_(grad / avg)
                p.add_(buf, alpha=-lr)
            else:
                p.add_(grad / avg, alpha=-lr)
