"""The compiled row loops (core/ops/_rows.py, the fast extra) give the NumPy lowerings' bits: sums over short
rows in NumPy's pairwise order, layer norm and its backward, softmax and log_softmax."""
import subprocess
import sys

import numpy as np
import pytest

import mindtorch_v2 as torch
from mindtorch_v2 import core
from mindtorch_v2.core.ops import _rows, layer_norm as ln, reduction, softmax

pytest.importorskip("numba")  # (a test extra: CI installs it)

SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, -3e38]


def _bits(a):
    """The bytes of a, every nan as one pattern: which of two nans an addition or product passes on (their sign
    and payload) depends on the order of its operands, which a compiler may swap; PyTorch promises no nan's bits."""
    a = np.array(a, copy=True)
    a[np.isnan(a)] = np.nan
    return a.view(np.uint8).tobytes()


def _random(rng, shape, dtype, trial):
    """Values over many scales; some trials with special values, rows of signed zeros, or zeros among
    far smaller values (a zero max whose exps sum to exactly 1)."""
    x = (rng.standard_normal(shape) * 10.0 ** rng.uniform(-4, 4)).astype(dtype) + dtype(rng.uniform(-3, 3))
    if trial % 5 == 0:
        x.reshape(-1)[rng.integers(0, x.size, 4)] = rng.choice(SPECIALS, 4)
    if trial % 7 == 0:
        x[...] = rng.choice([0.0, -0.0], shape)
    if trial % 9 == 0:
        x[...] = np.where(rng.random(shape) < 0.5, rng.choice([0.0, -0.0], shape), -200.0)
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_sums_add_in_numpys_order(dtype):
    kernel = _rows.row_sums()
    rng = np.random.default_rng(0)
    for n in [*range(1, 300), 511, 512, 1000, 1024, 4097, 9000, 20000]:
        x = _random(rng, (3, n), dtype, n)
        out = np.empty(3, dtype)
        kernel(x.reshape(-1), n, out)
        with np.errstate(all="ignore"):
            assert _bits(out) == _bits(np.add.reduce(x, axis=1)), n
    zeros = np.full((4, 9), -0.0, dtype)  # add.reduce starts from +0.0: a row of -0.0 sums to +0.0
    out = np.empty(4, dtype)
    kernel(zeros.reshape(-1), 9, out)
    assert not np.signbit(out).any()


@pytest.mark.parametrize("shape,axis", [((64, 10), (1,)), ((4, 8, 16), (2,)), ((5, 4, 8), (1, 2)),
                                        ((300, 128), (1,)), ((6, 1), (1,))])
def test_sum_over_short_rows_takes_the_loop_with_numpys_bits(shape, axis, monkeypatch):
    calls = []
    real = _rows.row_sums()
    monkeypatch.setattr(_rows, "row_sums", lambda: lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(1)
    for dtype in (np.float32, np.float64):
        for keepdims in (False, True):
            x = _random(rng, shape, dtype, 5)
            with np.errstate(all="ignore"):
                got = reduction._sum_cpu(x, axis=axis, keepdims=keepdims)
                want = np.add.reduce(x, axis=axis, keepdims=keepdims)
            assert got.shape == want.shape and got.dtype == want.dtype and _bits(got) == _bits(want)
    assert len(calls) == 4
    # not C-ordered, too few rows, rows over 128, not the trailing axes: NumPy's own call
    for x, ax in [(np.ones((16, 64), np.float32).T, (1,)), (np.ones((3, 8), np.float32), (1,)),
                  (np.ones((8, 129), np.float32), (1,)), (np.ones((16, 8), np.float32), (0,))]:
        assert reduction._sum_cpu(x, axis=ax, keepdims=False).tobytes() == np.add.reduce(x, axis=ax).tobytes()
    assert len(calls) == 4


def test_jit_sums_short_rows_as_eager():
    x = core.asarray(np.random.default_rng(2).standard_normal((32, 24)).astype(np.float32))
    f = core.jit(lambda a: core.sum(a * 3.0, axis=1))
    assert np.asarray(f(x)).tobytes() == np.asarray(core.sum(x * 3.0, axis=1)).tobytes()
    f_ordered = np.asfortranarray(np.asarray(x))  # (NumPy's reduce, whose order follows the layout)
    got = core.jit(lambda a: core.sum(a, axis=1))(core.asarray(f_ordered))
    assert np.asarray(got).tobytes() == np.add.reduce(f_ordered, axis=1).tobytes()


def _numpy_path(module, name, fn, *args, **params):
    saved = getattr(module, name)
    setattr(module, name, lambda *a: None)
    try:
        return fn(*args, **params)
    finally:
        setattr(module, name, saved)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_loops_give_the_numpy_lowerings_bits(dtype):
    rng = np.random.default_rng(3)
    for trial in range(150):
        nd = int(rng.integers(1, 4))
        shape = tuple(int(v) for v in rng.integers(1, 24, nd))
        if trial % 15 == 0:
            shape = shape[:-1] + (int(rng.integers(129, 700)),)  # rows past NumPy's pairwise block
        k = int(rng.integers(1, nd + 1))
        eps = float(rng.choice([1e-5, 0.0, 1e-12]))
        x = _random(rng, shape, dtype, trial)
        g = _random(rng, shape, dtype, trial + 1)
        for fn, args in ((ln._layer_norm_cpu, (x,)), (ln._layer_norm_backward_cpu, (g, x))):
            got = fn(*args, k=k, eps=eps)
            want = _numpy_path(ln, "_compiled", fn, *args, k=k, eps=eps)
            assert _bits(got) == _bits(want), (fn.__name__, shape, k, eps)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_loops_give_the_numpy_lowerings_bits(dtype):
    rng = np.random.default_rng(4)
    for trial in range(300):
        shape = tuple(int(v) for v in rng.integers(1, 20, int(rng.integers(1, 4))))
        shape = shape[:-1] + (int(rng.integers(1, 129)),)
        x = _random(rng, shape, dtype, trial)
        for fn, numpy_path in ((softmax._softmax_cpu, softmax._softmax_numpy),
                               (softmax._log_softmax_cpu, softmax._log_softmax_numpy)):
            got = fn(x, axis=(x.ndim - 1,))
            want = numpy_path(x, (x.ndim - 1,))
            assert _bits(got) == _bits(want), (fn.__name__, shape, trial)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_jit_runs_the_row_loops_as_one_call_and_the_numpy_path_for_another_layout(op):
    # jit binds the lowering for the equation's avals (softmax._by_rows, through `specialized`); a transposed
    # input reaches it Fortran-ordered, where the closure hands over to the NumPy path
    rng = np.random.default_rng(6)
    x = core.asarray(_random(rng, (16, 12), np.float32, 1))
    f = getattr(core, op)
    numpy_path = getattr(softmax, f"_{op}_numpy")
    plain = core.jit(lambda x: f(x, axis=-1))
    assert _bits(plain(x)) == _bits(numpy_path(np.asarray(x), (1,)))
    assert plain.lower(x)._lowerings == [softmax._by_rows((16, 12), np.dtype(np.float32), (1,), op == "log_softmax")]
    transposed = core.jit(lambda x: f(core.transpose(x, (1, 0)), axis=-1))
    xt = core.asarray(np.ascontiguousarray(np.asarray(x).T))
    assert _bits(transposed(xt)) == _bits(numpy_path(np.asarray(x), (1,)))


def test_a_zero_max_is_taken_as_minus_zero():
    # a row whose max is a zero, the rest far below it: log(sum(exp)) is 0, so log_softmax gives x - max there.
    # Which of two equal zeros a max returns depends on its order, so both paths take a zero max as -0.0, and
    # x - max is +0.0 for either zero, as PyTorch 2.13 gives (signbit False for both)
    for z in (-0.0, 0.0):
        a = np.array([[z, -200.0, -200.0]] * 8, np.float32)
        for out in (softmax._log_softmax_cpu(a, axis=(1,)),
                    softmax._log_softmax_numpy(a, (1,))):
            assert out[:, 0].tolist() == [0.0] * 8 and not np.signbit(out[:, 0]).any()


def test_the_models_ops_agree_with_their_numpy_paths_through_the_torch_face():
    torch.manual_seed(0)
    x = torch.randn(8, 32, 64, requires_grad=True)
    out = torch.nn.functional.layer_norm(x, (64,))
    att = torch.softmax(out.view(8, 32, 8, 8), dim=-1)
    (att * torch.randn(8, 32, 8, 8)).sum().backward()
    xn = x.detach().numpy()
    want = _numpy_path(ln, "_compiled", ln._layer_norm_cpu, xn, k=1, eps=1e-5)
    assert _bits(out.detach().numpy()) == _bits(want)
    assert x.grad is not None and np.isfinite(x.grad.numpy()).all()


def _python(code, timeout):
    """The stdout of `code` run in a fresh interpreter (which must exit cleanly)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_numba_is_imported_for_the_loops_only_once_they_pay_for_it():
    # a short script's few sums stay NumPy's (importing numba costs ~0.4 s); after _ROWS_BEFORE_IMPORT rows
    # through NumPy's per-row calls the loops take over. Either way the sums are NumPy's bits
    code = ("import sys, numpy as np, mindtorch_v2 as torch\n"
            "x = torch.ones(8, 10)\n"
            "a = x.sum(1).numpy().tobytes()\n"
            "torch.softmax(torch.randn(128, 32), -1), torch.nn.functional.layer_norm(torch.randn(64, 32), (32,))\n"
            "print('numba' in sys.modules)\n"
            "big = torch.ones(250_000, 10)\n"
            "for _ in range(5): s = big.sum(1)\n"
            "print('numba' in sys.modules, x.sum(1).numpy().tobytes() == a)\n")
    assert _python(code, 120).split() == ["False", "True", "True"]


def test_threads_meeting_their_first_short_rows_at_once():
    # one thread compiles the shared sums, the others wait (they had raised numba's "already jitted" error)
    code = ("import numba, threading, mindtorch_v2 as torch\n"
            "F = torch.nn.functional\n"
            "errors = []\n"
            "def work(i):\n"
            "    try:\n"
            "        x = torch.randn(64, 32)\n"
            "        [x.sum(1), F.layer_norm(x, (32,)), F.softmax(x, -1), F.log_softmax(x, -1)][i % 4].numpy()\n"
            "    except Exception as e:\n"
            "        errors.append(repr(e))\n"
            "threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]\n"
            "[t.start() for t in threads]; [t.join() for t in threads]\n"
            "print(errors)\n")
    assert _python(code, 300).strip() == "[]"
