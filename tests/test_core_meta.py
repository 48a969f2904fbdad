"""The meta device: every op and transform gives shapes and dtypes with no data,
the same as the cpu run; reading data or mixing devices raises RuntimeError."""
import numpy as np
import pytest

from mindtorch_v2 import core


def meta(shape, dtype=core.float32):
    return core.zeros(shape, dtype=dtype, device="meta")


def cpu_like(x):
    return core.ones(x.shape, dtype=x.dtype) if x.dtype.is_floating_point else core.zeros(x.shape, dtype=x.dtype)


def assert_same_avals(meta_out, cpu_out):
    if isinstance(meta_out, (tuple, list)):
        assert len(meta_out) == len(cpu_out)
        for m, c in zip(meta_out, cpu_out):
            assert_same_avals(m, c)
        return
    if isinstance(meta_out, dict):
        assert meta_out.keys() == cpu_out.keys()
        for k in meta_out:
            assert_same_avals(meta_out[k], cpu_out[k])
        return
    assert meta_out.device is core.meta
    assert cpu_out.device is core.cpu
    with pytest.raises(RuntimeError, match="meta"):
        np.asarray(meta_out)  # no data behind it
    assert meta_out.shape == cpu_out.shape
    assert meta_out.dtype is cpu_out.dtype


PROGRAMS = {
    "add_scalar": (lambda x: x + 1, [(2, 3)]),
    "int_times_float": (lambda x: x * 2.5, [((2, 3), core.int64)]),
    "exp_of_int": (lambda x: core.exp(x), [((4,), core.int32)]),
    "matmul_batched": (lambda x, y: x @ y, [(5, 2, 3), (3, 4)]),
    "matmul_vec": (lambda x, y: x @ y, [(3,), (3, 4)]),
    "sum_int": (lambda x: core.sum(x, 0), [((2, 3), core.int64)]),
    "mean_var": (lambda x: (core.mean(x, 1), core.var(x, (0, 1), ddof=1)), [(2, 3, 4)]),
    "softmax_lse": (lambda x: (core.softmax(x), core.logsumexp(x, -1, keepdims=True)), [(2, 3)]),
    "norm_clamp": (lambda x: (core.norm(x, 1, axis=0), core.clamp(x, 0.0, 1.0)), [(2, 3)]),
    "where_scalars": (lambda x: core.where(x > 0, 1.0, 2.0), [(2, 3)]),
    "getitem_basic": (lambda x: (x[:, 1:], x[1], x[None, ..., ::-1]), [(2, 3)]),
    "getitem_lists": (lambda x: (x[[0, 1, 1]], x[:, [2, 0]], x[[0, 1], [1, 2]]), [(2, 3)]),
    "reshape_transpose": (lambda x: (core.reshape(x, (-1,)), x.T, core.expand_dims(x, 0)), [(2, 3)]),
    "concat_pad": (lambda x: (core.concatenate([x, x], 1), core.pad(x, 1), core.stack([x, x])), [(2, 3)]),
    "argmax_sort_topk": (lambda x: (core.argmax(x, 1), core.sort(x, 0), core.topk(x, 2)), [(2, 3)]),
    "take_gather": (lambda x: (core.take(x, [0, 2], 1), core.gather(x, 1, [[0], [1]])), [(2, 3)]),
    "as_strided": (lambda x: core.as_strided_scatter(x, core.as_strided(x, (2, 2), (1, 1)) * 2, (2, 2), (1, 1)),
                   [(2, 3)]),
    "cumsum_cast": (lambda x: (core.cumsum(x, 1), core.cast(x, core.int8)), [(2, 3)]),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_meta_run_gives_the_cpu_shapes_and_dtypes(name):
    fn, specs = PROGRAMS[name]
    specs = [s if isinstance(s[-1], core.DType) else (s, core.float32) for s in specs]
    meta_args = [meta(shape, dtype) for shape, dtype in specs]
    cpu_args = [cpu_like(m) for m in meta_args]
    assert_same_avals(fn(*meta_args), fn(*cpu_args))


@pytest.mark.parametrize("transform", [
    lambda f, x: core.grad(lambda v: core.sum(f(v)))(x),
    lambda f, x: core.vjp(f, x)[1](core.zeros(f(x).shape, device=x.device))[0],
    lambda f, x: core.jvp(f, (x,), (core.zeros(x.shape, device=x.device),))[1],
    lambda f, x: core.jacrev(f)(x),
    lambda f, x: core.jacfwd(f)(x),
    lambda f, x: core.hessian(lambda v: core.sum(f(v)))(x),
], ids=["grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian"])
@pytest.mark.parametrize("f", [
    lambda v: core.tanh(v) ** 2,
    lambda v: core.max(v, 0, keepdims=True) * core.prod(v),
    lambda v: core.sort(v) * core.softmax(v),
    lambda v: v[[0, 0, 2]] / (1.0 + core.norm(v)),
    lambda v: core.where(v > 0, v, 0.0) + core.as_strided(v, (3,), (0,), 1),
], ids=["tanh", "max_prod", "sort_softmax", "index_norm", "where_strided"])
def test_transforms_on_meta_give_cpu_shapes(transform, f):
    out_meta = transform(f, meta((3,)))
    out_cpu = transform(f, core.asarray([0.5, -1.0, 2.0]))
    assert_same_avals(out_meta, out_cpu)


def test_grad_on_meta_pytree():
    params = {"w": meta((3, 2)), "b": meta((2,))}
    g = core.grad(lambda p, x: core.sum(core.tanh(x @ p["w"] + p["b"])))(params, meta((4, 3)))
    assert g["w"].shape == (3, 2) and g["w"].device is core.meta
    assert g["b"].shape == (2,) and g["b"].dtype is core.float32


@pytest.mark.parametrize("read", [
    np.asarray, lambda x: x.item(), lambda x: x.tolist(), lambda x: float(x), lambda x: bool(x),
    lambda x: x.numpy(),
], ids=["asarray", "item", "tolist", "float", "bool", "numpy"])
def test_reading_meta_data_raises_runtime_error(read):
    with pytest.raises(RuntimeError, match="meta"):
        read(meta(()))


def test_mixing_cpu_and_meta_raises_runtime_error():
    with pytest.raises(RuntimeError, match="same device"):
        meta((2, 3)) + core.zeros((2, 3))
    with pytest.raises(RuntimeError, match="same device"):
        core.zeros((2, 3)) @ meta((3, 3))
    with pytest.raises(RuntimeError, match="same device"):
        meta((3,))[core.asarray([0, 1])]  # an index Array keeps its own device
    with pytest.raises(RuntimeError, match="meta"):
        core.to_device(meta((2,)), "cpu")


def test_meta_constructors_and_repr():
    assert core.arange(5, device="meta").shape == (5,)
    assert core.arange(5, device="meta").dtype is core.int64
    assert core.eye(3, device="meta").shape == (3, 3)
    x = core.asarray([1.0, 2.0], device="meta")
    assert x.device is core.meta and x.shape == (2,)
    assert "device=meta" in repr(x)


def test_boolean_mask_on_meta_needs_data():
    with pytest.raises(IndexError, match="needs data"):
        meta((3,))[meta((3,), core.bool_)]
