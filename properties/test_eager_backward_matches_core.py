"""Eager backward gives the gradients core.grad gives for the same function.

A program is drawn step by step along the shape of its current value: elementwise unary ops
on safe domains, binary ops with broadcasting against a new leaf, a constant or a scalar,
reductions over drawn dims, pow with a scalar exponent, matmul, softmax, cat/stack, where, views (the table of
test_views_inplace_mirror_numpy), and in-place ops on non-leaf tensors — on the whole tensor, through
a chain of views, or by `t[key] = value` — after which the program goes on with the base, the
written view, or a view taken before the write (whose history must be rebuilt from the base).

Each step is written twice: with torch Tensors (methods, in-place ops, views) and as a pure
function of core arrays (an in-place write through a view becomes a `where` over the view's
positions in the base). The torch run calls `.backward()` on `sum(out * u)`; the core run takes
`core.grad` of the same scalar with respect to every leaf. Values and gradients agree in float64.

The programs respect PyTorch's autograd rules, so a failure is a bug, not a misuse: an in-place
op never targets a leaf, a view of a leaf, a tensor PyTorch saves for backward (the result of
exp, tanh, sigmoid, sqrt, reciprocal, relu, softmax, log_softmax, logsumexp, amax, prod), an
output of split/chunk/unbind, or a tensor whose elements overlap; such a tensor is cloned first.
"""
import math
import operator
from typing import Callable, NamedTuple

import numpy as np
from hypothesis import given, note
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mindtorch_v2 as torch
from mindtorch_v2 import core
from test_views_inplace_mirror_numpy import basic_key, draw_view, suffix_shape

ELEMENTS = st.floats(-2, 2, allow_subnormal=False)
RTOL, ATOL = 1e-9, 1e-12
MAX_SIZE = 48


def differentiable(view):
    """Views of the table used here: not detach (no core twin cuts the graph), not torch.view (it may refuse
    a strided tensor where core.reshape does not: reshape is a step of its own here)."""
    return view.differentiable and not view.may_copy


def read_view(view):
    """A view to read after its base is written: PyTorch refuses that for one of the views a split made."""
    return differentiable(view) and not view.multi_output


def write_view(view):
    """A view to write: no aliasing elements, and not one of the views a split made."""
    return read_view(view) and view.writable


class Step(NamedTuple):
    label: str
    torch: Callable  # (Tensor, torch leaves) -> Tensor
    core: Callable   # (core value, core leaves) -> core value
    fresh: object    # True: a fresh tensor PyTorch lets us write; False: must be cloned first; None: as its input

    def __repr__(self):
        return self.label


def leaf(draw, leaves, shape):
    """Index of a new float64 leaf of `shape`."""
    leaves.append(draw(hnp.arrays(np.float64, shape, elements=ELEMENTS)))
    return len(leaves) - 1


def const(draw, shape, positive=False):
    return draw(hnp.arrays(np.float64, shape, elements=st.floats(0.5, 2) if positive else ELEMENTS))


def operand(draw, leaves, shape, positive=False):
    """(label, torch fn of leaves, core fn of leaves) of an operand that broadcasts to `shape`."""
    kind = draw(st.sampled_from(("leaf", "const", "scalar")))
    oshape = suffix_shape(draw, shape)
    if kind == "scalar":
        s = draw(st.floats(0.5, 2) if positive else ELEMENTS)
        return repr(s), lambda L: s, lambda L: s
    if kind == "const":
        c = const(draw, oshape, positive)
        return f"const{c.shape}", lambda L: torch.tensor(c), lambda L: core.asarray(c)
    i = leaf(draw, leaves, oshape)
    if positive:  # a positive non-leaf made from the leaf
        return (f"(L{i}*L{i}+1)", lambda L: L[i] * L[i] + 1.0,
                lambda L: core.add(core.mul(L[i], L[i]), 1.0))
    return f"L{i}", lambda L: L[i], lambda L: L[i]


# ---------------------------------------------------------------------------
# value steps

UNARY = {  # name: (torch, core, fresh: False when PyTorch saves the result)
    "sin": (torch.sin, core.sin, True),
    "cos": (torch.cos, core.cos, True),
    "tanh": (torch.tanh, core.tanh, False),
    "sigmoid": (torch.sigmoid, core.sigmoid, False),
    "abs": (torch.abs, core.abs, True),
    "neg": (torch.neg, core.neg, True),
    "relu": (torch.relu, core.relu, False),
    "square": (lambda t: t.square(), core.square, True),
    "x ** 3": (lambda t: t ** 3, lambda x: core.pow(x, 3), True),  # torch saves only self for a scalar exponent
    "pow(x, 2.0)": (lambda t: torch.pow(t, 2.0), lambda x: core.pow(x, 2.0), True),
    "exp(tanh)": (lambda t: t.tanh().exp(), lambda x: core.exp(core.tanh(x)), False),
    "log1p(square)": (lambda t: torch.log1p(t * t), lambda x: core.log1p(core.mul(x, x)), True),
    "sqrt(square+1)": (lambda t: torch.sqrt(t * t + 1), lambda x: core.sqrt(core.add(core.mul(x, x), 1.0)), False),
    "reciprocal(square+1)": (lambda t: (t * t + 1).reciprocal(),
                             lambda x: core.reciprocal(core.add(core.mul(x, x), 1.0)), False),
}


def step_unary(draw, shape, leaves):
    name = draw(st.sampled_from(sorted(UNARY)))
    t_fn, c_fn, fresh = UNARY[name]
    return Step(name, lambda c, L: t_fn(c), lambda x, L: c_fn(x), fresh)


BINARY = {"add": (torch.add, core.add), "sub": (torch.sub, core.sub), "mul": (torch.mul, core.mul),
          "div": (torch.div, core.div), "maximum": (torch.maximum, core.maximum),
          "minimum": (torch.minimum, core.minimum)}


def step_binary(draw, shape, leaves):
    name = draw(st.sampled_from(sorted(BINARY)))
    t_fn, c_fn = BINARY[name]
    oshape = shape
    if math.prod(shape) <= 8 and draw(st.integers(0, 3)) == 0:
        oshape = (2,) + tuple(shape)  # the other operand may grow the result
    swap = draw(st.booleans())
    label, o_t, o_c = operand(draw, leaves, oshape, positive=name == "div" and not swap)
    if name in ("maximum", "minimum"):  # torch.maximum takes tensors only
        o_t = _as_tensor(o_t)
    if name == "div" and swap:  # other / (x*x + 1)
        return Step(f"{label} / (x*x+1)", lambda c, L: o_t(L) / (c * c + 1),
                    lambda x, L: c_fn(o_c(L), core.add(core.mul(x, x), 1.0)), True)
    if swap:  # the operator form: torch.add(2.0, x) is not torch API, 2.0 + x is
        op = {"add": operator.add, "sub": operator.sub, "mul": operator.mul}.get(name, t_fn)
        return Step(f"{name}({label}, x)", lambda c, L: op(o_t(L), c), lambda x, L: c_fn(o_c(L), x), True)
    return Step(f"{name}(x, {label})", lambda c, L: t_fn(c, o_t(L)), lambda x, L: c_fn(x, o_c(L)), True)


def _as_tensor(o_t):
    def fn(L):
        o = o_t(L)
        return o if isinstance(o, torch.Tensor) else torch.tensor(o, dtype=torch.float64)
    return fn


def dims_arg(draw, ndim, allow_none=True):
    """None (all), an int (possibly negative) or a tuple of distinct dims."""
    kinds = (0, 1, 2) if allow_none else (1, 2)
    kind = draw(st.sampled_from(kinds)) if ndim else 0
    if kind == 0:
        return None
    if kind == 1:
        return draw(st.integers(-ndim, ndim - 1))
    return tuple(draw(st.lists(st.integers(0, ndim - 1), unique=True, min_size=1, max_size=ndim)))


def _count(shape, dim):
    if dim is None:
        return math.prod(shape)
    dims = dim if isinstance(dim, tuple) else (dim,)
    return math.prod(shape[d] for d in dims)


def step_reduce(draw, shape, leaves):
    name = draw(st.sampled_from(("sum", "mean", "amax", "logsumexp", "var", "prod", "max(dim)")))
    keepdim = draw(st.booleans())
    ndim = len(shape)
    if name == "max(dim)":
        if not ndim:
            return None
        d = draw(st.integers(-ndim, ndim - 1))
        return Step(f"max(dim={d}, keepdim={keepdim}).values",
                    lambda c, L: torch.max(c, d, keepdim).values,
                    lambda x, L: _max_dim(x, d % ndim, keepdim), True)
    dim = dims_arg(draw, ndim, allow_none=name != "logsumexp")
    if name == "logsumexp" and dim is None:
        return None
    axis = dim % ndim if isinstance(dim, int) else dim
    if name == "sum":
        return Step(f"sum({dim}, keepdim={keepdim})", lambda c, L: torch.sum(c, dim, keepdim),
                    lambda x, L: core.sum(x, axis, keepdims=keepdim), True)
    if name == "mean":
        return Step(f"mean({dim}, keepdim={keepdim})", lambda c, L: c.mean(dim, keepdim),
                    lambda x, L: core.mean(x, axis, keepdims=keepdim), True)
    if name == "amax":
        return Step(f"amax({dim}, keepdim={keepdim})", lambda c, L: c.amax(() if dim is None else dim, keepdim),
                    lambda x, L: core.max(x, axis, keepdims=keepdim), False)
    if name == "logsumexp":
        return Step(f"logsumexp({dim}, keepdim={keepdim})", lambda c, L: torch.logsumexp(c, dim, keepdim),
                    lambda x, L: core.logsumexp(x, axis, keepdims=keepdim), False)
    if name == "prod":
        if isinstance(dim, tuple):
            return None  # torch.prod takes one dim
        return Step(f"prod({dim}, keepdim={keepdim})",
                    (lambda c, L: c.prod()) if dim is None else (lambda c, L: c.prod(dim, keepdim)),
                    lambda x, L: core.prod(x, axis, keepdims=keepdim if dim is not None else False), False)
    correction = 1 if _count(shape, axis) > 1 else 0
    return Step(f"var({dim}, correction={correction}, keepdim={keepdim})",
                lambda c, L: torch.var(c, dim, keepdim=keepdim, correction=correction),
                lambda x, L: core.var(x, axis, ddof=correction, keepdims=keepdim), True)


def _max_dim(x, d, keepdim):
    """torch.max(x, d).values: the gradient goes to the first maximum only."""
    out = core.gather(x, d, core.argmax(x, d, keepdims=True))
    return out if keepdim else core.squeeze(out, (d,))


def step_matmul(draw, shape, leaves):
    if not shape:
        return None
    m = draw(st.integers(1, 3))
    if len(shape) >= 2 and draw(st.booleans()):
        i = leaf(draw, leaves, (m, shape[-2]) if draw(st.booleans()) else (shape[-2],))
        return Step(f"L{i}{leaves[i].shape} @ x", lambda c, L: L[i] @ c, lambda x, L: core.matmul(L[i], x), True)
    i = leaf(draw, leaves, (shape[-1], m) if draw(st.booleans()) else (shape[-1],))
    return Step(f"x @ L{i}{leaves[i].shape}", lambda c, L: torch.matmul(c, L[i]), lambda x, L: core.matmul(x, L[i]),
                True)


def step_softmax(draw, shape, leaves):
    if not shape:
        return None
    d = draw(st.integers(-len(shape), len(shape) - 1))
    if draw(st.booleans()):
        return Step(f"softmax({d})", lambda c, L: torch.softmax(c, d), lambda x, L: core.softmax(x, d), False)
    return Step(f"log_softmax({d})", lambda c, L: c.log_softmax(d), lambda x, L: core.log_softmax(x, d), False)


def step_join(draw, shape, leaves):
    if math.prod(shape) > 16:
        return None
    i = leaf(draw, leaves, shape)
    if shape and draw(st.booleans()):
        d = draw(st.integers(-len(shape), len(shape) - 1))
        return Step(f"cat([x, L{i}], {d})", lambda c, L: torch.cat([c, L[i]], d),
                    lambda x, L: core.concatenate([x, L[i]], d), True)
    d = draw(st.integers(-len(shape) - 1, len(shape)))
    return Step(f"stack([L{i}, x], {d})", lambda c, L: torch.stack([L[i], c], d),
                lambda x, L: core.stack([L[i], x], d), True)


def step_where(draw, shape, leaves):
    label, o_t, o_c = operand(draw, leaves, shape)
    return Step(f"where(x > 0, x, {label})", lambda c, L: torch.where(c > 0, c, o_t(L)),
                lambda x, L: core.where(core.gt(x, 0.0), x, o_c(L)), True)


def step_view(draw, shape, leaves):
    view = draw_view(draw, shape, keep=differentiable)
    fresh = False if view.multi_output or not view.writable else None
    return Step(view.label, lambda c, L: view.torch(c), lambda x, L: view.core(x), fresh)


def step_reshape(draw, shape, leaves):
    n = math.prod(shape)
    dims = list(draw(st.permutations(_factors(n))))
    new = []
    while dims:
        k = draw(st.integers(1, len(dims)))
        new.append(math.prod(dims[:k]))
        dims = dims[k:]
    new = tuple(new) if n != 1 else tuple([1] * draw(st.integers(0, 2)))
    if n == 0:
        return None
    return Step(f".reshape{new}", lambda c, L: c.reshape(new), lambda x, L: core.reshape(x, new), None)


def _factors(n):
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


# ---------------------------------------------------------------------------
# in-place steps


def positions_of(views, shape):
    """The base positions (row-major) of the elements of a chain of views of a value of `shape`."""
    p = np.arange(math.prod(shape)).reshape(shape)
    for v in views:
        p = v.numpy(p)
    return p.copy()  # (ascontiguousarray would make a 0-d result 1-d)


def scatter_back(base, new, positions):
    """base with the elements at `positions` replaced by `new` (functionally): the core twin of a write."""
    if positions.size == 0:
        return base
    n = math.prod(base.shape)
    inverse = np.zeros(n, np.int64)
    inverse[positions.ravel()] = np.arange(positions.size)
    mask = np.zeros(n, np.bool_)
    mask[positions.ravel()] = True
    flat = core.where(core.asarray(mask), core.take(core.reshape(new, (-1,)), core.asarray(inverse)),
                      core.reshape(base, (-1,)))
    return core.reshape(flat, base.shape)


def inplace_op(draw, shape, leaves):
    """(label, torch fn (view, leaves) writing the view, core fn (value, leaves) -> its new value)."""
    name = draw(st.sampled_from(("add_", "sub_", "mul_", "div_", "clamp_", "neg_", "sin_", "copy_", "fill_",
                                 "zero_", "masked_fill_", "+=", "*=")))
    if name in ("add_", "sub_"):
        label, o_t, o_c = operand(draw, leaves, shape)
        fn = core.add if name == "add_" else core.sub
        if label.startswith("L") and draw(st.booleans()):
            alpha = draw(st.sampled_from((2, -0.5)))
            return (f"{name}({label}, alpha={alpha})", lambda v, L: getattr(v, name)(o_t(L), alpha=alpha),
                    lambda x, L: fn(x, core.mul(o_c(L), alpha)))
        return f"{name}({label})", lambda v, L: getattr(v, name)(o_t(L)), lambda x, L: fn(x, o_c(L))
    if name in ("mul_", "div_", "+=", "*="):
        label, o_t, o_c = operand(draw, leaves, shape, positive=name == "div_")
        fn = {"mul_": core.mul, "div_": core.div, "+=": core.add, "*=": core.mul}[name]
        if name in ("+=", "*="):
            dunder = "__iadd__" if name == "+=" else "__imul__"
            return f"v {name} {label}", lambda v, L: getattr(v, dunder)(o_t(L)), lambda x, L: fn(x, o_c(L))
        return f"{name}({label})", lambda v, L: getattr(v, name)(o_t(L)), lambda x, L: fn(x, o_c(L))
    if name == "clamp_":
        lo = draw(st.floats(-1.5, 0))
        hi = draw(st.floats(0, 1.5))
        return f"clamp_({lo}, {hi})", lambda v, L: v.clamp_(lo, hi), lambda x, L: core.clamp(x, lo, hi)
    if name == "neg_":
        return "neg_()", lambda v, L: v.neg_(), lambda x, L: core.neg(x)
    if name == "sin_":
        return "sin_()", lambda v, L: v.sin_(), lambda x, L: core.sin(x)
    if name == "copy_":
        label, o_t, o_c = operand(draw, leaves, shape)
        if label[0] not in "Lc":
            return None  # copy_ takes a tensor
        return (f"copy_({label})", lambda v, L: v.copy_(o_t(L)),
                lambda x, L: core.broadcast_to(o_c(L), tuple(x.shape)))
    if name == "fill_":
        if draw(st.booleans()):
            i = leaf(draw, leaves, ())
            return (f"fill_(L{i})", lambda v, L: v.fill_(L[i]),
                    lambda x, L: core.broadcast_to(L[i], tuple(x.shape)))
        s = draw(ELEMENTS)
        return f"fill_({s})", lambda v, L: v.fill_(s), lambda x, L: core.full_like(x, s)
    if name == "zero_":
        return "zero_()", lambda v, L: v.zero_(), lambda x, L: core.zeros_like(x)
    mask = draw(hnp.arrays(np.bool_, suffix_shape(draw, shape)))
    s = draw(ELEMENTS)
    return (f"masked_fill_(mask{mask.shape}, {s})", lambda v, L: v.masked_fill_(torch.tensor(mask), s),
            lambda x, L: core.where(core.asarray(mask), s, x))


def step_inplace(draw, shape, leaves):
    """Write the whole value, a chain of views of it, or `x[key] = value`; go on with base, view or a prior view."""
    if draw(st.integers(0, 3)) == 0:
        return setitem_step(draw, shape, leaves)
    views = []
    for _ in range(draw(st.integers(0, 2))):
        vshape = positions_of(views, shape).shape
        views.append(draw_view(draw, vshape, keep=write_view))
    positions = positions_of(views, shape)
    op = inplace_op(draw, positions.shape, leaves)
    if op is None:
        return None
    label, t_op, c_op = op
    read = draw_view(draw, shape, keep=read_view) if draw(st.booleans()) else None
    then = draw(st.sampled_from(("base", "written") + (("read",) if read else ())))
    target = "x" + "".join(v.label for v in views)

    def run_torch(c, L):
        r = read.torch(c) if read else None
        w = c
        for v in views:
            w = v.torch(w)
        t_op(w, L)
        return {"base": c, "written": w, "read": r}[then]

    def run_core(x, L):
        w = x
        for v in views:
            w = v.core(w)
        new = c_op(w, L)
        base = scatter_back(x, new, positions) if views else new
        return {"base": base, "written": new, "read": read.core(base) if read else None}[then]
    read_label = f"; r = x{read.label} taken before" if read else ""
    fresh = read.writable if then == "read" else True
    return Step(f"{target}.{label}{read_label}; then {then}", run_torch, run_core, fresh)


def setitem_step(draw, shape, leaves):
    """x[key] = value with a basic key, a boolean mask or distinct positions along dim 0."""
    kind = draw(st.integers(0, 2))
    base_positions = np.arange(math.prod(shape)).reshape(shape)
    if kind == 0:
        key = basic_key(draw, shape)
        key_t, label = key, repr(key)
    elif kind == 1:
        key = draw(hnp.arrays(np.bool_, shape))
        key_t, label = torch.tensor(key), f"mask{key.shape}"
    else:
        if not shape or not shape[0]:
            return None
        key = np.asarray(draw(st.lists(st.integers(-shape[0], shape[0] - 1), unique_by=lambda i: i % shape[0],
                                       max_size=shape[0])), dtype=np.int64)
        key_t, label = torch.tensor(key), f"{key.tolist()}"
    positions = base_positions[key].copy()
    target = positions.shape
    if draw(st.booleans()):
        s = draw(ELEMENTS)
        value_label, v_t, v_c = repr(s), (lambda L: s), (lambda L: core.full(target, s, dtype=core.float64))
    else:
        vshape = suffix_shape(draw, target, leading_ones=kind == 0)
        i = leaf(draw, leaves, vshape)
        value_label, v_t = f"L{i}", (lambda L: L[i])

        def v_c(L):
            stripped = leaves[i].shape[len(leaves[i].shape) - len(target):] if len(leaves[i].shape) > len(target) \
                else leaves[i].shape
            return core.broadcast_to(core.reshape(L[i], stripped), target)

    def run_torch(c, L):
        c[key_t] = v_t(L)
        return c
    return Step(f"x[{label}] = {value_label}", run_torch, lambda x, L: scatter_back(x, v_c(L), positions), True)


VALUE_STEPS = (step_unary, step_binary, step_reduce, step_matmul, step_softmax, step_join, step_where, step_view,
               step_view, step_reshape)


class Program(NamedTuple):
    leaves: list
    steps: list
    cotangent: np.ndarray

    def __repr__(self):
        leaves = ", ".join(f"L{i}{x.shape}" for i, x in enumerate(self.leaves))
        return f"Program(leaves {leaves}, {len(self.steps)} steps: see below)"


@st.composite
def programs(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4))
    leaves = [draw(hnp.arrays(np.float64, shape, elements=ELEMENTS))]
    value, fresh, steps = core.asarray(leaves[0]), False, []
    for _ in range(draw(st.integers(1, 10))):
        shape = tuple(value.shape)
        if draw(st.integers(0, 2)) == 0:
            step = step_inplace(draw, shape, leaves)
            if step is not None and not fresh:  # PyTorch would refuse this write: clone first
                step = _after_clone(step)
        else:
            step = draw(st.sampled_from(VALUE_STEPS))(draw, shape, leaves)
        if step is None:
            continue
        new = step.core(value, [core.asarray(x) for x in leaves])
        if math.prod(new.shape) == 0:
            continue  # keep values non-empty: max and logsumexp have nothing to reduce
        value = new
        fresh = fresh if step.fresh is None else step.fresh
        steps.append(step)
        if math.prod(value.shape) > MAX_SIZE:
            break
    cotangent = draw(hnp.arrays(np.float64, tuple(value.shape), elements=ELEMENTS))
    return Program(leaves, steps, cotangent)


def _after_clone(step):
    return Step("x = x.clone(); " + step.label, lambda c, L: step.torch(c.clone(), L), step.core, step.fresh)


def run_torch(prog):
    leaves = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in prog.leaves]
    cur = leaves[0]
    for step in prog.steps:
        cur = step.torch(cur, leaves)
    out = cur.detach().numpy().copy()
    (cur * torch.tensor(prog.cotangent)).sum().backward()
    grads = [np.zeros_like(x) if t.grad is None else t.grad.numpy() for x, t in zip(prog.leaves, leaves)]
    return out, grads


def run_core(prog):
    def loss(*leaves):
        cur = leaves[0]
        for step in prog.steps:
            cur = step.core(cur, leaves)
        return core.sum(core.mul(cur, core.asarray(prog.cotangent))), cur

    args = [core.asarray(x) for x in prog.leaves]
    grads, out = core.grad(loss, argnums=tuple(range(len(args))), has_aux=True)(*args)
    return np.asarray(out), [np.asarray(g) for g in grads]


def assert_close(actual, expected, what):
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL * scale, err_msg=what)


@given(programs())
def test_eager_backward_equals_core_grad(prog):
    note("leaves: " + ", ".join(f"L{i}{x.shape}" for i, x in enumerate(prog.leaves)) + "  (x = L0)")
    note("\n".join(f"step {k}: {s.label}" for k, s in enumerate(prog.steps)))
    with np.errstate(all="ignore"):
        out_core, grads_core = run_core(prog)
        out_torch, grads_torch = run_torch(prog)
    assert out_torch.shape == out_core.shape
    assert_close(out_torch, out_core, "value")
    for i, (gt, gc) in enumerate(zip(grads_torch, grads_core)):
        assert gt.shape == gc.shape, f"L{i}.grad: shape {gt.shape} vs core {gc.shape}"
        assert_close(gt, gc, f"L{i}.grad")
