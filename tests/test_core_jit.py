"""core.jit and core.make_jaxpr: tracing, the optimizer, the buffer plan, composition with the
transforms, meta arrays, errors, the cache, donation, and the forward/backward split."""
import warnings

import numpy as np
import pytest

from mindtorch_v2 import core
from mindtorch_v2.core.staging import Executable, vjp_jaxprs


def arr(*shape, dtype=np.float32, seed=0):
    return core.asarray(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def chain(x):
    for _ in range(10):
        x = core.tanh(x) * 1.5
    return core.sum(x)


# ---------------------------------------------------------------------------
# the IR


def test_make_jaxpr_prints_equations_with_avals_and_scalar_literals():
    text = str(core.make_jaxpr(lambda x: core.sin(x) * 2.0)(core.ones(3)))
    assert text == ("{ lambda ; a:f32[3]. let\n"
                    "    b:f32[3] = sin a\n"
                    "    c:f32[3] = mul b 2.0:f32[]\n"
                    "  in (c,) }")


def test_make_jaxpr_shows_params_and_multiple_outputs():
    jaxpr = core.make_jaxpr(lambda x: (core.sum(x, axis=1), x.T))(core.ones((2, 3), dtype=core.float64))
    text = str(jaxpr)
    assert "sum[axis=(1,) keepdims=False] a" in text
    assert "f64[3,2] = transpose[perm=(1, 0)] a" in text
    assert len(jaxpr.outvars) == 2


def test_optimizer_drops_autodiff_identities_common_subexpressions_and_dead_code():
    f = core.grad(lambda x: core.sum(core.tanh(x) + core.tanh(x)))
    exe = core.jit(f).lower(arr(4))
    names = [e.prim.name for e in exe.jaxpr.eqns]
    assert names.count("tanh") == 1            # common subexpression merged
    assert "sum" not in names                   # the forward's value is dead in grad
    assert "add_any" not in names or names.count("mul") <= 3
    # the cotangent seed is a broadcast 1: multiplying by it is gone
    raw = core.make_jaxpr(f)(arr(4))
    assert len(exe.jaxpr.eqns) < len(raw.eqns)


def test_constants_fold_at_trace_time():
    exe = core.jit(lambda x: x + core.exp(core.ones(3)) * 2).lower(arr(3))
    assert [e.prim.name for e in exe.jaxpr.eqns] == ["add"]


# ---------------------------------------------------------------------------
# values and composition


@pytest.mark.parametrize("transform", ["plain", "grad", "vmap", "hessian"])
def test_jit_of_a_transform_equals_the_transform(transform):
    x = arr(3, 4)
    f = {"plain": chain, "grad": core.grad(chain), "vmap": core.vmap(chain),
         "hessian": core.hessian(lambda v: core.sum(core.sin(v) ** 3))}[transform]
    if transform == "hessian":
        x = arr(3, dtype=np.float64)
    close(core.jit(f)(x), f(x))


@pytest.mark.parametrize("transform", ["grad", "vmap", "jvp", "jit"])
def test_a_transform_of_jit_equals_the_transform(transform):
    x = arr(3, 4)
    jf = core.jit(chain)
    if transform == "grad":
        close(core.grad(jf)(x), core.grad(chain)(x))
    elif transform == "vmap":
        close(core.vmap(jf)(x), core.vmap(chain)(x))
    elif transform == "jvp":
        t = arr(3, 4, seed=1)
        close(core.jvp(jf, (x,), (t,))[1], core.jvp(chain, (x,), (t,))[1], tol=1e-5)
    else:
        close(core.jit(jf)(x), chain(x))


def test_second_order_through_jit_both_ways():
    x = arr(5, dtype=np.float64)
    f = lambda v: core.sum(core.exp(core.sin(v)))  # noqa: E731
    close(core.grad(lambda v: core.sum(core.grad(core.jit(f))(v)))(x),
          core.jit(core.grad(lambda v: core.sum(core.grad(f)(v))))(x), tol=1e-12)


def test_a_closure_over_an_outer_tracer_is_evaluated_by_the_outer_transform():
    x = arr(3)

    def outer(w):
        return core.jit(lambda v: core.sum(v * w))(x)
    close(core.grad(outer)(core.asarray(np.float32(2.0))), core.sum(x))


def test_pytrees_kwargs_and_static_arguments():
    f = core.jit(lambda d, n, *, scale: {"y": d["x"] * n * scale, "t": (d["x"],)}, static_argnums=1)
    x = arr(2)
    out = f({"x": x}, 3, scale=core.asarray(np.float32(2.0)))
    close(out["y"], np.asarray(x) * 6)
    close(out["t"][0], x)


def test_python_numbers_stay_weak_and_are_part_of_the_signature():
    f = core.jit(lambda x, c: x * c)
    x = arr(3)
    assert f(x, 2.0).dtype is core.float32  # a weak Python float keeps float32
    close(f(x, 3.0), np.asarray(x) * 3)
    assert f.cache_info().misses == 2


def test_meta_arrays_give_shapes_only():
    m = core.to_device(arr(2, 3), "meta")
    out = core.jit(lambda x: core.matmul(x, x.T) + 1)(m)
    assert out.shape == (2, 2) and out.device is core.meta


def test_narrow_dtypes_and_integer_results():
    b = core.astype(arr(4), core.bfloat16)
    close(core.astype(core.jit(lambda x: x * 2 + 1)(b), core.float32),
          core.astype(b * 2 + 1, core.float32))
    i = core.asarray(np.arange(6).reshape(2, 3))
    out = core.jit(lambda v: (core.sum(v), v * 2, core.argmax(v, axis=1)))(i)
    assert [o.dtype for o in out] == [core.int64, core.int64, core.int64]
    close(out[0], 15)


def test_zero_dimensional_results_are_arrays():
    out = core.jit(lambda x: core.sin(x) + 1)(core.asarray(np.float32(0.5)))
    assert type(out) is core.Array and out.shape == ()
    close(out, np.sin(np.float32(0.5)) + 1)


# ---------------------------------------------------------------------------
# errors


def test_python_control_flow_on_a_traced_value_is_a_clear_error():
    with pytest.raises(core.ConcretizationTypeError, match="static_argnums"):
        core.jit(lambda x: x if core.sum(x) > 0 else -x)(arr(3))
    with pytest.raises(TypeError, match="item"):
        core.jit(lambda x: x.item())(arr(1))
    with pytest.raises(TypeError, match="numpy"):
        core.jit(lambda x: np.asarray(x))(arr(2))


def test_bad_arguments():
    with pytest.raises(TypeError, match="not an array"):
        core.jit(lambda x: x)("text")
    with pytest.raises(ValueError, match="hashable"):
        core.jit(lambda x, s: x, static_argnums=1)(arr(2), [1, 2])
    with pytest.raises(TypeError, match="expected a function"):
        core.jit(3)
    with pytest.raises(ValueError, match="out of range"):
        core.jit(lambda x: x, static_argnums=2)(arr(2))


def test_shape_errors_surface_at_trace_time():
    with pytest.raises(ValueError, match="broadcast"):
        core.jit(lambda x, y: x + y)(arr(2), arr(3))


# ---------------------------------------------------------------------------
# the cache


def test_cache_hits_misses_bound_and_recompile_warning():
    f = core.jit(lambda x: x * 2, cache_size=3, warn_after=4)
    x = arr(2)
    f(x)
    f(x)
    assert f.cache_info().hits == 1 and f.cache_info().misses == 1
    with pytest.warns(core.RecompileWarning, match=r"traced 5 times .*argument leaf 0: float32\[5\] -> float32\[6\]"):
        for n in range(3, 7):
            f(arr(n))
    assert f.cache_info().currsize == 3


# ---------------------------------------------------------------------------
# the buffer plan and donation


def test_the_plan_writes_into_dead_intermediates_never_into_inputs():
    x = arr(1000)
    before = np.asarray(x).copy()
    f = core.jit(core.grad(chain))
    first = f(x)
    again = f(x)
    np.testing.assert_array_equal(np.asarray(x), before)
    close(first, again)
    close(first, core.grad(chain)(x))
    source = f.lower(x).source
    assert "out=v" in source and "out=i" not in source


def test_outputs_are_never_overwritten_by_later_calls():
    f = core.jit(lambda x: core.tanh(core.tanh(x)) * 2)
    a = f(arr(10, seed=1))
    kept = np.asarray(a).copy()
    f(arr(10, seed=2))
    np.testing.assert_array_equal(np.asarray(a), kept)


def test_intermediates_live_in_an_arena_that_outputs_and_views_of_them_never_share():
    def f(x, w):
        h = core.matmul(x, w)          # a GEMM into the arena
        y = core.tanh(h) * 2.0         # intermediates: arena buffers, reused call after call
        v = core.reshape(h, (-1,))     # an output that is a view of an intermediate: h stays out of the arena
        return core.sum(y, axis=0), v
    x, w = arr(8, 16, seed=1), arr(16, 4, seed=2)
    g = core.jit(f)
    first = g(x, w)
    kept = [np.asarray(a).copy() for a in first]
    exe = g.lower(x, w)
    assert exe._arena_spec and "out=S" in exe.source
    second = g(arr(8, 16, seed=3), w)  # the same arena, other values
    for a, k in zip(first, kept):
        np.testing.assert_array_equal(np.asarray(a), k)
    want = f(arr(8, 16, seed=3), w)
    for a, b in zip(second, want):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    arena = exe._arenas[0]
    for out in list(first) + list(second):
        assert not any(np.shares_memory(np.asarray(out), buf) for buf in arena)


def test_calls_running_at_once_each_take_an_arena():
    import threading
    f = core.jit(lambda x: core.sum(core.tanh(x * 2.0) * 3.0, axis=0))
    xs = [arr(200, 50, seed=s) for s in range(8)]
    want = [np.asarray(f(x)).copy() for x in xs]
    errors = []

    def work(i):
        for _ in range(30):
            got = np.asarray(f(xs[i]))
            if not np.array_equal(got, want[i]):
                errors.append(i)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


@pytest.mark.parametrize("fn", [
    lambda x: core.expand_dims(x, 1) * 2.0,
    lambda x: core.squeeze(core.reshape(x, (3, 1, 4)), 1) + 1.0,
    lambda x: core.reshape(core.matrix_transpose(x), (2, 6)) - 1.0,
    lambda x: core.sum(x, axis=0) + core.max(x, axis=1, keepdims=True).sum(),
    lambda x: core.min(x, axis=(0, 1)) * 3.0,
    lambda x: core.sum(core.astype(x > 0, core.int32), axis=1),
], ids=["expand_dims", "squeeze", "transpose-reshape", "sum-max", "min", "int-sum"])
def test_specialized_lowerings_give_the_generic_lowerings_results(fn):
    x = arr(3, 4, seed=5)
    f = core.jit(fn)
    got = f(x)
    again = f(x)  # the generated code
    want = fn(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(again), np.asarray(want))
    exe = f.lower(x)
    special = [k for k, low in enumerate(exe._lowerings) if getattr(low, "binds_params", False)]
    assert special  # the params are bound into the specialized call:
    assert all(f"F{k}(v" in exe.source or f"F{k}(i" in exe.source for k in special)
    assert not any(f"**P{k})" in exe.source for k in special)


def test_broadcast_to_folds_into_a_broadcasting_binary():
    def f(x, s):
        return x * core.broadcast_to(s, x.shape) + core.broadcast_to(s, x.shape)
    x, s = arr(4, 5, seed=1), arr(4, 1, seed=2)
    text = str(core.make_jaxpr(f)(x, s))
    assert "broadcast_to" in text  # as traced
    assert "broadcast_to" not in str(core.jit(f).lower(x, s).jaxpr)  # optimized away: the ufunc broadcasts
    np.testing.assert_array_equal(np.asarray(core.jit(f)(x, s)), np.asarray(f(x, s)))
    # a broadcast that sets the result's shape stays
    g = core.jit(lambda a, b: core.broadcast_to(a, (4, 5)) * b)
    assert "broadcast_to" in str(g.lower(arr(4, 1), arr(1, 5)).jaxpr)
    np.testing.assert_array_equal(np.asarray(g(arr(4, 1), arr(1, 5))), np.asarray(arr(4, 1)) * np.asarray(arr(1, 5)))


@pytest.mark.parametrize("shape, strides, becomes", [
    ((5, 4), (1, 5), "transpose"), ((4, 1, 5), (5, 7, 1), "reshape"), ((20,), (1,), "reshape"),
    ((2, 10), (10, 1), "reshape"), ((4, 4), (5, 1), "as_strided"), ((5, 4), (1, 4), "as_strided")])
def test_an_as_strided_view_that_is_a_reshape_or_a_transpose_becomes_one(shape, strides, becomes):
    f = core.jit(lambda x: core.as_strided(x, shape, strides) * 2.0)
    x = arr(4, 5, seed=3)
    text = str(f.lower(x).jaxpr)
    assert becomes in text and all(other not in text for other in {"transpose", "reshape", "as_strided"} - {becomes})
    want = np.lib.stride_tricks.as_strided(np.asarray(x), shape, [s * 4 for s in strides]) * np.float32(2.0)
    for _ in range(2):
        assert np.asarray(f(x)).tobytes() == np.ascontiguousarray(want).tobytes()


def test_a_transpose_of_a_transpose_becomes_one_transpose_or_none():
    x = arr(2, 3, 4, seed=4)
    f = core.jit(lambda x: core.transpose(core.transpose(x, (1, 0, 2)), (1, 0, 2)) * 2.0)
    assert "transpose" not in str(f.lower(x).jaxpr)
    np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(x) * np.float32(2.0))
    g = core.jit(lambda x: core.transpose(core.transpose(x, (1, 2, 0)), (1, 0, 2)) * 2.0)
    assert str(g.lower(x).jaxpr).count("transpose") == 1
    np.testing.assert_array_equal(np.asarray(g(x)), np.asarray(x).transpose(1, 2, 0).transpose(1, 0, 2) * 2)


def test_a_hinted_products_weight_gradient_is_one_product_in_the_weights_layout():
    # the gradient of x @ w.T with the eager layout hint is transpose(transpose(gᵀ x)) on its way to w: the program
    # computes gᵀ x and nothing else, and runs the product without the hint (the buffer plan may then give it out=)
    def f(x, w):
        return core.sum(core.matmul_p.bind(x, core.transpose(w), col_major=(False, True)) ** 2)
    x, w = arr(8, 5, seed=5), arr(3, 5, seed=6)
    j = core.jit(core.grad(f, argnums=1))
    text = str(j.lower(x, w).jaxpr)
    assert "transpose" in text and "col_major" not in text
    assert text.count("transpose") == 2  # (w's for the forward product, g's for gᵀ x)
    got = np.asarray(j(x, w))
    assert got.flags.c_contiguous
    np.testing.assert_allclose(got, np.asarray(core.grad(f, argnums=1)(x, w)), rtol=1e-6)


def test_broadcast_to_folds_into_where_and_reciprocal_becomes_a_division():
    def f(c, s, x):
        return core.where(c, core.broadcast_to(s, x.shape), x), core.reciprocal(x), core.reciprocal(core.sum(x))
    c = core.asarray(np.array([True, False, True, True]))
    s = core.asarray(np.array([2.5], np.float32))
    for x in (np.array([3.0, -0.0, 0.0, 7e-39], np.float32), np.array([1e-300, -3.0, np.inf, np.nan]),
              np.array([1 + 2j, 0j, -3j, 4], np.complex64), np.array([3, -0.0, 0.0, 6e-8], np.float16)):
        x = core.asarray(x)
        s_ = core.astype(s, x.dtype)
        j = core.jit(f)
        text = str(j.lower(c, s_, x).jaxpr)
        assert "broadcast_to" not in text and "reciprocal" not in text and "div" in text
        for got, want in zip(j(c, s_, x), f(c, s_, x)):  # 1 / x is reciprocal's own lowering: the same bits
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


@pytest.mark.parametrize("axis, index_shape", [(1, (5, 1)), (0, (1, 3)), (1, (4, 6)), (0, (7, 2)), (2, (2, 3, 1))])
def test_gather_and_scatter_add_on_a_grid_built_once_give_add_ats_sums(axis, index_shape):
    rng = np.random.default_rng(3)
    shape = (5, 3, 4) if len(index_shape) == 3 else (5, 3)
    x = core.asarray(rng.standard_normal(shape).astype(np.float32))
    n = shape[axis]
    idx = core.asarray(rng.integers(-n, n, index_shape))  # negative indices count from the end, as numpy's
    u = core.asarray(rng.standard_normal(index_shape).astype(np.float32))

    def f(x, idx, u):
        return core.gather(x, axis, idx), core.scatter_add(x, axis, idx, u)
    j = core.jit(f)
    want_sum = np.array(np.asarray(x))
    grid = list(np.indices(index_shape, sparse=True))
    grid[axis] = np.asarray(idx)
    np.add.at(want_sum, tuple(grid), np.asarray(u))
    for _ in range(2):
        g, s = j(x, idx, u)
        assert np.asarray(g).tobytes() == np.asarray(x)[tuple(grid)].tobytes()
        assert np.asarray(s).tobytes() == want_sum.tobytes()
    assert sum(getattr(low, "binds_params", False) for low in j.lower(x, idx, u)._lowerings) == 2
    bad = core.asarray(np.full(index_shape, n))
    with pytest.raises(IndexError, match="out of bounds"):
        j(x, bad, u)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_zero_dimensional_arithmetic_runs_on_scalars_with_the_ufuncs_bits(dtype):
    def f(a, b):
        c = a * 3.0 + b
        d = c / (b - b)                  # 1/0, 0/0: inf and nan, silently
        other = core.float32 if a.dtype == core.float64 else core.float64
        return (-d, core.sqrt(core.abs(c)) * a, c - a / b, core.astype(c, other) * 2.0,
                core.exp(a * 0.5) + core.abs(a) ** b)  # (numpy's power: SIMD where the 0-d array call is)
    j = core.jit(f)
    values = [1.5, -0.1, 1e-30, 3e38, -0.0, np.inf, np.nan, 7.0]
    for x in values:
        for y in values:
            a, b = core.asarray(np.array(x, dtype)), core.asarray(np.array(y, dtype))
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                got = j(a, b)
            want = f(a, b)
            for g, w in zip(got, want):
                assert g.shape == () and g.dtype == w.dtype
                assert np.asarray(g).tobytes() == np.asarray(w).tobytes(), (x, y)
    assert "[()] * " in j.lower(a, b).source  # (it did run on scalars)


@pytest.mark.parametrize("src", [np.int64, np.int32, np.uint64, np.bool_])
def test_integer_and_bool_scalars_cast_to_float_in_scalar_mode_with_astypes_bits(src):
    def f(n, m):
        return core.astype(n, core.float32) * 0.5 + 1.0, core.astype(core.sum(m), core.float64) / 3.0
    j = core.jit(f)
    top = 1 if src is np.bool_ else np.iinfo(src).max
    for v in (0, 1, top, top - 1, 2 ** 24 + 1 if src is not np.bool_ else 0):
        n = core.asarray(np.array(v).astype(src))
        m = core.asarray(np.array([v, v]).astype(src))
        for got, want in zip(j(n, m), f(n, m)):
            assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), v
    assert "TO_F32(" in j.lower(n, m).source and "TO_F64(" in j.lower(n, m).source


def test_a_view_of_an_intermediate_keeps_its_buffer_alive():
    def f(x):
        y = core.exp(x)
        v = core.reshape(y, (2, 2))   # a view of y's buffer
        z = core.sin(y) + 1           # y dies here, but v still reads it
        return v, z
    x = arr(4)
    v, z = core.jit(f)(x)
    close(v, np.exp(np.asarray(x)).reshape(2, 2))
    close(z, np.sin(np.exp(np.asarray(x))) + 1)


def test_donated_inputs_are_reused_and_deleted():
    step = core.jit(lambda w, g: w - 0.5 * g, donate_argnums=0)
    w = arr(1000)
    g = arr(1000, seed=1)
    expect = np.asarray(g).copy()
    expect = (np.asarray(core.astype(w, core.float64)) - 0.5 * expect).astype(np.float32)
    address = w._buf.__array_interface__["data"][0]  # an int: holds no reference to the buffer
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = step(w, g)
    assert new._buf.__array_interface__["data"][0] == address  # written in place into the donated buffer
    close(new, expect)
    with pytest.raises(RuntimeError, match="donated"):
        np.asarray(w)


def test_a_donated_buffer_shared_with_numpy_is_copied_with_a_warning():
    step = core.jit(lambda w: w * 2, donate_argnums=0)
    w = arr(8)
    seen = np.asarray(w)  # exported: numpy holds it
    with pytest.warns(UserWarning, match="donated buffer was not usable"):
        out = step(w)
    close(out, seen * 2)
    close(w, seen)  # still alive and unchanged


# ---------------------------------------------------------------------------
# reverse mode staged out


def test_vjp_jaxprs_splits_forward_and_backward_with_residuals():
    x, w = arr(3), arr(3, seed=1)
    fwd, bwd, n_out = vjp_jaxprs(lambda xs: [core.sum(core.tanh(xs[0]) * xs[1])], [x, w])
    outs = Executable(fwd, ())([x, w])
    grads = Executable(bwd, ())(outs[n_out:] + [core.asarray(np.float32(1.0))])
    close(outs[0], core.sum(core.tanh(x) * w))
    for g, e in zip(grads, core.grad(lambda a, b: core.sum(core.tanh(a) * b), argnums=(0, 1))(x, w)):
        close(g, e)
    assert "tanh" not in str(bwd)  # computed once, in the forward, and passed as a residual


def test_the_optimizer_cleans_up_pows_vjp():
    # x ** 2's rule guards x == 0 with where/logical_and on constants and raises to the power 1.0: none of it
    # survives, and the square is a product
    exe = core.jit(core.grad(lambda v: core.sum(core.tanh(v) ** 2))).lower(arr(4))
    names = [e.prim.name for e in exe.jaxpr.eqns]
    assert not {"pow", "where", "logical_and", "eq"} & set(names)
    x = arr(4)
    close(core.jit(core.grad(lambda v: core.sum(core.tanh(v) ** 2)))(x), 2 * np.tanh(x) * (1 - np.tanh(x) ** 2))


# ---------------------------------------------------------------------------
# fused kernels (numba, a test extra)


def _without_numba(monkeypatch):
    from mindtorch_v2.core import fusion
    monkeypatch.setattr(fusion, "available", lambda: False)


def _update_chain(g, y, w):
    # a VJP's `g * (1 - y*y)` and an SGD-like update: arithmetic only, one shape
    return w - 0.1 * (g * (1.0 - y * y)) / (1.0 + y * y)


def test_a_long_arithmetic_run_is_fused_and_gives_numpys_numbers_bit_for_bit(monkeypatch):
    from mindtorch_v2.core import fusion
    assert fusion.available(), "numba is a test extra: the fused path must be exercised"
    g, y, w = arr(200_000, seed=1), arr(200_000, seed=2), arr(200_000, seed=3)
    monkeypatch.setattr(fusion, "MIN_SECONDS", 0.0)  # fuse whatever wins, however short it runs
    fused = core.jit(_update_chain)
    got = fused(g, y, w)
    exe = fused.lower(g, y, w)
    if exe.fused:  # measured faster here: the kernel replaced the run
        assert "fused" not in str(exe.jaxpr)  # the jaxpr itself is unchanged; the program holds the kernel
    assert exe.fused <= 1
    with monkeypatch.context() as m:
        _without_numba(m)
        plain = core.jit(_update_chain)
        want = plain(g, y, w)
        assert plain.lower(g, y, w).fused == 0
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(fused(g, y, w)), np.asarray(want))  # the generated code too


def test_the_fused_kernel_replaces_the_run_when_it_measures_faster(monkeypatch):
    from mindtorch_v2.core import fusion
    times = iter([1.0, 0.5])  # op by op, then the kernel: the kernel wins
    monkeypatch.setattr(fusion, "timed", lambda fn: next(times))
    g, y, w = arr(1000, seed=1), arr(1000, seed=2), arr(1000, seed=3)
    f = core.jit(_update_chain)
    got = f(g, y, w)
    exe = f.lower(g, y, w)
    assert exe.fused == 1
    assert exe.source.count("F") == 1 + exe.source.count("FIX")  # the whole program is the one kernel call
    with monkeypatch.context() as m:
        _without_numba(m)
        want = core.jit(_update_chain)(g, y, w)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_a_kernel_that_measures_slower_is_not_used(monkeypatch):
    from mindtorch_v2.core import fusion
    times = iter([0.5, 1.0])
    monkeypatch.setattr(fusion, "timed", lambda fn: next(times))
    g, y, w = arr(1000, seed=1), arr(1000, seed=2), arr(1000, seed=3)
    f = core.jit(_update_chain)
    f(g, y, w)
    assert f.lower(g, y, w).fused == 0


def _linear(x, w):
    return core.matmul(x, core.matrix_transpose(w))


@pytest.fixture
def fresh_gemm_choices(monkeypatch):
    """matmul's lowering with no orientation chosen yet (each test's timings decide its own)."""
    from mindtorch_v2.core.ops import decompositions
    monkeypatch.setattr(decompositions, "_GEMMS", {})
    monkeypatch.setattr(decompositions, "_budget", [2.0])
    return decompositions


def test_a_products_orientation_is_chosen_by_measurement_once_with_matmuls_bits(monkeypatch, fresh_gemm_choices):
    from mindtorch_v2.core import fusion
    decompositions = fresh_gemm_choices
    x, w = core.asarray(arr(16 * 32, seed=1).reshape(16, 32)), core.asarray(arr(8 * 32, seed=2).reshape(8, 32))
    want = np.asarray(x) @ np.asarray(w).T
    key = ((16, 32), (32, 8), np.dtype(np.float32), "C", "F")
    for times, chosen in [([1.0, 0.5, 0.49], decompositions._matmul_blas),  # the swapped one ties: not chosen
                          ([1.0, 0.5, 0.4], decompositions._matmul_swapped),  # faster by more than the margin
                          ([1.0, 1.2, 0.9], decompositions._matmul_swapped),  # faster than np.matmul
                          ([0.5, 1.0, 1.0], decompositions._np_matmul)]:  # both slower
        decompositions._GEMMS.clear()
        times = iter(times)  # np.matmul, the BLAS call, the swapped GEMM
        monkeypatch.setattr(fusion, "timed", lambda fn, times=times: next(times))
        for run in (_linear, core.jit(_linear)):  # (eager measures, jit runs the same choice)
            for _ in range(2):
                got = np.asarray(run(x, w))
                assert got.flags.c_contiguous and fusion.same_bits(got, want)
        assert decompositions._GEMMS == {key: chosen}


def test_which_products_are_measured_and_against_which_orientations(monkeypatch, fresh_gemm_choices):
    d = fresh_gemm_choices
    seen = []

    def fastest(f, variants, res, args, params=None):
        seen.append(variants)
        return f, res
    monkeypatch.setattr(d._choice, "fastest", fastest)
    both = (d._matmul_blas, d._matmul_swapped)
    cases = [(np.ones((6, 5)), np.ones((5, 4)), both),
             (np.ones((6, 5), np.complex64), np.ones((4, 5), np.complex64).T, both),
             (np.ones((6, 5), np.float16), np.ones((5, 4), np.float16), None),  # (no BLAS GEMM for float16)
             (np.ones((6, 5)), np.ones((5, 8))[:, ::2], None),  # a strided operand: np.matmul as it is
             (np.ones((6, 5), np.int64), np.ones((5, 4), np.int64), None),  # integers: no orientation to choose
             (np.ones((1 << 9, 1 << 9), np.float32), np.ones((1 << 9, 1 << 10), np.float32), None)]  # > _TUNED_MACS
    for a, b, variants in cases:
        seen.clear()
        for _ in range(2):  # (measured once)
            np.testing.assert_array_equal(d._matmul_cpu(a, b), np.matmul(a, b))
        assert seen == ([variants] if variants else [])
    d._budget[0] = 0.0  # (spent: a new signature runs np.matmul unmeasured)
    a, b = np.ones((7, 5)), np.ones((5, 4))
    np.testing.assert_array_equal(d._matmul_cpu(a, b), a @ b)
    assert len(seen) == 0 and d._GEMMS[(a.shape, b.shape, a.dtype, "C", "C")] is d._np_matmul


def test_a_variant_with_other_bits_is_not_chosen_however_fast(monkeypatch, fresh_gemm_choices):
    from mindtorch_v2.core import fusion
    decompositions = fresh_gemm_choices
    x, w = core.asarray(arr(16 * 32, seed=1).reshape(16, 32)), core.asarray(arr(8 * 32, seed=2).reshape(8, 32))
    want = np.asarray(x) @ np.asarray(w).T

    def off_by_one(a, b, out=None):
        return np.add(np.matmul(a, b), 1, out=out)
    monkeypatch.setattr(decompositions, "_matmul_swapped", off_by_one)
    monkeypatch.setattr(decompositions, "gemm_applies", lambda a, b: False)
    monkeypatch.setattr(fusion, "timed", lambda fn, t=iter([1.0, 0.0, 0.0]): next(t))  # timed, it would win
    for run in (_linear, core.jit(_linear)):
        np.testing.assert_array_equal(np.asarray(run(x, w)), want)
    assert list(decompositions._GEMMS.values()) == [decompositions._np_matmul]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_the_blas_gemm_gives_matmuls_bits_for_c_and_fortran_operands_into_any_out(dtype):
    from mindtorch_v2.core.ops import _blas_gemm
    rng = np.random.default_rng(3)
    for m, k, n in [(128, 784, 512), (33, 70, 129), (2, 3, 2)]:
        a0 = rng.standard_normal((m, k)).astype(dtype)
        b0 = rng.standard_normal((k, n)).astype(dtype)
        for a in (a0, np.asfortranarray(a0)):
            for b in (b0, np.asfortranarray(b0), np.ascontiguousarray(b0.T).T):
                assert _blas_gemm.gemm_applies(a, b)
                want = np.matmul(a, b)
                got = _blas_gemm.gemm_c_order(a, b)
                assert got.flags.c_contiguous and got.tobytes() == np.ascontiguousarray(want).tobytes()
                for out in (np.full((m, n), np.nan, dtype), np.asfortranarray(np.full((m, n), np.nan, dtype))):
                    # (beta = 0: the NaNs in out are not read; a Fortran out gets a copy written back)
                    assert _blas_gemm.gemm_c_order(a, b, out) is out
                    assert np.ascontiguousarray(out).tobytes() == got.tobytes()


def test_the_blas_gemm_is_not_offered_for_vectors_mixed_dtypes_or_strided_operands():
    from mindtorch_v2.core.ops import _blas_gemm
    m = np.ones((4, 4), np.float32)
    assert not _blas_gemm.gemm_applies(np.ones((1, 4), np.float32), m)  # (NumPy: GEMV, other bits)
    assert not _blas_gemm.gemm_applies(m, np.ones((4, 1), np.float32))
    assert not _blas_gemm.gemm_applies(m, m.astype(np.float64))
    assert not _blas_gemm.gemm_applies(m.astype(np.int64), m.astype(np.int64))
    assert not _blas_gemm.gemm_applies(np.ones((8, 8), np.float32)[::2], m)


def test_where_with_a_zero_dimensional_value_may_run_as_a_copy_and_a_masked_fill(monkeypatch):
    from mindtorch_v2.core import fusion
    from mindtorch_v2.core.ops import elementwise
    monkeypatch.setattr(fusion, "timed", lambda fn, t=iter([1.0, 0.5] * 8): next(t))  # the variant wins
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    x.reshape(-1)[:4] = [np.nan, -0.0, np.inf, -np.inf]
    c = rng.standard_normal((4, 5)) > 0
    for f in (lambda c, x: core.where(c, float("-inf"), x), lambda c, x: core.where(c, x, -0.0)):
        j = core.jit(f)
        want = f(core.asarray(c), core.asarray(x))
        for _ in range(2):
            got = j(core.asarray(c), core.asarray(x))
            assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
        assert elementwise._where_fill in j.lower(core.asarray(c), core.asarray(x))._lowerings


def test_a_fused_run_writes_over_a_donated_input_through_its_in_place_kernel(monkeypatch):
    pytest.importorskip("numba")
    from mindtorch_v2.core import fusion
    times = iter([1.0] + [0.5] * 10)  # op by op, then the kernel: the kernel wins
    monkeypatch.setattr(fusion, "timed", lambda fn: next(times))
    w, g = arr(5000, seed=1), arr(5000, seed=2)
    want = np.asarray(w) - np.float32(0.01) * np.asarray(g)
    step = core.jit(lambda w, g: w - 0.01 * g, donate_argnums=0)
    got = step(core.asarray(np.asarray(w).copy()), g)  # the probe's call
    w3 = core.asarray(np.asarray(w).copy())
    address = w3._buf.__array_interface__["data"][0]  # (holding the buffer itself would stop the donation)
    got3 = step(w3, g)  # the generated program: the fused kernel, written over w3's buffer
    exe = step.lower(core.asarray(np.asarray(w)), g)
    assert exe.fused == 1 and "out=i0" in exe.source
    assert got3._buf.__array_interface__["data"][0] == address
    for r in (got, got3):
        assert np.asarray(r).tobytes() == want.tobytes()


def test_a_fused_run_with_two_results_writes_each_over_a_donated_input(monkeypatch):
    pytest.importorskip("numba")
    from mindtorch_v2.core import fusion
    times = iter([1.0] + [0.5] * 10)  # op by op, then the kernel: the kernel wins
    monkeypatch.setattr(fusion, "timed", lambda fn: next(times))
    w, m, g = arr(5000, seed=1), arr(5000, seed=2), arr(5000, seed=3)

    def momentum_step(w, m, g):  # SGD with momentum: the new buffer and the new weight, one fused run
        m = m * 0.9 + g
        return w - 0.01 * m, m
    want = [np.asarray(r) for r in momentum_step(w, m, g)]
    step = core.jit(momentum_step, donate_argnums=(0, 1))
    step(core.asarray(np.asarray(w).copy()), core.asarray(np.asarray(m).copy()), g)  # the probe's call
    w3, m3 = core.asarray(np.asarray(w).copy()), core.asarray(np.asarray(m).copy())
    addresses = {b.__array_interface__["data"][0] for b in (w3._buf, m3._buf)}
    got = step(w3, m3, g)  # the generated program: one kernel writing both results over the donated buffers
    exe = step.lower(core.asarray(np.asarray(w)), core.asarray(np.asarray(m)), g)
    assert exe.fused == 1 and "out=(i" in exe.source
    assert {r._buf.__array_interface__["data"][0] for r in got} == addresses
    for r, x in zip(got, want):
        assert np.asarray(r).tobytes() == x.tobytes()


def test_results_nothing_reads_run_last_the_update_of_the_first_read_input_at_the_very_end(monkeypatch):
    from mindtorch_v2.core import fusion
    monkeypatch.setattr(fusion, "available", lambda: False)  # (op by op: each update its own mul and sub)
    rng = np.random.default_rng(0)
    w1, w2 = (core.asarray(rng.standard_normal((64, 64)).astype(np.float32)) for _ in range(2))
    x = core.asarray(rng.standard_normal((8, 64)).astype(np.float32))

    def step(w1, w2, x):  # a two-layer training step: forward, both grads, both updates
        def loss(w1, w2):
            return core.sum(core.tanh(core.tanh(x @ w1) @ w2))
        g1, g2 = core.grad(loss, argnums=(0, 1))(w1, w2)
        big = core.tanh(x @ w2)  # a temporary: what reads it is not moved past its death
        # (the grads are results too, as torch.compile's .grad: an update then reads only inputs and results)
        return w1 - 0.1 * g1, w2 - 0.1 * g2, g1, g2, core.sum(big * 2.0)
    f = core.jit(step)
    want = [np.asarray(r) for r in step(w1, w2, x)]
    for _ in range(2):
        got = f(w1, w2, x)
    assert all(np.asarray(r).tobytes() == v.tobytes() for r, v in zip(got, want))
    exe = f.lower(w1, w2, x)
    names = [e.prim.name for e in exe._eqns]
    reads = [{id(a) for a in e.invars} for e in exe._eqns]
    i0, i1 = (id(v) for v in exe.jaxpr.invars[:2])
    update = {i: max(k for k, (n, r) in enumerate(zip(names, reads)) if n == "sub" and i in r) for i in (i0, i1)}
    # both updates come after the backward's last product, w1's (read first by the next call) after w2's
    last_backward = max(k for k, n in enumerate(names) if n == "matmul" and k < min(update.values()))
    assert last_backward < update[i1] < update[i0]
    # a chain moves whole: the sum of the temporary comes right after the temporary's own ops
    k = names.index("sum", last_backward)
    assert names[k - 3:k] == ["matmul", "tanh", "mul"] or names[k - 2:k] == ["tanh", "mul"]


def test_fused_kernels_read_any_rank_and_take_non_contiguous_arrays_as_copies(monkeypatch):
    pytest.importorskip("numba")
    from mindtorch_v2.core import fusion
    times = iter([1.0, 0.5, 1.0, 0.5])  # each program: op by op, then the kernel: the kernel wins
    monkeypatch.setattr(fusion, "timed", lambda fn: next(times))
    rng = np.random.default_rng(0)
    g, y, w = (core.asarray(rng.standard_normal((40, 30)).astype(np.float32)) for _ in range(3))
    f = core.jit(_update_chain)
    step = core.jit(lambda w, g: w - 0.01 * g, donate_argnums=0)
    assert np.asarray(f(g, y, w)).tobytes() == np.asarray(_update_chain(g, y, w)).tobytes()  # the probe: 2-D
    step(core.asarray(np.asarray(w).copy()), g)
    assert f.lower(g, y, w).fused == 1 and step.lower(w, g).fused == 1
    # the same avals, strided: the kernels' typing refuses them; they run on C-ordered copies from then on
    gt = core.matrix_transpose(core.asarray(np.ascontiguousarray(np.asarray(g).T)))  # a transposed (F-ordered) view
    assert not np.asarray(gt).flags.c_contiguous and np.array_equal(np.asarray(gt), np.asarray(g))
    for _ in range(2):
        assert np.asarray(f(gt, y, w)).tobytes() == np.asarray(_update_chain(g, y, w)).tobytes()
        assert np.asarray(f(g, y, w)).tobytes() == np.asarray(_update_chain(g, y, w)).tobytes()
    wt = core.matrix_transpose(core.asarray(np.ascontiguousarray(np.asarray(w).T)))
    want = np.asarray(w) - np.float32(0.01) * np.asarray(g)
    assert np.asarray(step(wt, g)).tobytes() == want.tobytes()
    assert np.asarray(step(core.asarray(np.asarray(w).copy()), g)).tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_fuses_with_numpys_bits_for_nan_payloads_signed_zeros_and_infinities(monkeypatch, dtype):
    pytest.importorskip("numba")
    from mindtorch_v2.core import fusion
    monkeypatch.setattr(fusion, "timed", lambda fn, t=iter([1.0, 0.5]): next(t))  # the kernel wins
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 8)).astype(dtype)
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 5e-324, -5e-324], dtype)
    bits = specials.view(np.uint32 if dtype == np.float32 else np.uint64)
    payload = (bits[:1] | 0x2A).view(dtype)  # a nan with a payload of its own
    x.reshape(-1)[:11] = np.concatenate([specials, payload])
    b = np.zeros(8, dtype)
    b[[1, 5]] = -0.0  # (-0.0 + -0.0 is -0.0: relu gives +0.0)
    f = core.jit(lambda x, b: core.relu(x + b) * 2.0)
    got = f(core.asarray(x), core.asarray(b))
    assert f.lower(core.asarray(x), core.asarray(b)).fused == 1
    with np.errstate(all="ignore"):
        want = np.maximum(x + b, 0) * dtype(2.0)
    assert np.asarray(got).tobytes() == want.tobytes()
    assert np.asarray(f(core.asarray(x), core.asarray(b))).tobytes() == want.tobytes()


def test_programs_are_silent_about_floating_point_edge_cases():
    f = core.jit(lambda x: core.log(x) + 1.0 / x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = f(core.zeros(3))
        out = f(core.zeros(3))  # the generated code, after the probe
    assert np.isnan(np.asarray(out)).all() or np.isinf(np.asarray(out)).any()


def test_a_donated_input_returned_as_it_is_is_not_written_over_by_another_result():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 7, np.float32)
    f = core.jit(lambda x, y: (y, x + x), donate_argnums=(1,))
    for _ in range(2):  # (the probe's call, then the planned program)
        y, twice = f(core.asarray(a.copy()), core.asarray(b.copy()))
        np.testing.assert_array_equal(np.asarray(y), b)
        np.testing.assert_array_equal(np.asarray(twice), a + a)


def test_two_threads_calling_a_new_program_at_once_both_get_its_results():
    import sys
    import threading
    rng = np.random.default_rng(0)
    w, v = (core.asarray(rng.standard_normal((64, 64)).astype(np.float32)) for _ in range(2))
    x = core.asarray(rng.standard_normal((8, 64)).astype(np.float32))

    def step(w, v, x):
        g, h = core.grad(lambda w, v: core.sum(core.tanh(core.tanh(x @ w) @ v)), argnums=(0, 1))(w, v)
        return w - 0.1 * g, v - 0.1 * h, g, h
    want = [np.asarray(r) for r in step(w, v, x)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # (switch threads often: both reach the first call's probe together)
    try:
        for _ in range(40):
            f = core.jit(step)
            got = [None, None]

            def work(i, f=f, got=got):
                try:
                    for _ in range(3):
                        got[i] = [np.asarray(r) for r in f(w, v, x)]
                except Exception as exc:  # noqa: BLE001
                    got[i] = exc
            threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            for r in got:
                assert not isinstance(r, Exception), r
                for a, b in zip(r, want):
                    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    finally:
        sys.setswitchinterval(interval)


def test_a_variant_must_give_the_lowerings_bits_on_random_values_too_not_only_on_the_probes(monkeypatch):
    # the first call's values can hide a different rounding (zeros sum alike in any order): a variant is also
    # checked on random values of the same shapes, dtypes and layouts before it may be chosen
    from mindtorch_v2.core import fusion
    calls = [0]

    def later_is_faster(fn):
        calls[0] += 1
        return 1.0 / calls[0]
    monkeypatch.setattr(fusion, "timed", later_is_faster)
    rng = np.random.default_rng(0)
    b = rng.standard_normal((33, 1000)).astype(np.float32)
    f = core.jit(lambda a, b: a @ b)
    f(core.asarray(np.zeros((16, 33), np.float32)), core.asarray(b))  # the probe: an all-zero operand
    a = rng.standard_normal((16, 33)).astype(np.float32)
    got = np.asarray(f(core.asarray(a), core.asarray(b)))
    assert got.tobytes() == np.matmul(a, b).tobytes()
