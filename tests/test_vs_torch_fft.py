"""Differential tests: torch.fft against PyTorch's recorded answers (tests/goldens/vs_torch_fft.*).

Cases are functions of a library module `L` (torch or mindtorch_v2) on numpy inputs with fixed seeds:
values and dtypes of every transform for each norm, n/s/dim form and input dtype; gradients (PyTorch's
convention) of real losses of the outputs; the frequencies and shifts; out=; the errors for bad input.
Regenerate with `python tests/record_goldens.py fft` where torch is installed.
"""
import numpy as np
import pytest

import mindtorch_v2 as mt
from _goldens import GDtype, GExc, Goldens, GTensor, golden_fixtures, torch_lib

GOLDEN = Goldens("vs_torch_fft")
_golden_file, _golden_case = golden_fixtures(GOLDEN)

NORMS = [None, "backward", "ortho", "forward"]
ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
TWO_D = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"]
N_D = ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}


# ---------------------------------------------------------------------------
# harness


def dtype_name(d):
    return d.name if isinstance(d, GDtype) else str(d).replace("torch.", "")


def tol(dtype):
    return {"float32": 2e-5, "complex64": 2e-5}.get(dtype, 1e-10)


def assert_same(a, b, what):
    if isinstance(b, GTensor):
        assert isinstance(a, mt.Tensor), f"{what}: expected a Tensor, got {type(a).__name__}"
        assert dtype_name(a.dtype) == b.dtype, f"{what}: dtype {a.dtype} vs torch {b.dtype}"
        assert tuple(a.shape) == b.shape, f"{what}: shape {tuple(a.shape)} vs torch {b.shape}"
        t = tol(b.dtype)
        np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.data, rtol=t, atol=t, err_msg=what)
        return
    if isinstance(b, (tuple, list)):
        assert isinstance(a, (tuple, list)) and len(a) == len(b), f"{what}: {a!r} vs torch {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{what}[{i}]")
        return
    if isinstance(b, GDtype):
        assert dtype_name(a) == b.name, f"{what}: {a} vs torch {b}"
        return
    assert a == b, f"{what}: {a!r} vs torch {b!r}"


def _on(L, fn, args):
    args = [L.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in args]
    try:
        return fn(L, *args)
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        return e


def compare(fn, *args, what=""):
    """fn(L, *args) on mindtorch (numpy args become tensors) against torch's recorded result or error."""
    golden = GOLDEN(lambda: _on(torch_lib(), fn, args))
    if GOLDEN.recording:
        return
    res = _on(mt, fn, args)
    if isinstance(golden, GExc):
        assert isinstance(res, BaseException), f"{what}: torch raised {golden} but mindtorch returned {res!r}"
        assert golden.matches(res), f"{what}: torch raised {golden}; mindtorch raised {type(res).__name__}({res})"
        return
    if isinstance(res, BaseException):
        raise AssertionError(f"{what}: torch returned but mindtorch raised {type(res).__name__}: {res}") from res
    assert_same(res, golden, what)


def sample(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype.startswith("complex"):
        return (rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)).astype(dtype)
    if dtype.startswith("int"):
        return rng.integers(-3, 4, shape).astype(dtype)
    return rng.uniform(-2, 2, shape).astype(dtype)


def _dtypes(name):
    return ["float32", "float64", "int64"] + ([] if name in REAL_ONLY else ["complex64", "complex128"])


# ---------------------------------------------------------------------------
# values and dtypes


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ONE_D)
def test_one_dimensional_transforms_match_torch(name, norm):
    for dtype in _dtypes(name):
        x = sample(dtype, (3, 5), seed=1)
        for n, dim in [(None, -1), (None, 0), (4, -1), (8, 1), (1, 0), (7, -2)]:
            compare(lambda L, a: getattr(L.fft, name)(a, n=n, dim=dim, norm=norm), x,
                    what=f"{name}({dtype}, n={n}, dim={dim}, norm={norm})")


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", TWO_D + N_D)
def test_multi_dimensional_transforms_match_torch(name, norm):
    forms = [(None, None), ((3, 4), None), (None, (0, 2)), ((2, 6), (2, 0)), ((4, -1), (-1, 1))]
    if name in N_D:
        forms += [((2, 3, 4), None), (None, (1,)), ((5,), (0,))]
    for dtype in _dtypes(name):
        x = sample(dtype, (2, 3, 4), seed=2)
        for s, dim in forms:
            kw = {} if dim is None else {"dim": dim}
            compare(lambda L, a: getattr(L.fft, name)(a, s=s, norm=norm, **kw), x,
                    what=f"{name}({dtype}, s={s}, dim={dim}, norm={norm})")


# ---------------------------------------------------------------------------
# gradients (PyTorch's convention: the conjugate Wirtinger derivative for complex inputs)


def _real_loss(L, y, seed):
    w = sample("float64", tuple(y.shape), seed=seed)
    w = L.from_numpy(w).to(L.float32 if y.dtype in (L.float32, L.complex64) else L.float64)
    if y.is_complex():
        return (L.real(y) * w).sum() + (L.imag(y) * w * 0.5).sum() + (y.abs() ** 2).sum() * 0.25
    return (y * w).sum() + (y ** 2).sum() * 0.25


def _grad_case(name, kwargs):
    def fn(L, a):
        a.requires_grad_(True)
        y = getattr(L.fft, name)(a, **kwargs)
        _real_loss(L, y, seed=7).backward()
        return a.grad
    return fn


@pytest.mark.parametrize("name", ONE_D + TWO_D + N_D)
def test_gradients_match_torch(name):
    if name in ONE_D:
        forms = [{}, {"n": 3}, {"n": 9, "dim": 0, "norm": "ortho"}, {"norm": "forward"}]
    else:
        forms = [{}, {"s": (3, 7)}, {"dim": (0, 2), "norm": "ortho"}, {"s": (2, 5), "dim": (2, 1), "norm": "forward"}]
    for dtype in ["float64"] + ([] if name in REAL_ONLY else ["complex128"]):
        x = sample(dtype, (4, 3, 5), seed=3)
        for kw in forms:
            compare(_grad_case(name, kw), x, what=f"grad {name}({dtype}, {kw})")


def test_second_order_gradient_matches_torch():
    def fn(L, a):
        a.requires_grad_(True)
        y = (L.fft.rfft(a, n=6).abs() ** 2).sum() + (L.fft.ifft(a).real ** 3).sum()
        (g,) = L.autograd.grad(y, a, create_graph=True)
        (h,) = L.autograd.grad((g * g).sum(), a)
        return g, h
    compare(fn, sample("float64", (5,), seed=4))


# ---------------------------------------------------------------------------
# frequencies, shifts, out=


def test_frequencies_match_torch():
    for n in [1, 4, 5, 0]:
        for d in [1.0, 0.25, 3]:
            compare(lambda L: L.fft.fftfreq(n, d), what=f"fftfreq({n}, {d})")
            compare(lambda L: L.fft.rfftfreq(n, d), what=f"rfftfreq({n}, {d})")
    compare(lambda L: L.fft.fftfreq(5, dtype=L.float64))
    compare(lambda L: L.fft.rfftfreq(6, 0.5, dtype=L.float16))
    compare(lambda L: L.fft.fftfreq(4, requires_grad=True).requires_grad)
    compare(lambda L: L.fft.fftfreq(4, 0.0))
    compare(lambda L: L.fft.fftfreq(4, out=L.zeros(2)))
    compare(lambda L: L.fft.fftfreq(4, dtype=L.int64))
    compare(lambda L: L.fft.fftfreq(-1))


def test_shifts_match_torch():
    for shape in [(5,), (4,), (3, 4), (2, 3, 5)]:
        x = sample("int64", shape, seed=5)
        for dim in [None, 0, -1, (0,), tuple(range(len(shape)))]:
            compare(lambda L, a: L.fft.fftshift(a, dim), x, what=f"fftshift({shape}, {dim})")
            compare(lambda L, a: L.fft.ifftshift(a, dim=dim), x, what=f"ifftshift({shape}, {dim})")
    compare(lambda L, a: L.fft.fftshift(a), sample("complex64", (3, 4)))
    compare(lambda L: L.fft.fftshift(L.tensor(1.0)))
    compare(lambda L: L.fft.fftshift(L.ones(3), dim=1))

    def grad(L, a):
        a.requires_grad_(True)
        (L.fft.fftshift(a, dim=1) * L.arange(15.0, dtype=L.float64).reshape(3, 5)).sum().backward()
        return a.grad
    compare(grad, sample("float64", (3, 5)))


def test_out_matches_torch():
    x = sample("float32", (3, 4), seed=6)
    compare(lambda L, a: (lambda o: (L.fft.fft(a, out=o), o))(L.empty(0, dtype=L.complex64)), x)
    compare(lambda L, a: (lambda o: (L.fft.rfft2(a, out=o), o))(L.empty((3, 3), dtype=L.complex64)), x)
    compare(lambda L, a: (lambda o: (L.fft.irfft(a, out=o), o))(L.empty(0)), x)
    compare(lambda L, a: L.fft.fft(a, out=L.empty(0)), x)  # complex into a float out: refused


# ---------------------------------------------------------------------------
# errors


ERRORS = [
    ("n=0", lambda L, a: L.fft.fft(a, n=0)),
    ("n=-1", lambda L, a: L.fft.fft(a, n=-1)),
    ("bad dim", lambda L, a: L.fft.fft(a, dim=3)),
    ("bad norm", lambda L, a: L.fft.fft(a, norm="bad")),
    ("bad norm rfft", lambda L, a: L.fft.rfft(a, norm="ortho2")),
    ("irfft of one bin", lambda L, a: L.fft.irfft(a[:, :1])),
    ("fft2 of 1-D", lambda L, a: L.fft.fft2(a[0])),
    ("s longer than ndim", lambda L, a: L.fft.fftn(a, s=(2, 3, 4))),
    ("s and dim lengths", lambda L, a: L.fft.fftn(a, s=(2, 3), dim=(0,))),
    ("repeated dims", lambda L, a: L.fft.fftn(a, dim=(0, 0))),
    ("repeated dims -1", lambda L, a: L.fft.rfftn(a, dim=(1, -1))),
    ("empty fft", lambda L, a: L.fft.fft(a[:, :0])),
    ("0-d", lambda L, a: L.fft.fft(a[0, 0])),
    ("0-d fftn", lambda L, a: L.fft.fftn(a[0, 0])),
    ("rfft of complex", lambda L, a: L.fft.rfft(a.to(L.complex64))),
    ("ihfft of complex", lambda L, a: L.fft.ihfft(a.to(L.complex64))),
    ("rfftn of complex", lambda L, a: L.fft.rfftn(a.to(L.complex128))),
    ("half", lambda L, a: L.fft.fft(a.half())),
    ("bfloat16", lambda L, a: L.fft.rfft(a.to(L.bfloat16))),
    ("rfftn no dims", lambda L, a: L.fft.rfftn(a, dim=())),
    ("irfftn no dims", lambda L, a: L.fft.irfftn(a, dim=())),
    ("fftn no dims", lambda L, a: L.fft.fftn(a, dim=())),
    ("bool", lambda L, a: L.fft.fft(a > 0)),
    ("irfft of real", lambda L, a: L.fft.irfft(a)),
    ("hfft of real", lambda L, a: L.fft.hfft(a, n=5)),
]


@pytest.mark.parametrize("case", [c for c, _ in ERRORS])
def test_bad_input_matches_torch(case):
    compare(dict(ERRORS)[case], sample("float32", (3, 4), seed=8), what=case)
