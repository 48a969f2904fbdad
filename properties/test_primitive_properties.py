"""Per-primitive properties, driven by the registry and the sample strategies.

For every primitive with samples:
  * the meta rule gives the shapes/dtypes of the real (cpu) output, bind on meta
    agrees with `abstract_eval`, and the lowering leaves its inputs untouched;
and for every differentiable one, on float64 samples with a random direction v on
the inputs and a random cotangent u on the outputs:
  * VJP against central differences: <vjp(u), v> == <u, (f(x + eps v) - f(x - eps v)) / 2 eps>;
  * JVP against VJP: <u, jvp(v)> == <vjp(u), v>;
  * one order up (smooth samples): h(x, u) = <vjp(u)(x), w> differentiated by the
    nested reverse pass and by forward-over-reverse, both against central differences;
  * the VJP, JVP and second-order passes run on meta arrays with the right shapes
    (a rule that touches numpy or a buffer fails here);
  * each VJP rule reads only what the primitive's `vjp_reads` declares (the eager tape
    saves exactly that and hands the rule bufferless stand-ins for the rest);
and for every primitive, its cpu lowering gives the same values whatever the memory
layout of its inputs (strided, reversed, Fortran-ordered views, as earlier ops hand out).
"""
import numpy as np
import pytest
from hypothesis import assume, given, note
from hypothesis import strategies as st

import samples
from mindtorch_v2 import core
from mindtorch_v2.core.array import make as make_array

def _differentiable(prim):
    return prim.vjp is not None and not isinstance(prim.vjp, str)


REGISTRY = samples.load_all()
PRIMS = samples.sampled()
DIFF_PRIMS = samples.sampled(_differentiable)

EPS = 1e-6
RTOL, ATOL = 1e-5, 1e-6          # finite differences against AD
AD_RTOL, AD_ATOL = 1e-9, 1e-12   # two AD paths against each other (rounding only)


# ---------------------------------------------------------------------------
# helpers


def draw_sample(data, prim):
    sample = data.draw(REGISTRY[prim].strategy, label=f"{prim.name} sample")
    assert all(type(a) is np.ndarray for a in sample.args), f"{prim.name}: sample args must be numpy arrays"
    note(f"args: {[(a.dtype.name, a.shape) for a in sample.args]}")
    return sample


def on(device, sample):
    return [core.asarray(a, device=device) for a in sample.args]


def as_tuple(prim, out):
    return tuple(out) if prim.multiple_results else (out,)


def is_float(x):  # carries derivatives: floating or complex
    return x.dtype.category >= core.dtypes.FLOAT


def normal(rng, shape, dtype):
    """Standard normal values of a numpy dtype; complex: independent real and imaginary parts."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def aval(x):
    return tuple(x.shape), x.dtype


class Problem:
    """f(*diff_args) = prim(*args with the diff positions replaced), plus random directions."""

    def __init__(self, prim, sample, rng, active=None):
        self.prim = prim
        self.sample = sample
        self.diff = sample.diff if active is None else active  # the others enter as constants
        self.args = on("cpu", sample)
        self.x = [self.args[i] for i in self.diff]
        for i in self.diff:
            assert sample.args[i].dtype in (np.float64, np.complex128), \
                f"{prim.name}: diff input {i} must be float64 or complex128"
        out = as_tuple(prim, prim.bind(*self.args, **sample.params))
        self.out = out
        self.float_out = [is_float(o) for o in out]
        self.v = [core.asarray(normal(rng, x.shape, x.dtype.np)) for x in self.x]
        self.u = [core.asarray(normal(rng, o.shape, o.dtype.np)) if f else core.zeros_like(o)
                  for o, f in zip(out, self.float_out)]

    def f(self, *xs):
        full = list(self.args)
        for i, x in zip(self.diff, xs):
            full[i] = x
        return self.prim.bind(*full, **self.sample.params)

    def cotangent(self, u):
        return tuple(u) if self.prim.multiple_results else u[0]

    def f_np(self, xs):
        """Outputs of f on plain cpu arrays built from numpy values, as numpy arrays."""
        return [np.asarray(o) for o in as_tuple(self.prim, self.f(*[core.asarray(x) for x in xs]))]

    def vjp(self, xs, u):
        _, pull = core.vjp(self.f, *xs)
        return pull(self.cotangent(u))


def dot(a, b):
    """Re sum(a * b): the pairing under which the core's VJP (JAX's convention: the transpose, no conjugate)
    is the adjoint of the JVP, for real and complex arrays alike."""
    return float(np.sum(np.asarray(a, np.complex128) * np.asarray(b, np.complex128)).real)


def abs_dot(a, b):
    return float(np.sum(np.abs(np.asarray(a, np.complex128) * np.asarray(b, np.complex128))))


def _wide(a):
    a = np.asarray(a)
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def assert_close(analytic, reference, scale, rtol, atol, what):
    """|analytic - reference| <= atol + rtol * scale, scale being the size of the terms summed."""
    err = abs(analytic - reference)
    tol = atol + rtol * (scale + abs(reference))
    assert err <= tol, f"{what}: {analytic!r} vs {reference!r} (error {err:.3g} > tolerance {tol:.3g})"


def central_difference(fn, xs, vs):
    """(fn(xs + eps v) - fn(xs - eps v)) / (2 eps), elementwise over the list fn returns."""
    plus = fn([np.asarray(x) + EPS * np.asarray(v) for x, v in zip(xs, vs)])
    minus = fn([np.asarray(x) - EPS * np.asarray(v) for x, v in zip(xs, vs)])
    return [(_wide(p) - _wide(m)) / (2 * EPS) for p, m in zip(plus, minus)]


def differentiable_problem(prim, data):
    sample = draw_sample(data, prim)
    assume(sample.diff)
    active = sample.diff
    if len(active) > 1 and data.draw(st.integers(0, 2), label="constant inputs") == 2:
        # some differentiable inputs held constant: JVP rules get None tangents for them
        active = tuple(sorted(data.draw(st.lists(st.sampled_from(sample.diff), min_size=1, unique=True),
                                        label="active inputs")))
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    return Problem(prim, sample, np.random.default_rng(seed), active)


# ---------------------------------------------------------------------------
# meta rule


@pytest.mark.parametrize("prim", PRIMS, ids=samples.prim_id)
@given(data=st.data())
def test_meta_rule_matches_cpu_output(prim, data):
    sample = draw_sample(data, prim)
    before = [np.array(a, copy=True) for a in sample.args]
    cpu_args = on("cpu", sample)
    meta_args = on("meta", sample)

    # the lowering itself, on read-only inputs: its raw output must already have the meta shape and dtype
    expected = prim.abstract_eval(meta_args, sample.params)
    expected = expected if prim.multiple_results else (expected,)
    raw = prim.impls["cpu"](*[np.asarray(a) for a in cpu_args], **sample.params)
    raw = tuple(raw) if prim.multiple_results else (raw,)
    assert len(raw) == len(expected)
    for r, (shape, dtype) in zip(raw, expected):
        r = np.asarray(r)
        assert (r.shape, r.dtype) == (tuple(shape), dtype.np), \
            f"{prim.name}: the cpu lowering gives {r.shape} {r.dtype}, the meta rule says {shape} {dtype.name}"

    cpu_out = as_tuple(prim, prim.bind(*cpu_args, **sample.params))
    meta_out = as_tuple(prim, prim.bind(*meta_args, **sample.params))
    assert [aval(o) for o in meta_out] == [aval(o) for o in cpu_out]
    assert [aval(o) for o in meta_out] == [(tuple(s), d) for s, d in expected]
    assert all(o.device is core.meta for o in meta_out)
    assert all(o.device is core.cpu for o in cpu_out)
    for b, a in zip(before, sample.args):
        np.testing.assert_array_equal(a, b, err_msg=f"{prim.name} changed one of its inputs")


# ---------------------------------------------------------------------------
# first order


@pytest.mark.parametrize("prim", DIFF_PRIMS, ids=samples.prim_id)
@given(data=st.data())
def test_vjp_matches_central_differences(prim, data):
    p = differentiable_problem(prim, data)
    cts = p.vjp(p.x, p.u)
    assert len(cts) == len(p.x)
    for ct, x in zip(cts, p.x):
        assert aval(ct) == aval(x), f"{prim.name}: cotangent {aval(ct)} for an input {aval(x)}"
    analytic = sum(dot(ct, v) for ct, v in zip(cts, p.v))
    scale = sum(abs_dot(ct, v) for ct, v in zip(cts, p.v))
    jv = central_difference(p.f_np, p.x, p.v)
    reference = sum(dot(u, d) for u, d, f in zip(p.u, jv, p.float_out) if f)
    assert_close(analytic, reference, scale, RTOL, ATOL, f"{prim.name}: <vjp(u), v> vs central differences")


@pytest.mark.parametrize("prim", DIFF_PRIMS, ids=samples.prim_id)
@given(data=st.data())
def test_jvp_agrees_with_vjp(prim, data):
    p = differentiable_problem(prim, data)
    primals_out, tangents_out = core.jvp(p.f, p.x, p.v)
    primals_out, tangents_out = as_tuple(p.prim, primals_out), as_tuple(p.prim, tangents_out)
    for o, po, t in zip(p.out, primals_out, tangents_out):
        assert aval(po) == aval(o) and aval(t) == aval(o), f"{prim.name}: jvp output {aval(po)}/{aval(t)} for {aval(o)}"
        np.testing.assert_array_equal(np.asarray(po), np.asarray(o))
    cts = p.vjp(p.x, p.u)
    forward = sum(dot(u, t) for u, t, f in zip(p.u, tangents_out, p.float_out) if f)
    reverse = sum(dot(ct, v) for ct, v in zip(cts, p.v))
    scale = sum(abs_dot(ct, v) for ct, v in zip(cts, p.v)) + sum(
        abs_dot(u, t) for u, t, f in zip(p.u, tangents_out, p.float_out) if f)
    assert_close(forward, reverse, scale, AD_RTOL, AD_ATOL, f"{prim.name}: <u, jvp(v)> vs <vjp(u), v>")


# ---------------------------------------------------------------------------
# second order


class SecondOrder:
    """h(x, u) = <vjp(u)(x), w>: a scalar function of the inputs and the float cotangents."""

    def __init__(self, p, rng):
        self.p = p
        self.u_pos = [k for k, f in enumerate(p.float_out) if f]
        self.w = [core.asarray(normal(rng, x.shape, x.dtype.np)) for x in p.x]
        self.dirs = p.v + [core.asarray(normal(rng, p.u[k].shape, p.u[k].dtype.np)) for k in self.u_pos]
        self.point = p.x + [p.u[k] for k in self.u_pos]

    def h(self, *xu):
        p = self.p
        n = len(p.x)
        u = list(p.u)
        for k, uk in zip(self.u_pos, xu[n:]):
            u[k] = uk
        cts = p.vjp(list(xu[:n]), u)
        total = None
        for ct, w in zip(cts, self.w):
            term = core.real(core.sum(core.mul(ct, w)))
            total = term if total is None else core.add(total, term)
        return total

    def h_np(self, xu):
        return [np.asarray(self.h(*[core.asarray(a) for a in xu]))]


@pytest.mark.parametrize("prim", DIFF_PRIMS, ids=samples.prim_id)
@given(data=st.data())
def test_second_order_matches_central_differences(prim, data):
    p = differentiable_problem(prim, data)
    if not p.sample.smooth:  # a sample near a kink: its second derivative is not defined
        note("not smooth: second order not checked")
        return
    so = SecondOrder(p, np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed2")))

    value, pull = core.vjp(so.h, *so.point)
    assert aval(value) == ((), core.float64)
    grads = pull(core.ones_like(value))
    for g, a in zip(grads, so.point):
        assert aval(g) == aval(a)
    reverse = sum(dot(g, d) for g, d in zip(grads, so.dirs))
    scale = sum(abs_dot(g, d) for g, d in zip(grads, so.dirs))
    (reference,) = central_difference(so.h_np, so.point, so.dirs)
    assert_close(reverse, float(reference), scale, RTOL, ATOL,
                 f"{prim.name}: reverse-over-reverse <grad h, d> vs central differences")

    _, forward = core.jvp(so.h, so.point, so.dirs)
    assert_close(float(np.asarray(forward)), reverse, scale, AD_RTOL, 1e-10,
                 f"{prim.name}: forward-over-reverse vs reverse-over-reverse")


# ---------------------------------------------------------------------------
# derivative rules on meta arrays


@pytest.mark.parametrize("prim", DIFF_PRIMS, ids=samples.prim_id)
@given(data=st.data())
def test_derivative_rules_run_on_meta(prim, data):
    sample = draw_sample(data, prim)
    assume(sample.diff)
    meta_args = on("meta", sample)
    x = [meta_args[i] for i in sample.diff]

    def f(*xs):
        full = list(meta_args)
        for i, xi in zip(sample.diff, xs):
            full[i] = xi
        return prim.bind(*full, **sample.params)

    out, pull = core.vjp(f, *x)
    outs = as_tuple(prim, out)
    u = [core.zeros_like(o) for o in outs]
    cts = pull(tuple(u) if prim.multiple_results else u[0])
    assert [aval(c) for c in cts] == [aval(a) for a in x]
    assert all(c.device is core.meta for c in cts)

    primals_out, tangents_out = core.jvp(f, x, [core.zeros_like(a) for a in x])
    assert [aval(t) for t in as_tuple(prim, tangents_out)] == [aval(o) for o in outs]
    assert all(t.device is core.meta for t in as_tuple(prim, tangents_out))

    if sample.smooth:
        w = [core.zeros_like(a) for a in x]
        float_pos = [k for k, o in enumerate(outs) if is_float(o)]

        def h(*xu):
            uu = list(u)
            for k, uk in zip(float_pos, xu[len(x):]):
                uu[k] = uk
            _, pull_inner = core.vjp(f, *xu[:len(x)])
            ct = pull_inner(tuple(uu) if prim.multiple_results else uu[0])
            return core.sum(core.stack([core.sum(core.mul(c, wi)) for c, wi in zip(ct, w)]))

        point = x + [u[k] for k in float_pos]
        value, pull2 = core.vjp(h, *point)
        grads = pull2(core.ones_like(value))
        assert [aval(g) for g in grads] == [aval(a) for a in point]
        assert all(g.device is core.meta for g in grads)


# ---------------------------------------------------------------------------
# what a VJP rule reads


def bufferless(x):
    """x's shape, dtype and device without its data: what the eager tape keeps of an unsaved input."""
    return make_array(None, x.shape, x.dtype, x.device)


@pytest.mark.parametrize("prim", DIFF_PRIMS, ids=samples.prim_id)
@given(data=st.data())
def test_vjp_rules_read_only_what_they_declare(prim, data):
    p = differentiable_problem(prim, data)
    g = p.cotangent(p.u)
    out = p.cotangent(p.out)
    for i in p.sample.diff:
        rule = prim.vjp[i]
        if rule is None:
            continue
        reads = prim.vjp_reads if prim.vjp_reads_by_input is None else prim.vjp_reads_by_input[i]
        expected = rule(g, out, *p.args, **p.sample.params)
        args = [a if k in reads else bufferless(a) for k, a in enumerate(p.args)]
        try:
            got = rule(g, out if "out" in reads else None, *args, **p.sample.params)
        except Exception as e:
            raise AssertionError(
                f"{prim.name}: the VJP rule of input {i} reads more than vjp_reads declares ({reads!r}): "
                f"{type(e).__name__}: {e}") from e
        assert (got is None) == (expected is None)
        if got is not None:
            assert aval(got) == aval(expected)
            np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


# ---------------------------------------------------------------------------
# lowerings and memory layout


def relayout(a, kind):
    """A read-only view with a's values in another memory layout."""
    if a.ndim == 0:
        view = np.array(a)
    elif kind == "strided":
        big = np.zeros(a.shape + (2,), a.dtype)
        big[..., 1] = a
        view = big[..., 1]
    elif kind == "reversed":
        view = np.flip(np.ascontiguousarray(np.flip(a)))
    else:
        view = np.asfortranarray(a)
    view = view.view()
    view.flags.writeable = False
    return view


_TOLERANCE = {np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-12}


@pytest.mark.parametrize("prim", PRIMS, ids=samples.prim_id)
@given(data=st.data())
def test_lowering_does_not_depend_on_input_layout(prim, data):
    sample = draw_sample(data, prim)
    kinds = [data.draw(st.sampled_from(("strided", "reversed", "fortran")), label=f"layout {k}")
             for k in range(len(sample.args))]
    lower = prim.impls["cpu"]
    with np.errstate(all="ignore"):
        expected = lower(*[np.asarray(a) for a in sample.args], **sample.params)
        got = lower(*[relayout(a, k) for a, k in zip(sample.args, kinds)], **sample.params)
    expected = tuple(expected) if prim.multiple_results else (expected,)
    got = tuple(got) if prim.multiple_results else (got,)
    for e, r in zip(expected, got):
        e, r = np.asarray(e), np.asarray(r)
        assert (r.shape, r.dtype) == (e.shape, e.dtype)
        rtol = _TOLERANCE.get(e.dtype)
        if rtol is None:
            np.testing.assert_array_equal(r, e)
        else:  # reductions may sum in another order
            np.testing.assert_allclose(r, e, rtol=rtol, atol=rtol)
