"""torch.compile and OptimizedModule (torch._dynamo.eval_frame's names)."""
from .._compile import CompiledFunction
from ..nn.modules.module import Module

__all__ = ["compile", "OptimizedModule"]

_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,  # noqa: A001
            disable=False):
    """model (a function or an nn.Module) traced into the staging IR and run compiled, per guard key (shapes,
    dtypes, requires_grad, grad mode, module flags, optimizer hyperparameters); code that cannot be traced
    runs eagerly with a warning, or raises torch._dynamo.exc.Unsupported under fullgraph=True. Called with
    no model, returns a decorator. `backend`, `mode` and `options` are accepted (one compiler here)."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if isinstance(backend, str) and backend not in _BACKENDS:
        raise ValueError(f"Invalid backend: {backend!r}; this build compiles with {list(_BACKENDS)}")
    if not callable(model):
        raise RuntimeError(f"torch.compile: expected a callable (a function or an nn.Module), got "
                           f"{type(model).__name__}")
    if disable:
        return model
    opts = dict(fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options)
    if isinstance(model, Module):
        return OptimizedModule(model, CompiledFunction(model.__call__, **opts))
    return CompiledFunction(model, **opts)


class OptimizedModule(Module):
    """A module whose calls run compiled: `_orig_mod` is the module (its parameters, state_dict keys under
    `_orig_mod.`, attributes read through); calling this runs `_orig_mod(...)` compiled."""

    def __init__(self, mod, compiled):
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled_call", compiled)
        object.__setattr__(self, "training", mod.training)

    def __call__(self, *args, **kwargs):
        return self._compiled_call(*args, **kwargs)

    def forward(self, *args, **kwargs):
        return self._compiled_call(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)

    def __repr__(self):
        return f"OptimizedModule({self._orig_mod!r})"
