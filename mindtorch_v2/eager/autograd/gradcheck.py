"""torch.autograd.gradcheck / gradgradcheck: analytical Jacobians against central differences.

For output i and input j both Jacobians are (input j numel, output i numel):
  numerical  row k = (f(x + eps e_k) - f(x - eps e_k)) / (2 eps)   (element k of input j perturbed)
  analytical col m = autograd.grad(output i, inputs, grad_output = e_m)
and must satisfy torch's allclose(analytical, numerical, rtol, atol):
|a - n| <= atol + rtol * |n|. Perturbations replace the input's storage value
without bumping its version, as torch's writes through `.data` do, so every
view of the same storage sees them and graphs already recorded stay valid.
"""
import warnings

import numpy as np

from ... import core
from ...core import dtypes as _dt
from .. import grad_mode
from ..random_ops import rand
from ..tensor import Tensor
from ..writeback import write
from . import api
from .function import Function


class GradcheckError(RuntimeError):
    """Raised by gradcheck / gradgradcheck when a check fails."""


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable_outputs(x):
    return tuple(o for o in _as_tuple(x) if isinstance(o, Tensor) and o.requires_grad)


def _diff_inputs(inputs):
    return [(i, a) for i, a in enumerate(inputs) if isinstance(a, Tensor) and a.requires_grad]


def _check_inputs(inputs):
    any_requires_grad = False
    for idx, inp in _diff_inputs(inputs):
        if inp.dtype is not _dt.float64:
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating "
                          "point or complex. ")
        if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.shape)):
            raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs "
                               "that are non-overlapping to be able to compute the numerical gradients correctly. "
                               "You should call .contiguous on the input before passing it to gradcheck.")
        any_requires_grad = True
    if not any_requires_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")


def _to_tensor(arr):
    return Tensor._from_value(core.asarray(arr))


# ---------------------------------------------------------------------------
# numerical Jacobian


def _eval_outputs(func, inputs):
    """func's outputs as numpy arrays (None where an output is not a Tensor)."""
    return [np.array(o._value()) if isinstance(o, Tensor) else None for o in _as_tuple(func(*inputs))]


def _numerical_jacobian(func, inputs, func_out, eps):
    """[per differentiable input][per output] a (input numel, output numel) array, or None (not a Tensor)."""
    outs = [np.asarray(o._value()) if isinstance(o, Tensor) else None for o in _as_tuple(func_out)]
    jacobians = []
    for _, x in _diff_inputs(inputs):
        st = x._storage
        saved_base = st.value
        orig = np.array(x._value())
        n = orig.size
        cols = [None if o is None else np.zeros((n, o.size), dtype=o.dtype) for o in outs]
        try:
            for k, idx in enumerate(np.ndindex(orig.shape)):
                pert = orig.copy()
                pert[idx] = orig[idx] - eps
                write(x, core.asarray(pert, device=x.device), bump_version=False, record=False)
                outa = _eval_outputs(func, inputs)
                pert[idx] = orig[idx] + eps
                write(x, core.asarray(pert, device=x.device), bump_version=False, record=False)
                outb = _eval_outputs(func, inputs)
                st.value = saved_base
                for m, (a, b) in enumerate(zip(outa, outb)):
                    if cols[m] is None or a is None or b is None:
                        continue
                    if a.shape != outs[m].shape or b.shape != outs[m].shape:
                        raise GradcheckError(f"Expected `func` to return outputs with the same shape when inputs "
                                             f"are perturbed by {eps}, but got: shapes {b.shape} and "
                                             f"{outs[m].shape}.")
                    cols[m][k] = ((b - a) / (2 * eps)).reshape(-1)
        finally:
            st.value = saved_base
        jacobians.append(cols)
    return jacobians


# ---------------------------------------------------------------------------
# analytical Jacobian


def _analytical_jacobian(inputs, output, nondet_tol, check_grad_dtypes):
    """[per differentiable input] a (input numel, output numel) array, from one backward per output element."""
    diff = [x for _, x in _diff_inputs(inputs)]
    first = _jacobian_rows(diff, output)
    second = _jacobian_rows(diff, output)
    types_ok = sizes_ok = True
    jacobians = []
    for x, rows in zip(diff, first):
        jac = np.zeros((x.numel(), output.numel()), dtype=x.dtype.np)
        for m, g in enumerate(rows):
            if g is None:
                continue
            if tuple(g.shape) != tuple(x.shape):
                sizes_ok = False
                continue
            if g.dtype is not x.dtype:
                types_ok = False
            jac[:, m] = np.asarray(g._value()).reshape(-1)
        jacobians.append(jac)
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    for x, rows1, rows2 in zip(diff, first, second):
        for g1, g2 in zip(rows1, rows2):
            if (g1 is None) != (g2 is None):
                reentrant = False
            elif g1 is None:
                continue
            else:
                d = np.abs(np.asarray(g1._value(), dtype=np.float64) - np.asarray(g2._value(), dtype=np.float64))
                reentrant = d.size == 0 or not d.max() > nondet_tol
            if not reentrant:
                raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and "
                                     "grad_output multiple times gives different values, although analytical "
                                     "gradient matches numerical gradient. The tolerance for nondeterminism was "
                                     f"{nondet_tol}.")
    return jacobians


def _jacobian_rows(diff, output):
    """rows[i][m]: d(output element m)/d(input i) as a Tensor (or None when unused)."""
    rows = [[] for _ in diff]
    n = output.numel()
    for m in range(n):
        basis = np.zeros(n, dtype=output.dtype.np)
        basis[m] = 1
        g = _to_tensor(basis.reshape(tuple(output.shape)))
        grads = api.grad(output, diff, g, retain_graph=True, allow_unused=True)
        for i, gi in enumerate(grads):
            rows[i].append(gi)
    return rows


def _allclose(a, n, rtol, atol):
    dtype = np.promote_types(a.dtype, n.dtype)
    return np.allclose(a.astype(dtype), n.astype(dtype), rtol=rtol, atol=atol)


def _mismatch_msg(analytical, numerical, i, j):
    return (f"Jacobian mismatch for output {i} with respect to input {j},\n"
            f"numerical:{_to_tensor(numerical)!r}\nanalytical:{_to_tensor(analytical)!r}\n")


def _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, nondet_tol, check_grad_dtypes):
    func_out = _as_tuple(func_out)
    numerical = _numerical_jacobian(func, inputs, func_out, eps)
    if not outputs:
        for per_input in numerical:
            for jac in per_input:
                if jac is not None and np.count_nonzero(jac):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    diff_out_idx = [m for m, o in enumerate(func_out) if isinstance(o, Tensor) and o.requires_grad]
    for i, (m, o) in enumerate(zip(diff_out_idx, outputs)):
        analytical = _analytical_jacobian(inputs, o, nondet_tol, check_grad_dtypes)
        for j, (a, per_input) in enumerate(zip(analytical, numerical)):
            n = per_input[m]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_mismatch_msg(a, n, i, j))
    return True


# ---------------------------------------------------------------------------
# the extra checks torch runs after the Jacobians


def _zeros_like(o):
    return Tensor._from_value(core.zeros(tuple(o.shape), dtype=o.dtype, device=o.device))


def _all_zero(t):
    return not np.count_nonzero(np.asarray(t.detach()._value()))


def _test_backward_mul_by_grad_output(outputs, inputs):
    diff = [x for _, x in _diff_inputs(inputs)]
    grads = api.grad(outputs, diff, [_zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, diff):
        if gi is None:
            continue
        if not _all_zero(gi):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype is not di.dtype or gi.device != di.device:
            raise GradcheckError("grad is incorrect type")
        if tuple(gi.shape) != tuple(di.shape):
            raise GradcheckError("grad is incorrect size")
    return True


class _UndefinedGrad(Function):
    """Identity whose backward gives no gradient (torch._C._functions.UndefinedGrad)."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return None


def _test_undefined_backward_mode(func, inputs):
    diff = [x for _, x in _diff_inputs(inputs)]

    def check(outputs):
        try:
            grads = api.grad(outputs, diff, [_zeros_like(o) for o in outputs], allow_unused=True)
        except RuntimeError as e:
            raise GradcheckError("Expected backward function to handle undefined output grads. Please look at "
                                 "\"Notes about undefined output gradients\" in "
                                 "\"tools/autograd/derivatives.yaml\"") from e
        for gi in grads:
            if gi is not None and not _all_zero(gi):
                raise GradcheckError("Expected all input grads to be undefined or zero when all output grads are "
                                     "undefined or zero. Please look at \"Notes about undefined output gradients\" "
                                     "in \"tools/autograd/derivatives.yaml\"")
        return True

    to_check = [[_UndefinedGrad.apply(o) for o in _differentiable_outputs(func(*inputs))]]
    if len(to_check[0]) > 1:
        for undef in range(len(to_check[0])):
            outs = _differentiable_outputs(func(*inputs))
            to_check.append([_UndefinedGrad.apply(o) if k == undef else o for k, o in enumerate(outs)])
    return all(check(outs) for outs in to_check if outs)


def _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes):
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    func_out = func(*inputs)
    outputs = _differentiable_outputs(func_out)
    _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, nondet_tol, check_grad_dtypes)
    if outputs:
        _test_backward_mul_by_grad_output(outputs, inputs)
        if check_undefined_grad:
            _test_undefined_backward_mode(func, inputs)
    return True


def gradcheck(func, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """True when the analytical Jacobian of func at inputs matches central finite differences.

    On a mismatch raise GradcheckError, or return False with raise_exception=False. Only torch's slow
    (full Jacobian) mode exists: fast_mode and check_batched_grad are accepted and run the same full check.
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_forward_ad or check_batched_forward_grad:
        raise NotImplementedError("gradcheck: forward-mode AD is not supported on eager tensors; check jvp rules "
                                  "with mindtorch_v2.func.jvp instead")
    if not check_backward_ad:
        return True
    try:
        return _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                                 check_grad_dtypes)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(func, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the gradient: the VJP of func (taken with create_graph=True) against finite differences.

    grad_outputs default to random tensors in [-1, 1) shaped like func's differentiable outputs.
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*inputs))
        grad_outputs = tuple(_random_like(o, gen_non_contig_grad_outputs) for o in outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(grad_outputs)
    diff_input_idx = {i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad}
    diff_grad_idx = {i for i, x in enumerate(grad_outputs) if x.requires_grad}

    def new_func(*args):
        input_args = tuple(x.requires_grad_() if i in diff_input_idx else x
                           for i, x in enumerate(args[:len(args) - num_outputs]))
        outputs = _differentiable_outputs(func(*input_args))
        gouts = tuple(x.requires_grad_() if i in diff_grad_idx else x
                      for i, x in enumerate(args[len(args) - num_outputs:]))
        diff_args = tuple(x for i, x in enumerate(input_args) if i in diff_input_idx)
        grads = api.grad(outputs, diff_args, gouts, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev, masked=masked)


def _random_like(o, noncontiguous):
    """torch.testing.make_tensor(o.shape, low=-1, high=1, requires_grad=True) in o's float dtype."""
    dtype = o.dtype if o.dtype.category == _dt.FLOAT else _dt.float64
    shape = tuple(o.shape)
    with grad_mode.no_grad():
        if noncontiguous and shape and o.numel() > 1:
            wide = rand(*shape[:-1], 2 * shape[-1], dtype=dtype, device=o.device) * 2 - 1
            t = wide[..., ::2]
        else:
            t = rand(tuple(shape), dtype=dtype, device=o.device) * 2 - 1
    return t.requires_grad_()
