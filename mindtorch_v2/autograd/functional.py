"""torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp and hvp of a Python function of Tensors.

All of them run the user's function once on the eager tape and then ask autograd.grad for derivatives:
  vjp       v^T J: one grad call with grad_outputs = v.
  jvp       J v by the double-backward trick: g(u) = J^T u is linear in a dummy u that requires grad,
            so the gradient of <g(u), v> with respect to u is J v, whatever u's value (zeros: no inf/nan).
  jacobian  one grad call per output element (a row of J); vectorize=True maps one call over the
            standard basis with torch.func.vmap; strategy="forward-mode" is torch.func.jacfwd.
  hessian   the jacobian of the function's gradient, taken with create_graph=True.
  vhp / hvp v^T H is a grad of the gradient; H v is the double-backward trick applied to it.

The inputs are re-made as fresh tensors that require grad (detached, or a view when create_graph=True
and they already require grad, so the results stay connected to the caller's graph). Results are detached
unless create_graph=True. An input the outputs do not depend on gets zeros, or an error with strict=True.
The structure follows the call: a Tensor in gives a Tensor out, a tuple a tuple; a jacobian of tuple
outputs and tuple inputs is a tuple (per output) of tuples (per input).
"""
import functools

from .. import func as _func
from ..eager.autograd.api import grad as _grad
from ..eager.creation import eye, zeros_like
from ..eager.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from ..eager.ops import stack
from ..eager.tensor import Tensor

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]

_STRATEGIES = ("forward-mode", "reverse-mode")


# ---------------------------------------------------------------------------
# arguments and results


def _as_tuple(value, arg_name, fn_name):
    """(whether value was a tuple, value as a tuple of Tensors); TypeError for anything else."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"{where} has type {type(item)}.")
    return is_tuple, items


def _unpack(res, is_tuple):
    """res, or its single element when the caller's value was not a tuple."""
    return res if is_tuple else res[0]


def _unpack2(res, outer_is_tuple, inner_is_tuple):
    """A tuple of tuples unpacked at each level that the caller did not give as a tuple."""
    if not inner_is_tuple:
        res = tuple(row[0] for row in res)
    return _unpack(res, outer_is_tuple)


def _fresh(tensors, create_graph, need_graph):
    """New Tensor objects for the inputs (or v), so that the grads are taken with respect to these and not to
    the same tensors captured by the function from outside. With create_graph a tensor that requires grad is
    viewed (still connected to the caller's graph); otherwise it is detached."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(need_graph)
                 for t in tensors)


def _results(tensors, create_graph):
    """The tensors (nested tuples too) detached unless the caller asked for a graph."""
    if create_graph:
        return tensors
    return tuple(t.detach() if isinstance(t, Tensor) else _results(t, create_graph) for t in tensors)


def _check_v(v, like, like_is_tuple):
    if len(v) != len(like):
        if like_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (el, ref) in enumerate(zip(v, like)):
        if el.size() != ref.size():
            prefix = f"Entry {i} in " if like_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {ref.size()} but got {el.size()}.")


def _prepare_v(v, like, like_is_tuple, fn_name, create_graph, v_missing_msg):
    if v is None:
        if len(like) != 1 or like[0].nelement() != 1:
            raise RuntimeError(v_missing_msg)
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _fresh(v, create_graph, need_graph=False)
    _check_v(v, like, like_is_tuple)
    return v


_V_FOR_SCALAR_INPUT = ("The vector v can only be None if the input to the user-provided function is a single Tensor "
                       "with a single element.")


# ---------------------------------------------------------------------------
# strict mode


def _strict_outputs(outputs, strict):
    if not strict:
        return
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The outputs "
                               "must be computed in a differentiable manner from the input when running in strict "
                               "mode.")


def _strict_grads(grads, strict, no_graph_message):
    """strict mode's checks of gradients: None is an input the outputs do not use; one that requires no grad
    (no_graph_message, formatted with its index) is constant in the inputs."""
    if not strict:
        return
    for i, g in enumerate(grads):
        if g is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not g.requires_grad:
            raise RuntimeError(no_graph_message.format(i))


_strict_grad_inputs = functools.partial(
    _strict_grads, no_graph_message="The gradient with respect to input {} is independent of the inputs of the "
                                    "user-provided function. This is not allowed in strict mode.")
_strict_jacobian = functools.partial(
    _strict_grads, no_graph_message="While computing the hessian, found that the jacobian of the user-provided "
                                    "function with respect to input {} is independent of the input. This is not "
                                    "allowed in strict mode. You should ensure that your function is twice "
                                    "differentiable and that the jacobian depends on the inputs (this would be "
                                    "violated by a linear function for example).")


# what a None gradient means at each stage, for strict mode's error
_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in strict "
                  "mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _zeros_for_none(grads, refs, strict, create_graph, stage):
    """grads with each None replaced by zeros shaped as refs[i] (strict: an error instead). With strict and
    create_graph, a gradient without a graph is an error too: it cannot depend on the inputs."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if stage.startswith("double") else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


# ---------------------------------------------------------------------------
# autograd.grad over the outputs that have a graph


def _grad_of(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad of the outputs that require grad (None for an input none of them reaches); all None when
    no output requires grad."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(out, g) for out, g in zip(outputs, grad_outputs) if out is not None and out.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs, gouts = zip(*pairs)
    return _grad(outs, inputs, gouts, retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)


def _grad_mode_for(create_graph):
    return set_grad_enabled(True if create_graph else is_grad_enabled())


# ---------------------------------------------------------------------------
# the public functions


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at inputs, shaped as the inputs."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _strict_outputs(outputs, strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, "vjp", create_graph,
                       "The vector v can only be None if the user-provided function returns a single Tensor with "
                       "a single element.")
    with _grad_mode_for(create_graph):
        res = _grad_of(outputs, inputs, v, create_graph=create_graph)
        res = _zeros_for_none(res, inputs, strict, create_graph, "back")
    return (_unpack(_results(outputs, create_graph), is_outputs_tuple),
            _unpack(_results(res, create_graph), is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product at inputs, shaped as the outputs."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, "jvp", create_graph, _V_FOR_SCALAR_INPUT)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        _strict_outputs(outputs, strict)
        # J^T u is linear in u: its value is irrelevant to the second backward, zeros keep it free of inf/nan
        dummies = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _grad_of(outputs, inputs, dummies, create_graph=True)
        _strict_grad_inputs(grad_inputs, strict)
    with _grad_mode_for(create_graph):
        res = _grad_of(grad_inputs, dummies, v, create_graph=create_graph)
        res = _zeros_for_none(res, outputs, strict, create_graph, "back_trick")
    return (_unpack(_results(outputs, create_graph), is_outputs_tuple),
            _unpack(_results(res, create_graph), is_outputs_tuple))


def _basis(tensors):
    """The standard basis of R^N, N the tensors' total numel, as one (N, numel_i) block per tensor (its dtype
    and device): the grad_outputs (or tangents) that pick out the Jacobian's rows all at once."""
    numels = [t.numel() for t in tensors]
    total, start, blocks = sum(numels), 0, []
    for t, n in zip(tensors, numels):
        blocks.append(eye(total, dtype=t.dtype, device=t.device)[:, start:start + n])
        start += n
    return tuple(blocks)


def _jacobian_rows(outputs, inputs, create_graph, strict):
    """((J[i][j] for each input j) for each output i), one grad call per output element."""
    jac = []
    for i, out in enumerate(outputs):
        flat = out.reshape(-1)
        rows = tuple([] for _ in inputs)
        for k in range(out.nelement()):
            vj = _grad_of((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
            for j, (row, g, inp) in enumerate(zip(rows, vj, inputs)):
                if g is None:
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is independent of input {j}. "
                                           "This is not allowed in strict mode.")
                    g = zeros_like(inp)
                elif strict and create_graph and not g.requires_grad:
                    # (PyTorch's message names the output's index here)
                    raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                       "This is not allowed in strict mode when create_graph=True.")
                row.append(g)
        jac.append(tuple(stack(row, dim=0).view(out.size() + inp.size()) for row, inp in zip(rows, inputs)))
    return tuple(jac)


def _jacobian_vmapped(outputs, inputs):
    """The same Jacobian from one grad call mapped over the standard basis of the flattened outputs."""
    numels = tuple(out.numel() for out in outputs)
    flat = tuple(out.reshape(-1) for out in outputs)

    def rows(*basis):
        vj = _grad_of(flat, inputs, basis, retain_graph=True)
        return tuple(zeros_like(inp) if g is None else g for g, inp in zip(vj, inputs))

    stacked = _func.vmap(rows)(*_basis(outputs))  # per input: (total output numel, *input shape)
    per_input = [[jac.view(out.shape + inp.shape) for jac, out in zip(block.split(numels, dim=0), outputs)]
                 for block, inp in zip(stacked, inputs)]
    return tuple(zip(*per_input))


def _jacobian_forward(func, inputs, strict, vectorize):
    """jacobian(strategy="forward-mode"), by torch.func.jacfwd; PyTorch's restrictions kept."""
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or '
                           '`strategy="reverse-mode"`.')
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        # (sic: PyTorch's message lacks the space)
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    seen = []

    def tupled(*args):
        is_tuple, outs = _as_tuple(func(*args), "outputs of the user-provided function", "jacobian")
        seen.append(is_tuple)
        return outs

    jac = _func.jacfwd(tupled, argnums=tuple(range(len(inputs))))(*inputs)
    # PyTorch builds this result as lists (per output, per input), and unpacks it as the reverse mode's tuples
    return _unpack2([list(row) for row in jac], seen[-1], is_inputs_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of func at inputs: J[i][j] of shape output i's shape + input j's shape."""
    if strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        return _jacobian_forward(func, inputs, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _strict_outputs(outputs, strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        # the tape records nothing inside vmap, so a Jacobian that must keep its graph is taken row by row
        if vectorize and not create_graph:
            jac = _jacobian_vmapped(outputs, inputs)
        else:
            jac = _jacobian_rows(outputs, inputs, create_graph, strict)
    return _unpack2(_results(jac, create_graph), is_outputs_tuple, is_inputs_tuple)


def _scalar_output(func, strict, fn_name):
    """func, checked to return one Tensor of one element (returned as 0-d)."""
    def single(*args):
        out = func(*args)
        is_tuple, outs = _as_tuple(out, "outputs of the user-provided function", fn_name)
        _strict_outputs(outs, strict)
        if is_tuple:
            raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single "
                               "element")
        return out.squeeze()
    return single


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar func at inputs: H[i][j] of shape input i's shape + input j's shape."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    single = _scalar_output(func, strict, "hessian")

    def gradient(*args):
        if outer_jacobian_strategy == "forward-mode":
            # forward over reverse runs inside torch.func's transforms, where the eager tape records nothing:
            # the inner gradient is torch.func's too
            return _func.jacrev(single, argnums=tuple(range(len(args))))(*args)
        jac = jacobian(single, args, create_graph=True)
        _strict_jacobian(jac, strict)
        return jac

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _unpack2(res, is_inputs_tuple, is_inputs_tuple)


def _gradient_of_scalar(func, inputs, v, create_graph, strict, fn_name):
    """(is_inputs_tuple, fresh inputs, v, outputs, the gradient with a graph) for vhp and hvp."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _fresh(inputs, create_graph, need_graph=True)
    v = _prepare_v(v, inputs, is_inputs_tuple, fn_name, create_graph, _V_FOR_SCALAR_INPUT)
    is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _strict_outputs(outputs, strict)
    if is_outputs_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    jac = _grad_of(outputs, inputs, create_graph=True)
    _strict_jacobian(jac, strict)
    return is_inputs_tuple, inputs, v, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H): the vector-Hessian product of a scalar func, shaped as the inputs."""
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, jac = _gradient_of_scalar(func, inputs, v, create_graph, strict, "vhp")
    with _grad_mode_for(create_graph):
        res = _grad_of(jac, inputs, v, create_graph=create_graph)
        res = _zeros_for_none(res, inputs, strict, create_graph, "double_back")
    return _results(outputs, create_graph)[0], _unpack(_results(res, create_graph), is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v): the Hessian-vector product of a scalar func, by the double-backward trick."""
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, jac = _gradient_of_scalar(func, inputs, v, create_graph, strict, "hvp")
        dummies = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _grad_of(jac, inputs, dummies, create_graph=True)
    with _grad_mode_for(create_graph):
        res = _grad_of(double_back, dummies, v, create_graph=create_graph)
        res = _zeros_for_none(res, inputs, strict, create_graph, "double_back_trick")
    return _results(outputs, create_graph)[0], _unpack(_results(res, create_graph), is_inputs_tuple)
