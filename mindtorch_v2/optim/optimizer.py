"""torch.optim.Optimizer: parameter groups, per-parameter state, state dicts, step hooks.

Subclasses write `step` with tensor in-place ops; `_no_grad_step` runs it with
gradient recording off (the closure, if any, is called with it back on), so the
parameters and their views are updated in place and their versions bump like torch's.
"""
import functools
import warnings
from collections import defaultdict
from itertools import chain

from ..eager.autograd.graph import RemovableHandle
from ..eager.creation import full_like, tensor, zeros_like
from ..eager.grad_mode import enable_grad, no_grad
from ..eager.tensor import Tensor
from ..core.dtypes import float64
from .._compile import is_compiling
from . import _jitted


class _RequiredParameter:
    """Marks a default every parameter group must set itself."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _no_grad_step(step):
    """Run an optimizer's step with gradient recording off."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        with no_grad():
            return step(self, *args, **kwargs)
    return wrapper


def _call_closure(closure):
    """The loss from closure() (recorded with grad on), or None."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


def _with_step_hooks(step):
    """step wrapped to run the registered pre/post hooks once per outermost call."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        if getattr(self, "_in_step", False):
            return step(self, *args, **kwargs)
        for hook in list(self._step_pre_hooks):
            out = hook(self, args, kwargs)
            if out is not None:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError(f"optimizer step pre-hook must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {out}.")
                args, kwargs = out
        self._in_step = True
        try:
            result = step(self, *args, **kwargs)
        finally:
            self._in_step = False
        for hook in list(self._step_post_hooks):
            hook(self, args, kwargs)
        return result
    wrapper._mt_step_hooks = True
    return wrapper


def _copy_state(value):
    """A copy of an optimizer state value: tensors cloned (copy-on-write), containers rebuilt."""
    if isinstance(value, Tensor):
        return value.detach().clone()
    if isinstance(value, dict):
        return {k: _copy_state(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_copy_state(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value


def _nonnegative(message):
    """A check rejecting values below zero, with torch's message."""
    def check(value, owner, defaults):
        # torch's SGD tests `value < 0.0`, which lets nan through; the others test `not 0.0 <= value`
        if value < 0.0 if owner._NAN_PASSES else not 0.0 <= value:
            raise ValueError(message.format(value))
    return check


def _check_betas(betas, owner, defaults):
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")


def _check_rho(rho, owner, defaults):
    if not 0.0 <= rho <= 1.0:
        raise ValueError(f"Invalid rho value: {rho}")


def _check_etas(etas, owner, defaults):
    if not 0.0 < etas[0] < 1.0 < etas[1]:
        raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")


def _check_nesterov(nesterov, owner, defaults):
    if nesterov and (defaults["momentum"] <= 0 or defaults["dampening"] != 0):
        raise ValueError("Nesterov momentum requires a momentum and zero dampening")


def _check_not_differentiable(differentiable, owner, defaults):
    if differentiable:
        raise NotImplementedError(f"{owner.__name__}(differentiable=True) is not supported")


# torch's hyperparameter checks and messages, by defaults key
_HYPERPARAMETER_CHECKS = {
    "lr": _nonnegative("Invalid learning rate: {}"),
    "eps": _nonnegative("Invalid epsilon value: {}"),
    **{name: _nonnegative(f"Invalid {name} value: {{}}")
       for name in ("weight_decay", "momentum", "lr_decay", "initial_accumulator_value", "momentum_decay", "alpha")},
    "betas": _check_betas,
    "rho": _check_rho,
    "etas": _check_etas,
    "nesterov": _check_nesterov,
    "differentiable": _check_not_differentiable,
}


def _check_hyperparameters(owner, defaults):
    """Raise torch's error for the first invalid value among owner._CHECKED, in that order."""
    for name in owner._CHECKED:
        _HYPERPARAMETER_CHECKS[name](defaults[name], owner, defaults)


_STATE_DICT_HOOKS = ("_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks", "_optimizer_load_state_dict_post_hooks")


class Optimizer:
    """Base class of all optimizers: `param_groups`, `state`, `step`, `zero_grad`, state dicts."""

    _SETSTATE_DEFAULTS = {}  # per subclass: param_group keys to fill in when unpickling older state
    _CHECKED = ()  # per subclass: the defaults keys to validate (see _HYPERPARAMETER_CHECKS), in torch's order
    _NAN_PASSES = False  # SGD's checks let a nan through, as torch's do

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_mt_step_hooks", False):
            cls.step = _with_step_hooks(step)

    def __init__(self, params, defaults):
        _check_hyperparameters(type(self), defaults)
        self.defaults = defaults
        self._step_pre_hooks = []
        self._step_post_hooks = []
        for name in _STATE_DICT_HOOKS:
            setattr(self, name, [])
        self._in_step = False
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {_typename(params)}")
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def add_param_group(self, param_group):
        """Add a group (a dict with "params" and optional per-group options) to param_groups."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)
        if params and all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) for p in params):
            param_group["param_names"] = [name for name, _ in params]
            params = [p for _, p in params]
        param_group["params"] = params
        for param in params:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        if len({id(p) for p in params}) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ------------------------------------------------------------------
    # gradients and steps

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized tensors (to None, or to zeros in place)."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def step(self, closure=None):
        """Perform one optimization step (subclasses implement it)."""
        raise NotImplementedError

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) runs before each step; it may return (new_args, new_kwargs)."""
        self._step_pre_hooks.append(hook)
        return RemovableHandle(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) runs after each step."""
        self._step_post_hooks.append(hook)
        return RemovableHandle(self._step_post_hooks, hook)

    def _register(self, name, hook, prepend):
        hooks = self.__dict__.setdefault(name, [])
        if prepend:
            hooks.insert(0, hook)
        else:
            hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer) runs before state_dict() builds its result."""
        return self._register("_optimizer_state_dict_pre_hooks", hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) runs on state_dict()'s result; it may return a replacement."""
        return self._register("_optimizer_state_dict_post_hooks", hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) runs before load_state_dict(); it may return the state_dict to load."""
        return self._register("_optimizer_load_state_dict_pre_hooks", hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer) runs after load_state_dict()."""
        return self._register("_optimizer_load_state_dict_post_hooks", hook, prepend)

    def _init_state(self, p, buffers=(), scalars=()):
        """self.state[p], set up when empty: a "step" count of 0, then each (name, value) of `scalars` as a
        float32 scalar tensor, then each of `buffers` like p: a name for zeros, or a (name, fill value) pair."""
        state = self.state[p]
        if len(state) == 0:
            state["step"] = tensor(0.0)
            for name, value in scalars:
                state[name] = tensor(float(value))
            for name in buffers:
                if type(name) is str:
                    state[name] = zeros_like(p)
                else:
                    name, fill = name
                    state[name] = full_like(p, fill)
        return state

    def _stepped_params(self, group, buffers=(), scalars=()):
        """Yield (param, grad, state, step) for each param of a group with a gradient: its state set up on its
        first step (see _init_state), and the step count advanced to `step`."""
        for p, g in self._params_with_grad(group):
            state = self._init_state(p, buffers, scalars)
            yield p, g, state, _step_count(state)

    def _params_with_grad(self, group):
        """(param, grad) pairs of a group, skipping params without a gradient."""
        out = []
        for p in group["params"]:
            g = p.grad
            if g is not None:
                out.append((p, g))
        return out

    # ------------------------------------------------------------------
    # state dicts

    def state_dict(self):
        """{"state": {index: {...}}, "param_groups": [...]}: params named by their position, state tensors cloned."""
        for hook in list(self.__dict__.get("_optimizer_state_dict_pre_hooks", ())):
            hook(self)
        out = self._state_dict()
        for hook in list(self.__dict__.get("_optimizer_state_dict_post_hooks", ())):
            res = hook(self, out)
            if res is not None:
                out = res
        return out

    def _state_dict(self):
        index = {}
        groups = []
        start = 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): _copy_state(v) for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore state and hyperparameters saved by state_dict() (the current params are kept)."""
        for hook in list(self.__dict__.get("_optimizer_load_state_dict_pre_hooks", ())):
            res = hook(self, state_dict)
            if res is not None:
                state_dict = res
        self._load_state_dict(state_dict)
        for hook in list(self.__dict__.get("_optimizer_load_state_dict_post_hooks", ())):
            hook(self)

    def _load_state_dict(self, state_dict):
        groups = self.param_groups
        saved_groups = [_copy_state(g) for g in state_dict["param_groups"]]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = {key: _cast_state(param, key, val) for key, val in v.items()} \
                    if isinstance(v, dict) else _copy_state(v)
            else:
                state[k] = _copy_state(v)
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self.__setstate__({"state": state, "param_groups": new_groups})

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_step_pre_hooks", [])
        self.__dict__.setdefault("_step_post_hooks", [])
        for name in _STATE_DICT_HOOKS:
            self.__dict__.setdefault(name, [])
        self.__dict__.setdefault("_in_step", False)
        for group in self.__dict__.get("param_groups", ()):
            for key, value in type(self)._SETSTATE_DEFAULTS.items():
                group.setdefault(key, value)
        for s in self.state.values():
            if isinstance(s, dict) and "step" in s and not isinstance(s["step"], Tensor):
                s["step"] = tensor(float(s["step"]))  # older checkpoints kept the step as a number

    def __repr__(self):
        out = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    out += f"    {key}: {group[key]}\n"
        return out + ")"


class _GroupwiseOptimizer(Optimizer):
    """An optimizer whose step updates each param group by itself: subclasses write _update_group(group)."""

    @_no_grad_step
    def step(self, closure=None):
        """Update every parameter that has a gradient; return closure()'s loss if a closure is given."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            self._update_group(group)
        return loss

    def _update_group(self, group):
        raise NotImplementedError


def _cast_state(param, key, value):
    """A saved state value for `param`: tensors cloned, and cast to its dtype/device (the step count kept)."""
    if isinstance(value, Tensor):
        value = value.detach().clone()
        if key == "step":
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)
    if isinstance(value, dict):
        return {k: _cast_state(param, k, v) for k, v in value.items()}
    return _copy_state(value)


def _typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    return type(obj).__module__ + "." + type(obj).__qualname__ if type(obj).__module__ != "builtins" \
        else type(obj).__qualname__


def _lerp_(t, end, weight):
    """t.lerp_(end, weight) with torch's two branches (which one rounds depends on |weight| < 0.5)."""
    if abs(weight) < 0.5:
        return t.add_((end - t) * weight)
    return t.copy_(end - (end - t) * (1 - weight))


def _descent_grad(p, grad, group, decoupled_weight_decay=False):
    """The gradient a step follows: negated with group["maximize"], plus weight_decay * p (L2); with
    decoupled_weight_decay, p is shrunk in place by 1 - lr * weight_decay instead and grad kept (the rule is the
    jit'd updates' too: _jitted.descent)."""
    weight_decay = group["weight_decay"]
    decays = weight_decay != 0
    if decays and decoupled_weight_decay:
        p.mul_(1 - group["lr"] * weight_decay)
    return _jitted.descent(p, grad, weight_decay, group["maximize"], decays and not decoupled_weight_decay)


def _update_moments(state, grad, beta1, beta2):
    """Adam's moment estimates, updated in place and returned: exp_avg = lerp(exp_avg, g, 1 - beta1),
    exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g * g."""
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    _lerp_(exp_avg, grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).add_(grad * (1 - beta2) * grad)
    return exp_avg, exp_avg_sq


def _get_value(t):
    """A 0-d state tensor's number, or while torch.compile traces the tensor itself (torch's _get_value): the
    compiled program reads the state instead of baking one value in."""
    return t if is_compiling() else t.item()


def _step_count(state):
    """Increment the state's step tensor; return the new count as a float (as a float64 0-d tensor while
    torch.compile traces, as torch's `_get_value` does, so the compiled program reads the count instead of
    baking in one value: the arithmetic on it is then the same double-precision math)."""
    step_t = state["step"]
    step_t.add_(1)
    if is_compiling():
        return step_t.to(float64)
    return step_t.item()
