"""The fast paths a compiled GPT training step takes give the numbers of the plain ones."""
import numpy as np
import pytest
import scipy.special as sc

import mindtorch_v2 as torch
from mindtorch_v2.core.ops import elementwise


# ---------------------------------------------------------------------------
# float32 erf (GELU): the kernel gives scipy's float32 erf bit for bit
# (tools/erf_pieces.py check: every float32 bit pattern; here a dense sample of them)


def test_float32_erf_equals_scipy_on_every_sampled_bit_pattern():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2 ** 32, 2_000_000, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    assert np.array_equal(elementwise._erf(x), sc.erf(x), equal_nan=True)


def test_float32_erf_equals_scipy_near_zero_and_at_the_piece_edges():
    edges = np.arange(0, 4.5, 1 / 32, dtype=np.float32)
    near = np.concatenate([np.nextafter(edges, np.float32(-1)), edges, np.nextafter(edges, np.float32(9))])
    x = np.concatenate([near, -near, np.linspace(-5, 5, 100_001, dtype=np.float32)])
    assert np.array_equal(elementwise._erf(x), sc.erf(x))


def test_float32_erf_around_the_fast_pieces_ends_and_on_its_exact_path():
    ends = np.array([elementwise._ERF32_CUT, elementwise._ERF32_END], np.float32).view(np.int32)
    bits = np.concatenate([np.arange(e - 20_000, e + 20_001, dtype=np.int32) for e in ends])
    x = bits.view(np.float32)[:-3]  # (a length not a multiple of 8: the marks' tail)
    x = np.concatenate([x, -x])
    kernel = elementwise._erf32_kernel()
    if kernel is not None:
        out = np.empty_like(x)
        assert kernel(x, elementwise._erf32_table(), out) > 0  # (some take the exact path)
        assert np.array_equal(out, sc.erf(x))
    assert np.array_equal(elementwise._erf(x), sc.erf(x))


def test_float32_erf_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, 3.9999998, 4.0, 7.0, -1e30],
                 np.float32)
    got = elementwise._erf(x)
    assert got.dtype == np.float32
    assert np.array_equal(got, sc.erf(x), equal_nan=True)
    assert np.signbit(got[1]) and not np.signbit(got[0])


def test_float32_erf_takes_any_layout_and_a_0d_array():
    x = np.random.default_rng(1).standard_normal((6, 8)).astype(np.float32)
    assert np.array_equal(elementwise._erf(x.T), sc.erf(x.T))
    assert np.array_equal(elementwise._erf(x[:, ::3]), sc.erf(x[:, ::3]))
    got = elementwise._erf(np.array(0.5, np.float32))
    assert got.shape == () and got.dtype == np.float32 and got == sc.erf(np.float32(0.5))


def test_erf_and_gelu_in_eager_use_the_same_numbers():
    x = np.random.default_rng(2).standard_normal((4, 33)).astype(np.float32)
    assert np.array_equal(torch.erf(torch.tensor(x)).numpy(), sc.erf(x))
    t = torch.tensor(x, requires_grad=True)
    y = torch.nn.functional.gelu(t)
    y.sum().backward()
    want = x * np.float32(0.5) * (np.float32(1.0) + sc.erf(x * np.float32(1 / np.sqrt(2.0))))
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-6, atol=1e-7)
    assert t.grad is not None and t.grad.shape == (4, 33)


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_other_float_dtypes_keep_scipy(dtype):
    x = np.linspace(-3, 3, 101).astype(dtype)
    got = elementwise._erf(x)
    assert got.dtype == dtype and np.array_equal(got, np.asarray(sc.erf(x), dtype=dtype))


# ---------------------------------------------------------------------------
# AdamW under torch.compile: each param's tensor update is one unbroken run of same-shape arithmetic
# (the step's 0-d scalars come first), which jit fuses where numba is installed; the numbers stay eager's


def _adamw_models(n_steps):
    results = []
    for compile_it in (False, True):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.Tanh(), torch.nn.Linear(64, 3))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        x, y = torch.randn(32, 16), torch.randn(32, 3)

        def step():
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        fn = torch.compile(step) if compile_it else step
        losses = [fn().item() for _ in range(n_steps)]
        results.append((losses, [p.detach().numpy().copy() for p in model.parameters()],
                        [opt.state[p]["exp_avg_sq"].numpy().copy() for p in model.parameters()], fn))
    return results


def test_compiled_adamw_steps_equal_eager_bit_for_bit():
    (le, pe, ve, _), (lc, pc, vc, _) = _adamw_models(5)
    assert le == lc
    assert all(np.array_equal(a, b) for a, b in zip(pe, pc))
    assert all(np.array_equal(a, b) for a, b in zip(ve, vc))


def test_compiled_adamw_fuses_each_params_update_where_numba_is_installed():
    pytest.importorskip("numba")
    *_, (_, _, _, compiled) = _adamw_models(4)
    entries = [e for e in compiled._cache.values() if hasattr(e, "fwd")]
    exe = entries[-1].donating or entries[-1].fwd
    names = [e.prim.name for e in exe._eqns]
    # 4 params (2 weights, 2 biases): no tensor-shaped arithmetic of the update is left outside a kernel
    assert names.count("fused") >= 4
    assert "sqrt" not in [e.prim.name for e in exe._eqns if e.outvars[0].shape in ((64, 16), (64,), (3, 64), (3,))]


# ---------------------------------------------------------------------------
# fusion reads operands broadcast along the last axis (a layer norm's weight) or across it (its mean)


def _norm_chain(x, mean, rstd, w, b):
    return (x - mean) * rstd * w + b


def _norm_args(rows=6, n=5):
    from mindtorch_v2 import core
    rng = np.random.default_rng(3)
    f = lambda *s: core.asarray(rng.standard_normal(s).astype(np.float32))  # noqa: E731
    return f(rows, 4, n), f(rows, 4, 1), f(rows, 4, 1), f(n), f(1, 1, n)


def test_a_run_with_broadcast_operands_fuses_into_one_kernel_with_numpys_numbers(monkeypatch):
    pytest.importorskip("numba")
    from mindtorch_v2 import core
    from mindtorch_v2.core import fusion
    times = iter([1.0, 0.5])  # op by op, then the kernel: the kernel wins
    monkeypatch.setattr(fusion, "timed", lambda fn: next(times))
    args = _norm_args()
    f = core.jit(_norm_chain)
    got = f(*args)
    assert f.lower(*args).fused == 1
    with monkeypatch.context() as m:
        m.setattr(fusion, "available", lambda: False)
        want = core.jit(_norm_chain)(*args)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(f(*args)), np.asarray(want))  # the generated program too


def test_operands_fusion_cannot_read_keep_the_run_in_numpy():
    from mindtorch_v2.core import fusion
    out = (6, 4, 5)
    assert fusion._operand_kind((6, 4, 5), out) == "full"
    assert fusion._operand_kind((), out) == "scalar"
    assert fusion._operand_kind((5,), out) == "column" and fusion._operand_kind((1, 1, 5), out) == "column"
    assert fusion._operand_kind((6, 4, 1), out) == "row"
    for shape in ((4, 5), (6, 1, 5), (1, 4, 1), (1, 1, 1, 5)):
        assert fusion._operand_kind(shape, out) is None
