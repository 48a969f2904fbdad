"""Eager behaviour of the shape, creation and search ops beyond the torch goldens: in-place forms through
views, versions, autograd rules, meta tensors and transforms."""
import warnings

import numpy as np
import pytest

import mindtorch_v2 as torch


def test_index_put_in_place_writes_through_a_view_and_bumps_the_version_once():
    base = torch.zeros(3, 4)
    row = base[1]
    v0 = base._version
    row.index_put_((torch.tensor([0, 0, 3]),), torch.tensor([1.0, 2.0, 5.0]), accumulate=True)
    assert base._version == v0 + 1
    np.testing.assert_array_equal(base.numpy()[1], [3.0, 0.0, 0.0, 5.0])


def test_masked_scatter_in_place_on_a_leaf_that_requires_grad_raises():
    x = torch.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.masked_scatter_(torch.tensor([True, False, True]), torch.ones(2))


def test_in_place_forms_are_differentiable_through_the_written_tensor():
    src = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.zeros(4) * 1.0
    y.masked_scatter_(torch.tensor([False, True, False, True]), src * 3)
    (y * torch.arange(4.0)).sum().backward()
    np.testing.assert_allclose(src.grad.numpy(), [3.0, 9.0])


def test_splits_are_views_sharing_storage():
    x = torch.arange(12.0).reshape(3, 4)
    a, b = torch.hsplit(x, 2)
    b[0, 0] = -1.0
    assert x[0, 2].item() == -1.0
    parts = x.tensor_split(torch.tensor([1]), dim=0)
    parts[1][0, 0] = -2.0
    assert x[1, 0].item() == -2.0


def test_meshgrid_warns_only_without_indexing():
    a = torch.arange(3)
    with pytest.warns(UserWarning, match="indexing argument"):
        torch.meshgrid(a, a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.meshgrid(a, a, indexing="xy")


def test_data_dependent_shapes_refuse_meta_tensors():
    m = torch.zeros(4, device="meta")
    with pytest.raises(NotImplementedError, match="meta"):
        torch.unique(m)
    with pytest.raises(NotImplementedError, match="meta"):
        torch.repeat_interleave(torch.ones(2, device="meta"), torch.tensor([1, 2], device="meta"))
    out = torch.repeat_interleave(torch.ones(2, 3, device="meta"), 2, dim=1)
    assert tuple(out.shape) == (2, 6)
    assert tuple(torch.diag_embed(torch.ones(2, 3, device="meta")).shape) == (2, 3, 3)
    assert torch.searchsorted(torch.ones(5, device="meta"), torch.ones(2, 2, device="meta")).dtype is torch.int64


def test_search_results_do_not_require_grad():
    s = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    v = torch.tensor([0.5, 1.5], requires_grad=True)
    assert not torch.searchsorted(s, v).requires_grad
    assert not torch.isin(v, s).requires_grad
    assert not torch.unique(v).requires_grad


def test_repeat_interleave_with_output_size_runs_under_vmap():
    f = torch.func.vmap(lambda r: torch.repeat_interleave(torch.tensor([1.0, 2.0]), r, dim=0, output_size=3))
    np.testing.assert_array_equal(f(torch.tensor([[1, 2], [3, 0]])).numpy(), [[1, 2, 2], [1, 1, 1]])
