"""torch.optim.SGD: stochastic gradient descent with momentum, dampening, Nesterov, weight decay."""
import functools

from .. import core
from . import _jitted
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
            if momentum != 0:
                buf = self.state[p].get("momentum_buffer")
                if buf is not None and _jitted.applies(group, (p, buf), (d_p,)):
                    wd = group["weight_decay"]
                    # (flags as bools: lr and momentum may be tensors, which the program cache would key by identity)
                    program = _program(bool(group["maximize"]), bool(wd != 0), bool(nesterov), bool(1 - dampening == 1),
                                       bool(momentum == 1), bool(-lr == 1))
                    _jitted.run(program, (p, buf), (d_p,), (wd, momentum, 1 - dampening, -lr), (1, 2))
                    continue  # (versions: add_; mul_ and add_)
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


@functools.cache
def _program(maximize, decay, nesterov, unit_dampening, unit_momentum, unit_lr):
    """A momentum step as one jit'd program (optim/_jitted.py): the core ops of the eager update in its order,
    add's alpha of 1 multiplying by nothing as there (the unit_* flags), so the same bits."""
    def scaled(x, alpha, unit):
        return x if unit else core.mul(x, alpha)

    def update(p, buf, g, wd, momentum, one_minus_dampening, neg_lr):
        if maximize:
            g = core.neg(g)
        if decay:
            g = core.add(g, core.mul(p, wd))
        buf = core.add(core.mul(buf, momentum), scaled(g, one_minus_dampening, unit_dampening))
        d = core.add(g, scaled(buf, momentum, unit_momentum)) if nesterov else buf
        return core.add(p, scaled(d, neg_lr, unit_lr)), buf
    return _jitted.jit(update)
