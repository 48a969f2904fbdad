"""In-place ops through views leave the base exactly as NumPy does, and bump the shared version once.

A chain of steps runs on a float64 tensor and on its NumPy twin side by side:

    view     slicing (positive steps, ints, None, ...), select, narrow, transpose, permute, t, mT,
             unsqueeze, squeeze, diagonal, view (only where NumPy's reshape is a view too), movedim,
             split, unfold without overlap, detach: the current view moves in both worlds
    side     expand, overlapping unfold: read-only views taken on the side (NumPy's are read-only too)
    inplace  add_/sub_/mul_/div_ (with alpha), the augmented operators, fill_, zero_, copy_, clamp_,
             neg_, abs_, masked_fill_, __setitem__ with basic and advanced keys: the current view is
             written in both (`np.add(v, o, out=v)`, `v[key] = o`, `np.clip(v, lo, hi, out=v)`, ...);
             an operand may be a scalar, an array of any broadcastable shape and dtype, or another view
             of the same base (overlapping reads: NumPy and PyTorch both act as if it were copied first)
    jump     the current view becomes one taken earlier (a view whose base was written since)

After every step the base equals NumPy's base; at the end every view taken equals its twin.
Every in-place op bumps the one version counter all views share; a failing one (a shape that does
not broadcast, a value tensor for fill_, a write through an expanded view) raises RuntimeError and
changes neither data nor version.

The view table (`draw_view`) pairs each torch view with its NumPy view and a functional core twin;
test_eager_autograd and test_eager_meta draw their views from it.
"""
import math
from typing import Callable, NamedTuple

import numpy as np
import pytest
from hypothesis import given, note
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mindtorch_v2 as torch
from mindtorch_v2 import core


# ---------------------------------------------------------------------------
# the view table: torch view, NumPy view, core twin


class NotAView(Exception):
    """NumPy would copy here (a reshape across non-contiguous dims): the step is skipped."""


class View(NamedTuple):
    label: str
    torch: Callable        # Tensor -> a view of it
    numpy: Callable        # ndarray -> a view of it (raises NotAView when NumPy would copy)
    core: Callable         # core value -> the same value, functionally
    writable: bool = True  # no two elements alias: a target for in-place ops
    multi_output: bool = False  # one of the views a split returns (torch forbids writing them under autograd)
    differentiable: bool = True  # detach is not
    may_copy: bool = False  # torch.view of a strided tensor may refuse where core.reshape does not


def numpy_view_of(key):
    """A basic key that makes NumPy return a 0-d view rather than a scalar copy when every dim is indexed."""
    keys = key if isinstance(key, tuple) else (key,)
    return keys if Ellipsis in keys else keys + (Ellipsis,)


def gathered(numpy_view):
    """The core twin of a view with no core op of its own: a gather at the view's base positions."""
    def fn(x):
        positions = numpy_view(np.arange(math.prod(x.shape)).reshape(x.shape)).copy()
        return core.take(core.reshape(x, (-1,)), core.asarray(positions))
    return fn


def _slice_entry(draw, size):
    if size > 0 and draw(st.integers(0, 3)) == 0:
        return draw(st.integers(-size, size - 1))
    bound = st.none() | st.integers(-size - 1, size + 1)
    return slice(draw(bound), draw(bound), draw(st.sampled_from((None, 1, 2, 3))))


def basic_key(draw, shape):
    """A basic index for `shape`: ints, positive-step slices, None, at most one Ellipsis."""
    ndim = len(shape)
    lead = draw(st.integers(0, ndim))
    key = [_slice_entry(draw, s) for s in shape[:lead]]
    if draw(st.booleans()):
        trail = draw(st.integers(0, ndim - lead))
        key += [Ellipsis] + [_slice_entry(draw, s) for s in shape[ndim - trail:]]
    for _ in range(draw(st.integers(0, 1))):
        key.insert(draw(st.integers(0, len(key))), None)
    if len(key) == 1 and key[0] is not Ellipsis and draw(st.booleans()):
        return key[0]
    return tuple(key)


def view_index(draw, shape):
    key = basic_key(draw, shape)
    return View(f"[{key!r}]", lambda t: t[key], lambda a: a[numpy_view_of(key)], lambda x: core.getitem(x, key))


def view_select(draw, shape):
    dims = [d for d, s in enumerate(shape) if s > 0]
    if not dims:
        return None
    d = draw(st.sampled_from(dims))
    i = draw(st.integers(-shape[d], shape[d] - 1))
    dim = d - len(shape) if draw(st.booleans()) else d
    key = (slice(None),) * d + (i, Ellipsis)
    return View(f".select({dim}, {i})", lambda t: t.select(dim, i), lambda a: a[key], lambda x: core.getitem(x, key))


def view_narrow(draw, shape):
    if not shape:
        return None
    d = draw(st.integers(0, len(shape) - 1))
    size = shape[d]
    start = draw(st.integers(-size, size)) if size else 0
    begin = start + size if start < 0 else start
    length = draw(st.integers(0, size - begin))
    key = (slice(None),) * d + (slice(begin, begin + length),)
    return View(f".narrow({d}, {start}, {length})", lambda t: t.narrow(d, start, length), lambda a: a[key],
                lambda x: core.getitem(x, key))


def view_transpose(draw, shape):
    if not shape:
        return None
    n = len(shape)
    a, b = draw(st.integers(-n, n - 1)), draw(st.integers(-n, n - 1))
    return View(f".transpose({a}, {b})", lambda t: t.transpose(a, b), lambda x: np.swapaxes(x, a, b),
                lambda x: core.swapaxes(x, a, b))


def view_permute(draw, shape):
    n = len(shape)
    perm = tuple(p - n if draw(st.booleans()) else p for p in draw(st.permutations(range(n))))
    return View(f".permute{perm}", lambda t: t.permute(*perm), lambda a: np.transpose(a, perm),
                lambda x: core.transpose(x, tuple(p % n for p in perm)))


def view_t(draw, shape):
    if len(shape) <= 2:
        return View(".t()", lambda t: t.t(), lambda a: a.T, lambda x: core.transpose(x))
    return View(".mT", lambda t: t.mT, lambda a: np.swapaxes(a, -2, -1), lambda x: core.swapaxes(x, -2, -1))


def view_unsqueeze(draw, shape):
    n = len(shape)
    d = draw(st.integers(-n - 1, n))
    return View(f".unsqueeze({d})", lambda t: t.unsqueeze(d), lambda a: np.expand_dims(a, d),
                lambda x: core.expand_dims(x, d))


def view_squeeze(draw, shape):
    n = len(shape)
    kind = draw(st.integers(0, 2)) if n else 0
    if kind == 0:
        dim, axes = None, tuple(i for i, s in enumerate(shape) if s == 1)
    elif kind == 1:  # torch ignores a dim that is not of size 1
        dim = draw(st.integers(-n, n - 1))
        axes = (dim % n,) if shape[dim] == 1 else ()
    else:
        dim = tuple(draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n)))
        axes = tuple(sorted(i for i in dim if shape[i] == 1))
    call = (lambda t: t.squeeze()) if dim is None else (lambda t: t.squeeze(dim))
    return View(f".squeeze({'' if dim is None else dim})", call, lambda a: np.squeeze(a, axes),
                (lambda x: core.squeeze(x, axes)) if axes else (lambda x: x))


def view_diagonal(draw, shape):
    n = len(shape)
    if n < 2:
        return None
    d1, d2 = draw(st.lists(st.integers(-n, n - 1), min_size=2, max_size=2, unique_by=lambda d: d % n))
    offset = draw(st.integers(-3, 3))

    def numpy_diagonal(a):
        out = np.diagonal(a, offset, d1, d2)  # read-only by default in NumPy, writable on request
        if a.flags.writeable:
            out.flags.writeable = True
        return out
    return View(f".diagonal({offset}, {d1}, {d2})", lambda t: t.diagonal(offset, d1, d2), numpy_diagonal,
                gathered(numpy_diagonal))


def view_reshape(draw, shape):
    n = math.prod(shape)
    factors, m, p = [], n, 2
    while m > 1:
        while m % p == 0:
            factors.append(p)
            m //= p
        p += 1
    dims = [1] * draw(st.integers(0 if n == 1 else 1, 3))
    for f in factors:
        dims[draw(st.integers(0, len(dims) - 1))] *= f
    if n == 0:
        dims = [0] + dims[1:] if dims else [0]
    if dims and n and draw(st.booleans()):
        dims[draw(st.integers(0, len(dims) - 1))] = -1
    new = tuple(dims)

    def numpy_view(a):
        try:
            return np.reshape(a, new, copy=False)
        except ValueError:
            raise NotAView from None
    return View(f".view{new}", lambda t: t.view(new), numpy_view, lambda x: core.reshape(x, new), may_copy=True)


def view_movedim(draw, shape):
    n = len(shape)
    if not n:
        return None
    src, dst = draw(st.integers(-n, n - 1)), draw(st.integers(-n, n - 1))
    perm = [i for i in range(n) if i != src % n]
    perm.insert(dst % n, src % n)
    return View(f".movedim({src}, {dst})", lambda t: t.movedim(src, dst), lambda a: np.moveaxis(a, src, dst),
                lambda x: core.transpose(x, tuple(perm)))


def view_split(draw, shape):
    """One piece of split / chunk / unbind (torch always returns at least one piece)."""
    if not shape:
        return None
    d = draw(st.integers(0, len(shape) - 1))
    size = shape[d]
    kind = draw(st.integers(0, 2)) if size else draw(st.integers(0, 1))
    if kind == 0:
        step = draw(st.integers(1, max(size, 1)))
        label, call = f".split({step}, {d})", lambda t: t.split(step, d)
    elif kind == 1:
        chunks = draw(st.integers(1, 4))
        step = -(-size // chunks)
        label, call = f".chunk({chunks}, {d})", lambda t: t.chunk(chunks, d)
    else:
        k = draw(st.integers(0, size - 1))
        key = (slice(None),) * d + (k, Ellipsis)
        return View(f".unbind({d})[{k}]", lambda t: t.unbind(d)[k], lambda a: a[key],
                    lambda x: core.getitem(x, key), multi_output=True)
    starts = list(range(0, size, step)) if step else []
    starts = starts or [0]
    k = draw(st.integers(0, len(starts) - 1))
    key = (slice(None),) * d + (slice(starts[k], starts[k] + step if step else 0),)
    return View(f"{label}[{k}]", lambda t: call(t)[k], lambda a: a[key], lambda x: core.getitem(x, key),
                multi_output=True)


def view_unfold(draw, shape):
    if not shape or not any(shape):
        return None
    d = draw(st.sampled_from([i for i, s in enumerate(shape) if s > 0]))
    size = draw(st.integers(1, shape[d]))
    step = draw(st.integers(1, 3))
    disjoint = step >= size

    def numpy_unfold(a):
        windows = np.lib.stride_tricks.sliding_window_view(a, size, axis=d,
                                                           writeable=disjoint and a.flags.writeable)
        return windows[(slice(None),) * d + (slice(None, None, step),)]
    return View(f".unfold({d}, {size}, {step})", lambda t: t.unfold(d, size, step), numpy_unfold,
                gathered(numpy_unfold), writable=disjoint)


def view_detach(draw, shape):
    return View(".detach()", lambda t: t.detach(), lambda a: a[...], lambda x: x, differentiable=False)


def view_expand(draw, shape):
    lead = tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 1))))
    sizes = lead + tuple(draw(st.sampled_from((1, 2, 3, -1))) if s == 1 else
                         draw(st.sampled_from((s, -1))) for s in shape)
    target = lead + tuple(s if e == -1 else e for s, e in zip(shape, sizes[len(lead):]))
    writable = all(t == s for t, s in zip(target[len(lead):], shape)) and all(s == 1 for s in lead)
    # NumPy's broadcast views are read-only; an expand that only adds leading 1s is an ordinary view
    numpy_expand = (lambda a: a[(None,) * len(lead) + (Ellipsis,)]) if writable else \
        (lambda a: np.broadcast_to(a, target))
    return View(f".expand{sizes}", lambda t: t.expand(tuple(sizes)), numpy_expand, lambda x: core.broadcast_to(x, target),
                writable=writable)


VIEW_DRAWERS = (view_index, view_select, view_narrow, view_transpose, view_permute, view_t, view_unsqueeze,
                view_squeeze, view_diagonal, view_reshape, view_movedim, view_split, view_unfold, view_detach,
                view_expand)


def draw_view(draw, shape, keep=lambda view: True):
    """A view op valid for `shape` for which keep(view) holds, drawn until one applies."""
    while True:
        view = draw(st.sampled_from(VIEW_DRAWERS))(draw, tuple(shape))
        if view is not None and keep(view):
            return view


def suffix_shape(draw, shape, leading_ones=False):
    """A shape that broadcasts to `shape` without growing it (a suffix with some 1s)."""
    k = draw(st.integers(0, len(shape)))
    out = tuple(1 if draw(st.booleans()) else s for s in shape[len(shape) - k:])
    if leading_ones:
        out = (1,) * draw(st.integers(0, 1)) + out
    return out


def bad_shape(draw, shape):
    """A shape that does not broadcast to `shape`: a grown dim, a clashing dim, or an extra leading one."""
    kind = draw(st.integers(0, 2)) if shape else 0
    if kind == 0:
        return (draw(st.integers(1, 2)),) + tuple(shape)
    d = draw(st.integers(0, len(shape) - 1))
    return tuple(max(s + 1, 2) if i == d else s for i, s in enumerate(shape))


# ---------------------------------------------------------------------------
# the chain: a torch tensor and its NumPy twin, stepped together


FLOATS = st.floats(-4, 4, allow_subnormal=False)
NONZERO = st.floats(0.25, 4, allow_subnormal=False).flatmap(lambda x: st.sampled_from((x, -x)))
BASE_SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


class Chain:
    """Views taken so far: [(label, tensor, ndarray)]; `cur` is the one being stepped."""

    def __init__(self, base):
        self.np_base = base
        self.base = torch.tensor(base.copy(), dtype=torch.float64)
        self.views = [("base", self.base, self.np_base)]
        self.cur = 0
        self.inplace_ops = 0

    @property
    def current(self):
        return self.views[self.cur]

    def check_base(self, what):
        np.testing.assert_array_equal(self.base.numpy(), self.np_base, err_msg=f"base after {what}")

    def check_all(self):
        for label, t, a in self.views:
            assert tuple(t.shape) == a.shape, f"{label}: shape {tuple(t.shape)} vs NumPy {a.shape}"
            np.testing.assert_array_equal(t.numpy(), a, err_msg=f"view {label}")

    def check_versions(self):
        for label, t, _ in self.views:
            assert t._version == self.inplace_ops, \
                f"{label}: _version {t._version} after {self.inplace_ops} in-place ops"


def draw_operand(data, chain, shape, nonzero=False, leading_ones=False, tensor_only=False):
    """(label, torch operand, NumPy operand) broadcastable to `shape` without growing it."""
    kinds = ("array", "0-d", "view") if tensor_only else ("scalar", "array", "0-d", "view")
    kind = data.draw(st.sampled_from(kinds), label="operand kind")
    elements = NONZERO if nonzero else FLOATS
    if kind == "scalar":
        s = data.draw(elements, label="scalar")
        return repr(s), s, s
    if kind == "view" and not nonzero:
        fits = [v for v in chain.views if _broadcasts_to(tuple(v[1].shape), shape)]
        if fits:
            label, t, a = data.draw(st.sampled_from(fits), label="operand view")
            return f"view {label}", t, a
    if kind == "0-d":
        s = data.draw(elements, label="0-d value")
        return f"tensor({s!r})", torch.tensor(s, dtype=torch.float64), np.float64(s)
    oshape = suffix_shape(data.draw, shape, leading_ones)
    dtype = data.draw(st.sampled_from((np.float64, np.float32, np.int64)), label="operand dtype")
    if dtype == np.int64:
        arr = data.draw(hnp.arrays(dtype, oshape, elements=st.integers(1, 3) if nonzero else st.integers(-3, 3)))
    else:
        arr = data.draw(hnp.arrays(dtype, oshape, elements=elements.map(dtype)))
    return f"array {arr.dtype}{arr.shape}", torch.tensor(arr), arr


def _broadcasts_to(src, dst):
    try:
        return np.broadcast_shapes(src, dst) == tuple(dst)
    except ValueError:
        return False


def as_f64(o):
    """A NumPy operand as the float64 torch computes with (other is cast to self's dtype before alpha)."""
    return np.asarray(o, dtype=np.float64)


def draw_inplace(data, chain):
    """(label, torch fn on the current view, NumPy fn on its twin)."""
    _, t, a = chain.current
    shape = tuple(t.shape)
    op = data.draw(st.sampled_from(("add_", "sub_", "mul_", "div_", "+=", "-=", "*=", "/=", "fill_", "zero_",
                                    "copy_", "clamp_", "clamp_min", "clamp_max", "neg_", "abs_",
                                    "masked_fill_", "setitem", "setitem_advanced")), label="in-place op")
    if op in ("add_", "sub_"):
        label, o_t, o_n = draw_operand(data, chain, shape)
        alpha = data.draw(st.sampled_from((1, 2, -1, 0.5, 0.1)), label="alpha")
        ufunc = np.add if op == "add_" else np.subtract
        if alpha == 1:
            return f"{op}({label})", lambda v: getattr(v, op)(o_t), lambda v: ufunc(v, o_n, out=v)
        return (f"{op}({label}, alpha={alpha})", lambda v: getattr(v, op)(o_t, alpha=alpha),
                lambda v: ufunc(v, np.multiply(as_f64(o_n), alpha), out=v))
    if op in ("mul_", "div_"):
        label, o_t, o_n = draw_operand(data, chain, shape, nonzero=op == "div_")
        ufunc = np.multiply if op == "mul_" else np.divide
        return f"{op}({label})", lambda v: getattr(v, op)(o_t), lambda v: ufunc(v, o_n, out=v)
    if op in ("+=", "-=", "*=", "/="):
        label, o_t, o_n = draw_operand(data, chain, shape, nonzero=op == "/=")
        ufunc = {"+=": np.add, "-=": np.subtract, "*=": np.multiply, "/=": np.divide}[op]
        dunder = {"+=": "__iadd__", "-=": "__isub__", "*=": "__imul__", "/=": "__itruediv__"}[op]

        def augmented(v):
            out = getattr(v, dunder)(o_t)
            assert out is v, f"{dunder} returned a new tensor"
        return f"v {op} {label}", augmented, lambda v: ufunc(v, o_n, out=v)
    if op == "fill_":
        s = data.draw(FLOATS, label="fill value")
        if data.draw(st.booleans(), label="0-d float32 tensor"):
            value, s = torch.tensor(s, dtype=torch.float32), np.float32(s)
        else:
            value = s
        return f"fill_({value!r})", lambda v: v.fill_(value), lambda v: v.__setitem__(Ellipsis, s)
    if op == "zero_":
        return "zero_()", lambda v: v.zero_(), lambda v: v.__setitem__(Ellipsis, 0)
    if op == "copy_":
        if data.draw(st.booleans(), label="bool source"):
            arr = data.draw(hnp.arrays(np.bool_, suffix_shape(data.draw, shape, False)))
            label, o_t, o_n = f"bool array {arr.shape}", torch.tensor(arr), arr
        else:
            label, o_t, o_n = draw_operand(data, chain, shape, tensor_only=True)  # torch's copy_ takes a Tensor
        return f"copy_({label})", lambda v: v.copy_(o_t), lambda v: np.copyto(v, o_n, casting="unsafe")
    if op == "clamp_":
        lo = data.draw(FLOATS, label="min")
        hi = data.draw(FLOATS, label="max")  # min > max is allowed: everything becomes max
        return f"clamp_({lo!r}, {hi!r})", lambda v: v.clamp_(lo, hi), lambda v: np.clip(v, lo, hi, out=v)
    if op == "clamp_min":
        lo = data.draw(FLOATS, label="min")
        return f"clamp_(min={lo!r})", lambda v: v.clamp_(min=lo), lambda v: np.maximum(v, lo, out=v)
    if op == "clamp_max":
        hi = data.draw(FLOATS, label="max")
        return f"clamp_(max={hi!r})", lambda v: v.clamp_(max=hi), lambda v: np.minimum(v, hi, out=v)
    if op == "neg_":
        return "neg_()", lambda v: v.neg_(), lambda v: np.negative(v, out=v)
    if op == "abs_":
        return "abs_()", lambda v: v.abs_(), lambda v: np.abs(v, out=v)
    if op == "masked_fill_":
        mask = data.draw(hnp.arrays(np.bool_, suffix_shape(data.draw, shape, False)), label="mask")
        s = data.draw(FLOATS, label="fill value")
        return (f"masked_fill_(mask{mask.shape}, {s!r})", lambda v: v.masked_fill_(torch.tensor(mask), s),
                lambda v: np.copyto(v, s, where=mask))
    if op == "setitem":
        key = basic_key(data.draw, shape)
        target = a[numpy_view_of(key)].shape
        label, o_t, o_n = draw_operand(data, chain, target, leading_ones=True)
        return (f"v[{key!r}] = {label}", lambda v: v.__setitem__(key, o_t),
                lambda v: v.__setitem__(numpy_view_of(key), o_n))  # (an all-int key is a scalar write in NumPy)
    # advanced key: a boolean mask of the whole view, or distinct positions along dim 0
    if shape and shape[0] and data.draw(st.booleans(), label="positions"):
        idx = data.draw(st.lists(st.integers(-shape[0], shape[0] - 1), unique_by=lambda i: i % shape[0],
                                 max_size=shape[0]), label="positions")
        key_t, key_n, klabel = torch.tensor(idx, dtype=torch.int64), np.asarray(idx, dtype=np.int64), f"{idx}"
        target = (len(idx),) + shape[1:]
    else:
        mask = data.draw(hnp.arrays(np.bool_, shape), label="mask")
        key_t, key_n, klabel = torch.tensor(mask), mask, f"mask{mask.shape}"
        target = (int(mask.sum()),)
    if data.draw(st.booleans(), label="scalar value"):
        s = data.draw(FLOATS, label="value")
        return f"v[{klabel}] = {s!r}", lambda v: v.__setitem__(key_t, s), lambda v: v.__setitem__(key_n, s)
    arr = data.draw(hnp.arrays(np.float64, suffix_shape(data.draw, target, False), elements=FLOATS), label="value")
    return (f"v[{klabel}] = array{arr.shape}", lambda v: v.__setitem__(key_t, torch.tensor(arr)),
            lambda v: v.__setitem__(key_n, arr))


def draw_failing_inplace(data, chain):
    """(label, torch fn on the current view) that must raise RuntimeError before writing anything."""
    _, t, a = chain.current
    shape = tuple(t.shape)
    kind = data.draw(st.sampled_from(("add_", "sub_", "mul_", "copy_", "setitem", "fill_", "expanded")),
                     label="failing op")
    if kind == "expanded" and math.prod(shape):  # (an empty tensor has no aliasing elements: torch writes it)
        sizes = (2,) + shape
        return f"expand{sizes}.add_(1)", lambda v: v.expand(tuple(sizes)).add_(1.0)
    if kind == "fill_":
        value = torch.tensor(np.zeros(data.draw(st.integers(1, 3), label="fill size")))
        return f"fill_({value.shape} tensor)", lambda v: v.fill_(value)
    if kind in ("setitem", "expanded"):
        bad = bad_shape(data.draw, shape)
        if bad == (1,) + shape:  # leading 1s are stripped on assignment (torch and NumPy agree)
            bad = (2,) + shape
        o = torch.tensor(np.ones(bad))
        return f"v[...] = array{bad}", lambda v: v.__setitem__(Ellipsis, o)
    bad = bad_shape(data.draw, shape)
    o = torch.tensor(np.ones(bad))
    return f"{kind}(array{bad})", lambda v: getattr(v, kind)(o)


def step_view(data, chain, side):
    label0, t, a = chain.current
    view = draw_view(data.draw, tuple(t.shape), keep=lambda v: v.writable != side)
    try:
        a2 = view.numpy(a)
    except NotAView:
        note(f"skip {view.label}: NumPy would copy")
        return
    t2 = view.torch(t)
    label = f"{label0}{view.label}"
    note(("side view " if side else "view ") + label)
    chain.views.append((label, t2, a2))
    if not side:
        chain.cur = len(chain.views) - 1


def step_inplace(data, chain):
    label0, t, a = chain.current
    label, fn_t, fn_n = draw_inplace(data, chain)
    note(f"in-place on {label0}: {label}")
    with np.errstate(all="ignore"):
        fn_n(a)
        fn_t(t)
    chain.inplace_ops += 1


def run_chain(data, failing=False):
    base = data.draw(hnp.arrays(np.float64, BASE_SHAPES, elements=FLOATS), label="base")
    chain = Chain(base)
    kinds = ("view", "view", "side", "inplace", "inplace", "inplace", "jump") + (("fail",) if failing else ())
    for _ in range(data.draw(st.integers(1, 10), label="steps")):
        kind = data.draw(st.sampled_from(kinds), label="step")
        if kind == "view":
            step_view(data, chain, side=False)
        elif kind == "side":
            step_view(data, chain, side=True)
        elif kind == "inplace":
            step_inplace(data, chain)
        elif kind == "jump":
            writable = [i for i, (_, t, a) in enumerate(chain.views) if a.flags.writeable]
            chain.cur = data.draw(st.sampled_from(writable), label="jump to")
            note(f"current view: {chain.current[0]}")
        else:
            label0, t, _ = chain.current
            label, fn = draw_failing_inplace(data, chain)
            note(f"failing in-place on {label0}: {label}")
            before = chain.base.numpy().copy()
            with pytest.raises(RuntimeError):
                fn(t)
            np.testing.assert_array_equal(chain.base.numpy(), before, err_msg=f"data after failing {label}")
        chain.check_base(kind)
        if failing:
            chain.check_versions()
    return chain


# ---------------------------------------------------------------------------
# properties


@given(st.data())
def test_views_and_inplace_ops_mirror_numpy(data):
    chain = run_chain(data)
    chain.check_all()


@given(st.data())
def test_every_inplace_op_bumps_the_shared_version_once_and_a_failing_one_changes_nothing(data):
    chain = run_chain(data, failing=True)
    chain.check_versions()
    chain.check_all()
