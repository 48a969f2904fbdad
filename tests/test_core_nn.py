"""Behaviour of core conv / pooling / windows / einsum: values against naive numpy
loops written from PyTorch's definitions, gradients against central finite
differences in float64, higher order, meta shapes and error messages."""

import numpy as np
import pytest

from mindtorch_v2 import core

RNG = np.random.default_rng(0)


def arr(*shape):
    return RNG.standard_normal(shape)


# ---------------------------------------------------------------------------
# references (loops over output positions, straight from the definitions)


def conv_ref(x, w, stride, padding, dilation, groups):
    k = w.ndim - 2
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple(padding))
    n_, c_in = x.shape[:2]
    c_out = w.shape[0]
    cg, og = c_in // groups, c_out // groups
    out_sp = [(xp.shape[2 + i] - dilation[i] * (w.shape[2 + i] - 1) - 1) // stride[i] + 1 for i in range(k)]
    y = np.zeros((n_, c_out, *out_sp))
    for n in range(n_):
        for o in range(c_out):
            grp = o // og
            for pos in np.ndindex(*out_sp):
                acc = 0.0
                for c in range(cg):
                    for kp in np.ndindex(*w.shape[2:]):
                        idx = tuple(pos[i] * stride[i] + kp[i] * dilation[i] for i in range(k))
                        acc += xp[(n, grp * cg + c) + idx] * w[(o, c) + kp]
                y[(n, o) + pos] = acc
    return y


def pool_out_size(size, k, s, p, d, ceil_mode):
    # torch's pooling_output_shape
    num = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def max_pool_ref(x, window, stride, padding, dilation=None, ceil_mode=False):
    k = len(window)
    dilation = dilation or (1,) * k
    sp = x.shape[-k:]
    out_sp = [pool_out_size(sp[i], window[i], stride[i], padding[i], dilation[i], ceil_mode) for i in range(k)]
    y = np.empty(x.shape[:-k] + tuple(out_sp))
    for lead in np.ndindex(*x.shape[:-k]):
        for pos in np.ndindex(*out_sp):
            best = -np.inf
            for kp in np.ndindex(*window):
                idx = tuple(pos[i] * stride[i] - padding[i] + kp[i] * dilation[i] for i in range(k))
                if all(0 <= idx[i] < sp[i] for i in range(k)):
                    best = max(best, x[lead + idx])
            y[lead + pos] = best
    return y


def avg_pool_ref(x, window, stride, padding, ceil_mode=False, count_include_pad=True):
    # torch's avg_pool kernel: the divisor counts padding up to size + pad, never ceil_mode's overhang
    k = len(window)
    sp = x.shape[-k:]
    out_sp = [pool_out_size(sp[i], window[i], stride[i], padding[i], 1, ceil_mode) for i in range(k)]
    y = np.empty(x.shape[:-k] + tuple(out_sp))
    for lead in np.ndindex(*x.shape[:-k]):
        for pos in np.ndindex(*out_sp):
            lo = [pos[i] * stride[i] - padding[i] for i in range(k)]
            hi = [min(lo[i] + window[i], sp[i] + padding[i]) for i in range(k)]
            size = np.prod([hi[i] - lo[i] for i in range(k)])
            lo = [max(v, 0) for v in lo]
            hi = [min(hi[i], sp[i]) for i in range(k)]
            if not count_include_pad:
                size = np.prod([hi[i] - lo[i] for i in range(k)])
            region = x[lead + tuple(slice(lo[i], hi[i]) for i in range(k))]
            y[lead + pos] = region.sum() / size
    return y


# ---------------------------------------------------------------------------
# finite differences


def numeric_grad(f, args, argnum, eps=1e-6):
    """Central-difference gradient of scalar f(*args) (numpy float64 args) w.r.t. args[argnum]."""
    args = [np.array(a, dtype=np.float64) for a in args]
    x = args[argnum]
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        old = x[i]
        x[i] = old + eps
        fp = float(f(*map(core.asarray, args)))
        x[i] = old - eps
        fm = float(f(*map(core.asarray, args)))
        x[i] = old
        g[i] = (fp - fm) / (2 * eps)
    return g


def check_grads(f, args, argnums=None, rtol=1e-5, atol=1e-6):
    argnums = range(len(args)) if argnums is None else argnums
    for n in argnums:
        got = np.asarray(core.grad(f, n)(*map(core.asarray, args)))
        want = numeric_grad(f, args, n)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"gradient of argument {n}")


def weighted(fn, shape_seed=1):
    """A scalar function of fn's output: a fixed random weighting, so every output element matters."""
    cache = {}

    def f(*args):
        y = fn(*args)
        if y.shape not in cache:
            cache[y.shape] = np.random.default_rng(shape_seed).standard_normal(y.shape)
        return core.sum(core.mul(y, core.asarray(cache[y.shape])))
    return f


# ---------------------------------------------------------------------------
# conv forward


CONV_CASES = [
    # x shape, w shape, stride, padding pairs, dilation, groups
    ((2, 3, 7), (4, 3, 3), (1,), ((0, 0),), (1,), 1),
    ((1, 4, 9), (4, 2, 2), (2,), ((1, 2),), (2,), 2),
    ((2, 3, 6, 5), (2, 3, 3, 2), (1, 1), ((1, 1), (0, 0)), (1, 1), 1),
    ((1, 4, 7, 6), (6, 2, 3, 3), (2, 1), ((1, 0), (2, 1)), (1, 2), 2),
    ((2, 4, 5, 5), (4, 1, 3, 3), (1, 2), ((1, 1), (1, 1)), (1, 1), 4),  # depthwise
    ((1, 2, 4, 5, 4), (3, 2, 2, 3, 2), (1, 2, 1), ((0, 0), (1, 1), (1, 0)), (1, 1, 2), 1),
    ((2, 2, 5, 4, 4), (2, 1, 2, 2, 2), (2, 1, 1), ((1, 1), (0, 0), (0, 1)), (1, 1, 1), 2),
]


@pytest.mark.parametrize("xs, ws, stride, padding, dilation, groups", CONV_CASES)
def test_conv_matches_naive_loop(xs, ws, stride, padding, dilation, groups):
    x, w = arr(*xs), arr(*ws)
    got = core.conv(core.asarray(x), core.asarray(w), stride=stride, padding=padding, dilation=dilation,
                    groups=groups)
    np.testing.assert_allclose(np.asarray(got), conv_ref(x, w, stride, padding, dilation, groups), rtol=1e-10,
                               atol=1e-12)


def test_conv_accepts_ints_and_per_dim_padding():
    x, w = arr(2, 3, 6, 6), arr(4, 3, 3, 3)
    ref = conv_ref(x, w, (2, 2), ((1, 1), (1, 1)), (1, 1), 1)
    np.testing.assert_allclose(np.asarray(core.conv(core.asarray(x), core.asarray(w), 2, 1)), ref, atol=1e-12)
    np.testing.assert_allclose(np.asarray(core.conv(core.asarray(x), core.asarray(w), (2, 2), (1, 1))), ref,
                               atol=1e-12)
    ref2 = conv_ref(x, w, (1, 1), ((2, 2), (0, 0)), (1, 1), 1)
    np.testing.assert_allclose(np.asarray(core.conv(core.asarray(x), core.asarray(w), padding=(2, 0))), ref2,
                               atol=1e-12)


def test_conv_same_and_valid_padding():
    x, w = arr(1, 2, 7, 6), arr(3, 2, 4, 3)
    same = core.conv(core.asarray(x), core.asarray(w), padding="same", dilation=(1, 2))
    assert same.shape == (1, 3, 7, 6)
    # torch's 'same': total padding d * (k - 1), the odd one on the high side
    ref = conv_ref(x, w, (1, 1), ((1, 2), (2, 2)), (1, 2), 1)
    np.testing.assert_allclose(np.asarray(same), ref, atol=1e-12)
    valid = core.conv(core.asarray(x), core.asarray(w), padding="valid")
    assert valid.shape == (1, 3, 4, 4)


def test_conv_unbatched_input():
    x, w = arr(3, 5, 5), arr(2, 3, 3, 3)
    got = core.conv(core.asarray(x), core.asarray(w), padding=1)
    assert got.shape == (2, 5, 5)
    np.testing.assert_allclose(np.asarray(got), conv_ref(x[None], w, (1, 1), ((1, 1),) * 2, (1, 1), 1)[0],
                               atol=1e-12)


def test_conv_promotes_dtypes():
    x = core.asarray(arr(1, 2, 5, 5).astype(np.float32))
    w = core.asarray(arr(3, 2, 3, 3))
    assert core.conv(x, w).dtype is core.float64
    assert core.conv(x, core.cast(w, core.float32)).dtype is core.float32


# ---------------------------------------------------------------------------
# conv gradients


@pytest.mark.parametrize("xs, ws, stride, padding, dilation, groups", CONV_CASES[:5] + CONV_CASES[6:])
def test_conv_gradients_match_finite_differences(xs, ws, stride, padding, dilation, groups):
    x, w = arr(*xs), arr(*ws)
    f = weighted(lambda x, w: core.conv(x, w, stride=stride, padding=padding, dilation=dilation, groups=groups))
    check_grads(f, (x, w))


def test_conv_second_order_grad_of_grad():
    x, w = arr(1, 2, 5, 5), arr(3, 2, 3, 3)
    v = arr(1, 2, 5, 5)

    def loss(x, w):
        return core.sum(core.tanh(core.conv(x, w, padding=1, stride=(1, 2))))

    def h(x, w):  # <d loss / dx, v>: its gradient is a Hessian-vector product
        return core.sum(core.mul(core.grad(loss, 0)(x, w), core.asarray(v)))

    check_grads(h, (x, w), rtol=1e-4, atol=1e-6)

    def hw(x, w):  # the same through the weight's gradient (mixes both VJP rules)
        return core.sum(core.grad(loss, 1)(x, w) ** 2)

    check_grads(hw, (x, w), rtol=1e-4, atol=1e-6)


def test_conv_third_order_runs():
    x, w = core.asarray(arr(1, 1, 4, 4)), core.asarray(arr(1, 1, 2, 2))
    f = lambda x: core.sum(core.sin(core.conv(x, w)))  # noqa: E731
    g3 = core.grad(lambda x: core.sum(core.grad(lambda x: core.sum(core.grad(f)(x) ** 2))(x)))(x)
    assert g3.shape == x.shape and np.all(np.isfinite(np.asarray(g3)))


@pytest.mark.parametrize("xs, ws, stride, padding, dilation, groups", CONV_CASES)
def test_conv_jvp_matches_finite_differences(xs, ws, stride, padding, dilation, groups):
    x, w, tx, tw = arr(*xs), arr(*ws), arr(*xs), arr(*ws)

    def f(x, w):
        return core.conv(x, w, stride=stride, padding=padding, dilation=dilation, groups=groups)

    _, t = core.jvp(f, (core.asarray(x), core.asarray(w)), (core.asarray(tx), core.asarray(tw)))
    want = (conv_ref(tx, w, stride, padding, dilation, groups)
            + conv_ref(x, tw, stride, padding, dilation, groups))  # conv is bilinear
    np.testing.assert_allclose(np.asarray(t), want, rtol=1e-10, atol=1e-10)


def test_conv_gradients_on_meta_have_input_shapes():
    x = core.to_device(core.asarray(arr(2, 4, 9, 8)), "meta")
    w = core.to_device(core.asarray(arr(6, 2, 3, 2)), "meta")
    y = core.conv(x, w, stride=2, padding=1, dilation=(1, 2), groups=2)
    assert y.device.type == "meta" and y.shape == (2, 6, 5, 4)
    gx, gw = core.grad(lambda x, w: core.sum(core.conv(x, w, stride=2, padding=1, dilation=(1, 2), groups=2)),
                       (0, 1))(x, w)
    assert gx.shape == x.shape and gw.shape == w.shape and gx.device.type == "meta"
    # second order on meta too
    hx = core.grad(lambda x: core.sum(core.grad(lambda x: core.sum(core.conv(x, w, padding=1, groups=2) ** 2))(x)))(x)
    assert hx.shape == x.shape


# ---------------------------------------------------------------------------
# conv errors


def test_conv_channel_mismatch_names_shapes():
    with pytest.raises(ValueError, match=r"conv: .*3 channels.*\(4, 2, 3, 3\)"):
        core.conv(core.asarray(arr(1, 3, 5, 5)), core.asarray(arr(4, 2, 3, 3)))


def test_conv_groups_must_divide_channels():
    with pytest.raises(ValueError, match="groups=2 does not divide the input channels 3"):
        core.conv(core.asarray(arr(1, 3, 5, 5)), core.asarray(arr(4, 1, 3, 3)), groups=2)
    with pytest.raises(ValueError, match="groups=2 does not divide the output channels 3"):
        core.conv(core.asarray(arr(1, 4, 5, 5)), core.asarray(arr(3, 2, 3, 3)), groups=2)


def test_conv_kernel_larger_than_padded_input():
    with pytest.raises(ValueError, match=r"conv: kernel \(4, 4\).*larger than the padded input \(5, 3\)"):
        core.conv(core.asarray(arr(1, 1, 3, 3)), core.asarray(arr(1, 1, 4, 4)), padding=(1, 0))


def test_conv_rank_and_dtype_errors():
    with pytest.raises(ValueError, match="needs a 4-D input"):
        core.conv(core.asarray(arr(1, 1, 1, 3, 3)), core.asarray(arr(1, 1, 2, 2)))
    with pytest.raises(TypeError, match="floating-point"):
        core.conv(core.asarray(np.ones((1, 1, 3, 3), np.int64)), core.asarray(np.ones((1, 1, 2, 2), np.int64)))
    with pytest.raises(ValueError, match="stride"):
        core.conv(core.asarray(arr(1, 1, 5, 5)), core.asarray(arr(1, 1, 2, 2)), stride=(1, 1, 1))
    with pytest.raises(ValueError, match="same"):
        core.conv(core.asarray(arr(1, 1, 5, 5)), core.asarray(arr(1, 1, 2, 2)), stride=2, padding="same")
    with pytest.raises(ValueError, match="non-negative"):
        core.conv(core.asarray(arr(1, 1, 5, 5)), core.asarray(arr(1, 1, 2, 2)), padding=-1)


# ---------------------------------------------------------------------------
# windows / windows_transpose


def test_windows_is_the_sliding_window_view():
    x = arr(2, 3, 7, 6)
    got = np.asarray(core.windows(core.asarray(x), (3, 2), stride=(2, 1), dilation=(1, 2)))
    want = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))[:, :, ::2, :, :, ::2]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape, kernel, stride, dilation", [
    ((2, 8), (3,), (2,), (1,)),
    ((1, 2, 6, 7), (2, 3), (3, 1), (2, 1)),   # stride larger than the kernel leaves gaps
    ((3, 4, 4, 5), (2, 2, 2), (1, 2, 2), (1, 1, 2)),
])
def test_windows_transpose_is_the_exact_adjoint(shape, kernel, stride, dilation):
    x = arr(*shape)
    cols = core.windows(core.asarray(x), kernel, stride, dilation)
    c = arr(*cols.shape)
    back = core.windows_transpose(core.asarray(c), shape[-len(kernel):], kernel, stride, dilation)
    assert back.shape == x.shape
    np.testing.assert_allclose(np.sum(np.asarray(cols) * c), np.sum(x * np.asarray(back)), rtol=1e-12)
    f = weighted(lambda x: core.windows(x, kernel, stride, dilation))
    check_grads(f, (x,))
    g = weighted(lambda c: core.windows_transpose(c, shape[-len(kernel):], kernel, stride, dilation))
    check_grads(g, (c,))


def test_windows_errors():
    with pytest.raises(ValueError, match="windows: kernel"):
        core.windows(core.asarray(arr(2, 3)), (4,))
    with pytest.raises(ValueError, match="windows_transpose: input of shape"):
        core.windows_transpose(core.asarray(arr(2, 3, 3)), (5,), (2,))


# ---------------------------------------------------------------------------
# pooling


POOL_CASES = [
    # x shape, window, stride, padding, dilation, ceil_mode
    ((2, 3, 9), (3,), (2,), (1,), (1,), False),
    ((2, 3, 9), (2,), (2,), (0,), (1,), True),
    ((1, 2, 6, 7), (2, 3), (2, 2), (1, 1), (1, 1), False),
    ((1, 2, 7, 7), (3, 3), (2, 2), (1, 0), (1, 1), True),
    ((2, 1, 7, 6), (2, 2), (1, 2), (0, 1), (2, 1), False),
    ((1, 2, 4, 5, 4), (2, 2, 3), (2, 1, 2), (1, 0, 1), (1, 1, 1), True),
]


def distinct(*shape):
    """Values without ties (a scaled permutation), so max_pool is differentiable everywhere."""
    n = int(np.prod(shape))
    return (RNG.permutation(n).reshape(shape) - n / 2) * 0.1


@pytest.mark.parametrize("xs, window, stride, padding, dilation, ceil_mode", POOL_CASES)
def test_max_pool_matches_naive_loop(xs, window, stride, padding, dilation, ceil_mode):
    x = arr(*xs)
    got = core.max_pool(core.asarray(x), window, stride, padding, dilation, ceil_mode)
    np.testing.assert_array_equal(np.asarray(got), max_pool_ref(x, window, stride, padding, dilation, ceil_mode))


@pytest.mark.parametrize("xs, window, stride, padding, dilation, ceil_mode", POOL_CASES)
def test_max_pool_gradients_match_finite_differences(xs, window, stride, padding, dilation, ceil_mode):
    x = distinct(*xs)
    f = weighted(lambda x: core.max_pool(x, window, stride, padding, dilation, ceil_mode))
    check_grads(f, (x,))
    # the JVP rule: select the tangent at each window's maximum
    t = arr(*xs)
    _, jt = core.jvp(lambda x: core.max_pool(x, window, stride, padding, dilation, ceil_mode),
                     (core.asarray(x),), (core.asarray(t),))
    eps = 1e-6
    fd = (max_pool_ref(x + eps * t, window, stride, padding, dilation, ceil_mode)
          - max_pool_ref(x - eps * t, window, stride, padding, dilation, ceil_mode)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(jt), fd, atol=1e-6)


def test_max_pool_ties_send_the_gradient_to_the_first_maximum():
    x = core.asarray(np.ones((1, 1, 2, 4)))
    g = np.asarray(core.grad(lambda x: core.sum(core.max_pool(x, 2)))(x))
    np.testing.assert_array_equal(g, [[[[1, 0, 1, 0], [0, 0, 0, 0]]]])


def test_max_pool_defaults_stride_to_window_and_handles_ints():
    x = np.arange(32).reshape(1, 2, 4, 4)
    got = core.max_pool(core.asarray(x), 2)
    assert got.dtype is core.int64
    np.testing.assert_array_equal(np.asarray(got), max_pool_ref(x.astype(float), (2, 2), (2, 2), (0, 0)))
    # padding of an int array uses the dtype's lowest value
    got = core.max_pool(core.asarray(-x), 2, padding=1)
    np.testing.assert_array_equal(np.asarray(got), max_pool_ref(-x.astype(float), (2, 2), (2, 2), (1, 1)))


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("xs, window, stride, padding, dilation, ceil_mode",
                         [c for c in POOL_CASES if c[4] == (1,) * len(c[1])])
def test_avg_pool_matches_naive_loop(xs, window, stride, padding, dilation, ceil_mode, count_include_pad):
    x = arr(*xs)
    got = core.avg_pool(core.asarray(x), window, stride, padding, ceil_mode, count_include_pad)
    want = avg_pool_ref(x, window, stride, padding, ceil_mode, count_include_pad)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("xs, window, stride, padding, dilation, ceil_mode",
                         [c for c in POOL_CASES if c[4] == (1,) * len(c[1])])
def test_avg_pool_gradients_match_finite_differences(xs, window, stride, padding, dilation, ceil_mode,
                                                     count_include_pad):
    x = arr(*xs)
    f = weighted(lambda x: core.avg_pool(x, window, stride, padding, ceil_mode, count_include_pad))
    check_grads(f, (x,))


def test_pool_second_order_and_meta():
    x = core.asarray(distinct(1, 2, 6, 6))
    h = core.grad(lambda x: core.sum(core.grad(lambda x: core.sum(core.max_pool(x, 2, padding=1) ** 2))(x) ** 2))(x)
    assert h.shape == x.shape
    xm = core.to_device(x, "meta")
    for fn in (lambda x: core.max_pool(x, 3, 2, 1, ceil_mode=True),
               lambda x: core.avg_pool(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)):
        y = fn(xm)
        assert y.device.type == "meta" and y.shape == fn(x).shape
        gx = core.grad(lambda x: core.sum(fn(x)))(xm)
        assert gx.shape == x.shape and gx.device.type == "meta"


def test_pool_accepts_arbitrary_leading_axes_with_tuple_windows():
    x = arr(5, 8)
    got = core.max_pool(core.asarray(x), (2,))
    np.testing.assert_array_equal(np.asarray(got), max_pool_ref(x, (2,), (2,), (0,)))
    got = core.avg_pool(core.asarray(x), (4,), 2)
    np.testing.assert_allclose(np.asarray(got), avg_pool_ref(x, (4,), (2,), (0,)))


def test_forward_over_reverse_matches_reverse_over_reverse():
    x, w, v = arr(1, 2, 5, 5), arr(2, 2, 3, 3), arr(1, 2, 5, 5)

    def loss(x):
        y = core.conv(x, core.asarray(w), padding=1)
        return core.sum(core.tanh(core.max_pool(y, 3, 2, 1) + core.avg_pool(y, 3, 2, 1)))

    _, hvp_fwd = core.jvp(core.grad(loss), (core.asarray(x),), (core.asarray(v),))
    hvp_rev = core.grad(lambda x: core.sum(core.mul(core.grad(loss)(x), core.asarray(v))))(core.asarray(x))
    np.testing.assert_allclose(np.asarray(hvp_fwd), np.asarray(hvp_rev), rtol=1e-9, atol=1e-12)


def test_pool_errors():
    with pytest.raises(ValueError, match=r"max_pool: padding \(\(2, 2\), \(2, 2\)\) must be at most half the window"):
        core.max_pool(core.asarray(arr(1, 1, 6, 6)), 3, padding=2)
    with pytest.raises(ValueError, match=r"max_pool: window \(4, 4\).*larger than the padded input"):
        core.max_pool(core.asarray(arr(1, 1, 3, 3)), 4)
    with pytest.raises(TypeError, match="avg_pool: expected a floating-point"):
        core.avg_pool(core.asarray(np.ones((1, 1, 4, 4), np.int64)), 2)
    with pytest.raises(ValueError, match="int window needs an"):
        core.max_pool(core.asarray(arr(4)), 2)
    with pytest.raises(ValueError, match="stride"):
        core.avg_pool(core.asarray(arr(1, 1, 4, 4)), 2, stride=(1, 1, 1))


# ---------------------------------------------------------------------------
# einsum


EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),            # implicit output
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->ji", [(3, 4)]),
    ("ba", [(3, 4)]),                        # implicit transpose
    ("ijk->", [(2, 3, 4)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...i,...i->...", [(2, 1, 3), (4, 3)]),  # broadcast ellipsis dims
    ("nchw,oc->nohw", [(2, 3, 2, 2), (4, 3)]),
    (",ij->ij", [(), (2, 3)]),
    ("Ab,bc", [(3, 4), (4, 5)]),
]


@pytest.mark.parametrize("spec, shapes", EINSUM_CASES)
def test_einsum_matches_numpy(spec, shapes):
    ops = [arr(*s) for s in shapes]
    got = core.einsum(spec, *map(core.asarray, ops))
    np.testing.assert_allclose(np.asarray(got), np.einsum(spec, *ops), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("spec, shapes", EINSUM_CASES)
def test_einsum_gradients_match_finite_differences(spec, shapes):
    ops = [arr(*s) for s in shapes]
    check_grads(weighted(lambda *xs: core.einsum(spec, *xs)), ops)


def test_einsum_sums_letters_only_one_operand_has():
    # 'j' appears only in x: its cotangent is broadcast back along j
    x, y = arr(3, 4), arr(3, 5)
    gx, gy = core.grad(lambda x, y: core.sum(core.einsum("ij,ik->k", x, y)), (0, 1))(core.asarray(x),
                                                                                    core.asarray(y))
    np.testing.assert_allclose(np.asarray(gx), np.broadcast_to(y.sum(1, keepdims=True), x.shape))
    np.testing.assert_allclose(np.asarray(gy), np.broadcast_to(x.sum(1, keepdims=True), y.shape))


def test_einsum_second_order_and_jvp():
    a, b = arr(3, 4), arr(4, 2)
    loss = lambda a, b: core.sum(core.tanh(core.einsum("ij,jk->ik", a, b)))  # noqa: E731
    v = arr(3, 4)
    h = lambda a, b: core.sum(core.mul(core.grad(loss)(a, b), core.asarray(v)))  # noqa: E731
    check_grads(h, (a, b), rtol=1e-4)
    ta, tb = arr(3, 4), arr(4, 2)
    _, t = core.jvp(lambda a, b: core.einsum("ij,jk->ik", a, b), (core.asarray(a), core.asarray(b)),
                    (core.asarray(ta), core.asarray(tb)))
    np.testing.assert_allclose(np.asarray(t), ta @ b + a @ tb, atol=1e-12)


def test_einsum_on_meta():
    a = core.to_device(core.asarray(arr(2, 3, 4)), "meta")
    b = core.to_device(core.asarray(arr(4, 5)), "meta")
    y = core.einsum("bij,jk->bki", a, b)
    assert y.shape == (2, 5, 3) and y.device.type == "meta"
    ga = core.grad(lambda a: core.sum(core.einsum("bij,jk->bki", a, b)))(a)
    assert ga.shape == a.shape


def test_einsum_promotes_dtypes():
    a = core.asarray(np.ones((2, 2), np.float32))
    b = core.asarray(np.ones((2, 2), np.int64))
    assert core.einsum("ij,jk->ik", a, b).dtype is core.float32


def test_einsum_errors():
    a, b = core.asarray(arr(3, 4)), core.asarray(arr(5, 6))
    with pytest.raises(ValueError, match="repeated subscript 'i' in operand 0"):
        core.einsum("ii->i", core.asarray(arr(3, 3)))
    with pytest.raises(ValueError, match="subscript 'j' has size 4 and 5"):
        core.einsum("ij,jk->ik", a, b)
    with pytest.raises(ValueError, match="names 2 operands, got 1"):
        core.einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="operand 0 has 2 dimensions"):
        core.einsum("ijk->i", a)
    with pytest.raises(ValueError, match="output subscript 'z'"):
        core.einsum("ij->z", a)
    with pytest.raises(ValueError, match="invalid subscript"):
        core.einsum("i1->i", a)
    with pytest.raises(ValueError, match="repeated subscript 'i' in the output"):
        core.einsum("ij->ii", a)
    # an output without '...' sums the broadcast dims, as torch.einsum does
    c = arr(2, 3)
    np.testing.assert_allclose(np.asarray(core.einsum("...i->i", core.asarray(c))), c.sum(0))
    with pytest.raises(ValueError, match="einsum: spec"):
        core.einsum_p.bind(a, spec="ij,jk->ik")
