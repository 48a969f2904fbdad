"""Differential tests for torch.distributions against PyTorch's recorded answers: log_prob, cdf, icdf, entropy,
moments, shapes, support enumeration, expand, gradients of log densities, KL divergences, transforms and
biject_to/transform_to, argument and sample validation errors, and the implicit gamma reparameterisation
gradient (torch._standard_gamma_grad). Samplers are random, so only the shapes and dtypes of draws are compared
here (their statistics are tested in tests/test_distributions.py).
Regenerate with `python tests/record_goldens.py distributions` where torch is installed (see tests/_goldens.py)."""
import numpy as np
import pytest

import mindtorch_v2 as mt
from _goldens import GExc, Goldens, golden_fixtures, is_torch, torch_lib
from test_vs_torch_eager import compare_with

from mindtorch_v2.distributions._samplers import standard_gamma_grad

GOLDEN = Goldens("vs_torch_distributions")
_golden_file, _golden_case = golden_fixtures(GOLDEN)
compare = compare_with(GOLDEN)

RTOL, ATOL = 1e-6, 1e-9


def rng(seed):
    return np.random.default_rng(seed)


def pos(shape, seed, low=0.5, high=3.0):
    return rng(seed).uniform(low, high, size=shape)


def real(shape, seed):
    return rng(seed).standard_normal(shape)


def unit(shape, seed, low=0.05, high=0.95):
    return rng(seed).uniform(low, high, size=shape)


def simplex(shape, seed):
    a = rng(seed).uniform(0.2, 1.0, size=shape)
    return a / a.sum(-1, keepdims=True)


def spd(n, seed, batch=()):
    a = rng(seed).standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def tril(n, seed, batch=()):
    a = np.tril(rng(seed).standard_normal(batch + (n, n)), -1)
    return a + np.eye(n) * rng(seed + 1).uniform(0.5, 2.0, size=batch + (n,))[..., None, :]


B = (2, 3)  # batch shape of most cases

# name -> (builder(D, *params), params, a value in the support (batch-shaped), its discreteness)
CASES = {
    "Normal": (lambda D, m, s: D.Normal(m, s), (real(B, 1), pos(B, 2)), real(B, 3)),
    "Bernoulli_probs": (lambda D, p: D.Bernoulli(probs=p), (unit(B, 4),), rng(5).integers(0, 2, B) * 1.0),
    "Bernoulli_logits": (lambda D, lg: D.Bernoulli(logits=lg), (real(B, 6),), rng(7).integers(0, 2, B) * 1.0),
    "Categorical_probs": (lambda D, p: D.Categorical(probs=p), (simplex(B + (4,), 8),), rng(9).integers(0, 4, B)),
    "Categorical_logits": (lambda D, lg: D.Categorical(logits=lg), (real(B + (4,), 10),), rng(11).integers(0, 4, B)),
    "Uniform": (lambda D, lo, w: D.Uniform(lo, lo + w), (real(B, 12), pos(B, 13)), None),
    "Beta": (lambda D, a, b: D.Beta(a, b), (pos(B, 14, 0.3, 4.0), pos(B, 15, 0.3, 4.0)), unit(B, 16)),
    "Gamma": (lambda D, a, r: D.Gamma(a, r), (pos(B, 17, 0.3, 4.0), pos(B, 18)), pos(B, 19, 0.1, 4.0)),
    "Dirichlet": (lambda D, c: D.Dirichlet(c), (pos(B + (4,), 20, 0.3, 4.0),), simplex(B + (4,), 21)),
    "MVN_cov": (lambda D, m, c: D.MultivariateNormal(m, covariance_matrix=c), (real((2, 3), 22), spd(3, 23)),
                real((2, 3), 24)),
    "MVN_prec": (lambda D, m, p: D.MultivariateNormal(m, precision_matrix=p), (real((3,), 25), spd(3, 26, (2,))),
                 real((2, 3), 27)),
    "MVN_tril": (lambda D, m, t: D.MultivariateNormal(m, scale_tril=t), (real((2, 3), 28), tril(3, 29, (2,))),
                 real((2, 3), 30)),
    "Independent": (lambda D, m, s: D.Independent(D.Normal(m, s), 1), (real(B, 31), pos(B, 32)), real(B, 33)),
    "LogNormal": (lambda D, m, s: D.LogNormal(m, s), (real(B, 34), pos(B, 35)), pos(B, 36)),
    "Exponential": (lambda D, r: D.Exponential(r), (pos(B, 37),), pos(B, 38, 0.1, 4.0)),
    "Laplace": (lambda D, m, s: D.Laplace(m, s), (real(B, 39), pos(B, 40)), real(B, 41)),
    "OneHotCategorical": (lambda D, p: D.OneHotCategorical(probs=p), (simplex(B + (4,), 42),),
                          np.eye(4)[rng(43).integers(0, 4, B)]),
    "Poisson": (lambda D, r: D.Poisson(r), (pos(B, 44, 0.5, 20.0),), rng(45).integers(0, 15, B) * 1.0),
    "Binomial": (lambda D, p: D.Binomial(10, probs=p), (unit(B, 46),), rng(47).integers(0, 11, B) * 1.0),
    "Binomial_tensor_count": (lambda D, n, lg: D.Binomial(n, logits=lg), (np.array([5.0, 8.0, 12.0]), real(B, 48)),
                              np.array([[1.0, 8.0, 3.0], [5.0, 0.0, 12.0]])),
    "StudentT": (lambda D, df, m, s: D.StudentT(df, m, s), (pos(B, 49, 1.5, 6.0), real(B, 50), pos(B, 51)),
                 real(B, 52)),
    "Cauchy": (lambda D, m, s: D.Cauchy(m, s), (real(B, 53), pos(B, 54)), real(B, 55)),
    "Chi2": (lambda D, df: D.Chi2(df), (pos(B, 60, 1.0, 6.0),), pos(B, 61)),
    "Gumbel": (lambda D, m, s: D.Gumbel(m, s), (real(B, 68), pos(B, 69)), real(B, 70)),
    "TransformedDistribution": (
        lambda D, m, s: D.TransformedDistribution(D.Normal(m, s), [D.transforms.AffineTransform(1.0, 2.0),
                                                                   D.transforms.ExpTransform()]),
        (real(B, 103), pos(B, 104)), pos(B, 105)),
}
CASES["Uniform"] = (CASES["Uniform"][0], CASES["Uniform"][1],
                    CASES["Uniform"][1][0] + CASES["Uniform"][1][1] * unit(B, 106))


def mt_or_t(D):
    """The library a distributions module belongs to."""
    return torch_lib() if D.__name__.startswith("torch.") else mt


def build(L, name, params):
    return CASES[name][0](L.distributions, *params)


STATS = ("mean", "mode", "variance", "stddev")


@pytest.mark.parametrize("name", sorted(CASES))
def test_moments_entropy_and_shapes_match_torch(name):
    params = CASES[name][1]
    compare(lambda L, *p: (build(L, name, p).batch_shape, build(L, name, p).event_shape), *params,
            what=f"{name} shapes")
    for stat in STATS:
        compare(lambda L, *p: getattr(build(L, name, p), stat), *params, what=f"{name}.{stat}", rtol=RTOL,
                atol=ATOL)
    compare(lambda L, *p: build(L, name, p).entropy(), *params, what=f"{name}.entropy()", rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob_cdf_icdf_match_torch(name):
    params, value = CASES[name][1], CASES[name][2]
    compare(lambda L, v, *p: build(L, name, p).log_prob(v), value, *params, what=f"{name}.log_prob", rtol=RTOL,
            atol=ATOL)
    compare(lambda L, v, *p: build(L, name, p).cdf(v), value, *params, what=f"{name}.cdf", rtol=RTOL, atol=ATOL)
    q = unit(B, 200)
    compare(lambda L, q, *p: build(L, name, p).icdf(q), q, *params, what=f"{name}.icdf", rtol=RTOL, atol=ATOL)
    compare(lambda L, v, *p: build(L, name, p).support.check(v), value, *params, what=f"{name}.support.check")


@pytest.mark.parametrize("name", sorted(CASES))
def test_sample_shapes_dtypes_and_expand_match_torch(name):
    params = CASES[name][1]
    compare(lambda L, *p: (build(L, name, p).sample().shape, build(L, name, p).sample((4,)).dtype,
                           build(L, name, p).sample((4, 1)).shape), *params, what=f"{name}.sample")
    compare(lambda L, *p: build(L, name, p).rsample((2,)).shape, *params, what=f"{name}.rsample")
    compare(lambda L, *p: build(L, name, p).has_rsample, *params, what=f"{name}.has_rsample")

    def expanded(L, *p):
        d = build(L, name, p)
        e = d.expand((5,) + tuple(d.batch_shape))
        return e.batch_shape, e.event_shape, e.sample((2,)).shape, e.mean
    compare(expanded, *params, what=f"{name}.expand", rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob_gradients_match_torch(name):
    params, value = CASES[name][1], CASES[name][2]

    def grads(L, v, *p):
        leaves = [x.requires_grad_() for x in p]
        d = build(L, name, leaves)
        loss = d.log_prob(v).sum()
        return L.autograd.grad(loss, leaves, allow_unused=True)
    compare(grads, value, *params, what=f"{name} d log_prob / d params", rtol=1e-5, atol=1e-8)


ENUMERABLE = ["Bernoulli_probs", "Categorical_probs", "OneHotCategorical", "Binomial"]


@pytest.mark.parametrize("name", ENUMERABLE)
def test_enumerate_support_matches_torch(name):
    params = CASES[name][1]
    compare(lambda L, *p: build(L, name, p).enumerate_support(), *params, what=f"{name} enumerate")
    compare(lambda L, *p: build(L, name, p).enumerate_support(expand=False), *params, what=f"{name} enumerate")


def test_float32_parameters_give_float32_results_like_torch():
    m, s, v = (real(B, 1).astype(np.float32), pos(B, 2).astype(np.float32), real(B, 3).astype(np.float32))
    compare(lambda L, m, s, v: (L.distributions.Normal(m, s).log_prob(v), L.distributions.Normal(m, s).entropy(),
                                L.distributions.Normal(m, s).sample().dtype), m, s, v)
    compare(lambda L, m, s: L.distributions.Normal(m, 1.0).log_prob(0.5), m, s)
    compare(lambda L, m, s: L.distributions.Gamma(s, 2.0).rsample().dtype, m, s)
    compare(lambda L: (L.distributions.Normal(0.0, 1.0).log_prob(L.tensor(0.5)), L.distributions.Normal(0.0, 1.0)
                       .batch_shape))
    compare(lambda L: L.distributions.Bernoulli(0.3).log_prob(L.tensor(1.0)))


# ---------------------------------------------------------------------------
# KL divergence


KL_CASES = {
    "Normal_Normal": ("Normal", "Normal"),
    "Bernoulli_Bernoulli": ("Bernoulli_probs", "Bernoulli_logits"),
    "Categorical_Categorical": ("Categorical_probs", "Categorical_logits"),
    "Uniform_Uniform": ("Uniform", "Uniform"),
    "Beta_Beta": ("Beta", "Beta"),
    "Gamma_Gamma": ("Gamma", "Gamma"),
    "Dirichlet_Dirichlet": ("Dirichlet", "Dirichlet"),
    "MVN_MVN": ("MVN_cov", "MVN_tril"),
    "MVN_prec_MVN": ("MVN_prec", "MVN_cov"),
    "Independent_Independent": ("Independent", "Independent"),
    "Exponential_Exponential": ("Exponential", "Exponential"),
    "Laplace_Laplace": ("Laplace", "Laplace"),
    "OneHot_OneHot": ("OneHotCategorical", "OneHotCategorical"),
    "Poisson_Poisson": ("Poisson", "Poisson"),
    "Binomial_Binomial": ("Binomial", "Binomial"),
    "Exponential_Gamma": ("Exponential", "Gamma"),
    "Exponential_Normal": ("Exponential", "Normal"),
    "Uniform_Normal": ("Uniform", "Normal"),
    "Uniform_Gamma": ("Uniform", "Gamma"),
    "Gamma_Normal": ("Gamma", "Normal"),
    "Beta_Normal": ("Beta", "Normal"),
    "Normal_Gumbel": ("Normal", "Gumbel"),
    "Normal_Laplace": ("Normal", "Laplace"),
    "Laplace_Normal": ("Laplace", "Normal"),
    "Uniform_Beta": ("Beta", "Uniform"),
    "Gumbel_Gumbel": ("Gumbel", "Gumbel"),
    "Cauchy_Cauchy": ("Cauchy", "Cauchy"),
    "LogNormal_LogNormal": ("LogNormal", "LogNormal"),
    "Normal_Beta_infinite": ("Normal", "Beta"),
    "Gamma_Uniform_infinite": ("Gamma", "Uniform"),
}


def _shifted(params, seed):
    """Other parameters of the same kind (positive stay positive, simplices stay simplices)."""
    out = []
    for i, p in enumerate(params):
        if p.ndim and np.allclose(p.sum(-1), 1) and (p > 0).all():
            out.append(simplex(p.shape, seed + i))
        elif p.ndim >= 2 and p.shape[-1] == p.shape[-2] and np.allclose(p, np.swapaxes(p, -1, -2)):
            out.append(spd(p.shape[-1], seed + i, p.shape[:-2]))
        elif p.ndim >= 2 and p.shape[-1] == p.shape[-2] and np.allclose(p, np.tril(p)):
            out.append(tril(p.shape[-1], seed + i, p.shape[:-2]))
        elif (p > 0).all() and (p < 1).all():
            out.append(unit(p.shape, seed + i))
        elif (p > 0).all():
            out.append(p * pos(p.shape, seed + i, 0.6, 1.6))
        else:
            out.append(p + 0.5 * real(p.shape, seed + i))
    return out


@pytest.mark.parametrize("case", sorted(KL_CASES))
def test_kl_divergence_matches_torch(case):
    pn, qn = KL_CASES[case]
    pp, qp = CASES[pn][1], _shifted(CASES[qn][1], 300)
    k = len(pp)

    def kl(L, *a):
        return L.distributions.kl_divergence(build(L, pn, a[:k]), build(L, qn, a[k:]))
    compare(kl, *pp, *qp, what=f"KL({pn} || {qn})", rtol=1e-6, atol=1e-9)


def test_kl_of_unregistered_pair_raises_not_implemented_like_torch():
    compare(lambda L: L.distributions.kl_divergence(L.distributions.StudentT(3.0), L.distributions.Normal(0.0, 1.0)))
    compare(lambda L: L.distributions.kl_divergence(L.distributions.Poisson(3.0), L.distributions.Bernoulli(0.5)))


def test_kl_of_transformed_distributions_matches_torch():
    def kl(L, m, s):
        D = L.distributions
        t = D.transforms.AffineTransform(1.0, 2.0)
        return D.kl_divergence(D.TransformedDistribution(D.Normal(m, s), [t]),
                               D.TransformedDistribution(D.Normal(m * 0.5, s * 2), [t]))
    compare(kl, real(B, 1), pos(B, 2), rtol=RTOL, atol=ATOL)


# ---------------------------------------------------------------------------
# transforms, biject_to and transform_to


TRANSFORMS = {
    "Exp": (lambda T: T.ExpTransform(), real(B, 1)),
    "Affine": (lambda T: T.AffineTransform(0.5, -2.0), real(B, 2)),
    "Affine_event": (lambda T: T.AffineTransform(0.5, 3.0, event_dim=1), real(B, 3)),
    "Sigmoid": (lambda T: T.SigmoidTransform(), real(B, 4)),
    "Tanh": (lambda T: T.TanhTransform(), real(B, 5)),
    "Softmax": (lambda T: T.SoftmaxTransform(), real(B, 6)),
    "Power": (lambda T: T.PowerTransform(2.5), pos(B, 7)),
    "Abs": (lambda T: T.AbsTransform(), real(B, 8)),
    "Softplus": (lambda T: T.SoftplusTransform(), real(B, 9)),
    "StickBreaking": (lambda T: T.StickBreakingTransform(), real(B, 10)),
    "LowerCholesky": (lambda T: T.LowerCholeskyTransform(), real((2, 3, 3), 11)),
    "CorrCholesky": (lambda T: T.CorrCholeskyTransform(), real((2, 3), 12)),
    "Compose": (lambda T: T.ComposeTransform([T.AffineTransform(1.0, 2.0), T.ExpTransform()]), real(B, 13)),
    "Compose_cache": (lambda T: T.ComposeTransform([T.SigmoidTransform(), T.AffineTransform(-1.0, 2.0)],
                                                   cache_size=1), real(B, 14)),
    "Inverse_Exp": (lambda T: T.ExpTransform().inv, pos(B, 15)),
    "Reshape": (lambda T: T.ReshapeTransform((2, 3), (6,)), real((4, 2, 3), 16)),
    "Independent": (lambda T: T.IndependentTransform(T.ExpTransform(), 1), real(B, 17)),
    "Cumulative": (lambda T: T.CumulativeDistributionTransform(mt_or_t_dist(T).Normal(0.0, 1.0)), real(B, 18)),
    "Stack": (lambda T: T.StackTransform([T.ExpTransform(), T.SigmoidTransform()], dim=0), real((2, 3), 19)),
    "Cat": (lambda T: T.CatTransform([T.ExpTransform(), T.SigmoidTransform()], dim=1, lengths=[1, 2]),
            real((2, 3), 20)),
}


def mt_or_t_dist(T):
    return torch_lib().distributions if T.__name__.startswith("torch.") else mt.distributions


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transform_forward_inverse_and_jacobian_match_torch(name):
    make, x = TRANSFORMS[name]

    def run(L, x):
        t = make(L.distributions.transforms)
        y = t(x)
        return (y, t.inv(y), t.log_abs_det_jacobian(x, y), t.domain.event_dim, t.codomain.event_dim,
                t.bijective, t.sign if name in ("Exp", "Sigmoid", "Tanh", "Affine", "Power", "Softplus") else 0,
                t.forward_shape(tuple(x.shape)), t.inverse_shape(tuple(y.shape)), t.codomain.check(y))
    compare(run, x, what=name, rtol=1e-6, atol=1e-9)

    def grad(L, x):
        x = x.requires_grad_()
        t = make(L.distributions.transforms)
        y = t(x)
        return L.autograd.grad(y.sum() + t.log_abs_det_jacobian(x, y).sum(), x)
    compare(grad, x, what=f"{name} grad", rtol=1e-6, atol=1e-9)


def test_transform_equality_and_sign_errors_match_torch():
    compare(lambda L: (L.distributions.transforms.ExpTransform() == L.distributions.transforms.ExpTransform(),
                       L.distributions.transforms.ExpTransform().inv.inv == L.distributions.transforms.ExpTransform(),
                       L.distributions.transforms.AffineTransform(0.0, 2.0).sign,
                       L.distributions.transforms.AffineTransform(0.0, -2.0).sign))
    compare(lambda L: L.distributions.transforms.AbsTransform().sign)
    compare(lambda L: L.distributions.transforms.AbsTransform().inv(L.tensor([1.0, -2.0])))
    compare(lambda L: L.distributions.transforms.ExpTransform(cache_size=2))


CONSTRAINTS = {
    "real": (lambda C: C.real, real(B, 1)),
    "positive": (lambda C: C.positive, real(B, 2)),
    "nonnegative": (lambda C: C.nonnegative, real(B, 3)),
    "greater_than": (lambda C: C.greater_than(1.5), real(B, 4)),
    "less_than": (lambda C: C.less_than(-0.5), real(B, 5)),
    "interval": (lambda C: C.interval(-1.0, 3.0), real(B, 6)),
    "half_open_interval": (lambda C: C.half_open_interval(-1.0, 3.0), real(B, 6)),
    "unit_interval": (lambda C: C.unit_interval, real(B, 7)),
    "simplex": (lambda C: C.simplex, real((2, 4), 8)),
    "lower_cholesky": (lambda C: C.lower_cholesky, real((2, 6), 9)),
    "positive_definite": (lambda C: C.positive_definite, real((2, 6), 10)),
    "corr_cholesky": (lambda C: C.corr_cholesky, real((2, 3), 11)),
    "independent_real": (lambda C: C.independent(C.real, 1), real(B, 12)),
    "independent_positive": (lambda C: C.independent(C.positive, 1), real(B, 13)),
    "real_vector": (lambda C: C.real_vector, real(B, 14)),
    "positive_semidefinite": (lambda C: C.positive_semidefinite, real((2, 6), 15)),
    "lower_triangular": (lambda C: C.lower_triangular, real((2, 6), 16)),
}


@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
def test_biject_to_and_transform_to_match_torch(name):
    make, x = CONSTRAINTS[name]

    def run(L, x, which):
        C = L.distributions.constraints
        t = getattr(L.distributions, which)(make(C))
        y = t(x)
        return y, t.inv(y), t.log_abs_det_jacobian(x, y), make(C).check(y), make(C).event_dim
    for which in ("biject_to", "transform_to"):
        compare(run, x, which, what=f"{which}({name})", rtol=1e-6, atol=1e-9)


def test_constraint_checks_and_reprs_match_torch():
    v = np.array([[-1.0, 0.0, 0.5, 1.0, 2.0]])
    m = spd(3, 1)

    def checks(L, v, m):
        C = L.distributions.constraints
        return (C.real.check(v), C.positive.check(v), C.nonnegative.check(v), C.unit_interval.check(v),
                C.boolean.check(v), C.nonnegative_integer.check(v), C.positive_integer.check(v),
                C.integer_interval(0, 1).check(v), C.interval(0.0, 1.0).check(v), C.half_open_interval(0, 1).check(v),
                C.greater_than_eq(0.5).check(v), C.simplex.check(L.softmax(v, -1)), C.positive_definite.check(m),
                C.lower_cholesky.check(L.linalg.cholesky(m)), C.corr_cholesky.check(L.linalg.cholesky(m)),
                C.square.check(m), C.symmetric.check(m), C.one_hot.check(L.eye(3)), C.real_vector.check(v),
                str(C.positive), str(C.interval(0.0, 1.0)), str(C.integer_interval(0, 3)), repr(C.simplex),
                C.positive.is_discrete, C.nonnegative_integer.is_discrete, C.simplex.event_dim,
                C.independent(C.real, 2).event_dim)
    compare(checks, v, m)


# ---------------------------------------------------------------------------
# validation: errors on bad parameters and out-of-support values


BAD_ARGS = {
    "Normal_scale": lambda D, L: D.Normal(0.0, L.tensor([1.0, -1.0]), validate_args=True),
    "Normal_nan_loc": lambda D, L: D.Normal(L.tensor(float("nan")), 1.0, validate_args=True),
    "Bernoulli_probs": lambda D, L: D.Bernoulli(L.tensor([1.5]), validate_args=True),
    "Bernoulli_both": lambda D, L: D.Bernoulli(probs=L.tensor([0.5]), logits=L.tensor([0.0])),
    "Bernoulli_neither": lambda D, L: D.Bernoulli(),
    "Categorical_probs": lambda D, L: D.Categorical(probs=L.tensor([0.5, -0.5]), validate_args=True),
    "Categorical_scalar": lambda D, L: D.Categorical(probs=L.tensor(0.5)),
    "Uniform_bounds": lambda D, L: D.Uniform(L.tensor(2.0), L.tensor(1.0), validate_args=True),
    "Beta_conc": lambda D, L: D.Beta(L.tensor(-1.0), L.tensor(1.0), validate_args=True),
    "Gamma_rate": lambda D, L: D.Gamma(L.tensor(1.0), L.tensor(0.0), validate_args=True),
    "Dirichlet_scalar": lambda D, L: D.Dirichlet(L.tensor(1.0)),
    "MVN_cov_not_pd": lambda D, L: D.MultivariateNormal(L.zeros(2), covariance_matrix=L.tensor([[1.0, 2.0],
                                                                                              [2.0, 1.0]]),
                                                       validate_args=True),
    "MVN_none": lambda D, L: D.MultivariateNormal(L.zeros(2)),
    "MVN_two": lambda D, L: D.MultivariateNormal(L.zeros(2), covariance_matrix=L.eye(2), scale_tril=L.eye(2)),
    "MVN_scalar_loc": lambda D, L: D.MultivariateNormal(L.tensor(0.0), covariance_matrix=L.eye(2)),
    "MVN_1d_cov": lambda D, L: D.MultivariateNormal(L.zeros(2), covariance_matrix=L.ones(2)),
    "Independent_too_many": lambda D, L: D.Independent(D.Normal(L.zeros(2), 1.0), 2),
    "Binomial_count": lambda D, L: D.Binomial(L.tensor(-1.0), L.tensor(0.5), validate_args=True),
    "Poisson_rate": lambda D, L: D.Poisson(L.tensor(-1.0), validate_args=True),
    "Exponential_rate": lambda D, L: D.Exponential(L.tensor(-1.0), validate_args=True),
    "Transformed_bad_transform": lambda D, L: D.TransformedDistribution(D.Normal(0.0, 1.0), [1]),
    "Normal_string": lambda D, L: D.Normal("a", 1.0),
}


@pytest.mark.parametrize("name", sorted(BAD_ARGS))
def test_invalid_parameters_raise_like_torch(name):
    golden = GOLDEN(lambda: _error_of(torch_lib(), BAD_ARGS[name]))
    if GOLDEN.recording:
        return
    err = _error_of(mt, BAD_ARGS[name])
    assert isinstance(golden, GExc), golden
    assert golden.matches(err, exact=True), f"torch raised {golden}; mindtorch raised {type(err).__name__}({err})"
    assert str(err).splitlines()[0].replace("mindtorch_v2", "torch") == golden.msg.splitlines()[0], (str(err), golden)


def _error_of(L, make):
    try:
        make(L.distributions, L)
    except Exception as e:  # noqa: BLE001 - the error is the result
        return e
    return None


BAD_SAMPLES = {
    "Normal_shape": ("Normal", lambda L: L.zeros(5)),
    "Normal_nan": ("Normal", lambda L: L.full((2, 3), float("nan"), dtype=L.float64)),
    "Gamma_negative": ("Gamma", lambda L: -L.ones(2, 3, dtype=L.float64)),
    "Beta_one": ("Beta", lambda L: L.ones(2, 3, dtype=L.float64) * 1.5),
    "Bernoulli_half": ("Bernoulli_probs", lambda L: L.full((2, 3), 0.5, dtype=L.float64)),
    "Categorical_out_of_range": ("Categorical_probs", lambda L: L.full((2, 3), 4)),
    "Dirichlet_not_simplex": ("Dirichlet", lambda L: L.ones(2, 3, 4, dtype=L.float64)),
    "Uniform_outside": ("Uniform", lambda L: L.full((2, 3), 100.0, dtype=L.float64)),
    "MVN_event_shape": ("MVN_cov", lambda L: L.zeros(2, 4, dtype=L.float64)),
    "Poisson_fraction": ("Poisson", lambda L: L.full((2, 3), 1.5, dtype=L.float64)),
    "not_a_tensor": ("Normal", lambda L: 0.5),
    "broadcastable_ok": ("Normal", lambda L: L.zeros(4, 1, 3, dtype=L.float64)),
}


@pytest.mark.parametrize("name", sorted(BAD_SAMPLES))
def test_log_prob_of_values_outside_support_raises_like_torch(name):
    case, value = BAD_SAMPLES[name]
    params = CASES[case][1]

    def run(L, *p):
        d = CASES[case][0](L.distributions, *p)
        d._validate_args = True
        return d.log_prob(value(L))
    golden = GOLDEN(lambda: _result_or_error(torch_lib(), run, params))
    if GOLDEN.recording:
        return
    res = _result_or_error(mt, run, params)
    if isinstance(golden, GExc):
        assert isinstance(res, Exception), f"torch raised {golden}, mindtorch returned {res!r}"
        assert golden.matches(res, exact=True), f"torch raised {golden}; mindtorch raised {type(res).__name__}({res})"
        assert str(res).splitlines()[0] == golden.msg.splitlines()[0]
    else:
        assert not isinstance(res, Exception), res
        np.testing.assert_allclose(res.detach().numpy(), golden.data, rtol=RTOL, atol=ATOL)


def _result_or_error(L, fn, params):
    try:
        return fn(L, *[L.from_numpy(p.copy()) for p in params])
    except Exception as e:  # noqa: BLE001
        return e


def test_default_validate_args_switch_matches_torch():
    def run(L):
        D = L.distributions
        D.Distribution.set_default_validate_args(False)
        try:
            lenient = D.Normal(0.0, -1.0).scale  # no check
        finally:
            D.Distribution.set_default_validate_args(True)
        err = _error_of(L, lambda D, L: D.Normal(0.0, -1.0))
        return lenient, type(err).__name__, str(err).splitlines()[0]
    compare(run)


# ---------------------------------------------------------------------------
# the implicit gamma reparameterisation gradient


def test_standard_gamma_grad_matches_torch():
    """Every branch of torch's approximation: x < 0.8 (series), alpha > 8 near and away from the mode
    (saddle point), and the rational fit."""
    alpha = np.array([0.1, 0.5, 1.0, 2.0, 3.5, 7.9, 8.5, 9.0, 12.0, 20.0, 50.0, 100.0])
    x = np.array([0.01, 0.3, 0.79, 1.5, 4.0, 12.0])
    a, xx = np.meshgrid(alpha, x)
    big = np.array([9.0, 20.0, 50.0, 100.0])
    a = np.concatenate([a.ravel(), big, big, big])
    xx = np.concatenate([xx.ravel(), big * 1.02, big * 0.6, big * 1.5])

    def grad(L, a, x):
        if is_torch(L):
            return L._standard_gamma_grad(a, x)
        return standard_gamma_grad(a, x)
    compare(grad, a, xx, rtol=1e-9, atol=1e-12)
    compare(grad, a.astype(np.float32), xx.astype(np.float32), rtol=1e-5, atol=1e-7)
