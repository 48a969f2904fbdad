"""A torch program on device="meta" has the cpu program's shapes, dtypes and view geometry at every step.

Programs are drawn step by step from the cpu tensor's shape and dtype (float32, float64, int64,
bool inputs), and each step runs on the cpu tensor and on its meta twin:

    elementwise  unary ops (float ones promote ints and bools), casts, binary ops against a constant
                 tensor of any dtype (broadcasting, possibly growing the result) or a python scalar
                 (weak promotion), comparisons, where
    reductions   sum, prod, mean, amax, any, all, argmax, max(dim), var, logsumexp, cumsum, softmax
    shape        matmul, cat, stack, flip, reshape, flatten, contiguous, clone, advanced indexing with
                 a list, and every view of test_views_inplace_mirror_numpy's table
    in-place     add_/sub_/mul_/div_/fill_/zero_/copy_/clamp_/neg_/masked_fill_/__setitem__ on the
                 tensor or on a view of it (the program goes on with the base)
    failing      in-place ops that must raise (a shape that does not broadcast, a float result into an
                 integer tensor, a write through an expanded view): both devices raise RuntimeError
                 and neither version moves

After every step both devices agree on shape, dtype, strides and storage offset of the result,
and on the version counter of the tensor the program goes on with.
"""
import math

import numpy as np
from hypothesis import given, note
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mindtorch_v2 as torch
from test_views_inplace_mirror_numpy import bad_shape, basic_key, draw_view, suffix_shape

FLOAT, INT, BOOL = "float", "int", "bool"
DTYPES = {np.float32: torch.float32, np.float64: torch.float64, np.int64: torch.int64, np.bool_: torch.bool}
MAX_SIZE = 64


def category(t):
    if t.dtype is torch.bool:
        return BOOL
    return FLOAT if t.is_floating_point() else INT


def const_array(draw, shape, dtype=None):
    dtype = np.dtype(dtype or draw(st.sampled_from(list(DTYPES))))
    if dtype.kind == "b":
        return draw(hnp.arrays(np.bool_, shape))
    if dtype.kind == "i":
        return draw(hnp.arrays(dtype, shape, elements=st.integers(-3, 3)))
    return draw(hnp.arrays(dtype, shape, elements=st.floats(-2, 2, width=32)))


def on(dev, arr):
    return torch.tensor(arr, device=dev)


def same_or_lower(draw, t):
    """A numpy dtype an in-place op on t accepts as its operand's dtype (no float into int, no int into bool)."""
    c = category(t)
    allowed = {FLOAT: list(DTYPES), INT: [np.int64, np.bool_], BOOL: [np.bool_]}[c]
    return draw(st.sampled_from(allowed))


def scalar_for(draw, t):
    c = category(t)
    if c == FLOAT:
        return draw(st.sampled_from((2, 0.5, -1.5, True)))
    if c == INT:
        return draw(st.sampled_from((2, -1, True)))
    return draw(st.booleans())


# ---------------------------------------------------------------------------
# steps: draw(draw, cpu tensor) -> (label, fn(tensor, device) -> tensor or tuple of tensors, raises) or None,
# raises being False, True (must raise RuntimeError) or "maybe" (then both devices raise alike)


UNARY_FLOAT = ("sin", "exp", "tanh", "sigmoid", "sqrt", "log1p")
UNARY_NUMERIC = ("neg", "abs", "relu", "floor", "ceil", "round", "square")


def step_unary(draw, t):
    names = UNARY_FLOAT + ("logical_not",) + (UNARY_NUMERIC if category(t) != BOOL else ())
    name = draw(st.sampled_from(names))
    return name, lambda x, dev: getattr(torch, name)(x) if name != "square" else x.square(), False


def step_cast(draw, t):
    dtype = draw(st.sampled_from((torch.float32, torch.float64, torch.float16, torch.int64, torch.int32,
                                  torch.bool)))
    return f".to({dtype})", lambda x, dev: x.to(dtype), False


BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "eq", "lt", "ge", "logical_and", "logical_xor")
SCALAR_OK = ("add", "sub", "mul", "div", "eq", "lt", "ge")  # torch.maximum, torch.logical_and take tensors


def step_binary(draw, t):
    name = draw(st.sampled_from(BINARY))
    if name == "sub" and category(t) == BOOL:
        return None  # torch refuses to subtract with a bool tensor
    shape = tuple(t.shape)
    fn = getattr(torch, name)
    if name in SCALAR_OK and draw(st.integers(0, 3)) == 0:  # a python scalar: weak promotion
        s = draw(st.sampled_from((2, 0.5, True, -1)))
        if name == "sub" and isinstance(s, bool):
            s = 1
        return f"{name}(x, {s!r})", lambda x, dev: fn(x, s), False
    oshape = suffix_shape(draw, shape)
    if math.prod(shape) <= 8 and draw(st.integers(0, 3)) == 0:
        oshape = (2,) + shape  # the constant grows the result
    c = const_array(draw, oshape)
    if name == "sub" and c.dtype == np.bool_:
        c = c.astype(np.float32)
    swap = draw(st.booleans())
    if swap:
        return f"{name}(const {c.dtype}{c.shape}, x)", lambda x, dev: fn(on(dev, c), x), False
    return f"{name}(x, const {c.dtype}{c.shape})", lambda x, dev: fn(x, on(dev, c)), False


def step_where(draw, t):
    c = const_array(draw, suffix_shape(draw, tuple(t.shape)))
    return (f"where(x > 0, x, const {c.dtype}{c.shape})",
            lambda x, dev: torch.where(x.to(torch.float32) > 0, x, on(dev, c)), False)


def dims_arg(draw, ndim):
    kind = draw(st.integers(0, 2)) if ndim else 0
    if kind == 0:
        return None
    if kind == 1:
        return draw(st.integers(-ndim, ndim - 1))
    return tuple(draw(st.lists(st.integers(0, ndim - 1), unique=True, min_size=1, max_size=ndim)))


def _nonempty_along(shape, dim):
    dims = range(len(shape)) if dim is None else (dim if isinstance(dim, tuple) else (dim,))
    return all(shape[d] > 0 for d in dims) and (dim is not None or math.prod(shape) > 0)


def step_reduce(draw, t):
    shape, ndim, c = tuple(t.shape), t.ndim, category(t)
    names = ["sum", "prod", "any", "all", "amax", "max(dim)", "cumsum"] + (["argmax"] if c != BOOL else [])
    if c == FLOAT:
        names += ["mean", "var", "logsumexp", "softmax", "log_softmax"]
    name = draw(st.sampled_from(names))
    keepdim = draw(st.booleans())
    if name in ("max(dim)", "cumsum", "softmax", "log_softmax"):
        if not ndim:
            return None
        d = draw(st.integers(-ndim, ndim - 1))
        if name == "max(dim)":
            if not shape[d]:
                return None
            return f"max({d}, keepdim={keepdim})", lambda x, dev: tuple(torch.max(x, d, keepdim)), False
        return f"{name}({d})", lambda x, dev: getattr(torch, name)(x, d), False
    if name == "argmax":
        d = draw(st.sampled_from((None,) + tuple(range(-ndim, ndim))))
        if not _nonempty_along(shape, d):
            return None
        return f"argmax({d}, keepdim={keepdim})", lambda x, dev: torch.argmax(x, d, keepdim), False
    dim = dims_arg(draw, ndim)
    if name in ("prod", "any", "all") and isinstance(dim, tuple):
        dim = dim[0]  # one dim
    if name == "amax" and not _nonempty_along(shape, dim):
        return None  # torch refuses to reduce an empty dim with amax (logsumexp gives -inf)
    if name == "logsumexp" and dim is None:
        dim = tuple(range(ndim))
    if name == "var":
        return f"var({dim}, keepdim={keepdim})", lambda x, dev: torch.var(x, dim, keepdim=keepdim, correction=0), \
            False
    if name == "amax":
        return f"amax({dim}, keepdim={keepdim})", lambda x, dev: x.amax(() if dim is None else dim, keepdim), False
    if dim is None:
        return f"{name}()", lambda x, dev: getattr(torch, name)(x), False
    return f"{name}({dim}, keepdim={keepdim})", lambda x, dev: getattr(torch, name)(x, dim, keepdim), False


def step_matmul(draw, t):
    if not t.ndim or t.ndim > 3 or category(t) == BOOL:
        return None
    shape = tuple(t.shape)
    dtype = {torch.float32: np.float32, torch.float64: np.float64, torch.int64: np.int64}.get(t.dtype)
    if dtype is None:
        return None
    m = draw(st.integers(1, 3))
    if t.ndim >= 2 and draw(st.booleans()):
        c = const_array(draw, (m, shape[-2]), dtype)
        return f"const{c.shape} @ x", lambda x, dev: on(dev, c) @ x, False
    c = const_array(draw, (shape[-1], m) if draw(st.booleans()) else (shape[-1],), dtype)
    return f"x @ const{c.shape}", lambda x, dev: torch.matmul(x, on(dev, c)), False


def step_shape(draw, t):
    shape, ndim = tuple(t.shape), t.ndim
    kind = draw(st.sampled_from(("cat", "stack", "flip", "reshape", "flatten", "contiguous", "clone", "index")))
    if kind == "cat" and ndim and math.prod(shape) <= 16:
        d = draw(st.integers(-ndim, ndim - 1))
        return f"cat([x, x], {d})", lambda x, dev: torch.cat([x, x], d), False
    if kind == "stack" and math.prod(shape) <= 16:
        d = draw(st.integers(-ndim - 1, ndim))
        return f"stack([x, x], {d})", lambda x, dev: torch.stack([x, x], d), False
    if kind == "flip" and ndim:
        dims = tuple(draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim)))
        return f"flip({dims})", lambda x, dev: torch.flip(x, dims), False
    if kind == "reshape":
        new = draw(st.permutations(shape)) if shape else ()
        new = tuple(new)
        if new and draw(st.booleans()) and math.prod(shape):
            new = (-1,) + new[1:]
        return f"reshape({new})", lambda x, dev: x.reshape(new), False
    if kind == "flatten":
        return "flatten()", lambda x, dev: x.flatten(), False
    if kind == "contiguous":
        return "contiguous()", lambda x, dev: x.contiguous(), False
    if kind == "clone":
        return "clone()", lambda x, dev: x.clone(), False
    if ndim and shape[0]:
        idx = draw(st.lists(st.integers(-shape[0], shape[0] - 1), max_size=4))
        return f"x[{idx}]", lambda x, dev: x[idx], False
    return None


def step_view(draw, t):
    view = draw_view(draw, tuple(t.shape))
    return f"x{view.label}", lambda x, dev: view.torch(x), "maybe" if view.may_copy else False  # x.view(...) may
    # refuse a strided x: then both devices must refuse


def step_inplace(draw, t):
    """An in-place op on x or on a writable view of it; the program goes on with x."""
    view = draw_view(draw, tuple(t.shape), keep=lambda v: v.writable and not v.may_copy) \
        if draw(st.booleans()) else None
    target = view.torch(t) if view else t
    if overlaps(target):
        return None  # torch refuses to write it (step_failing covers that)
    shape = tuple(target.shape)
    c = category(t)
    names = ["fill_", "zero_", "copy_", "setitem", "setitem_list", "masked_fill_"]
    if c != BOOL:
        names += ["add_", "sub_", "mul_", "clamp_", "neg_"]
    if c == FLOAT:
        names += ["div_"]
    name = draw(st.sampled_from(names))
    where = f"x{view.label if view else ''}"

    def through(fn):
        def run(x, dev):
            v = view.torch(x) if view else x
            out = fn(v, dev)
            assert out is None or out is v, f"{name} returned a new tensor"
            return (x, v)
        return run

    if name in ("add_", "sub_", "mul_", "div_"):
        if draw(st.booleans()):
            s = scalar_for(draw, t)
            if name == "sub_" and isinstance(s, bool):
                s = 2  # torch refuses to subtract a bool (as for a bool tensor below)
            return f"{where}.{name}({s!r})", through(lambda v, dev: getattr(v, name)(s)), False
        o = const_array(draw, suffix_shape(draw, shape), same_or_lower(draw, t))
        if name == "sub_" and o.dtype == np.bool_:
            o = o.astype(np.int64)
        return f"{where}.{name}(const {o.dtype}{o.shape})", through(lambda v, dev: getattr(v, name)(on(dev, o))), \
            False
    if name == "fill_":
        s = scalar_for(draw, t)
        return f"{where}.fill_({s!r})", through(lambda v, dev: v.fill_(s)), False
    if name == "zero_":
        return f"{where}.zero_()", through(lambda v, dev: v.zero_()), False
    if name == "copy_":
        o = const_array(draw, suffix_shape(draw, shape))  # copy_ casts any dtype
        return f"{where}.copy_(const {o.dtype}{o.shape})", through(lambda v, dev: v.copy_(on(dev, o))), False
    if name == "clamp_":
        return f"{where}.clamp_(-1, 1)", through(lambda v, dev: v.clamp_(-1, 1)), False
    if name == "neg_":
        return f"{where}.neg_()", through(lambda v, dev: v.neg_()), False
    if name == "masked_fill_":
        mask = draw(hnp.arrays(np.bool_, suffix_shape(draw, shape)))
        s = scalar_for(draw, t)
        return f"{where}.masked_fill_(mask{mask.shape}, {s!r})", \
            through(lambda v, dev: v.masked_fill_(on(dev, mask), s)), False
    if name == "setitem":
        key = basic_key(draw, shape)
        o = const_array(draw, suffix_shape(draw, np.empty(shape)[key].shape), same_or_lower(draw, t))
        return f"{where}[{key!r}] = const {o.dtype}{o.shape}", \
            through(lambda v, dev: v.__setitem__(key, on(dev, o))), False
    if not shape or not shape[0]:
        return None
    idx = draw(st.lists(st.integers(0, shape[0] - 1), unique=True, max_size=shape[0]))
    s = scalar_for(draw, t)
    return f"{where}[{idx}] = {s!r}", through(lambda v, dev: v.__setitem__(idx, s)), False


def overlaps(t):
    """Whether elements of t provably alias (a stride-0 dim of size > 1): what PyTorch refuses to write."""
    return t.numel() > 0 and any(st == 0 and n > 1 for n, st in zip(t.shape, t.stride()))


def step_failing(draw, t):
    """An in-place op both devices must refuse before touching anything."""
    shape = tuple(t.shape)
    kind = draw(st.sampled_from(("shape", "copy_", "float into int", "expanded")))
    if kind == "float into int" and category(t) != FLOAT:
        return "x.add_(0.5)", lambda x, dev: x.add_(0.5), True
    if kind == "expanded" and t.numel():  # (an empty tensor has no aliasing elements: torch writes it)
        # (add_, not zero_: torch lets zero_ and fill_ write an expanded tensor)
        return f"x.expand{(2,) + shape}.add_(1)", lambda x, dev: x.expand(2, *shape).add_(1), True
    bad = bad_shape(draw, shape)
    o = np.zeros(bad, np.bool_ if category(t) == BOOL else np.int64)
    if kind == "copy_":
        return f"x.copy_(const{bad})", lambda x, dev: x.copy_(on(dev, o)), True
    name = "copy_" if category(t) == BOOL else "add_"
    return f"x.{name}(const{bad})", lambda x, dev: getattr(x, name)(on(dev, o)), True


STEPS = (step_unary, step_cast, step_binary, step_where, step_reduce, step_matmul, step_shape, step_view,
         step_view, step_inplace, step_inplace, step_failing)


# ---------------------------------------------------------------------------
# the property


def geometry(t):
    return tuple(t.shape), t.dtype, tuple(t.stride()), t.storage_offset()


def run_step(fn, x, dev):
    try:
        out = fn(x, dev)
    except (RuntimeError, ValueError, IndexError) as e:
        return e
    return out if isinstance(out, tuple) else (out,)


@given(st.data())
def test_meta_program_has_the_cpu_shapes_dtypes_and_geometry(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4), label="shape")
    arr = const_array(data.draw, shape, data.draw(st.sampled_from(list(DTYPES)), label="dtype"))
    cpu, meta = torch.tensor(arr), torch.tensor(arr, device="meta")
    assert geometry(meta) == geometry(cpu) and meta.device.type == "meta"
    for k in range(data.draw(st.integers(1, 12), label="steps")):
        step = data.draw(st.sampled_from(STEPS), label=f"step {k}")(data.draw, cpu)
        if step is None:
            continue
        label, fn, raises = step
        note(f"step {k}: {label}  on {tuple(cpu.shape)} {cpu.dtype}")
        versions = cpu._version, meta._version
        with np.errstate(all="ignore"):
            out_cpu = run_step(fn, cpu, "cpu")
            out_meta = run_step(fn, meta, "meta")
        if raises is True:
            assert isinstance(out_cpu, RuntimeError), f"cpu: expected RuntimeError, got {out_cpu!r}"
        if isinstance(out_cpu, Exception):
            if not raises:
                raise out_cpu
            assert type(out_meta) is type(out_cpu), f"cpu raised {out_cpu!r}, meta gave {out_meta!r}"
            assert (cpu._version, meta._version) == versions, "a refused in-place op bumped a version"
            continue
        if isinstance(out_meta, Exception):
            raise out_meta
        for i, (c, m) in enumerate(zip(out_cpu, out_meta)):
            assert m.device.type == "meta", f"{label}: output {i} is on {m.device}"
            assert geometry(m) == geometry(c), f"{label}: output {i} meta {geometry(m)} vs cpu {geometry(c)}"
        cpu, meta = out_cpu[0], out_meta[0]
        assert meta._version == cpu._version, f"{label}: version meta {meta._version} vs cpu {cpu._version}"
        if cpu.numel() > MAX_SIZE:
            break
