"""A random program run on meta arrays has the shapes and dtypes of the same program on cpu.

Programs are chains of public core ops (elementwise with promotion, reductions,
shape and indexing ops, matmul, composites) drawn by hypothesis step by step from
the current value's shape and dtype, so every step is valid. Each step runs on a
cpu value and on its meta twin; then the program's gradient (reverse mode) and its
derivative along a direction (forward mode) are taken on both devices and compared
the same way.
"""
import math

import numpy as np
from hypothesis import given, note, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from mindtorch_v2 import core

FLOAT, BOOL = core.dtypes.FLOAT, core.dtypes.BOOL
MAX_SIZE = 24
CONST_DTYPES = (np.float32, np.float64, np.int64, np.int32, np.bool_)


def cat(x):
    return x.dtype.category


def aval(x):
    return tuple(x.shape), x.dtype


def const(value, like):
    """A constant on `like`'s device."""
    return core.asarray(value, device=like.device)


def suffix_shape(draw, shape):
    """A shape that broadcasts against `shape` without growing it: a suffix with some 1s."""
    k = draw(st.integers(0, len(shape)))
    return tuple(1 if draw(st.booleans()) else s for s in shape[len(shape) - k:])


def const_array(draw, shape, dtype=None):
    dtype = np.dtype(dtype or draw(st.sampled_from(CONST_DTYPES)))
    if dtype.kind == "b":
        return draw(hnp.arrays(np.bool_, shape))
    if dtype.kind in "iu":
        return draw(hnp.arrays(dtype, shape, elements=st.integers(-3, 3)))
    return draw(hnp.arrays(dtype, shape, elements=st.floats(-2, 2, width=32)))


def axis_arg(draw, ndim):
    """None, an int (possibly negative) or a tuple of distinct axes."""
    if ndim == 0:
        return draw(st.sampled_from((None, ())))
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return None
    if kind == 1:
        return draw(st.integers(-ndim, ndim - 1))
    return tuple(draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim)))


# ---------------------------------------------------------------------------
# steps: each takes (draw, shape, dtype category) and returns (label, fn on a value) or None


UNARY_FLOAT = ("tanh", "sin", "cos", "sigmoid", "erf", "exp")  # promote ints/bools to float
UNARY_NUMERIC = ("neg", "abs", "sign", "floor", "ceil", "round")


def step_unary(draw, shape, c):
    if c == BOOL:
        name = draw(st.sampled_from(UNARY_FLOAT + ("logical_not",)))
    else:
        name = draw(st.sampled_from(UNARY_FLOAT + UNARY_NUMERIC + ("logical_not", "square", "relu")))
    if name == "exp":  # keep values small
        return name, lambda x: core.exp(core.tanh(x))
    return name, getattr(core, name)


def step_cast(draw, shape, c):
    dtype = draw(st.sampled_from((core.float32, core.float64, core.float16, core.int64, core.int32, core.bool_)))
    return f"cast {dtype.name}", lambda x: core.cast(x, dtype)


BINARY = ("add", "sub", "mul", "maximum", "minimum", "div", "eq", "lt", "ge", "logical_and", "logical_xor")


def step_binary(draw, shape, c):
    name = draw(st.sampled_from(BINARY))
    if draw(st.integers(0, 3)) == 3:  # a python scalar operand: weak promotion
        other = draw(st.sampled_from((2, 0.5, True, -1)))
        if name == "sub" and isinstance(other, bool):
            other = 1
        if name == "div":
            other = 2.0
        swap = draw(st.booleans()) and name != "div"
        fn = getattr(core, name)
        return f"{name} scalar {other!r}", (lambda x: fn(other, x)) if swap else (lambda x: fn(x, other))
    oshape = suffix_shape(draw, shape)
    if size_of(shape) <= 8 and draw(st.integers(0, 3)) == 3:
        oshape = (2,) + tuple(shape)  # the other operand grows the result
    value = const_array(draw, oshape)
    if name == "div":
        value = np.abs(value.astype(np.float64)) + 0.5
    if name == "sub" and value.dtype == np.bool_:
        value = value.astype(np.int64)
    if name == "sub" and c == BOOL:
        value = value.astype(np.float32)
    swap = draw(st.booleans()) and name != "div"
    fn = getattr(core, name)
    if swap:
        return f"{name}(const {value.dtype}{value.shape}, x)", lambda x: fn(const(value, x), x)
    return f"{name}(x, const {value.dtype}{value.shape})", lambda x: fn(x, const(value, x))


def step_where(draw, shape, c):
    other = const_array(draw, suffix_shape(draw, shape))
    return f"where(x > 0, x, const {other.dtype}{other.shape})", \
        lambda x: core.where(core.gt(core.cast(x, core.float32), 0.0), x, const(other, x))


REDUCTIONS = ("sum", "prod", "max", "min", "any", "all", "mean", "var", "logsumexp")


def step_reduce(draw, shape, c):
    name = draw(st.sampled_from(REDUCTIONS))
    axis = axis_arg(draw, len(shape))
    keepdims = draw(st.booleans())
    reduced = range(len(shape)) if axis is None else (axis,) if isinstance(axis, int) else axis
    if name in ("max", "min") and any(shape[a] == 0 for a in reduced):
        name = "sum"  # the extremum of nothing has no value
    fn = getattr(core, name)
    return f"{name}(axis={axis}, keepdims={keepdims})", lambda x: fn(x, axis, keepdims=keepdims)


def step_arg(draw, shape, c):
    if size_of(shape) == 0 or c == BOOL:
        return None
    name = draw(st.sampled_from(("argmax", "argmin")))
    axis = None if not shape or draw(st.booleans()) else draw(st.integers(-len(shape), len(shape) - 1))
    keepdims = draw(st.booleans())
    fn = getattr(core, name)
    return f"{name}(axis={axis}, keepdims={keepdims})", lambda x: fn(x, axis, keepdims)


def step_scan(draw, shape, c):
    if not shape:
        return "cumsum()", lambda x: core.cumsum(x)
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    if c == FLOAT and draw(st.booleans()):
        name = draw(st.sampled_from(("softmax", "log_softmax")))
        fn = getattr(core, name)
        return f"{name}({axis})", lambda x: fn(x, axis)
    return f"cumsum({axis})", lambda x: core.cumsum(x, axis)


def size_of(shape):
    return math.prod(shape)


def step_reshape(draw, shape, c):
    n = size_of(shape)
    factors = []
    m, p = n, 2
    while m > 1:
        while m % p == 0:
            factors.append(p)
            m //= p
        p += 1
    ndim = draw(st.integers(1, 3)) if n != 1 else draw(st.integers(0, 2))
    dims = [1] * ndim
    for f in factors:
        dims[draw(st.integers(0, ndim - 1))] *= f
    if n == 0:
        dims = [0] + dims[1:] if dims else [0]
    elif dims and draw(st.booleans()):
        dims[draw(st.integers(0, len(dims) - 1))] = -1
    return f"reshape({tuple(dims)})", lambda x: core.reshape(x, tuple(dims))


def step_transpose(draw, shape, c):
    if len(shape) < 2:
        return None
    if draw(st.booleans()):
        a, b = draw(st.integers(-len(shape), len(shape) - 1)), draw(st.integers(-len(shape), len(shape) - 1))
        return f"swapaxes({a}, {b})", lambda x: core.swapaxes(x, a, b)
    perm = tuple(draw(st.permutations(range(len(shape)))))
    return f"transpose({perm})", lambda x: core.transpose(x, perm)


def step_dims(draw, shape, c):
    ones = [i for i, s in enumerate(shape) if s == 1]
    if ones and draw(st.booleans()):
        axis = None if draw(st.booleans()) else draw(st.sampled_from(ones))
        return f"squeeze({axis})", lambda x: core.squeeze(x, axis)
    if len(shape) >= 4:
        return None
    axis = draw(st.integers(-len(shape) - 1, len(shape)))
    return f"expand_dims({axis})", lambda x: core.expand_dims(x, axis)


def step_grow(draw, shape, c):
    """Ops that make the value larger: broadcast_to, concatenate, stack, pad."""
    if size_of(shape) > 8 or len(shape) >= 4:
        return None
    kind = draw(st.integers(0, 3))
    if kind == 0:
        target = (2,) + tuple(shape)
        return f"broadcast_to({target})", lambda x: core.broadcast_to(x, target)
    if kind == 1 and shape:
        axis = draw(st.integers(-len(shape), len(shape) - 1))
        return f"concatenate([x, x], {axis})", lambda x: core.concatenate([x, x], axis)
    if kind == 2:
        axis = draw(st.integers(-len(shape) - 1, len(shape)))
        return f"stack([x, x], {axis})", lambda x: core.stack([x, x], axis)
    widths = tuple((draw(st.integers(-min(s, 1), 1)), draw(st.integers(0, 1))) for s in shape)
    return f"pad({widths})", lambda x: core.pad(x, widths)


def step_index(draw, shape, c):
    """Basic and advanced indexing through __getitem__, flip and the strided view."""
    if not shape:
        return None
    kind = draw(st.integers(0, 4))
    if kind == 0:
        key = []
        for s in shape[:draw(st.integers(1, len(shape)))]:
            start = draw(st.one_of(st.none(), st.integers(-s - 1, s + 1)))
            stop = draw(st.one_of(st.none(), st.integers(-s - 1, s + 1)))
            step = draw(st.sampled_from((None, 1, 2, -1, -2)))
            key.append(slice(start, stop, step))
        key = tuple(key)
        return f"x[{key}]", lambda x: x[key]
    if kind == 1 and shape[0] > 0:
        i = draw(st.integers(-shape[0], shape[0] - 1))
        return f"x[{i}]", lambda x: x[i]
    if kind == 2 and shape[0] > 0:
        idx = draw(st.lists(st.integers(-shape[0], shape[0] - 1), max_size=4))
        if idx:
            return f"x[{idx}]", lambda x: x[idx]
    if kind == 3:
        axis = axis_arg(draw, len(shape))
        return f"flip({axis})", lambda x: core.flip(x, axis)
    n = size_of(shape)
    if n == 0:
        return None
    view = tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 2))))
    strides = tuple(draw(st.integers(0, 2)) for _ in view)
    last = sum((v - 1) * s for v, s in zip(view, strides))
    if last >= n:
        return None
    offset = draw(st.integers(0, n - 1 - last))
    return f"as_strided({view}, {strides}, {offset})", lambda x: core.as_strided(x, view, strides, offset)


def step_gather(draw, shape, c):
    if not shape or size_of(shape) == 0 or c == BOOL:
        return None
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return f"sort(axis={axis})[0]", lambda x: core.sort(x, axis)[0]
    if kind == 1:
        k = draw(st.integers(0, shape[axis]))
        return f"topk({k}, axis={axis})[0]", lambda x: core.topk(x, k, axis)[0]
    idx = np.asarray(draw(st.lists(st.integers(-shape[axis], shape[axis] - 1), max_size=3)), np.int64)
    return f"take({idx.tolist()}, axis={axis})", lambda x: core.take(x, const(idx, x), axis)


def step_matmul(draw, shape, c):
    if not shape or len(shape) > 3:
        return None
    m = draw(st.integers(1, 3))
    other = const_array(draw, (shape[-1], m) if draw(st.booleans()) or len(shape) == 1 else (shape[-1],))
    if draw(st.booleans()) and len(shape) >= 2:
        other = const_array(draw, (m, shape[-2]))
        return f"matmul(const {other.shape}, x)", lambda x: core.matmul(const(other, x), x)
    return f"matmul(x, const {other.shape})", lambda x: core.matmul(x, const(other, x))


STEPS = (step_unary, step_cast, step_binary, step_where, step_reduce, step_arg, step_scan, step_reshape,
         step_transpose, step_dims, step_grow, step_index, step_gather, step_matmul)


@st.composite
def programs(draw):
    """(input array, [(label, fn), ...]) drawn step by step along the cpu avals."""
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4).filter(
        lambda s: size_of(s) <= MAX_SIZE))
    x = const_array(draw, shape, draw(st.sampled_from((np.float64, np.float32, np.int64, np.bool_))))
    value = core.asarray(x)
    program = []
    length = draw(st.sampled_from(range(2, 9)))
    for _ in range(4 * length):
        if len(program) == length:
            break
        step = draw(st.sampled_from(STEPS))(draw, value.shape, cat(value))
        if step is None:
            continue
        label, fn = step
        program.append((label, fn))
        value = run([step], value)[0]
        if size_of(value.shape) > 4 * MAX_SIZE:
            break
    return x, program


def run(program, x):
    avals = []
    with np.errstate(all="ignore"):  # var of one element, mean of none: nan is fine here
        for label, fn in program:
            x = fn(x)
            avals.append((label, tuple(x.shape), x.dtype))
    return x, avals


# programs are cheap: several times the profile's example budget
MANY = settings(max_examples=5 * settings().max_examples)


@MANY
@given(programs())
def test_meta_program_has_the_cpu_shapes_and_dtypes(prog):
    x, program = prog
    note("\n".join(label for label, _ in program))
    out_cpu, avals_cpu = run(program, core.asarray(x))
    out_meta, avals_meta = run(program, core.asarray(x, device="meta"))
    assert avals_meta == avals_cpu
    assert out_meta.device is core.meta


@MANY
@given(programs())
def test_meta_program_gradient_has_the_cpu_shapes(prog):
    x, program = prog
    note("\n".join(label for label, _ in program))
    if x.dtype.kind != "f":
        x = x.astype(np.float64)

    def f(v):
        return run(program, v)[0]

    results = []
    for device in ("cpu", "meta"):
        x_dev = core.asarray(x, device=device)
        with np.errstate(all="ignore"):
            out, pull = core.vjp(f, x_dev)
            ct = core.ones_like(out) if cat(out) == FLOAT else core.zeros_like(out)
            (g,) = pull(ct)
            _, t = core.jvp(f, (x_dev,), (core.ones_like(x_dev),))
        results.append((aval(out), aval(g), aval(t), (g.device.type, t.device.type)))
    cpu, meta = results
    assert meta[:3] == cpu[:3]
    assert cpu[1] == (tuple(x.shape), core.dtypes.from_numpy(x.dtype))
    assert cpu[2] == cpu[0]
    assert (cpu[3], meta[3]) == (("cpu", "cpu"), ("meta", "meta"))
