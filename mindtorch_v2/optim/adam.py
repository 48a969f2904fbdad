"""torch.optim.Adam."""
import functools
import math

from .. import core
from . import _jitted
from .optimizer import _GroupwiseOptimizer

_BUFFERS = ("exp_avg", "exp_avg_sq")
_AMSGRAD_BUFFERS = _BUFFERS + ("max_exp_avg_sq",)


class Adam(_GroupwiseOptimizer):
    """Adam; per step t (torch's formula):

        g = -grad if maximize else grad;  g = g + weight_decay * p
            (with decoupled_weight_decay, as AdamW always has, p *= 1 - lr * wd instead)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g;  vmax = max(vmax, v) with amsgrad
        denom = sqrt(v or vmax) / sqrt(1 - beta2**t) + eps
        p = p - lr / (1 - beta1**t) * m / denom
    """

    _CHECKED = ("lr", "eps", "betas", "weight_decay", "differentiable")
    _SETSTATE_DEFAULTS = {"amsgrad": False, "maximize": False, "decoupled_weight_decay": False}  # group keys older state may lack

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        amsgrad, decoupled = group["amsgrad"], group["decoupled_weight_decay"]
        buffers = _AMSGRAD_BUFFERS if amsgrad else _BUFFERS
        for p, grad, state, step in self._stepped_params(group, buffers):
            # the step's scalars first: under torch.compile they are 0-d ops, and computed before the tensor
            # ops they leave those one unbroken run of same-shape arithmetic, which jit fuses into one loop
            # (cast to p's dtype here, as the products below would cast them: the same numbers)
            bias_correction1 = 1 - beta1 ** step
            if type(step) is float:
                bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
                step_size = -lr / bias_correction1  # = -(lr / bc1) exactly (division is sign-symmetric)
            else:  # a traced step count (torch.compile): the same double-precision math on 0-d tensors
                bias_correction2_sqrt = (1 - beta2 ** step).sqrt().to(p.dtype)
                step_size = (-lr / bias_correction1).to(p.dtype)  # one 0-d op fewer than -(lr / bc1)
            wd, weight = group["weight_decay"], 1 - beta1
            small = bool(abs(weight) < 0.5)  # (lerp's branch, and its factor; bool: betas may be tensors)
            update = _update(bool(group["maximize"]), 0 if bool(wd == 0) else 2 if decoupled else 1, small,
                             bool(amsgrad))
            scalars = (1 - lr * wd, wd, weight if small else 1 - weight, beta2, 1 - beta2, bias_correction2_sqrt,
                       eps, step_size)
            # versions as PyTorch's in-place ops: p's mul_ (decoupled decay) and addcdiv_, exp_avg's lerp_,
            # exp_avg_sq's mul_ and addcmul_, max_exp_avg_sq's copy
            _jitted.run(update, group, [p] + [state[b] for b in buffers], (grad,), scalars,
                        (1 + bool(wd != 0 and decoupled), 1, 2, 1))


@functools.cache
def _update(maximize, decay, small_weight, amsgrad):
    """One parameter's update in core ops (the formula in Adam's docstring), run jit'd or on the Tensors by
    optim/_jitted.run. decay: 0 none, 1 L2 (grad + p * wd), 2 decoupled (p * (1 - lr * wd)); small_weight:
    |1 - beta1| < 0.5, the branch of lerp PyTorch takes (m + (g - m) w, else g - (g - m)(1 - w))."""
    def update(p, m, v, *rest):
        vmax = rest[0] if amsgrad else None
        g, keep, wd, lerp_factor, beta2, one_minus_beta2, bc2_sqrt, eps, step_size = rest[1:] if amsgrad else rest
        if decay == 2:
            p = core.mul(p, keep)
        g = _jitted.descent(p, g, wd, maximize, decay == 1)
        if small_weight:  # (lerp_factor: w, or 1 - w)
            m = core.add(m, core.mul(core.sub(g, m), lerp_factor))
        else:
            m = core.sub(g, core.mul(core.sub(g, m), lerp_factor))
        v = core.add(core.mul(v, beta2), core.mul(core.mul(g, one_minus_beta2), g))
        if amsgrad:
            vmax = core.maximum(vmax, v)
        denom = core.add(core.div(core.sqrt(vmax if amsgrad else v), bc2_sqrt), eps)
        p = core.add(p, core.mul(core.div(m, denom), step_size))
        return (p, m, v, vmax) if amsgrad else (p, m, v)
    return update
