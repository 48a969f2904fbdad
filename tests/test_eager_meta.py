"""The meta device end to end (shapes and dtypes only, no memory), and torch.npu without the Ascend runtime."""
import tracemalloc

import numpy as np
import pytest

import mindtorch_v2 as torch


def peak_traced_bytes(fn):
    """The peak of Python-visible allocations (numpy buffers included) while fn() runs, and its result."""
    tracemalloc.start()
    try:
        out = fn()
        return tracemalloc.get_traced_memory()[1], out
    finally:
        tracemalloc.stop()


def test_large_meta_program_gives_shapes_without_buffers():
    def program():
        w = torch.ones(4096, 4096, device="meta")
        return (torch.ones(4096, 4096, device="meta") @ w).relu().sum(0)
    peak, y = peak_traced_bytes(program)  # speed: bench/meta_device.py
    assert y.shape == (4096,) and y.dtype is torch.float32 and y.device.type == "meta" and y.is_meta
    assert peak < 2**20, peak  # one 4096x4096 float32 buffer would be 64 MiB
    assert repr(y) == "tensor(..., device='meta', size=(4096,))"


def test_meta_constructors():
    for t in (torch.zeros(3, 4, device="meta"), torch.empty(3, 4, device=torch.device("meta")),
              torch.full((3, 4), 2.0, device="meta"), torch.randn(3, 4, device="meta"),
              torch.rand(3, 4, device="meta"), torch.zeros_like(torch.zeros(3, 4, device="meta"))):
        assert t.shape == (3, 4) and t.device.type == "meta" and t.dtype is torch.float32
    assert torch.arange(10, device="meta").dtype is torch.int64
    assert torch.randint(0, 5, (7,), device="meta").shape == (7,)
    assert torch.tensor([1, 2], device="meta").dtype is torch.int64
    m = torch.zeros(2, device="meta")
    assert m.new_zeros(3).device.type == "meta" and m.clone().device.type == "meta"
    assert torch.zeros(2).to("meta").device.type == "meta"


def test_meta_random_draws_cost_no_memory():
    def draws():
        t = torch.randn(8192, 8192, device="meta")
        t.uniform_()
        t.normal_()
        return t
    peak, t = peak_traced_bytes(draws)  # speed: bench/meta_device.py
    assert t.shape == (8192, 8192) and t.device.type == "meta" and t._version == 2
    assert peak < 2**20, peak  # one 8192x8192 float32 buffer would be 256 MiB


def test_meta_views_and_in_place_ops_track_geometry_and_versions():
    m = torch.zeros(3, 4, device="meta")
    assert m[1].shape == (4,) and m.t().stride() == (1, 4) and m[:, ::2].shape == (3, 2)
    assert m.view(12).shape == (12,) and m.reshape(2, 6)._storage is m._storage
    assert m[:, [0, 2]].shape == (3, 2)
    m.add_(1)
    m[0] = 5.0
    m[1:].mul_(torch.ones(4, device="meta"))
    assert m._version == 3 and m.device.type == "meta" and m._storage.value.device.type == "meta"
    with pytest.raises(RuntimeError):
        torch.zeros(2, device="meta").add_(torch.ones(3, device="meta"))


def test_meta_ops_give_the_cpu_shapes_and_dtypes():
    def program(dev):
        x = torch.ones(2, 3, 5, device=dev)
        w = torch.ones(5, 4, device=dev)
        h = (x @ w).softmax(-1)
        v, i = h.max(1)
        s = torch.cat([h, h], 0).flatten(1).std(0)
        e = torch.einsum("bij,jk->bik", x, w)
        return [h, v, i, s, e, (x > 0).sum(), x.mean((0, 2), keepdim=True), x.transpose(0, 2).reshape(-1)]

    for cpu, meta in zip(program("cpu"), program("meta")):
        assert cpu.shape == meta.shape and cpu.dtype is meta.dtype and meta.device.type == "meta"


def test_meta_autograd_runs_on_shapes():
    m = torch.zeros(3, 4, device="meta", requires_grad=True)
    w = torch.zeros(4, 2, device="meta", requires_grad=True)
    (m @ w).relu().sum().backward()
    assert m.grad.shape == (3, 4) and m.grad.device.type == "meta"
    assert w.grad.shape == (4, 2) and w.grad.device.type == "meta"


def test_meta_tensors_hold_no_data():
    m = torch.zeros(3, 4, device="meta")
    with pytest.raises(RuntimeError, match="meta"):
        m.numpy()
    with pytest.raises((RuntimeError, NotImplementedError), match="meta"):
        m.to("cpu")
    with pytest.raises(RuntimeError, match="meta"):
        m.sum().item()
    with pytest.raises(RuntimeError, match="same device|device"):
        torch.zeros(3, 4) + m


def test_npu_is_not_available_without_the_ascend_runtime():
    assert torch.npu.is_available() is False
    assert torch.npu.device_count() == 0
    assert np.asarray(torch.zeros(1)).shape == (1,)
