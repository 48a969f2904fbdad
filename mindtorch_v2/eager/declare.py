"""How the torch surface is declared: each op once, where it is defined.

    @torch_op(inplace=True, out=True)
    def add(input, other, *, alpha=1):
        ...

declares, from that one def:
  * torch.add: the function (with out=True it also takes `out=`); the family module lists it in
    `__all__` and mindtorch_v2/__init__.py imports it by name;
  * Tensor.add: the same function (`self` is `input`);
  * Tensor.add_: computed out of place, checked, then written back once (writeback.inplace_method).
method=False declares a function only (torch.cat); `@tensor_method` declares a method that is not a torch
function with self first (an operator such as __radd__, Tensor.to, Tensor.view), under its def's name or
the names given. There is no other place where Tensor gets a method: `grep -n "def add\\b"` finds the
declaration, and inspect.getsource (what debuggers and `??` show) lands on it, also for `t.add_`, whose
wrapper's __wrapped__ is the def.
"""
import functools
import warnings

from . import grad_mode
from .tensor import Tensor
from .writeback import check_result_cast, inplace_method


class NamedConstant:
    """A torch constant known by name (torch.strided, torch.channels_last, ...): printed `torch.<name>`,
    pickled by name so that unpickling gives the module-level object of that name back."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name


def tensor_method(fn=None, *names):
    """Set fn on Tensor under its own name (or under `names`); returns fn. Usable as a decorator."""
    if isinstance(fn, str):  # @tensor_method("swapdims", ...) on a def
        return lambda f: tensor_method(f, fn, *names)

    def install(f):
        for name in names or (f.__name__,):
            setattr(Tensor, name, f)
        return f
    return install if fn is None else install(fn)


def torch_op(fn=None, *, name=None, method=True, inplace=False, out=False, aliases=()):
    """Declare a torch op (see the module docstring); returns the torch function.

    name: the op's name when fn was built by a helper (`neg = torch_op(_unary(core.neg), name="neg")`);
    aliases: other torch names of the same op (their methods and in-place methods are declared too; the
    module binds the function names, `negative = neg`)."""
    def declare(f):
        if name is not None:
            f.__name__ = f.__qualname__ = name
        for n in (f.__name__,) + tuple(aliases):
            if method:
                setattr(Tensor, n, f)
            if inplace:
                setattr(Tensor, n + "_", inplace_method(f, n + "_"))
        return with_out(f) if out else f
    return declare if fn is None else declare(fn)


def with_out(fn):
    """fn taking `out=`: the result is written into that tensor (resized if its shape differs), as torch's
    out= variants do; autograd does not record them."""
    @functools.wraps(fn)
    def op(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        res = fn(*args, **kwargs)
        if isinstance(res, tuple):  # (values, indices), (Q, R), ...: out= is a tuple of as many tensors
            return write_out_tuple(fn.__name__, out, res)
        if not isinstance(out, Tensor):
            raise TypeError(f"{fn.__name__}(): argument 'out' must be Tensor, not {type(out).__name__}")
        if isinstance(res, Tensor) and res._rg and grad_mode.tape_enabled():
            raise RuntimeError(f"{fn.__name__}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        return write_out(fn.__name__, out, res)
    return op


def write_out_tuple(name, out, res):
    """out=(a, b, ...) for an op returning a tuple of tensors: each written as a single out= would be; the
    result keeps its type (a torch.return_types tuple)."""
    if not (isinstance(out, (tuple, list)) and len(out) == len(res) and all(isinstance(o, Tensor) for o in out)):
        raise TypeError(f"{name}(): argument 'out' must be tuple of {len(res)} Tensors, not {type(out).__name__}")
    if grad_mode.tape_enabled() and any(isinstance(r, Tensor) and r._rg for r in res):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    written = [write_out(name, o, r) for o, r in zip(out, res)]
    return type(res)(written) if hasattr(type(res), "n_fields") else tuple(written)  # a return_types structseq


def write_out(name, out, res):
    """Write result `res` into `out` as torch does for out=: same-kind cast, resize on a shape mismatch."""
    check_result_cast(res.dtype, out.dtype)
    if out._shape != res._shape:
        if out.numel():
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out._shape)}, "
                          f"which does not match the required output shape {list(res._shape)}. This behavior is "
                          "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                          "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                          "elements with t.resize_(0).", UserWarning, stacklevel=3)
        out.data = res.detach().to(out.dtype).clone()
        out._storage.version.value += 1
        return out
    with grad_mode.no_grad():
        out.copy_(res)
    return out
