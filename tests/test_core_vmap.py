"""core.vmap: in_axes / out_axes / axis_size over pytrees, nesting, errors, batching of every op
family used in practice (against NumPy loops), meta arrays, composition with the autodiff
transforms (per-example gradients, Jacobians, Hessians) and random keys under vmap (jax.vmap
semantics)."""
import re

import numpy as np
import pytest

from mindtorch_v2 import core

rng = np.random.default_rng(0)


def a(x, dtype=None):
    return core.asarray(np.asarray(x, dtype=np.float64) if dtype is None else np.asarray(x), dtype)


def r(*shape):
    return rng.standard_normal(shape)


def close(x, y, tol=1e-10):
    x = np.asarray(x)
    y = np.asarray(y)
    assert x.shape == y.shape, (x.shape, y.shape)
    np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


def loop(fn, *arrays, axes=None):
    """NumPy oracle: fn applied to each slice along `axes` (default 0; None = unbatched), stacked on axis 0."""
    axes = (0,) * len(arrays) if axes is None else axes
    n = next(x.shape[ax] for x, ax in zip(arrays, axes) if ax is not None)
    outs = [fn(*[x if ax is None else np.take(x, i, axis=ax) for x, ax in zip(arrays, axes)])
            for i in range(n)]
    if isinstance(outs[0], tuple):
        return tuple(np.stack(o) for o in zip(*outs))
    return np.stack(outs)


# ---------------------------------------------------------------------------
# in_axes


def test_in_axes_zero_one_and_negative():
    x = r(4, 3, 2)
    close(core.vmap(lambda v: core.sum(v, axis=0))(a(x)), x.sum(axis=1))
    close(core.vmap(lambda v: core.sum(v, axis=0), in_axes=1)(a(x)), x.sum(axis=0))
    close(core.vmap(lambda v: v * 2.0, in_axes=-1)(a(x)), np.moveaxis(x, -1, 0) * 2)
    close(core.vmap(lambda v: v[0], in_axes=-2)(a(x)), np.moveaxis(x, 1, 0)[:, 0])


def test_in_axes_tuple_with_none():
    x, y = r(5, 3), r(3)
    out = core.vmap(lambda u, v: u * v + core.sum(v), in_axes=(0, None))(a(x), a(y))
    close(out, x * y + y.sum())
    # the unbatched argument may be anything, e.g. a python number
    close(core.vmap(lambda u, s: u * s, in_axes=(1, None))(a(x), 3.0), x.T * 3.0)
    # in_axes given as a list is taken as the tuple of per-argument axes (jax does the same)
    close(core.vmap(lambda u, v: u - v, in_axes=[0, None])(a(x), a(y)), x - y)


def test_in_axes_dict_prefix():
    w, b = r(3, 4), r(4, 3)
    params = {"w": a(w), "b": a(b)}
    # per example i: w[i] (4,) plus the column b[:, i] (4,)
    out = core.vmap(lambda p: p["w"] + p["b"], in_axes=({"w": 0, "b": -1},))(params)
    close(out, w + b.T)
    out = core.vmap(lambda p, s: p["w"] * s, in_axes=({"w": 1, "b": 0}, None))(params, a(2.0))
    close(out, w.T * 2)


def test_in_axes_dict_prefix_with_none_entries():
    # jax: an in_axes dict may say None for a leaf (or a whole subtree) that is not batched
    x, scale, offs = r(4, 3), r(3), [r(3), r(1)]
    args = {"x": a(x), "scale": a(scale), "offs": [a(o) for o in offs]}
    f = lambda d: d["x"] * d["scale"] + d["offs"][0] + d["offs"][1]  # noqa: E731
    out = core.vmap(f, in_axes=({"x": 0, "scale": None, "offs": None},))(args)
    close(out, x * scale + offs[0] + offs[1])
    out = core.vmap(f, in_axes=({"x": 0, "scale": None, "offs": [None, None]},))(args)
    close(out, x * scale + offs[0] + offs[1])


def test_in_axes_list_prefix():
    x, y = r(3, 2), r(2, 3)
    out = core.vmap(lambda xs: xs[0] * xs[1], in_axes=([0, 1],))([a(x), a(y)])
    close(out, x * y.T)
    # a single int for a whole list/dict argument applies to every leaf
    out = core.vmap(lambda xs, c: xs[0] + xs[1] * c, in_axes=(0, None))([a(x), a(y.T)], a(2.0))
    close(out, x + y.T * 2)


# ---------------------------------------------------------------------------
# out_axes and axis_size


def test_out_axes_int_and_negative():
    x = r(4, 3, 2)
    close(core.vmap(lambda v: v * 2, out_axes=1)(a(x)), np.moveaxis(x * 2, 0, 1))
    close(core.vmap(lambda v: v * 2, out_axes=-1)(a(x)), np.moveaxis(x * 2, 0, -1))
    close(core.vmap(lambda v: v * 2, in_axes=2, out_axes=2)(a(x)), x * 2)


def test_out_axes_pytree_and_none():
    x, c = r(4, 3), r(3)
    out = core.vmap(lambda v, w: {"s": v + w, "t": (v * 2, w)}, in_axes=(0, None),
                    out_axes={"s": 1, "t": (0, None)})(a(x), a(c))
    close(out["s"], (x + c).T)
    close(out["t"][0], x * 2)
    close(out["t"][1], c)  # unbatched output with out_axes=None comes back as is
    # an unbatched output with an int out_axes is broadcast along the batch
    out = core.vmap(lambda v, w: w * 3, in_axes=(0, None))(a(x), a(c))
    close(out, np.broadcast_to(c * 3, (4, 3)))
    out = core.vmap(lambda v, w: w * 3, in_axes=(0, None), out_axes=1)(a(x), a(c))
    close(out, np.broadcast_to((c * 3)[:, None], (3, 4)))
    with pytest.raises(ValueError):
        core.vmap(lambda v: v * 2, out_axes=None)(a(x))


def test_axis_size_with_all_none_in_axes():
    c = r(3)
    out = core.vmap(lambda v: core.sin(v), in_axes=None, axis_size=5)(a(c))
    close(out, np.broadcast_to(np.sin(c), (5, 3)))
    out = core.vmap(lambda v, w: v * w, in_axes=(None, None), axis_size=2, out_axes=1)(a(c), 2.0)
    close(out, np.broadcast_to((c * 2)[:, None], (3, 2)))
    with pytest.raises(ValueError):
        core.vmap(lambda v: v, in_axes=None)(a(c))


def test_axis_size_must_agree_with_mapped_arguments():
    with pytest.raises(ValueError):
        core.vmap(lambda v: v, axis_size=3)(a(r(4, 2)))
    close(core.vmap(lambda v: v + 1, axis_size=4)(a(np.ones((4, 2)))), np.full((4, 2), 2.0))


# ---------------------------------------------------------------------------
# nesting and closures


def test_nested_vmap_outer_product_of_batches():
    x, y = r(4, 3), r(5, 3)
    dist = lambda u, v: core.sum((u - v) ** 2)  # noqa: E731
    out = core.vmap(core.vmap(dist, in_axes=(None, 0)), in_axes=(0, None))(a(x), a(y))
    close(out, ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1))


def test_nested_vmap_with_different_axes():
    x = r(2, 3, 4)
    # outer maps axis 2 (slice k: x[:, :, k], shape (2, 3)), inner maps axis 0 of that (row i: x[i, :, k]);
    # the outer batch is put back on axis 1 of the inner results (2, 3) -> (2, 4, 3)
    out = core.vmap(core.vmap(lambda v: v * core.sum(v), in_axes=0, out_axes=0), in_axes=2, out_axes=1)(a(x))
    expect = np.empty((2, 4, 3))
    for k in range(4):
        for i in range(2):
            v = x[i, :, k]
            expect[i, k] = v * v.sum()
    close(out, expect)
    # three levels, each mapping a different axis
    f = core.vmap(core.vmap(core.vmap(lambda s: s * 2 + 1, in_axes=0), in_axes=1), in_axes=2)
    close(f(a(x)), np.transpose(x * 2 + 1, (2, 1, 0)))


def test_nested_vmap_inner_unbatched_in_outer():
    x, w = r(3, 4), r(4, 2)
    inner = core.vmap(lambda row, m: row @ m, in_axes=(0, None))  # rows of a matrix times m
    out = core.vmap(inner, in_axes=(None, 0))(a(x), a(np.stack([w, 2 * w, 3 * w])))
    close(out, np.stack([x @ (k * w) for k in (1, 2, 3)]))


def test_closure_over_unbatched_arrays():
    w, b = r(3, 2), r(2)
    W, B = a(w), a(b)
    x = r(6, 3)
    close(core.vmap(lambda v: core.tanh(v @ W + B))(a(x)), np.tanh(x @ w + b))
    # a closure over an outer vmap's tracer inside an inner vmap
    y = r(4, 3)
    out = core.vmap(lambda u: core.vmap(lambda v: core.sum(u * v))(a(y)))(a(x))
    close(out, x @ y.T)


# ---------------------------------------------------------------------------
# errors


def test_error_mismatched_batch_sizes_names_the_argument():
    with pytest.raises(ValueError) as e:
        core.vmap(lambda u, v: u + v)(a(r(3)), a(r(4)))
    msg = str(e.value)
    assert "size" in msg and "3" in msg and "4" in msg
    assert re.search(r"argument\D{0,12}1", msg), msg


def test_error_mismatched_batch_sizes_inside_a_pytree_argument_names_it():
    # leaf index 2 of the flattened args, but positional argument 1, entry 'b'
    with pytest.raises(ValueError) as e:
        core.vmap(lambda u, d: u + d["a"] + d["b"])(a(r(3)), {"a": a(r(3)), "b": a(r(4))})
    msg = str(e.value)
    assert "argument 1" in msg or "'b'" in msg, msg


def test_error_in_axes_not_matching_the_pytree():
    d = {"a": a(r(3)), "b": a(r(3))}
    with pytest.raises(ValueError, match="in_axes"):
        core.vmap(lambda p: p["a"], in_axes=({"a": 0},))(d)
    with pytest.raises(ValueError, match="in_axes"):
        core.vmap(lambda p: p[0], in_axes=([0, 0, 0],))([a(r(3)), a(r(3))])
    with pytest.raises(ValueError, match="in_axes"):
        core.vmap(lambda u, v: u + v, in_axes=(0,))(a(r(3)), a(r(3)))
    with pytest.raises(ValueError, match="in_axes"):
        core.vmap(lambda u, v: u + v, in_axes=(0, 0, 0))(a(r(3)), a(r(3)))


def test_error_axis_out_of_range():
    with pytest.raises(ValueError, match="in_axes"):
        core.vmap(lambda u: u, in_axes=2)(a(r(3, 2)))
    with pytest.raises(ValueError, match="in_axes"):
        core.vmap(lambda u: u, in_axes=-3)(a(r(3, 2)))
    with pytest.raises(ValueError, match="in_axes"):
        core.vmap(lambda u, v: u * v, in_axes=(0, 1))(a(r(3, 2)), a(r(3)))
    with pytest.raises(ValueError, match="out_axes"):
        core.vmap(lambda u: u, out_axes=3)(a(r(3, 2)))
    with pytest.raises(ValueError):
        core.vmap(lambda u: u)(a(3.0))  # a 0-d array has no axis 0


def test_error_out_axes_not_matching_the_output_pytree():
    with pytest.raises(ValueError, match="out_axes"):
        core.vmap(lambda u: (u, u), out_axes=(0, 0, 0))(a(r(3)))


# ---------------------------------------------------------------------------
# elementwise


def test_elementwise_broadcasting_batched_vs_unbatched():
    x, y = r(5, 3), r(4, 3)
    # logical (3,) batched vs (4, 3) unbatched: the lower-rank batched operand broadcasts
    close(core.vmap(lambda u, v: u * v + 1.0, in_axes=(0, None))(a(x), a(y)), x[:, None, :] * y + 1)
    # batched operand of higher rank, on a non-leading axis
    z = r(4, 5, 3)
    close(core.vmap(lambda u, v: u - v, in_axes=(1, None))(a(z), a(y[0])), np.moveaxis(z, 1, 0) - y[0])
    # both batched, different batch axes and ranks
    p, q = r(5, 2, 3), r(3, 5)
    close(core.vmap(lambda u, v: core.maximum(u, v), in_axes=(0, 1))(a(p), a(q)),
          np.maximum(p, q.T[:, None, :]))
    # size-1 logical dims broadcast against a batched operand
    s = r(5, 1, 3)
    close(core.vmap(lambda u, v: u / (1.0 + v ** 2), in_axes=(0, 0))(a(s), a(r(5, 4, 1) * 0 + 2)),
          s / 5.0 * np.ones((5, 4, 3)))


def test_elementwise_unary_and_comparisons():
    x = r(4, 3)
    close(core.vmap(lambda u: core.exp(core.tanh(u)) + core.abs(u))(a(x)), np.exp(np.tanh(x)) + np.abs(x))
    out = core.vmap(lambda u, v: u > v, in_axes=(0, None))(a(x), a(0.1))
    assert out.dtype is core.bool_
    assert out.tolist() == (x > 0.1).tolist()
    close(core.vmap(lambda u: core.clip(u, -0.5, 0.5))(a(x)), np.clip(x, -0.5, 0.5))


def test_where_with_batched_and_unbatched_operands():
    c, x, y = r(4, 3) > 0, r(4, 3), r(3)
    close(core.vmap(lambda cc, u, v: core.where(cc, u, v), in_axes=(0, 0, None))(core.asarray(c), a(x), a(y)),
          np.where(c, x, y))
    # only the condition batched
    close(core.vmap(lambda cc, u, v: core.where(cc, u, v), in_axes=(0, None, None))(core.asarray(c), a(x[0]), a(y)),
          np.where(c, x[0], y))
    # condition unbatched, a value batched on axis 1
    close(core.vmap(lambda cc, u, v: core.where(cc, u, v), in_axes=(None, 1, None))(core.asarray(c[0]), a(x.T), 0.0),
          np.where(c[0], x, 0.0))


# ---------------------------------------------------------------------------
# reductions and scans


def test_reductions_with_axes_and_keepdims():
    x = r(4, 3, 5)
    X = a(x)
    close(core.vmap(lambda u: core.sum(u))(X), x.sum(axis=(1, 2)))
    close(core.vmap(lambda u: core.sum(u, axis=-1))(X), x.sum(axis=-1))
    close(core.vmap(lambda u: core.sum(u, axis=0, keepdims=True))(X), x.sum(axis=1, keepdims=True))
    close(core.vmap(lambda u: core.mean(u, axis=(0, 1)))(X), x.mean(axis=(1, 2)))
    close(core.vmap(lambda u: core.amax(u, axis=1, keepdims=True), in_axes=2)(X),
          np.moveaxis(x, 2, 0).max(axis=2, keepdims=True))
    close(core.vmap(lambda u: core.var(u, axis=-1, ddof=1), in_axes=1)(X), np.moveaxis(x, 1, 0).var(axis=-1, ddof=1))
    close(core.vmap(lambda u: core.prod(u, axis=0))(X), x.prod(axis=1))


def test_argmax_per_example_including_flattened():
    x = r(4, 3, 5)
    X = a(x)
    assert core.vmap(lambda u: core.argmax(u, axis=-1))(X).tolist() == x.argmax(axis=-1).tolist()
    assert core.vmap(lambda u: core.argmax(u, axis=0), in_axes=2)(X).tolist() == \
        np.moveaxis(x, 2, 0).argmax(axis=1).tolist()
    # axis=None: the index into each example's flattened array
    assert core.vmap(lambda u: core.argmax(u))(X).tolist() == x.reshape(4, -1).argmax(axis=1).tolist()
    assert core.vmap(lambda u: core.argmax(u), in_axes=1)(X).tolist() == \
        np.moveaxis(x, 1, 0).reshape(3, -1).argmax(axis=1).tolist()
    assert core.vmap(lambda u: core.argmin(u, axis=1, keepdims=True))(X).tolist() == \
        x.argmin(axis=2, keepdims=True).tolist()


def test_cumsum_per_example_with_axis_and_flattened():
    x = r(4, 3, 2)
    close(core.vmap(lambda u: core.cumsum(u, axis=0))(a(x)), np.cumsum(x, axis=1))
    close(core.vmap(lambda u: core.cumsum(u, axis=-1), in_axes=1)(a(x)), np.cumsum(np.moveaxis(x, 1, 0), axis=-1))
    close(core.vmap(lambda u: core.cumsum(u))(a(x)), np.cumsum(x.reshape(4, -1), axis=1))


def test_softmax_and_logsumexp():
    x = r(4, 3, 5)
    def np_softmax(v, axis):
        e = np.exp(v - v.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)
    close(core.vmap(lambda u: core.softmax(u, axis=-1))(a(x)), np_softmax(x, -1))
    close(core.vmap(lambda u: core.softmax(u, axis=0))(a(x)), np_softmax(x, 1))
    close(core.vmap(lambda u: core.log_softmax(u, axis=0), in_axes=2)(a(x)),
          np.log(np_softmax(np.moveaxis(x, 2, 0), 1)))
    lse = lambda v, axis: np.log(np.exp(v).sum(axis=axis))  # noqa: E731
    close(core.vmap(lambda u: core.logsumexp(u, axis=1))(a(x)), lse(x, 2))
    close(core.vmap(lambda u: core.logsumexp(u))(a(x)), lse(x.reshape(4, -1), 1))
    close(core.vmap(lambda u: core.logsumexp(u, axis=0, keepdims=True), in_axes=1)(a(x)),
          np.log(np.exp(np.moveaxis(x, 1, 0)).sum(axis=1, keepdims=True)))


# ---------------------------------------------------------------------------
# shape ops


def test_reshape_transpose_moveaxis():
    x = r(4, 2, 3)
    close(core.vmap(lambda u: core.reshape(u, (3, 2)))(a(x)), x.reshape(4, 3, 2))
    close(core.vmap(lambda u: core.reshape(u, (-1,)), in_axes=1)(a(x)), np.moveaxis(x, 1, 0).reshape(2, -1))
    close(core.vmap(lambda u: core.transpose(u))(a(x)), np.transpose(x, (0, 2, 1)))
    y = r(2, 3, 4, 5)
    close(core.vmap(lambda u: core.transpose(u, (2, 0, 1)), in_axes=2)(a(y)),
          np.transpose(np.moveaxis(y, 2, 0), (0, 3, 1, 2)))
    close(core.vmap(lambda u: u.T, in_axes=1)(a(y)), np.stack([y[:, i].T for i in range(3)]))
    close(core.vmap(lambda u: core.moveaxis(u, 0, -1))(a(y)), np.moveaxis(y, 1, -1))
    close(core.vmap(lambda u: core.squeeze(core.expand_dims(u, 1), 1))(a(x)), x)
    close(core.vmap(lambda u: core.broadcast_to(u, (5, 2, 3)))(a(x)), np.broadcast_to(x[:, None], (4, 5, 2, 3)))
    close(core.vmap(lambda u: core.flip(u, 0))(a(x)), x[:, ::-1])


def test_concatenate_and_stack_mixing_batched_and_unbatched():
    x, y = r(4, 2, 3), r(5, 3)
    close(core.vmap(lambda u, v: core.concatenate([u, v], axis=0), in_axes=(0, None))(a(x), a(y)),
          np.concatenate([x, np.broadcast_to(y, (4, 5, 3))], axis=1))
    z = r(2, 4)
    close(core.vmap(lambda u, v: core.concatenate([u, v], axis=-1), in_axes=(0, 1))(a(x), a(np.stack([z] * 4, 1)
                                                                                           .reshape(2, 4, 4))),
          np.concatenate([x, np.stack([z] * 4, 1).reshape(2, 4, 4).transpose(1, 0, 2)], axis=-1))
    w = r(2, 3)
    close(core.vmap(lambda u, v: core.stack([u, v, u], axis=1), in_axes=(0, None))(a(x), a(w)),
          np.stack([x, np.broadcast_to(w, x.shape), x], axis=2))
    w2 = r(4, 2)
    close(core.vmap(lambda u, v: core.stack([u, v]), in_axes=(2, None))(a(x), a(w2)),
          np.stack([np.stack([x[:, :, k], w2]) for k in range(3)]))


def test_pad():
    x = r(4, 2, 3)
    close(core.vmap(lambda u: core.pad(u, ((1, 0), (0, 2))))(a(x)), np.pad(x, ((0, 0), (1, 0), (0, 2))))
    close(core.vmap(lambda u: core.pad(u, ((0, 1), (2, 0)), value=-1.0), in_axes=2)(a(x)),
          np.pad(np.moveaxis(x, 2, 0), ((0, 0), (0, 1), (2, 0)), constant_values=-1.0))


def test_slicing_and_integer_getitem():
    x = r(4, 5, 6)
    X = a(x)
    close(core.vmap(lambda u: u[1:, ::2])(X), x[:, 1:, ::2])
    close(core.vmap(lambda u: u[0])(X), x[:, 0])
    close(core.vmap(lambda u: u[..., -1])(X), x[..., -1])
    close(core.vmap(lambda u: u[-2, 1:4])(X), x[:, -2, 1:4])
    close(core.vmap(lambda u: u[None, :, 2], in_axes=1)(X), np.moveaxis(x, 1, 0)[:, None, :, 2])
    close(core.vmap(lambda u: u[::-1])(X), x[:, ::-1])


def test_getitem_with_unbatched_index_arrays():
    x = r(4, 5, 6)
    idx = np.array([4, 0, 0, 2])
    close(core.vmap(lambda u: u[core.asarray(idx)])(a(x)), x[:, idx])
    close(core.vmap(lambda u: u[:, core.asarray(idx)])(a(x)), x[:, :, idx])
    close(core.vmap(lambda u: u[core.asarray([1, 3]), core.asarray([0, 4])], in_axes=2)(a(x)),
          np.moveaxis(x, 2, 0)[:, [1, 3], [0, 4]])
    close(core.vmap(lambda u: u[core.asarray(np.array([[0, 1], [2, -1]]))])(a(x)), x[:, np.array([[0, 1], [2, -1]])])


def test_getitem_with_batched_index_arrays():
    x = r(4, 5, 6)
    idx = rng.integers(0, 5, size=(4, 3))
    out = core.vmap(lambda u, i: u[i])(a(x), core.asarray(idx))
    close(out, np.stack([x[b][idx[b]] for b in range(4)]))
    # index batched, data unbatched
    out = core.vmap(lambda u, i: u[i], in_axes=(None, 0))(a(x[0]), core.asarray(idx))
    close(out, x[0][idx])
    # batched index on the second logical axis
    jdx = rng.integers(0, 6, size=(2, 4))
    out = core.vmap(lambda u, j: u[:, j], in_axes=(0, 1))(a(x), core.asarray(jdx))
    close(out, np.stack([x[b][:, jdx[:, b]] for b in range(4)]))
    # a batched integer scalar index
    k = np.array([0, 4, 2, 1])
    out = core.vmap(lambda u, i: u[i])(a(x), core.asarray(k))
    close(out, x[np.arange(4), k])


def test_take_gather_scatter_add():
    x = r(4, 5, 3)
    idx = np.array([2, 2, 0])
    close(core.vmap(lambda u: core.take(u, core.asarray(idx), axis=1))(a(x)), np.take(x, idx, axis=2))
    close(core.vmap(lambda u: core.take(u, core.asarray(idx)))(a(x)), x.reshape(4, -1)[:, idx])
    bidx = rng.integers(0, 5, size=(4, 2))
    close(core.vmap(lambda u, i: core.take(u, i, axis=0))(a(x), core.asarray(bidx)),
          np.stack([np.take(x[b], bidx[b], axis=0) for b in range(4)]))
    close(core.vmap(lambda u, i: core.take(u, i, axis=0), in_axes=(None, 0))(a(x[0]), core.asarray(bidx)),
          np.stack([np.take(x[0], bidx[b], axis=0) for b in range(4)]))
    gidx = rng.integers(0, 3, size=(4, 5, 2))
    close(core.vmap(lambda u, i: core.gather(u, 1, i))(a(x), core.asarray(gidx)),
          np.take_along_axis(x, gidx, axis=2))
    close(core.vmap(lambda u, i: core.gather(u, 1, i), in_axes=(0, None))(a(x), core.asarray(gidx[0])),
          np.stack([np.take_along_axis(x[b], gidx[0], axis=1) for b in range(4)]))
    close(core.vmap(lambda u, i: core.gather(u, 1, i), in_axes=(None, 0))(a(x[1]), core.asarray(gidx)),
          np.stack([np.take_along_axis(x[1], gidx[b], axis=1) for b in range(4)]))
    upd = r(4, 5, 2)

    def np_scatter_add(base, ind, u):
        out = base.copy()
        for i in range(ind.shape[0]):
            for j in range(ind.shape[1]):
                out[i, ind[i, j]] += u[i, j]
        return out
    close(core.vmap(lambda u, i, v: core.scatter_add(u, 1, i, v))(a(x), core.asarray(gidx), a(upd)),
          loop(np_scatter_add, x, gidx, upd))
    close(core.vmap(lambda u, i, v: core.scatter_add(u, 1, i, v), in_axes=(None, None, 0))(
        a(x[0]), core.asarray(gidx[0]), a(upd)), loop(np_scatter_add, x[0], gidx[0], upd, axes=(None, None, 0)))
    close(core.vmap(lambda u, i: core.index_add(u, i, core.ones((2, 3), dtype=core.float64), axis=0))(
        a(x), core.asarray(bidx)), loop(lambda u, i: _np_index_add(u, i), x, bidx))


def _np_index_add(u, i):
    out = u.copy()
    np.add.at(out, i, 1.0)
    return out


def test_sort_and_topk():
    x = r(4, 3, 5)
    v, i = core.vmap(lambda u: core.sort_with_indices(u, axis=-1))(a(x))
    close(v, np.sort(x, axis=-1))
    assert i.tolist() == np.argsort(x, axis=-1, kind="stable").tolist()
    v, i = core.vmap(lambda u: core.sort_with_indices(u, axis=0, descending=True), in_axes=2)(a(x))
    xm = np.moveaxis(x, 2, 0)
    close(v, -np.sort(-xm, axis=1))
    assert i.tolist() == np.argsort(-xm, axis=1, kind="stable").tolist()
    v, i = core.vmap(lambda u: core.topk(u, 2))(a(x))
    close(v, -np.sort(-x, axis=-1)[..., :2])
    assert i.tolist() == np.argsort(-x, axis=-1, kind="stable")[..., :2].tolist()
    v, i = core.vmap(lambda u: core.topk(u, 1, axis=0, largest=False))(a(x))
    close(v, np.sort(x, axis=1)[:, :1])
    assert i.tolist() == np.argsort(x, axis=1, kind="stable")[:, :1].tolist()


# ---------------------------------------------------------------------------
# matmul and einsum


@pytest.mark.parametrize("xs, ws, axes", [
    ((4, 3), (3, 2), (0, None)),        # batched vector @ matrix
    ((3,), (4, 3, 2), (None, 0)),       # vector @ batched matrix
    ((4, 2, 3), (3,), (0, None)),       # batched matrix @ vector
    ((2, 3), (3, 4), (None, 1)),        # matrix @ batched vector (batch on axis 1)
    ((4, 3), (4, 3), (0, 0)),           # batched dot
    ((4, 2, 3), (4, 3, 5), (0, 0)),     # batched matrix @ batched matrix
    ((2, 3, 4), (3, 5), (2, None)),     # batch on the last axis of a matrix
    ((4, 6, 2, 3), (3, 2), (0, None)),  # batched stack of matrices @ matrix
    ((4, 6, 2, 3), (6, 3, 2), (0, None)),
    ((3, 4, 5), (4, 3, 5), (2, 2)),
])
def test_matmul_shapes(xs, ws, axes):
    x, w = r(*xs), r(*ws)
    out = core.vmap(lambda u, v: u @ v, in_axes=axes)(a(x), a(w))
    close(out, loop(lambda u, v: u @ v, x, w, axes=axes))
    out = core.vmap(core.matmul, in_axes=axes)(a(x), a(w))
    close(out, loop(np.matmul, x, w, axes=axes))


def test_einsum():
    x, y = r(4, 2, 3), r(3, 5)
    close(core.vmap(lambda u, v: core.einsum("ij,jk->ik", u, v), in_axes=(0, None))(a(x), a(y)),
          np.einsum("bij,jk->bik", x, y))
    v = r(4, 3)
    close(core.vmap(lambda p, q: core.einsum("i,i->", p, q))(a(v), a(v[::-1].copy())), (v * v[::-1]).sum(1))
    yb = r(3, 5, 4)
    close(core.vmap(lambda u, v: core.einsum("ij,jk->ki", u, v), in_axes=(None, 2))(a(x[0]), a(yb)),
          np.stack([np.einsum("ij,jk->ki", x[0], yb[..., b]) for b in range(4)]))


def test_einsum_ellipsis_and_outer():
    p, q = r(4, 3), r(2)
    close(core.vmap(lambda u, v: core.einsum("i,j->ij", u, v), in_axes=(0, None))(a(p), a(q)),
          np.einsum("bi,j->bij", p, q))
    x, y = r(2, 4, 3), r(4, 3, 5)
    close(core.vmap(lambda p, q: core.einsum("...j,jk->...k", p, q), in_axes=(1, 0))(a(x), a(y)),
          np.einsum("bij,bjk->bik", np.moveaxis(x, 1, 0), y))


# ---------------------------------------------------------------------------
# conv and pooling


def np_conv2d(x, w, stride=1, padding=0, groups=1):
    """x (N, C, H, W), w (O, C // groups, kh, kw): torch conv2d by loops."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    oh = (h + 2 * padding - kh) // stride + 1
    ow = (wd + 2 * padding - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g = oc // og
        xs = x[:, g * cg:(g + 1) * cg]
        for i in range(oh):
            for j in range(ow):
                patch = xs[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
                out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    return out


def np_pool2d(x, k, stride, op):
    h, w = x.shape[-2:]
    oh, ow = (h - k) // stride + 1, (w - k) // stride + 1
    out = np.zeros(x.shape[:-2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[..., i, j] = op(x[..., i * stride:i * stride + k, j * stride:j * stride + k], axis=(-2, -1))
    return out


def test_conv_batched_images_unbatched_filters():
    x, w = r(3, 2, 4, 5, 5), r(6, 4, 3, 3)
    out = core.vmap(lambda u, k: core.conv(u, k, padding=1), in_axes=(0, None))(a(x), a(w))
    close(out, loop(lambda u, k: np_conv2d(u, k, padding=1), x, w, axes=(0, None)))
    # unbatched-image layout (C, H, W) per example, batch axis last
    xs = r(4, 5, 5, 3)
    out = core.vmap(lambda u, k: core.conv(u, k, stride=2), in_axes=(3, None))(a(xs), a(w))
    close(out, loop(lambda u, k: np_conv2d(u[None], k, stride=2)[0], xs, w, axes=(3, None)))


def test_conv_batched_filters_and_both_batched_with_groups():
    x, w = r(2, 4, 5, 5), r(3, 6, 2, 3, 3)
    out = core.vmap(lambda u, k: core.conv(u, k, groups=2), in_axes=(None, 0))(a(x), a(w))
    close(out, loop(lambda u, k: np_conv2d(u, k, groups=2), x, w, axes=(None, 0)))
    xb = r(3, 2, 4, 5, 5)
    out = core.vmap(lambda u, k: core.conv(u, k, groups=2, padding=1))(a(xb), a(w))
    close(out, loop(lambda u, k: np_conv2d(u, k, groups=2, padding=1), xb, w))
    # depthwise, filters batched on a non-leading axis
    wd = r(4, 1, 3, 3, 3)
    out = core.vmap(lambda u, k: core.conv(u, k, groups=4), in_axes=(0, 4))(a(xb), a(wd))
    close(out, loop(lambda u, k: np_conv2d(u, k, groups=4), xb, wd, axes=(0, 4)))


def test_conv1d_batched():
    x, w = r(3, 2, 4, 7), r(5, 4, 3)
    out = core.vmap(lambda u, k: core.conv(u, k), in_axes=(0, None))(a(x), a(w))
    expect = loop(lambda u, k: np_conv2d(u[..., None, :], k[..., None, :])[..., 0, :], x, w, axes=(0, None))
    close(out, expect)


def test_max_and_avg_pool_batched():
    x = r(3, 2, 4, 6, 6)
    close(core.vmap(lambda u: core.max_pool(u, 2))(a(x)), np_pool2d(x, 2, 2, np.max))
    close(core.vmap(lambda u: core.avg_pool(u, 3, stride=1))(a(x)), np_pool2d(x, 3, 1, np.mean))
    # batch on a spatial-looking axis: the pool must still act on the logical trailing axes
    y = r(4, 6, 6, 3)
    close(core.vmap(lambda u: core.max_pool(u, (2, 2)), in_axes=3)(a(y)),
          np_pool2d(np.moveaxis(y, 3, 0), 2, 2, np.max))
    close(core.vmap(lambda u: core.avg_pool(u, (2, 2), stride=(2, 2)), in_axes=-1)(a(y)),
          np_pool2d(np.moveaxis(y, 3, 0), 2, 2, np.mean))


# ---------------------------------------------------------------------------
# meta arrays


def test_vmap_on_meta_arrays_gives_shapes_only():
    x = core.zeros((8, 5, 3), device="meta")
    w = core.zeros((3, 4), device="meta")
    out = core.vmap(lambda u, v: core.softmax(core.tanh(u @ v), axis=-1), in_axes=(0, None))(x, w)
    assert out.shape == (8, 5, 4) and out.device is core.meta and out.dtype is core.float32
    s, i = core.vmap(lambda u: core.topk(core.sum(u, axis=-1), 2), in_axes=1, out_axes=-1)(x)
    assert s.shape == (2, 5) and i.shape == (2, 5) and i.dtype is core.int64 and s.device is core.meta
    img = core.zeros((2, 4, 3, 9, 9), device="meta")
    k = core.zeros((6, 3, 3, 3), device="meta")
    out = core.vmap(lambda u: core.max_pool(core.conv(u, k, padding=1), 3))(img)
    assert out.shape == (2, 4, 6, 3, 3) and out.device is core.meta
    g = core.vmap(core.grad(lambda v: core.sum(v @ w)))(core.zeros((8, 3), device="meta"))
    assert g.shape == (8, 3) and g.device is core.meta


# ---------------------------------------------------------------------------
# composition with autodiff


def _loss(w, x, y):
    return core.sum((core.tanh(x @ w) - y) ** 2)


def _np_loss_grad(w, x, y):
    t = np.tanh(x @ w)
    return np.outer(x, 2 * (t - y) * (1 - t ** 2))


def test_vmap_of_grad_gives_per_example_gradients():
    w, x, y = r(3, 2), r(5, 3), r(5, 2)
    per = core.vmap(core.grad(_loss), in_axes=(None, 0, 0))(a(w), a(x), a(y))
    close(per, loop(_np_loss_grad, w, x, y, axes=(None, 0, 0)))
    looped = np.stack([np.asarray(core.grad(_loss)(a(w), a(x[i]), a(y[i]))) for i in range(5)])
    close(per, looped)
    # gradient w.r.t. the batched argument too
    gw, gx = core.vmap(core.grad(_loss, argnums=(0, 1)), in_axes=(None, 0, 0))(a(w), a(x), a(y))
    close(gw, per)
    t = np.tanh(x @ w)
    close(gx, (2 * (t - y) * (1 - t ** 2)) @ w.T)


def test_vmap_of_value_and_grad_with_pytree_params():
    p = {"w": r(3, 2), "b": r(2)}
    x = r(4, 3)
    f = lambda q, v: core.sum(core.sin(v @ q["w"] + q["b"]))  # noqa: E731
    val, g = core.vmap(core.value_and_grad(f), in_axes=(None, 0))({k: a(v) for k, v in p.items()}, a(x))
    z = x @ p["w"] + p["b"]
    close(val, np.sin(z).sum(1))
    close(g["b"], np.cos(z))
    close(g["w"], x[:, :, None] * np.cos(z)[:, None, :])


def test_grad_of_vmap_is_gradient_of_the_sum():
    w, x, y = r(3, 2), r(5, 3), r(5, 2)
    g = core.grad(lambda ww: core.sum(core.vmap(_loss, in_axes=(None, 0, 0))(ww, a(x), a(y))))(a(w))
    close(g, loop(_np_loss_grad, w, x, y, axes=(None, 0, 0)).sum(0))
    # gradient w.r.t. the mapped argument: each example's own gradient
    gx = core.grad(lambda xx: core.sum(core.vmap(lambda v: core.sum(core.sin(v) * v))(xx)))(a(x))
    close(gx, np.cos(x) * x + np.sin(x))


def test_vmap_of_jvp_and_jvp_of_vmap():
    x, t = r(4, 3), r(4, 3)
    out, tan = core.vmap(lambda p, q: core.jvp(core.sin, (p,), (q,)))(a(x), a(t))
    close(out, np.sin(x))
    close(tan, np.cos(x) * t)
    # one tangent shared by the batch
    out, tan = core.vmap(lambda p, q: core.jvp(lambda s: s * s, (p,), (q,)), in_axes=(0, None))(a(x), a(t[0]))
    close(tan, 2 * x * t[0])
    out, tan = core.jvp(core.vmap(lambda p: core.sum(core.exp(p))), (a(x),), (a(t),))
    close(out, np.exp(x).sum(1))
    close(tan, (np.exp(x) * t).sum(1))


def _f_jac(x):
    # f(x) = sin(x) * reversed(x): J = diag(cos(x) * rev(x)) + diag(sin(x)) P, P the reversal
    return core.sin(x) * core.flip(x, 0)


def _np_f_jac(x):
    return np.diag(np.cos(x) * x[::-1]) + np.diag(np.sin(x)) @ np.eye(len(x))[::-1]


def test_jacrev_and_jacfwd_equal_the_hand_jacobian():
    x = r(4)
    jr = core.jacrev(_f_jac)(a(x))
    jf = core.jacfwd(_f_jac)(a(x))
    close(jr, _np_f_jac(x))
    close(jf, _np_f_jac(x))
    # matrix input and output: J[i, j, k, l] = d out[i, j] / d in[k, l]
    m, w = r(2, 3), r(3, 4)
    expect = np.einsum("ik,jl->ijkl", np.eye(2), w.T)
    close(core.jacrev(lambda v: v @ a(w))(a(m)), expect)
    close(core.jacfwd(lambda v: v @ a(w))(a(m)), expect)


def test_jacobians_with_aux():
    x = r(3)
    for jac in (core.jacrev, core.jacfwd):
        j, aux = jac(lambda v: (core.sin(v), {"s": core.sum(v)}), has_aux=True)(a(x))
        close(j, np.diag(np.cos(x)))
        close(aux["s"], x.sum())


def test_jacobians_over_pytrees_and_argnums_tuples():
    u, v = r(3), r(3)
    f = lambda p, q: {"prod": p * q, "dot": core.sum(p * q)}  # noqa: E731
    for jac in (core.jacrev, core.jacfwd):
        j = jac(f, argnums=(0, 1))(a(u), a(v))
        close(j["prod"][0], np.diag(v))
        close(j["prod"][1], np.diag(u))
        close(j["dot"][0], v)
        close(j["dot"][1], u)
        j1 = jac(f, argnums=1)(a(u), a(v))
        close(j1["prod"], np.diag(u))
        close(j1["dot"], u)
    g = lambda d: (d["a"] ** 2, d["a"] * d["b"][0])  # noqa: E731
    inp = {"a": a(u), "b": [a(2.0)]}
    for jac in (core.jacrev, core.jacfwd):
        ja, jb = jac(g)(inp)
        close(ja["a"], np.diag(2 * u))
        close(ja["b"][0], np.zeros(3))
        close(jb["a"], 2.0 * np.eye(3))
        close(jb["b"][0], u)


def test_hessian_equals_hand_derivation_and_jacfwd_of_jacrev():
    x = r(3)
    A = r(3, 3)
    close(core.hessian(lambda v: core.sum(v ** 3))(a(x)), np.diag(6 * x))
    close(core.hessian(lambda v: v @ a(A) @ v)(a(x)), A + A.T)
    f = lambda v: core.sum(core.exp(v[0] * v) * core.sin(v))  # noqa: E731
    h = core.hessian(f)(a(x))
    close(h, core.jacrev(core.jacrev(f))(a(x)), tol=1e-9)
    close(h, core.jacfwd(core.jacfwd(f))(a(x)), tol=1e-9)
    close(h, np.asarray(h).T, tol=1e-9)
    # pytree argument with argnums tuple: blocks d2f / dp dq
    g = lambda p, q: core.sum(p * p * q)  # noqa: E731
    (hpp, hpq), (hqp, hqq) = core.hessian(g, argnums=(0, 1))(a(x), a(A[0]))
    close(hpp, np.diag(2 * A[0]))
    close(hpq, np.diag(2 * x))
    close(hqp, np.diag(2 * x))
    close(hqq, np.zeros((3, 3)))


def test_vmap_of_jacobian_and_hessian():
    x = r(5, 4)
    J = core.vmap(core.jacrev(_f_jac))(a(x))
    close(J, loop(_np_f_jac, x))
    close(core.vmap(core.jacfwd(_f_jac))(a(x)), loop(_np_f_jac, x))
    H = core.vmap(core.hessian(lambda v: core.sum(v ** 3)))(a(x))
    close(H, loop(lambda v: np.diag(6 * v), x))


# ---------------------------------------------------------------------------
# random keys under vmap


def test_batched_keys_draw_one_stream_per_element():
    key = core.random.key(42)
    keys = core.random.split(key, 4)
    out = core.vmap(lambda k: core.random.normal(k, (3,)))(keys)
    assert out.shape == (4, 3)
    rows = np.asarray(out)
    assert len({tuple(row) for row in rows.tolist()}) == 4
    for i in range(4):
        close(rows[i], core.random.normal(keys[i], (3,)), tol=0)
    u = core.vmap(lambda k: core.random.uniform(k, (2, 2), minval=-1.0, maxval=1.0))(keys)
    for i in range(4):
        close(np.asarray(u)[i], core.random.uniform(keys[i], (2, 2), minval=-1.0, maxval=1.0), tol=0)
    # keys batched on axis 1
    out1 = core.vmap(lambda k: core.random.normal(k, (3,)), in_axes=1)(core.transpose(keys))
    close(out1, rows, tol=0)


def test_split_under_vmap_matches_unbatched_split():
    keys = core.random.split(core.random.key(7), 3)
    sub = core.vmap(lambda k: core.random.split(k, 2))(keys)
    assert sub.shape == (3, 2, 2)
    for i in range(3):
        assert np.asarray(sub)[i].tolist() == np.asarray(core.random.split(keys[i], 2)).tolist()


def test_unbatched_key_inside_vmap_gives_the_same_numbers_for_every_element():
    key = core.random.key(3)
    x = r(5, 3)
    out = core.vmap(lambda v: v + core.random.normal(key, (3,)))(a(x))
    noise = np.asarray(out) - x
    ref = np.asarray(core.random.normal(key, (3,)))
    for i in range(5):
        close(noise[i], ref)
    out = core.vmap(lambda v, k: core.random.uniform(k, (3,)) * v, in_axes=(0, None))(a(x), key)
    close(out, x * np.asarray(core.random.uniform(key, (3,))))
