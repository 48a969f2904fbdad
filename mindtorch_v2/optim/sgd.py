"""torch.optim.SGD: stochastic gradient descent with momentum, dampening, Nesterov, weight decay."""
import functools

from .. import core
from . import _jitted
from ..eager.tensor import Tensor
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
        wd = group["weight_decay"]
        for p, d_p in self._params_with_grad(group):
            buf = self.state[p].get("momentum_buffer") if momentum != 0 else None
            if buf is not None:
                update = _update(bool(group["maximize"]), bool(wd != 0), bool(nesterov), _unit(1 - dampening),
                                 _unit(momentum), _unit(-lr))
                _jitted.run(update, group, (p, buf), (d_p,), (wd, momentum, 1 - dampening, -lr), (1, 2))
                continue  # (versions as PyTorch's in-place ops: add_; mul_ and add_)
            if momentum == 0:
                update = _plain_update(bool(group["maximize"]), bool(wd != 0), _unit(-lr))
                _jitted.run(update, group, (p,), (d_p,), (wd, -lr), (1,))
                continue  # (versions as PyTorch's p.add_)
            # the first step of momentum: the buffer is the gradient
            d_p = self.state[p]["momentum_buffer"] = _descent_grad(p, d_p, group).detach().clone()
            if nesterov:
                d_p = d_p.add(d_p, alpha=momentum)
            p.add_(d_p, alpha=-lr)


def _unit(alpha):
    """Whether add's alpha leaves its term as it is (eager's _scaled: a number equal to 1; a tensor, which may be
    traced or change in place, is always multiplied)."""
    return not isinstance(alpha, Tensor) and type(alpha) is not bool and bool(alpha == 1)


def _scaled(x, alpha, unit):
    return x if unit else core.mul(x, alpha)


@functools.cache
def _plain_update(maximize, decay, unit_lr):
    """A step without momentum, p - lr * g, in core ops (run as _update is: p.add_(g, alpha=-lr) was a multiply and
    an add over the weight, two passes; jit'd with the fast extra it is one loop, the same bits)."""
    def update(p, g, wd, neg_lr):
        return (core.add(p, _scaled(_jitted.descent(p, g, wd, maximize, decay), neg_lr, unit_lr)),)
    return update


@functools.cache
def _update(maximize, decay, nesterov, unit_dampening, unit_momentum, unit_lr):
    """A momentum step in core ops (the formula in SGD's docstring), run jit'd or on the Tensors by
    optim/_jitted.run; an alpha of 1 multiplies by nothing, as add's (the unit_* flags)."""
    def update(p, buf, g, wd, momentum, one_minus_dampening, neg_lr):
        g = _jitted.descent(p, g, wd, maximize, decay)
        buf = core.add(core.mul(buf, momentum), _scaled(g, one_minus_dampening, unit_dampening))
        d = core.add(g, _scaled(buf, momentum, unit_momentum)) if nesterov else buf
        return core.add(p, _scaled(d, neg_lr, unit_lr)), buf
    return update
