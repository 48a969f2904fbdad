"""torch.library.opcheck: test that a custom op is registered correctly on sample inputs.

The checks PyTorch documents, as they apply here:
  test_schema                 the op mutates only what mutates_args declares (the kernel itself raises
                              on an undeclared mutation) and declared mutations happen; outputs alias no input
  test_autograd_registration  with inputs requiring grad, the op records a backward (registered formula)
  test_faketensor             the fake run on meta copies of the inputs gives the real outputs' shapes
                              and dtypes
  test_aot_dispatch_static/_dynamic   the op under the functional core (torch.func.vjp) gives the eager
                              outputs and, with register_autograd, the eager gradients
"""
import numpy as np

from .. import core
from ..core.pytree import tree_flatten, tree_map
from ..eager import grad_mode
from ..eager.tensor import Tensor
from ._custom_op import resolve_op

DEFAULT_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
_ALL_TEST_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_static",
                   "test_aot_dispatch_dynamic")


class OpCheckError(Exception):
    """A check of opcheck failed (the cause is chained)."""


def _clone(tree, device=None, requires_grad=None):
    def one(x):
        if not isinstance(x, Tensor):
            return x
        if device == "meta":
            from ..eager.creation import empty
            return empty(x.shape, dtype=x.dtype, device="meta")
        y = x.detach().clone()
        if requires_grad if requires_grad is not None else x.requires_grad:
            y.requires_grad_(True)
        return y
    return tree_map(one, tree)


def _tensors(tree):
    return [t for t in tree_flatten(tree)[0] if isinstance(t, Tensor)]


def _same(a, b, rtol, atol):
    a, b = np.asarray(a.detach()), np.asarray(b.detach())
    return a.shape == b.shape and np.allclose(a, b, rtol=rtol or 1e-5, atol=atol or 1e-6, equal_nan=True)


def _test_schema(op, args, kwargs, rtol, atol):
    args_c, kwargs_c = _clone(args, requires_grad=False), _clone(kwargs, requires_grad=False)
    before = [np.array(t) for t in _tensors((args_c, kwargs_c))]
    versions = [t._version for t in _tensors((args_c, kwargs_c))]
    out = op(*args_c, **kwargs_c)
    values = op._values(args_c, kwargs_c)
    changed_names = set()
    for arg, v in zip(op._schema.args, values):
        for t in _tensors(v):
            i = next(k for k, u in enumerate(_tensors((args_c, kwargs_c))) if u is t)
            if t._version != versions[i] or not np.array_equal(np.asarray(t), before[i], equal_nan=True):
                changed_names.add(arg.name)
                if not arg.mutable:
                    raise RuntimeError(f"Argument {arg.name} is not defined as mutable but was mutated")
    ins = {id(t._storage) for t in _tensors((args_c, kwargs_c))}
    for o in _tensors(out):
        if id(o._storage) in ins:
            raise RuntimeError("the op returned an output that aliases an input")


def _test_autograd_registration(op, args, kwargs, rtol, atol):
    args_c, kwargs_c = _clone(args), _clone(kwargs)
    leaves = [t for t in _tensors((args_c, kwargs_c)) if t.requires_grad]
    if not leaves or not grad_mode.is_grad_enabled():
        return
    outs = [o for o in _tensors(op(*args_c, **kwargs_c)) if o.dtype.is_floating_point or o.dtype.is_complex]
    if outs and not any(o.grad_fn is not None for o in outs):
        raise RuntimeError(f"{op._qualname}: inputs require grad but the output has no grad_fn: the op is not "
                           "registered with autograd")


def _test_faketensor(op, args, kwargs, rtol, atol):
    real = _tensors(op(*_clone(args, requires_grad=False), **_clone(kwargs, requires_grad=False)))
    fake = _tensors(op(*_clone(args, device="meta"), **_clone(kwargs, device="meta")))
    name = f"{op._namespace}.{op._name}.default"
    if len(real) != len(fake):
        raise RuntimeError(f"When comparing the output of {name} on FakeTensor and concrete Tensors, found "
                           f"mismatched number of outputs: {len(fake)} and {len(real)}")
    for f, r in zip(fake, real):
        if tuple(f.shape) != tuple(r.shape):
            raise RuntimeError(f"When comparing the output of {name} on FakeTensor and concrete Tensors, found "
                               f"mismatched tensor metadata: Shapes {r.shape} and {f.shape} are not equal!")
        if f.dtype is not r.dtype:
            raise RuntimeError(f"When comparing the output of {name} on FakeTensor and concrete Tensors, found "
                               f"mismatched tensor metadata: Dtypes {r.dtype} and {f.dtype} are not equal!")


def _test_aot_dispatch(op, args, kwargs, rtol, atol):
    from .. import func
    args_c, kwargs_c = _clone(args), _clone(kwargs)
    eager_out = op(*args_c, **kwargs_c)
    eager = _tensors(eager_out)
    leaves = [t for t in _tensors(args_c) if t.requires_grad]
    # the same computation through the functional core: outputs, then gradients of sum(outputs)
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    plain = _clone(args, requires_grad=False)

    def f(*diff):
        full = list(plain)
        for i, d in zip(positions, diff):
            full[i] = d
        return op(*full, **_clone(kwargs, requires_grad=False))

    diff_args = [plain[i] for i in positions]
    if not positions:
        funcs_out = _tensors(f())
        for a, b in zip(eager, funcs_out):
            if not _same(a, b, rtol, atol):
                raise RuntimeError(f"{op._qualname}: outputs differ between eager and the functional core")
        return
    out, pull = func.vjp(f, *diff_args)
    for a, b in zip(eager, _tensors(out)):
        if not _same(a, b, rtol, atol):
            raise RuntimeError(f"{op._qualname}: outputs differ between eager and the functional core")
    diff_outs = [o for o in eager if o.requires_grad]
    if not diff_outs or not leaves:
        return
    from ..autograd import grad as autograd_grad
    cts = [core.ones(o.shape, dtype=o.dtype) for o in eager]
    seeds = [Tensor._from_value(c) for c, o in zip(cts, eager) if o.requires_grad]
    eager_grads = autograd_grad(diff_outs, leaves, seeds, allow_unused=True)
    ct = tuple(Tensor._from_value(c) for c in cts)
    ct_arg = ct[0] if isinstance(out, Tensor) else (list(ct) if isinstance(out, list) else ct)
    core_grads = pull(ct_arg)
    for a, b in zip(eager_grads, core_grads):
        if a is not None and b is not None and not _same(a, b, rtol, atol):
            raise RuntimeError(f"{op._qualname}: gradients differ between eager autograd and the functional core")


_TESTS = {"test_schema": _test_schema, "test_autograd_registration": _test_autograd_registration,
          "test_faketensor": _test_faketensor, "test_aot_dispatch_static": _test_aot_dispatch,
          "test_aot_dispatch_dynamic": _test_aot_dispatch}


def opcheck(op, args, kwargs=None, *, test_utils=DEFAULT_TEST_UTILS, raise_exception=True, atol=None, rtol=None):
    """Run the registration checks on op(*args, **kwargs); returns {test name: "SUCCESS" or the error}."""
    op = resolve_op(op)
    kwargs = {} if kwargs is None else kwargs
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    if not set(test_utils) <= set(_ALL_TEST_UTILS):
        raise ValueError(f"opcheck(op, ..., test_utils={test_utils}), expected test_utils to be subset of "
                         f"{_ALL_TEST_UTILS} but it was not")
    results = {}
    for name in test_utils:
        try:
            _TESTS[name](op, args, kwargs, rtol, atol)
        except Exception as e:  # noqa: BLE001  (reported per test, as torch does)
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {e} (scroll up for stack trace)") from e
            results[name] = e
            continue
        results[name] = "SUCCESS"
    return results
