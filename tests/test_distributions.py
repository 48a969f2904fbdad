"""Behaviour of torch.distributions: sampler statistics under a fixed seed, reparameterised gradients (explicit
and implicit), the KL registry's dispatch, validation switches, torch.func and meta tensors. Values against
PyTorch's are in tests/test_vs_torch_distributions.py."""
import math
import warnings

import numpy as np
import pytest
import scipy.special as sp

import mindtorch_v2 as torch
from mindtorch_v2 import distributions as D
from mindtorch_v2.distributions import constraints, transforms as T

N = 20000


def t64(x):
    return torch.tensor(np.asarray(x, dtype=np.float64))


def moments_agree(samples, mean, var, k=5.0):
    """Sample mean within k standard errors of `mean`, sample variance within k standard errors of `var`
    (the variance's standard error from the sample's fourth central moment)."""
    x = samples.detach().numpy().astype(np.float64)
    n = x.shape[0]
    mean, var = np.asarray(mean.detach().numpy()), np.asarray(var.detach().numpy())
    m = x.mean(0)
    np.testing.assert_array_less(np.abs(m - mean), k * np.sqrt(var / n) + 1e-12)
    c = x - m
    v = (c ** 2).mean(0)
    se_v = np.sqrt(np.maximum((c ** 4).mean(0) - v ** 2, 1e-30) / n)
    np.testing.assert_array_less(np.abs(v - var), k * se_v + 1e-12)


SAMPLED = {
    "Normal": lambda: D.Normal(t64([0.0, 3.0]), t64([1.0, 0.5])),
    "Bernoulli": lambda: D.Bernoulli(t64([0.1, 0.7])),
    "Uniform": lambda: D.Uniform(t64([-1.0, 2.0]), t64([1.0, 5.0])),
    "Beta": lambda: D.Beta(t64([0.3, 2.0, 5.0]), t64([0.5, 3.0, 1.0])),
    "Gamma_small": lambda: D.Gamma(t64([0.2, 0.7]), t64([1.0, 2.0])),
    "Gamma_large": lambda: D.Gamma(t64([3.0, 40.0]), t64([0.5, 4.0])),
    "LogNormal": lambda: D.LogNormal(t64([0.0, 0.5]), t64([0.3, 0.2])),
    "Exponential": lambda: D.Exponential(t64([0.5, 3.0])),
    "Laplace": lambda: D.Laplace(t64([0.0, -2.0]), t64([1.0, 0.3])),
    "Poisson_small": lambda: D.Poisson(t64([0.3, 4.0, 9.5])),
    "Poisson_large": lambda: D.Poisson(t64([10.0, 60.0, 500.0])),
    "Binomial_inversion": lambda: D.Binomial(t64([10.0, 30.0, 5.0]), t64([0.2, 0.1, 0.95])),
    "Binomial_btrs": lambda: D.Binomial(t64([100.0, 1000.0, 200.0]), t64([0.4, 0.05, 0.9])),
    "StudentT": lambda: D.StudentT(t64([6.0, 9.0]), t64([1.0, 0.0]), t64([1.0, 2.0])),
    "Chi2": lambda: D.Chi2(t64([1.0, 6.0])),
    "Gumbel": lambda: D.Gumbel(t64([0.0, 1.0]), t64([1.0, 2.0])),
    "Dirichlet": lambda: D.Dirichlet(t64([0.4, 1.0, 3.0])),
    "Categorical": lambda: D.OneHotCategorical(t64([0.1, 0.2, 0.7])),
}


@pytest.mark.parametrize("name", sorted(SAMPLED))
def test_sample_moments_match_the_distributions_mean_and_variance(name):
    torch.manual_seed(0)
    d = SAMPLED[name]()
    x = d.sample((N,))
    assert tuple(x.shape) == (N,) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert bool(d.support.check(x).all())
    moments_agree(x, d.mean, d.variance)


def test_categorical_frequencies_match_probs():
    torch.manual_seed(1)
    p = np.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]])
    x = D.Categorical(t64(p)).sample((N,)).numpy()
    assert x.dtype == np.int64
    for b in range(2):
        freq = np.bincount(x[:, b], minlength=3) / N
        np.testing.assert_allclose(freq, p[b], atol=5 * np.sqrt(0.25 / N))


@pytest.mark.parametrize("make, pmf", [
    (lambda: D.Poisson(t64(3.5)), lambda k: np.exp(k * np.log(3.5) - 3.5 - sp.gammaln(k + 1))),
    (lambda: D.Poisson(t64(25.0)), lambda k: np.exp(k * np.log(25.0) - 25.0 - sp.gammaln(k + 1))),
    (lambda: D.Binomial(40, t64(0.35)), lambda k: sp.comb(40, k) * 0.35 ** k * 0.65 ** (40 - k)),
    (lambda: D.Binomial(12, t64(0.3)), lambda k: sp.comb(12, k) * 0.3 ** k * 0.7 ** (12 - k)),
])
def test_discrete_samplers_follow_their_pmf(make, pmf):
    """Frequencies of every count against the exact pmf (a chi-square-like bound per cell)."""
    torch.manual_seed(2)
    x = make().sample((N,)).numpy().astype(np.int64)
    ks = np.arange(0, x.max() + 1)
    freq = np.bincount(x, minlength=len(ks)) / N
    p = pmf(ks)
    np.testing.assert_array_less(np.abs(freq - p), 5 * np.sqrt(p * (1 - p) / N) + 2.0 / N)


def test_mvn_samples_have_the_covariance():
    torch.manual_seed(3)
    cov = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
    loc = np.array([1.0, -1.0, 0.0])
    for d in (D.MultivariateNormal(t64(loc), covariance_matrix=t64(cov)),
              D.MultivariateNormal(t64(loc), precision_matrix=t64(np.linalg.inv(cov))),
              D.MultivariateNormal(t64(loc), scale_tril=t64(np.linalg.cholesky(cov)))):
        x = d.rsample((N,)).numpy()
        np.testing.assert_allclose(x.mean(0), loc, atol=5 * np.sqrt(2.0 / N))
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)
        np.testing.assert_allclose(d.covariance_matrix.numpy(), cov, rtol=1e-10, atol=1e-12)


def test_samples_are_reproducible_under_manual_seed():
    for make in (SAMPLED["Gamma_small"], SAMPLED["Poisson_large"], SAMPLED["Binomial_btrs"], SAMPLED["Dirichlet"]):
        torch.manual_seed(7)
        a = make().sample((5,))
        torch.manual_seed(7)
        b = make().sample((5,))
        np.testing.assert_array_equal(a.numpy(), b.numpy())


# ---------------------------------------------------------------------------
# reparameterised gradients


def test_sample_is_detached_and_rsample_carries_grad():
    loc = torch.tensor([0.0, 1.0], requires_grad=True)
    d = D.Normal(loc, 1.0)
    assert not d.sample().requires_grad
    assert d.rsample().requires_grad
    with pytest.raises(NotImplementedError):
        D.Bernoulli(0.5).rsample()


@pytest.mark.parametrize("name", ["Normal", "Uniform", "LogNormal", "Laplace", "Exponential", "Cauchy", "Gumbel"])
def test_explicit_rsample_gradient_equals_the_derivative_of_the_location_scale_map(name):
    """x = g(params, eps): the gradient of sum(x) w.r.t. each parameter equals d g / d param at the drawn eps,
    recovered from the draw itself."""
    a = torch.tensor([0.3, -1.2], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([0.7, 2.0], dtype=torch.float64, requires_grad=True)
    torch.manual_seed(4)
    if name == "Normal":
        x = D.Normal(a, b).rsample()
        expect = [np.ones(2), ((x - a) / b).detach().numpy()]
    elif name == "Uniform":
        x = D.Uniform(a, a + b).rsample()
        u = ((x - a) / b).detach().numpy()
        expect = [np.ones(2), u]
    elif name == "LogNormal":
        x = D.LogNormal(a, b).rsample()
        z = ((x.log() - a) / b).detach().numpy()
        expect = [x.detach().numpy(), x.detach().numpy() * z]
    elif name == "Laplace":
        x = D.Laplace(a, b).rsample()
        expect = [np.ones(2), ((x - a) / b).detach().numpy()]
    elif name == "Exponential":
        x = D.Exponential(b).rsample()
        expect = [np.zeros(2), (-x / b).detach().numpy()]
    elif name == "Cauchy":
        x = D.Cauchy(a, b).rsample()
        expect = [np.ones(2), ((x - a) / b).detach().numpy()]
    else:
        x = D.Gumbel(a, b).rsample()
        expect = [np.ones(2), ((x - a) / b).detach().numpy()]
    grads = torch.autograd.grad(x.sum(), [a, b], allow_unused=True)
    for g, e in zip(grads, expect):
        got = np.zeros(2) if g is None else g.numpy()
        np.testing.assert_allclose(got, e, rtol=1e-10, atol=1e-12)


def test_mvn_rsample_gradient_flows_to_loc_and_scale_tril():
    loc = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    L = torch.tensor(np.linalg.cholesky(np.array([[2.0, 0.3, 0], [0.3, 1.0, 0], [0, 0, 1.0]])), requires_grad=True)
    torch.manual_seed(5)
    x = D.MultivariateNormal(loc, scale_tril=L).rsample()
    gl, gL = torch.autograd.grad(x.sum(), [loc, L])
    np.testing.assert_allclose(gl.numpy(), np.ones(3))
    eps = np.linalg.solve(L.detach().numpy(), x.detach().numpy())
    # x = loc + L @ eps uses every entry of L (as torch: the upper part is not masked)
    np.testing.assert_allclose(gL.numpy(), np.outer(np.ones(3), eps), rtol=1e-10, atol=1e-12)


def _gamma_quantile_slope(alpha, x, h=1e-6):
    """d x / d alpha at fixed CDF level u = P(alpha, x), by central differences of scipy's inverse."""
    u = sp.gammainc(alpha, x)
    return (sp.gammaincinv(alpha + h, u) - sp.gammaincinv(alpha - h, u)) / (2 * h)


@pytest.mark.parametrize("alpha", [0.3, 1.0, 2.5, 6.0, 12.0, 60.0])
def test_gamma_rsample_gradient_is_the_implicit_quantile_derivative(alpha):
    conc = torch.full((200,), alpha, dtype=torch.float64, requires_grad=True)
    rate = torch.full((200,), 2.0, dtype=torch.float64, requires_grad=True)
    torch.manual_seed(6)
    x = D.Gamma(conc, rate).rsample()
    g_conc, g_rate = torch.autograd.grad(x.sum(), [conc, rate])
    z = (x * rate).detach().numpy()  # the standard gamma draw
    slope = _gamma_quantile_slope(alpha, z)
    ok = np.isfinite(slope) & (z > 1e-8)
    assert ok.sum() > 150
    np.testing.assert_allclose(g_conc.numpy()[ok], slope[ok] / 2.0, rtol=5e-3, atol=1e-6)
    np.testing.assert_allclose(g_rate.numpy(), -x.detach().numpy() / 2.0, rtol=1e-10)


def test_gamma_rsample_gradient_has_no_second_derivative_as_torch():
    conc = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
    x = D.Gamma(conc, 1.0).rsample()
    (g,) = torch.autograd.grad(x.sum(), conc, create_graph=True)
    with pytest.raises(RuntimeError):
        torch.autograd.grad(g.sum(), conc)


@pytest.mark.parametrize("a, b", [(0.5, 1.5), (2.0, 3.0), (7.0, 9.0)])
def test_beta_and_dirichlet_rsample_gradients_are_unbiased(a, b):
    """Monte Carlo: the mean of d x / d a over draws equals d E[x] / d a = b / (a + b)^2, and the
    mean of d log x / d a equals d (digamma(a) - digamma(a + b)) / d a."""
    n = 40000
    ca = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    cb = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    torch.manual_seed(8)
    x = D.Beta(ca, cb).rsample((n,))
    ga, gb = torch.autograd.grad(x.mean(), [ca, cb])
    per = x.detach().numpy()
    se = np.sqrt(per.var() / n) * 10 / max(a, 1.0)  # loose scale for the gradient's spread
    assert abs(ga.item() - b / (a + b) ** 2) < max(se, 0.01 * b / (a + b) ** 2 + 2e-3)
    assert abs(gb.item() + a / (a + b) ** 2) < max(se, 0.01 * a / (a + b) ** 2 + 2e-3)
    conc = torch.tensor([a, b, 1.0], dtype=torch.float64, requires_grad=True)
    torch.manual_seed(9)
    y = D.Dirichlet(conc).rsample((n,))
    (g,) = torch.autograd.grad(y[:, 0].log().mean(), conc)
    total = a + b + 1.0
    expect = np.array([sp.polygamma(1, a) - sp.polygamma(1, total), -sp.polygamma(1, total),
                       -sp.polygamma(1, total)])
    np.testing.assert_allclose(g.numpy(), expect, rtol=0.05, atol=0.01)


def test_gamma_rsample_gradient_of_the_mean_is_unbiased():
    conc = torch.tensor([0.4, 3.0], dtype=torch.float64, requires_grad=True)
    torch.manual_seed(10)
    x = D.Gamma(conc, 2.0).rsample((N,))
    (g,) = torch.autograd.grad(x.mean(0).sum(), conc)
    np.testing.assert_allclose(g.numpy(), [0.5, 0.5], rtol=0.03)


# ---------------------------------------------------------------------------
# KL registry


class _MyNormal(D.Normal):
    pass


class _MyOtherNormal(_MyNormal):
    pass


def test_register_kl_uses_the_most_specific_registration():
    calls = []

    @D.register_kl(_MyNormal, D.Normal)
    def _kl_mine_normal(p, q):
        calls.append("mine-normal")
        return torch.zeros(p.batch_shape)

    p, q = _MyOtherNormal(0.0, 1.0), D.Normal(1.0, 2.0)
    assert float(D.kl_divergence(p, q)) == 0.0
    assert calls == ["mine-normal"]
    # the plain pair still dispatches to Normal-Normal
    kl = D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 2.0))
    assert abs(float(kl) - (math.log(2.0) + (1 + 1) / 8 - 0.5)) < 1e-7


def test_register_kl_warns_on_ambiguous_matches():
    class A(D.Normal):
        pass

    class B(D.Normal):
        pass

    class AB(A, B):
        pass

    D.register_kl(A, D.Normal)(lambda p, q: torch.zeros(()))
    D.register_kl(D.Normal, B)(lambda p, q: torch.ones(()))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        D.kl_divergence(A(0.0, 1.0), B(0.0, 1.0))
    assert any("Ambiguous kl_divergence" in str(x.message) for x in w)


def test_kl_of_unregistered_pair_raises_not_implemented():
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.StudentT(3.0), D.Normal(0.0, 1.0))


def test_kl_normal_normal_matches_a_monte_carlo_estimate():
    torch.manual_seed(11)
    p, q = D.Normal(t64(0.5), t64(1.2)), D.Normal(t64(-0.3), t64(0.8))
    x = p.sample((N * 5,))
    mc = (p.log_prob(x) - q.log_prob(x)).mean().item()
    assert abs(mc - D.kl_divergence(p, q).item()) < 0.02


# ---------------------------------------------------------------------------
# validation, transforms, torch.func and meta


def test_validate_args_switches():
    with pytest.raises(ValueError, match="Expected parameter scale"):
        D.Normal(0.0, -1.0)
    D.Normal(0.0, -1.0, validate_args=False)  # no check when asked not to
    D.Distribution.set_default_validate_args(False)
    try:
        assert not D.Normal(0.0, 1.0)._validate_args
        D.Normal(0.0, -1.0)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="support"):
        D.Gamma(1.0, 1.0).log_prob(torch.tensor(-1.0))
    with pytest.raises(ValueError, match="must be a Tensor"):
        D.Normal(0.0, 1.0).log_prob(0.5)


def test_transformed_distribution_equals_lognormal():
    x = t64([0.3, 1.0, 4.0])
    base = D.TransformedDistribution(D.Normal(t64(0.2), t64(0.7)), [T.ExpTransform()])
    np.testing.assert_allclose(base.log_prob(x).numpy(), D.LogNormal(t64(0.2), t64(0.7)).log_prob(x).numpy(), rtol=1e-12)
    torch.manual_seed(12)
    assert bool((base.sample((10,)) > 0).all())


def test_transform_inverse_roundtrip_and_caching():
    t = T.ComposeTransform([T.AffineTransform(1.0, 2.0), T.SigmoidTransform()], cache_size=1)
    x = t64([-1.0, 0.0, 2.0])
    y = t(x)
    assert t.inv(y) is x  # cached: the exact input comes back
    np.testing.assert_allclose(T.SigmoidTransform().inv(y).numpy(), (1 + 2 * x).numpy(), rtol=1e-12)
    assert t.inv.inv is t
    ladj = t.log_abs_det_jacobian(x, y)
    parts = T.AffineTransform(1.0, 2.0).log_abs_det_jacobian(x, 1 + 2 * x) + \
        T.SigmoidTransform().log_abs_det_jacobian(1 + 2 * x, y)
    np.testing.assert_allclose(ladj.numpy(), parts.numpy(), rtol=1e-12)


def test_transform_to_maps_reals_into_each_support():
    torch.manual_seed(13)
    x = torch.randn(4, 6, dtype=torch.float64) * 3
    for c in (constraints.positive, constraints.unit_interval, constraints.interval(-2.0, 5.0),
              constraints.greater_than(3.0), constraints.simplex, constraints.lower_cholesky,
              constraints.positive_definite):
        y = D.transform_to(c)(x if c is not constraints.lower_cholesky and c is not constraints.positive_definite
                           else x[:, :4])
        assert bool(c.check(y).all()), c


def test_log_prob_works_under_torch_func_grad_and_vmap():
    m, s = t64([0.0, 1.0]), t64([1.0, 2.0])
    v = t64([0.5, -0.5])
    g = torch.func.grad(lambda m: D.Normal(m, s).log_prob(v).sum())(m)
    np.testing.assert_allclose(g.numpy(), ((v - m) / s ** 2).numpy(), rtol=1e-12)
    out = torch.func.vmap(lambda x: D.Normal(m, s).log_prob(x))(torch.ones(3, 2, dtype=torch.float64))
    assert tuple(out.shape) == (3, 2)
    gg = torch.func.grad(lambda c: D.Gamma(c, 1.0).log_prob(t64(2.0)))(t64(3.0))
    assert abs(gg.item() - (math.log(2.0) - sp.digamma(3.0))) < 1e-10


def test_distributions_on_meta_tensors_give_shapes():
    meta = dict(device="meta")
    d = D.Normal(torch.zeros(2, 3, **meta), torch.ones(2, 3, **meta), validate_args=False)
    assert tuple(d.rsample((4,)).shape) == (4, 2, 3)
    assert d.log_prob(torch.zeros(2, 3, **meta)).device.type == "meta"
    g = D.Gamma(torch.ones(5, **meta), torch.ones(5, **meta), validate_args=False)
    assert tuple(g.rsample((2,)).shape) == (2, 5)
    mvn = D.MultivariateNormal(torch.zeros(3, **meta), torch.eye(3, **meta), validate_args=False)
    assert tuple(mvn.rsample((2,)).shape) == (2, 3)
    assert tuple(D.Poisson(torch.ones(2, **meta), validate_args=False).sample((3,)).shape) == (3, 2)


def test_independent_reinterprets_batch_dims():
    d = D.Independent(D.Normal(torch.zeros(2, 3), torch.ones(2, 3)), 1)
    assert tuple(d.batch_shape) == (2,) and tuple(d.event_shape) == (3,)
    lp = d.log_prob(torch.zeros(2, 3))
    np.testing.assert_allclose(lp.numpy(), np.full(2, -1.5 * math.log(2 * math.pi)), rtol=1e-6)
    assert isinstance(d.batch_shape, torch.Size) and isinstance(d.event_shape, torch.Size)
