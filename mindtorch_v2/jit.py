"""torch.jit: the checks and decorators scripts and libraries use around TorchScript.

Choice: eager pass-through. There is no TorchScript compiler here, so `script(obj)` returns the
function or module unchanged and `trace(fn, example_inputs)` runs it once on the example inputs (so a
function that cannot run on them fails here, as tracing would) and returns it unchanged. The result
behaves as the eager code does, which is what torch documents for scripted/traced code; what is lost is
only serialization of the program (`save`/`load` of a ScriptModule), which raises.
`is_scripting()` and `is_tracing()` answer False, the truth for eager code.
"""
import builtins
import typing

from .nn.modules.module import Module

__all__ = ["is_scripting", "is_tracing", "script", "trace", "trace_module", "ignore", "unused", "export",
           "interface", "Final", "annotations", "ScriptModule", "ScriptFunction", "Attribute", "save", "load",
           "freeze", "optimize_for_inference", "fork", "wait", "isinstance"]

Final = typing.Final
annotations = typing  # torch.jit.annotations re-exports typing's names for signatures


def is_scripting():
    """Return False: code here runs eagerly, never compiled by TorchScript."""
    return False


def is_tracing():
    """Return False: there is no tracer recording this call."""
    return False


class ScriptModule(Module):
    """The type torch gives scripted modules; nothing here is an instance (script returns the module itself)."""


class ScriptFunction:
    """The type torch gives scripted functions; nothing here is an instance (script returns the function)."""


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Return obj unchanged: eager pass-through (see the module docstring)."""
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-05,
          strict=True, example_kwarg_inputs=None, **kwargs):
    """Run func once on example_inputs (a tuple, or one tensor) and return func unchanged."""
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("example_kwarg_inputs and example_inputs can not both be None")
    args = example_inputs if builtins.isinstance(example_inputs, tuple) else (() if example_inputs is None else
                                                                      (example_inputs,))
    func(*args, **(example_kwarg_inputs or {}))
    return func


def trace_module(mod, inputs, **kwargs):
    """Run each named method of mod once on its inputs ({name: args}) and return mod unchanged."""
    for name, args in inputs.items():
        getattr(mod, name)(*(args if builtins.isinstance(args, tuple) else (args,)))
    return mod


def ignore(drop=False, **kwargs):
    """Leave a function to Python (with or without arguments): return it unchanged."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """Return fn unchanged (TorchScript would replace it with a raising stub)."""
    return fn


def export(fn):
    """Return fn unchanged (marks a method to compile in TorchScript)."""
    return fn


def interface(obj):
    """Return obj unchanged (declares a TorchScript interface)."""
    return obj


def Attribute(value, type=None):  # noqa: N802,A002 (torch's names)
    """Return value: the type annotation only matters to TorchScript."""
    return value


def isinstance(obj, target_type):  # noqa: A001 (torch.jit.isinstance)
    """Return builtins.isinstance(obj, target_type), with typing containers (List[int], ...) checked by origin."""
    return builtins.isinstance(obj, typing.get_origin(target_type) or target_type)


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Return mod unchanged: there is no TorchScript graph to freeze."""
    return mod


def optimize_for_inference(mod, other_methods=None):
    """Return mod unchanged: there is no TorchScript graph to optimize."""
    return mod


class _Future:
    __slots__ = ("_value",)

    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value


def fork(func, *args, **kwargs):
    """Run func now and return a future holding its result (torch.jit.fork runs it asynchronously)."""
    return _Future(func(*args, **kwargs))


def wait(future):
    """Return the result of a future from fork."""
    return future.wait()


def save(m, f, _extra_files=None):
    """Raise: there is no TorchScript program to serialize (use torch.save of the state_dict)."""
    raise RuntimeError("torch.jit.save is not supported by mindtorch_v2 (no TorchScript); "
                       "save the module's state_dict with torch.save instead")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """Raise: TorchScript archives cannot be loaded without TorchScript."""
    raise RuntimeError("torch.jit.load is not supported by mindtorch_v2 (no TorchScript); "
                       "load a state_dict saved with torch.save instead")
