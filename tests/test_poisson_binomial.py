"""torch.poisson and torch.binomial (the distributions' samplers as torch's functions): their distributions,
generators, dtypes, PyTorch 2.13's errors and autograd behaviour."""
import numpy as np
import pytest

import mindtorch_v2 as torch


def test_poisson_counts_have_the_rates_mean_and_variance_on_both_sides_of_the_method_switch():
    torch.manual_seed(0)
    for rate in (0.3, 3.5, 9.9, 10.0, 37.0):  # (products of uniforms below 10, PTRS from 10)
        x = torch.poisson(torch.full((40000,), rate)).numpy()
        assert np.all(x == np.floor(x)) and x.min() >= 0
        assert abs(x.mean() - rate) < 4 * np.sqrt(rate / x.size)
        assert abs(x.var() / rate - 1) < 0.05


def test_poisson_keeps_the_dtype_and_shape_and_follows_the_generator():
    assert torch.poisson(torch.ones(2, 3, dtype=torch.float64)).dtype == torch.float64
    assert torch.poisson(torch.ones(2, dtype=torch.float16)).dtype == torch.float16
    assert torch.poisson(torch.ones(2, 3, device="meta")).shape == (2, 3)
    g = torch.Generator().manual_seed(5)
    a = torch.poisson(torch.full((50,), 4.0), generator=g)
    g.manual_seed(5)
    assert torch.equal(a, torch.poisson(torch.full((50,), 4.0), generator=g))
    zero_inf = torch.poisson(torch.tensor([0.0, float("inf")]))
    assert zero_inf[0].item() == 0.0 and zero_inf[1].item() == float("inf")


def test_poisson_refuses_what_pytorch_refuses():
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"):
        torch.poisson(torch.tensor([1.0, -1.0]))
    with pytest.raises(RuntimeError, match="invalid Poisson rate"):
        torch.poisson(torch.tensor([float("nan")]))
    with pytest.raises(NotImplementedError, match="\"poisson_cpu\" not implemented for 'Long'"):
        torch.poisson(torch.tensor([1, 2]))


def test_poisson_of_a_rate_that_requires_grad_has_a_zero_gradient():
    r = torch.tensor([1.0, 20.0], requires_grad=True)
    s = torch.poisson(r)
    assert s.requires_grad and s.grad_fn.name() == "PoissonBackward0"
    s.sum().backward()
    assert r.grad.tolist() == [0.0, 0.0]
    with torch.no_grad():
        assert not torch.poisson(r).requires_grad


def test_binomial_counts_and_pytorchs_edges():
    torch.manual_seed(1)
    x = torch.binomial(torch.full((40000,), 30.0), torch.full((40000,), 0.25)).numpy()
    assert abs(x.mean() - 7.5) < 0.1 and abs(x.var() / (30 * 0.25 * 0.75) - 1) < 0.05
    assert torch.binomial(torch.tensor([10.0]), torch.tensor([1.5])).tolist() == [10.0]  # (p clamped, as PyTorch)
    with pytest.raises(ValueError, match="binomial only supports floating-point dtypes for count, got: Long"):
        torch.binomial(torch.tensor([10]), torch.tensor([0.5]))
    b = torch.binomial(torch.tensor([10.0], requires_grad=True), torch.tensor([0.5]))
    assert b.requires_grad
    with pytest.raises(RuntimeError, match="the derivative for 'binomial' is not implemented"):
        b.sum().backward()
