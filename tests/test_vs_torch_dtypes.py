"""Differential tests of the dtypes issue 10 adds (complex64/128, bfloat16, float8, uint16/32/64): promotion,
finfo/iinfo, arithmetic and printing, complex autograd in PyTorch's convention, Tensor.view(dtype) as a
bit reinterpretation. Each case is a function of a library module L; its PyTorch answer is recorded in
tests/goldens/vs_torch_dtypes.* (`python tests/record_goldens.py dtypes`), so these run without torch.

Results are compared as plain data: a tensor becomes (dtype name, shape, values as float64/complex128)."""
import numpy as np
import pytest

import mindtorch_v2 as mt
from _goldens import Goldens, golden_fixtures, torch_lib

GOLDEN = Goldens("vs_torch_dtypes")
_golden_file, _golden_case = golden_fixtures(GOLDEN)

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16", "bfloat16",
         "float8_e4m3fn", "float8_e5m2", "float32", "float64", "complex64", "complex128"]


def plain(x):
    """A library value as JSON-able data (tensors through numpy, complex as [re, im] pairs)."""
    if hasattr(x, "detach") and hasattr(x, "dtype") and hasattr(x, "shape"):
        d = str(x.dtype).replace("torch.", "")
        x = x.detach().resolve_conj()
        narrow = d in ("bfloat16", "float8_e4m3fn", "float8_e5m2")  # read through float32 (exact)
        arr = np.asarray((x.float() if narrow else x).numpy())
        if arr.dtype.kind == "c":
            vals = np.stack([arr.real, arr.imag], -1).astype(np.float64).tolist()
        else:
            vals = arr.astype(np.float64).tolist()
        return ["tensor", d, list(x.shape), vals]
    if isinstance(x, (tuple, list)):
        return [plain(v) for v in x]
    if isinstance(x, complex):
        return ["complex", x.real, x.imag]
    if hasattr(x, "is_floating_point") and hasattr(x, "itemsize"):  # a dtype
        return ["dtype", str(x).replace("torch.", "")]
    return x


def outcome(L, fn):
    try:
        return plain(fn(L))
    except Exception as e:  # noqa: BLE001 - the exception type is the result
        return ["raise", type(e).__name__, str(e)[:200], [c.__name__ for c in type(e).__mro__]]


def check(fn, rtol=1e-6, atol=1e-7):
    """fn(L) on mindtorch equals PyTorch's recorded outcome (values to rtol/atol, errors by type and words)."""
    want = GOLDEN(lambda: outcome(torch_lib(), fn))
    if GOLDEN.recording:
        return
    got = outcome(mt, fn)
    _same(got, want, rtol, atol)


def _same(got, want, rtol, atol):
    if isinstance(want, list) and want and want[0] == "raise":
        assert isinstance(got, list) and got and got[0] == "raise", f"torch raised {want[1]}: {want[2]}; got {got}"
        assert want[1] in got[3], f"torch raised {want[1]}: {want[2]}; mindtorch raised {got[1]}: {got[2]}"
        return
    if isinstance(want, list) and want and want[0] == "tensor":
        assert isinstance(got, list) and got[:3] == want[:3], f"{got[:3]} vs torch {want[:3]}"
        np.testing.assert_allclose(np.asarray(got[3], np.float64), np.asarray(want[3], np.float64), rtol=rtol,
                                   atol=atol, equal_nan=True)
        return
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{got} vs torch {want}"
        for g, w in zip(got, want):
            _same(g, w, rtol, atol)
        return
    if isinstance(want, float):
        assert got == pytest.approx(want, rel=rtol, abs=atol, nan_ok=True), f"{got} vs torch {want}"
        return
    assert got == want, f"{got!r} vs torch {want!r}"


def dtype(L, name):
    return getattr(L, name)


@pytest.mark.parametrize("a", NAMES)
def test_promote_types_row(a):
    for b in NAMES:
        check(lambda L: L.promote_types(dtype(L, a), dtype(L, b)))


@pytest.mark.parametrize("name", NAMES)
def test_finfo_and_iinfo(name):
    def info(L):
        d = dtype(L, name)
        if d.is_floating_point or d.is_complex:
            i = L.finfo(d)
            return [i.bits, i.eps, i.max, i.min, i.tiny, i.smallest_normal, i.resolution, str(i.dtype)]
        i = L.iinfo(d)
        return [i.bits, i.min, i.max, str(i.dtype)]
    check(info)
    check(lambda L: [dtype(L, name).is_floating_point, dtype(L, name).is_complex, dtype(L, name).is_signed,
                     dtype(L, name).itemsize])


def test_finfo_default_and_errors():
    check(lambda L: repr(L.finfo()))
    check(lambda L: repr(L.finfo(L.bfloat16)))
    check(lambda L: repr(L.iinfo(L.int16)))
    check(lambda L: L.iinfo(L.float32))
    check(lambda L: L.finfo(L.int32))


Z = np.array([1 + 2j, -0.5 + 0.25j, 3 - 1j], np.complex64)


def cz(L, dtype=None):
    t = L.from_numpy(Z.copy())
    return t if dtype is None else t.to(getattr(L, dtype))


@pytest.mark.parametrize("op", ["add", "mul", "div", "sub"])
def test_complex_arithmetic_and_promotion(op):
    check(lambda L: getattr(L, op)(cz(L), L.tensor([1.5, 2.0, -1.0])))
    check(lambda L: getattr(L, op)(cz(L), 2.5))
    check(lambda L: getattr(L, op)(cz(L), 1j))
    check(lambda L: getattr(L, op)(L.tensor([1.0, 2.0], dtype=L.float64), L.tensor(1j)))
    check(lambda L: getattr(L, op)(L.tensor([1, 2]), 1j))


@pytest.mark.parametrize("fn", ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "abs", "neg", "reciprocal",
                                "angle", "sgn", "conj", "real", "imag"])
def test_complex_unary(fn):
    check(lambda L: getattr(L, fn)(cz(L)), rtol=1e-5, atol=1e-6)
    check(lambda L: getattr(L, fn)(cz(L, "complex128")), rtol=1e-12, atol=1e-12)


def test_complex_parts_views_and_constructors():
    check(lambda L: L.view_as_real(cz(L)))
    check(lambda L: L.view_as_complex(L.tensor([[1.0, 2.0], [3.0, -4.0]])))
    check(lambda L: L.view_as_complex(L.tensor([1.0, 2.0, 3.0])))
    check(lambda L: L.view_as_real(L.tensor([1.0, 2.0])))
    check(lambda L: L.complex(L.tensor([1.0, 2.0]), L.tensor([0.5, -1.0])))
    check(lambda L: L.complex(L.tensor([1.0, 2.0]), L.tensor([0.5, -1.0], dtype=L.float64)))
    check(lambda L: L.polar(L.tensor([1.0, 2.0]), L.tensor([0.5, -1.0])))
    check(lambda L: [cz(L).real, cz(L).imag, cz(L).is_complex(), L.tensor([1.0]).real])
    check(lambda L: L.tensor([1.0]).imag)
    check(lambda L: [cz(L).sum(), cz(L).mean(), cz(L).prod(), L.matmul(cz(L), cz(L))], rtol=1e-5)
    check(lambda L: cz(L) < cz(L))
    check(lambda L: L.maximum(cz(L), cz(L)))
    check(lambda L: cz(L).to(L.float32))


def test_complex_printing():
    check(lambda L: repr(cz(L)))
    check(lambda L: repr(cz(L, "complex128")))
    check(lambda L: repr(L.tensor([[1 + 2j, 3.25 - 1j], [0.0, -1e-5j]])))
    check(lambda L: str(L.tensor(2j)))


def test_complex_autograd_follows_pytorch_convention():
    def grads(L, loss):
        z = cz(L, "complex128").requires_grad_()
        w = L.tensor([0.5 - 1j, 2.0 + 0.5j, 1.0j], dtype=L.complex128, requires_grad=True)
        loss(L, z, w).backward()
        return [z.grad, w.grad]
    check(lambda L: grads(L, lambda L, z, w: (z.abs() ** 2).sum()), rtol=1e-12)
    check(lambda L: grads(L, lambda L, z, w: (z * w).real.sum() + (z.conj() * w).imag.sum()), rtol=1e-12)
    check(lambda L: grads(L, lambda L, z, w: (L.exp(z) * w).abs().sum()), rtol=1e-10)
    check(lambda L: grads(L, lambda L, z, w: L.view_as_real(z * w).pow(2).sum()), rtol=1e-12)
    check(lambda L: grads(L, lambda L, z, w: L.angle(z * w).sum() + (z / w).abs().mean()), rtol=1e-10)

    def nonscalar(L):
        z = cz(L, "complex128").requires_grad_()
        (z * z).backward(L.tensor([1.0 + 1j, 2.0, -1j], dtype=L.complex128))
        return z.grad
    check(nonscalar, rtol=1e-12)

    def complex_loss(L):
        z = cz(L).requires_grad_()
        z.sum().backward()
    check(complex_loss)

    def grad_api_and_hook(L):
        z = cz(L, "complex128").requires_grad_()
        seen = []
        z.register_hook(lambda g: seen.append(g.clone()))
        (g,) = L.autograd.grad((z * z).abs().sum(), z, retain_graph=True)
        (z * z).abs().sum().backward()
        return [g, seen[-1]]
    check(grad_api_and_hook, rtol=1e-12)


def test_narrow_float_arithmetic_computes_in_float32_and_rounds():
    check(lambda L: L.ones(3, dtype=L.bfloat16) * 3.3)
    check(lambda L: L.tensor([1.0, 2.5, 300.0]).to(L.bfloat16) + L.tensor([0.01, 0.02, 0.5]).to(L.bfloat16))
    check(lambda L: L.exp(L.tensor([0.5, 1.5]).to(L.bfloat16)))
    check(lambda L: L.tensor([0.3, 1.7, 448.0, 500.0]).to(L.float8_e4m3fn).float())
    check(lambda L: L.tensor([0.3, 1.7, 57344.0]).to(L.float8_e5m2).float())
    check(lambda L: L.tensor([1.0, 2.0]).to(L.bfloat16) + L.tensor([1.0, 2.0]).to(L.float16))
    check(lambda L: L.tensor([1.0, 2.0]).to(L.float8_e4m3fn) + L.tensor([1.0, 2.0]))
    check(lambda L: repr(L.tensor([1.0, 2.5, 1 / 3]).to(L.bfloat16)))
    check(lambda L: repr(L.tensor([1.0, 2.5]).to(L.float8_e5m2)))
    check(lambda L: L.matmul(L.ones(2, 3, dtype=L.bfloat16) * 1.1, L.ones(3, 2, dtype=L.bfloat16)))


def test_half_reductions_accumulate_in_float32():
    check(lambda L: L.full((3,), 60000.0, dtype=L.float16).mean())
    check(lambda L: L.full((3,), 60000.0, dtype=L.bfloat16).mean())
    check(lambda L: L.full((4,), 30000.0, dtype=L.float16).sum() / 4)


def test_wide_unsigned_dtypes():
    check(lambda L: L.from_numpy(np.arange(3, dtype=np.uint16)).dtype)
    check(lambda L: L.from_numpy(np.arange(3, dtype=np.uint32)).dtype)
    check(lambda L: L.from_numpy(np.array([2**63 + 5], dtype=np.uint64)).dtype)
    check(lambda L: L.tensor([1, 2], dtype=L.uint16).to(L.float32))
    check(lambda L: L.tensor([1, 2], dtype=L.uint32) + L.tensor([1, 2], dtype=L.int32))


def test_view_dtype_reinterprets_bits():
    check(lambda L: L.ones(2, 4).view(L.int32))
    check(lambda L: L.ones(2, 4).view(L.int16))
    check(lambda L: L.ones(2, 4).view(L.float64))
    check(lambda L: L.ones(2, 3).view(L.float64))
    check(lambda L: L.ones(2, 4).t().view(L.float16))
    check(lambda L: L.ones(()).view(L.int16))
    check(lambda L: L.tensor([1.0, -2.0]).view(L.complex64))
    check(lambda L: cz(L).view(L.float32))
    check(lambda L: L.tensor([1, 2, 3], dtype=L.int8).view(L.uint8))
    check(lambda L: L.tensor([-1], dtype=L.int8).view(L.bool))


def test_complex_order_and_norms():
    check(lambda L: cz(L).max())
    check(lambda L: cz(L).sort())
    check(lambda L: cz(L).argmax())
    check(lambda L: cz(L).norm())
    check(lambda L: L.norm(L.tensor([[1.0, 2.0], [3.0, 4.0]]), p="nuc"))
    check(lambda L: L.inner(L.ones(2, 3), L.arange(6.0).reshape(2, 3)))
    check(lambda L: L.inner(L.ones(3), L.ones(2)))
    check(lambda L: L.tensor(1.0).view(L.int32))
    check(lambda L: L.ones(2, requires_grad=True).view(L.float32).requires_grad)


def test_linalg_out_tuples_are_written_not_ignored():
    A = [[2.0, 1.0], [1.0, 3.0]]

    def qr_out(L):
        q, r = L.empty(0), L.empty(0)
        res = L.linalg.qr(L.tensor(A), out=(q, r))
        return [q, r, res.Q is q]
    check(qr_out)

    def det_out(L):
        o = L.empty(0)
        L.linalg.det(L.tensor(A), out=o)
        return o
    check(det_out)

    def eigh_out(L):
        w, v = L.empty(0), L.empty(0)
        L.linalg.eigh(L.tensor(A), out=(w, v))
        return [w, v.abs()]
    check(eigh_out)
    check(lambda L: L.linalg.qr(L.tensor(A), out=L.empty(0)))


def test_ldexp_computes_in_the_promoted_floating_dtype():
    check(lambda L: L.ldexp(L.tensor([1.0], dtype=L.float16), L.tensor([20])))
    check(lambda L: L.ldexp(L.tensor([1.0], dtype=L.float16), L.tensor([3.0])))
    check(lambda L: L.ldexp(L.tensor([1]), L.tensor([3])))
    check(lambda L: L.ldexp(L.tensor([1.0], dtype=L.float64), L.tensor([3.0])))


def test_cpu_autocast_runs_the_lower_precision_ops_in_bfloat16():
    def region(L):
        L.manual_seed(0)
        x = L.from_numpy(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))
        w = L.from_numpy(np.linspace(0.5, -0.5, 12, dtype=np.float32).reshape(3, 4)).requires_grad_()
        b = L.from_numpy(np.array([0.1, -0.2, 0.3], dtype=np.float32))
        with L.autocast("cpu", dtype=L.bfloat16):
            y = L.nn.functional.linear(x, w, b)
            z = L.matmul(x, x.t())
            s = L.softmax(y, -1)
            d = L.ones(2, dtype=L.float64) @ L.ones(2, dtype=L.float64)
            enabled = L.is_autocast_enabled("cpu")
        y.float().sum().backward()
        return [y, z, s.dtype, d, enabled, L.is_autocast_enabled("cpu"), w.grad]
    check(region, rtol=1e-2, atol=1e-2)
