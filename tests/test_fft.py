"""core.fft (fft_p and its composites) against numpy.fft; complex VJPs against finite differences in
JAX's convention (the pairing Re(sum(a * b)), no conjugation); torch.fft's surface and errors."""
import numpy as np
import pytest
import scipy.fft

import mindtorch_v2 as torch
from mindtorch_v2 import core

RNG = np.random.default_rng(0)
NORMS = [None, "backward", "ortho", "forward"]


def crandn(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def close(a, b, tol=1e-10):
    a = np.asarray(a)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# ---------------------------------------------------------------------------
# values against numpy.fft

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]
REAL_IN = {"rfft", "ihfft", "rfft2", "rfftn"}


def _input(name, shape):
    return RNG.standard_normal(shape) if name in REAL_IN else crandn(*shape)


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 3, 8])
@pytest.mark.parametrize("axis", [-1, 0])
def test_one_dimensional_transforms_match_numpy(name, norm, n, axis):
    x = _input(name, (5, 6))
    got = getattr(core.fft, name)(core.asarray(x), n=n, axis=axis, norm=norm)
    close(got, getattr(np.fft, name)(x, n=n, axis=axis, norm=norm))


_S_AXES = [(None, None), ((4, 6), None), (None, (0, 2)), ((3, 5), (2, 0)), ((2, 3, 4), (1, 2, 0))]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name, s, axes", [(name, s, axes) for name in N_D for s, axes in _S_AXES
                                           if not (name.endswith("2") and axes is not None and len(axes) != 2)])
def test_n_dimensional_transforms_match_numpy(name, norm, s, axes):  # (2-D transforms take two axes)
    x = _input(name, (3, 4, 5))
    kw = {} if axes is None else {"axes": axes}
    got = getattr(core.fft, name)(core.asarray(x), s=s, norm=norm, **kw)
    if axes is None and s is not None:
        kw = {"axes": tuple(range(3 - len(s), 3))}  # numpy 2 wants them spelled out
    ref = getattr(np.fft, name)(x, s=s, norm=norm, **kw)
    close(got, ref)


@pytest.mark.parametrize("norm", NORMS)
def test_hermitian_n_dimensional_transforms_are_irfftn_of_conj_and_conj_of_rfftn(norm):
    x = crandn(3, 4, 5)
    close(core.fft.hfftn(core.asarray(x), s=(4, 6), norm=norm), scipy.fft.hfftn(x, s=(4, 6), axes=(1, 2),
                                                                               norm=norm))
    close(core.fft.hfft2(core.asarray(x), norm=norm), scipy.fft.hfft2(x, norm=norm))
    r = x.real
    close(core.fft.ihfftn(core.asarray(r), axes=(0, 2), norm=norm), scipy.fft.ihfftn(r, axes=(0, 2), norm=norm))
    close(core.fft.ihfft2(core.asarray(r), norm=norm), scipy.fft.ihfft2(r, norm=norm))


def test_dtypes_follow_torch():
    f32 = core.asarray(np.ones((4,), np.float32))
    assert core.fft.fft(f32).dtype is core.complex64
    assert core.fft.rfft(f32).dtype is core.complex64
    assert core.fft.fft(core.asarray(np.ones(4))).dtype is core.complex128
    assert core.fft.fft(core.arange(4)).dtype is core.complex64  # integers: the default float first
    assert core.fft.fft(core.asarray([True, False])).dtype is core.complex64
    assert core.fft.irfft(core.fft.rfft(f32)).dtype is core.float32
    assert core.fft.hfft(f32).dtype is core.float32
    assert core.fft.ihfft(f32).dtype is core.complex64
    # single precision is computed in single precision, and matches numpy's double to float32 rounding
    x = RNG.standard_normal(16).astype(np.float32)
    close(core.fft.rfft(core.asarray(x)), np.fft.rfft(x), tol=1e-5)


def test_meta_shapes_and_default_irfft_length():
    m = core.zeros((3, 5), device="meta")
    assert core.fft.rfft(m).shape == (3, 3)
    assert core.fft.rfft(m, n=8).shape == (3, 5)
    assert core.fft.rfftn(m).shape == (3, 3)
    c = core.fft.rfft(m)
    assert core.fft.irfft(c).shape == (3, 4)       # 2 * (m - 1)
    assert core.fft.irfft(c, n=5).shape == (3, 5)
    assert core.fft.irfftn(c, s=(2, 7)).shape == (2, 7)
    assert core.fft.hfft(c).shape == (3, 4)
    assert core.fft.fft2(m, s=(4, 2)).shape == (4, 2)
    assert core.fft.irfft(c).device is core.meta


def test_zero_axes_transforms_only_cast():
    x = core.asarray(np.ones((3,), np.float32))
    assert core.fft.fftn(x, axes=()).dtype is core.complex64
    close(core.fft.fftn(core.asarray(2.0)), 2.0)


# ---------------------------------------------------------------------------
# frequencies and shifts


@pytest.mark.parametrize("n", [1, 4, 5])
def test_frequencies_match_numpy(n):
    close(core.fft.fftfreq(n, 0.3), np.fft.fftfreq(n, 0.3), tol=1e-6)
    close(core.fft.rfftfreq(n, 0.3), np.fft.rfftfreq(n, 0.3), tol=1e-6)
    assert core.fft.fftfreq(n).dtype is core.float32
    assert core.fft.rfftfreq(n, dtype=core.float64).dtype is core.float64


def test_frequencies_with_zero_spacing_are_infinite_as_in_torch():
    with np.errstate(invalid="ignore"):
        f = np.asarray(core.fft.fftfreq(4, 0.0))
    assert np.isnan(f[0]) and np.isinf(f[1:]).all()


@pytest.mark.parametrize("axes", [None, 0, 1, (0, 1), (-1,)])
def test_shifts_match_numpy(axes):
    x = np.arange(15).reshape(3, 5)
    close(core.fft.fftshift(core.asarray(x), axes), np.fft.fftshift(x, axes))
    close(core.fft.ifftshift(core.asarray(x), axes), np.fft.ifftshift(x, axes))
    close(core.fft.ifftshift(core.fft.fftshift(core.asarray(x), axes), axes), x)


# ---------------------------------------------------------------------------
# derivatives: every kind and norm, against finite differences in JAX's convention


def _rand_like(a):
    a = np.asarray(a)
    return crandn(*a.shape) if np.iscomplexobj(a) else RNG.standard_normal(a.shape)


def _pair(a, b):
    return float(np.real(np.sum(np.asarray(a) * np.asarray(b))))


def check_derivatives(f, x, eps=1e-4):
    """<vjp(u), v> == <u, J v> (central differences) == <u, jvp(v)>, with <a, b> = Re(sum(a b))."""
    out, pull = core.vjp(f, core.asarray(x))
    u, v = _rand_like(out), _rand_like(x)
    (ct,) = pull(core.asarray(u))
    assert ct.shape == x.shape and np.iscomplexobj(np.asarray(ct)) == np.iscomplexobj(x)
    fd = (np.asarray(f(core.asarray(x + eps * v))) - np.asarray(f(core.asarray(x - eps * v)))) / (2 * eps)
    _, jv = core.jvp(f, (core.asarray(x),), (core.asarray(v),))
    close(_pair(ct, v), _pair(u, fd), tol=1e-8)
    close(_pair(u, jv), _pair(u, fd), tol=1e-8)


@pytest.mark.parametrize("kind", ["fft", "ifft", "rfft", "irfft"])
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("axes, lengths", [((1,), (5,)), ((1,), (4,)), ((0, 1), (3, 4)), ((1, 0), (5, 3)),
                                           ((2, 0), (3, 1)), ((0,), (1,))])
def test_fft_p_vjp_and_jvp_match_finite_differences(kind, norm, axes, lengths):
    shape = [3, 5, 2]
    for a, n in zip(axes, lengths):
        shape[a] = n
    if kind == "irfft":
        shape[axes[-1]] = lengths[-1] // 2 + 1
    x = RNG.standard_normal(shape) if kind == "rfft" else crandn(*shape)
    check_derivatives(lambda a: core.fft.fft_p.bind(a, kind=kind, axes=axes, lengths=lengths, norm=norm), x)


@pytest.mark.parametrize("name, n", [("fft", 7), ("ifft", 3), ("rfft", 4), ("irfft", 9), ("hfft", 5),
                                     ("ihfft", 6), ("hfft", None), ("irfft", None)])
def test_composite_derivatives_with_padding_and_cropping(name, n):
    x = _input(name, (2, 5))
    check_derivatives(lambda a: getattr(core.fft, name)(a, n=n, norm="ortho"), x)


@pytest.mark.parametrize("name", N_D + ["hfftn", "ihfftn"])
def test_n_dimensional_composite_derivatives(name):
    x = _input(name if name != "ihfftn" else "rfftn", (3, 4, 2))
    check_derivatives(lambda a: getattr(core.fft, name)(a, s=(5, 3), axes=(0, 1)), x)


def test_real_input_of_complex_transform_gets_a_real_gradient():
    x = RNG.standard_normal((6,))
    check_derivatives(lambda a: core.fft.fft(a), x)
    g = core.grad(lambda a: core.sum(core.abs(core.fft.fft(a)) ** 2))(core.asarray(x))
    close(g, 2 * 6 * x)  # Parseval: |F x|^2 = n |x|^2


def test_second_order_and_vmap():
    x = RNG.standard_normal((4, 6))

    def loss(a):
        return core.sum(core.abs(core.fft.rfft(a)) ** 2)

    h = core.jacfwd(core.grad(loss))(core.asarray(x[0]))
    # the Hessian of |rfft x|^2 is 2 rfft^T rfft-weighted: constant, symmetric, positive definite
    h = np.asarray(h)
    close(h, h.T)
    assert np.linalg.eigvalsh(h).min() > 0
    batched = core.vmap(lambda a: core.fft.rfft(a, n=8), in_axes=1)(core.asarray(x))
    close(batched, np.fft.rfft(x.T, n=8))
    batched = core.vmap(lambda a: core.fft.irfft2(a), in_axes=0)(core.asarray(crandn(2, 3, 4)))
    assert batched.shape == (2, 3, 6)


def test_vjp_rules_run_on_meta():
    m = core.zeros((3, 4), dtype=core.complex64, device="meta")
    for kind, lengths in [("fft", (3, 4)), ("irfft", (3, 6))]:
        out, pull = core.vjp(lambda a: core.fft.fft_p.bind(a, kind=kind, axes=(0, 1), lengths=lengths,
                                                            norm="ortho"), m)
        (ct,) = pull(core.zeros_like(out))
        assert (ct.shape, ct.dtype, ct.device) == (m.shape, m.dtype, core.meta)


# ---------------------------------------------------------------------------
# errors


@pytest.mark.parametrize("call, error, words", [
    (lambda: core.fft.fft(core.zeros((3,)), n=0), ValueError, "Invalid number of data points (0)"),
    (lambda: core.fft.fft(core.zeros((3,)), norm="bad"), ValueError, "Invalid normalization mode"),
    (lambda: core.fft.fft(core.zeros((3,)), axis=1), IndexError, "out of range"),
    (lambda: core.fft.fft(core.asarray(1.0)), IndexError, "out of range"),
    (lambda: core.fft.rfft(core.zeros((3,), dtype=core.complex64)), TypeError, "real input"),
    (lambda: core.fft.fft(core.zeros((3,), dtype=core.float16)), TypeError, "Unsupported dtype Half"),
    (lambda: core.fft.fftn(core.zeros((3, 2)), axes=(0, 0)), ValueError, "unique"),
    (lambda: core.fft.fftn(core.zeros((3, 2)), s=(1, 2, 3)), ValueError, "Got shape with 3 values"),
    (lambda: core.fft.fftn(core.zeros((3, 2)), s=(1, 2), axes=(0,)), ValueError, "same length"),
    (lambda: core.fft.irfft(core.zeros((1,), dtype=core.complex64)), ValueError, "Invalid number of data points"),
    (lambda: core.fft.rfftn(core.zeros((3,)), axes=()), ValueError, "at least one axis"),
    (lambda: core.fft.fftfreq(4, dtype=core.int64), TypeError, "floating point"),
    (lambda: core.fft.fft_p.bind(core.zeros((3,)), kind="fft", axes=(0,), lengths=(3,), norm="backward"),
     TypeError, "complex"),
    (lambda: core.fft.fft_p.bind(core.zeros((3,), dtype=core.complex64), kind="fft", axes=(0,), lengths=(4,),
                                 norm="backward"), ValueError, "does not match"),
])
def test_bad_input_raises_clear_errors(call, error, words):
    with pytest.raises(error, match=None) as info:
        call()
    assert words in str(info.value)


# ---------------------------------------------------------------------------
# torch.fft on the eager front end (values, gradients and errors against torch: test_vs_torch_fft.py)


def test_torch_fft_runs_on_meta_tensors():
    m = torch.empty(3, 5, device="meta")
    y = torch.fft.rfft2(m)
    assert (tuple(y.shape), y.dtype, y.device.type) == ((3, 3), torch.complex64, "meta")
    assert tuple(torch.fft.irfftn(torch.fft.rfftn(m)).shape) == (3, 4)


def test_torch_fft_under_func_transforms():
    x = torch.from_numpy(RNG.standard_normal((4, 6)))
    close(torch.func.vmap(torch.fft.rfft)(x).numpy(), np.fft.rfft(x.numpy()))
    g = torch.func.grad(lambda a: (torch.fft.fft(a).abs() ** 2).sum())(x[0])
    close(g.numpy(), 12 * x[0].numpy())


def test_torch_fft_complex_gradient_is_the_conjugate_wirtinger_one():
    z = torch.from_numpy(crandn(5)).requires_grad_()
    (torch.fft.ifft(z, norm="ortho").abs() ** 2).sum().backward()  # |ifft z|^2 = |z|^2 (unitary)
    close(z.grad.numpy(), 2 * z.detach().numpy())


def test_empty_batch_axes_give_empty_results():  # torch's MKL refuses these; numpy's answer is the sensible one
    assert tuple(torch.fft.fft(torch.zeros(0, 4)).shape) == (0, 4)
    assert tuple(torch.fft.irfft(torch.zeros(0, 3, dtype=torch.complex64)).shape) == (0, 4)
