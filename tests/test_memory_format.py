"""Memory formats: channels_last layouts, contiguous/clone/to/empty/*_like with memory_format, Module.to.

Every expectation here was also run against PyTorch 2.13 (the file runs unchanged with real torch)."""
import pickle

import numpy as np
import pytest

import mindtorch_v2 as torch


def _x(requires_grad=False):
    return torch.tensor(np.arange(120.0).reshape(2, 3, 4, 5), requires_grad=requires_grad)


def test_formats_are_named_singletons():
    assert repr(torch.channels_last) == "torch.channels_last"
    assert isinstance(torch.contiguous_format, torch.memory_format)
    for f in (torch.contiguous_format, torch.channels_last, torch.channels_last_3d, torch.preserve_format):
        assert pickle.loads(pickle.dumps(f)) is f


def test_channels_last_layout_and_values():
    x = _x()
    y = x.contiguous(memory_format=torch.channels_last)
    assert y.shape == x.shape and y.stride() == (60, 1, 15, 3)
    assert y.is_contiguous(memory_format=torch.channels_last) and not y.is_contiguous()
    assert torch.equal(y, x)
    assert y.contiguous(memory_format=torch.channels_last) is y
    back = y.contiguous()
    assert back.stride() == (60, 20, 5, 1) and torch.equal(back, x)
    z = torch.randn(2, 3, 4, 5, 6).contiguous(memory_format=torch.channels_last_3d)
    assert z.stride() == (360, 1, 90, 18, 3)


def test_channels_last_gradients_flow():
    x = _x(requires_grad=True)
    w = torch.tensor(np.linspace(-1, 1, 120).reshape(2, 3, 4, 5))
    (x.contiguous(memory_format=torch.channels_last) * w).sum().backward()
    assert torch.equal(x.grad, w)


def test_size_one_dims_are_ignored():
    assert torch.randn(4, 1, 3, 3).is_contiguous(memory_format=torch.channels_last)
    assert torch.randn(4, 3, 1, 1).is_contiguous(memory_format=torch.channels_last)
    assert not torch.randn(4, 3, 2, 2).is_contiguous(memory_format=torch.channels_last)


def test_wrong_rank_and_preserve_are_refused():
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        torch.randn(2, 3).contiguous(memory_format=torch.channels_last)
    with pytest.raises(RuntimeError, match="required rank 5 tensor to use channels_last_3d format"):
        torch.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last_3d)
    x = torch.randn(2, 3)
    assert x.contiguous(memory_format=torch.preserve_format) is x
    assert x.is_contiguous(memory_format=torch.preserve_format) and not x.t().is_contiguous(
        memory_format=torch.preserve_format)
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported by the contiguous operator"):
        x.t().contiguous(memory_format=torch.preserve_format)
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported by the contiguous operator"):
        _x().contiguous(memory_format=torch.channels_last).contiguous(memory_format=torch.preserve_format)


def test_clone_and_like_factories_preserve_a_dense_layout():
    y = _x().contiguous(memory_format=torch.channels_last)
    assert y.clone().stride() == (60, 1, 15, 3)
    assert y.clone(memory_format=torch.contiguous_format).stride() == (60, 20, 5, 1)
    assert torch.zeros_like(y).stride() == (60, 1, 15, 3)
    assert torch.empty_like(y).stride() == (60, 1, 15, 3)
    assert torch.full_like(y, 2.0).stride() == (60, 1, 15, 3) and torch.full_like(y, 2.0).sum().item() == 240
    assert torch.ones_like(y, memory_format=torch.contiguous_format).stride() == (60, 20, 5, 1)
    t = torch.randn(3, 4).t()
    assert t.clone().stride() == (1, 4) and torch.empty_like(t).stride() == (1, 4)
    sliced = _x()[:, :, ::2]  # not dense: the copy is contiguous
    assert sliced.clone().stride() == (30, 10, 5, 1) and torch.zeros_like(sliced).stride() == (30, 10, 5, 1)
    assert torch.zeros_like(_x(), memory_format=torch.channels_last).stride() == (60, 1, 15, 3)


def test_empty_and_to_with_memory_format():
    assert torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).stride() == (60, 1, 15, 3)
    assert torch.empty((2, 3, 4, 5), memory_format=torch.contiguous_format).stride() == (60, 20, 5, 1)
    x = _x()
    assert x.to(memory_format=torch.channels_last).stride() == (60, 1, 15, 3)
    y = x.to(torch.float32, memory_format=torch.channels_last)
    assert y.dtype == torch.float32 and y.stride() == (60, 1, 15, 3)


def test_writes_into_a_channels_last_tensor():
    y = _x().contiguous(memory_format=torch.channels_last)
    y.add_(1)
    y[0, 1, 2, 3] = -5
    expected = _x() + 1
    expected[0, 1, 2, 3] = -5
    assert torch.equal(y, expected) and y.stride() == (60, 1, 15, 3)


def test_module_to_channels_last_keeps_results():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.Linear(4 * 2 * 3, 2))
    x = torch.randn(2, 3, 4, 5)
    ref = m(x)
    m = m.to(memory_format=torch.channels_last)
    assert m[0].weight.is_contiguous(memory_format=torch.channels_last)
    assert isinstance(m[0].weight, torch.nn.Parameter) and m[4].weight.is_contiguous()
    out = m(x.to(memory_format=torch.channels_last))
    assert torch.allclose(out, ref, atol=1e-6)
    out.sum().backward()
    assert m[0].weight.grad.shape == (4, 3, 3, 3)


def test_writes_with_history_into_a_layout_preserving_clone():
    """A clone keeping a permuted layout, written in place with history: gradients as for a row-major clone
    (the property suite found this)."""
    mask = torch.tensor(np.array([[[True, False], [False, True], [True, True], [False, False]]]))
    grads = []
    for fmt in (torch.preserve_format, torch.contiguous_format):
        base = torch.tensor(np.arange(1.0, 9.0).reshape(2, 1, 4) - 4.5, requires_grad=True)
        shift = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
        y = base.permute(1, 2, 0).clone(memory_format=fmt)
        y[()].add_(shift)
        z = y.abs()
        z[mask] = torch.tensor(2.0, dtype=torch.float64)
        z.sum().backward()
        grads.append((base.grad, shift.grad))
    assert torch.equal(grads[0][0], grads[1][0]) and torch.equal(grads[0][1], grads[1][1])


def test_conv_output_is_channels_last_when_its_input_or_weight_is():
    import mindtorch_v2 as torch
    conv = torch.nn.Conv2d(3, 4, 3)
    x = torch.randn(2, 3, 8, 8)
    assert conv(x).is_contiguous()
    y = conv(x.to(memory_format=torch.channels_last))
    assert y.stride() == (144, 1, 24, 4) and y.is_contiguous(memory_format=torch.channels_last)
    conv.to(memory_format=torch.channels_last)
    assert conv(x).stride() == (144, 1, 24, 4)
    torch.testing.assert_close(conv(x), conv(x.to(memory_format=torch.channels_last)))
