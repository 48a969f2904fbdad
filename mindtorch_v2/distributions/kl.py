"""KL(p || q): a registry of closed forms keyed by (type of p, type of q). A lookup takes the most specific
registered pair both arguments are instances of; two incomparable matches warn and the one most specific in
p wins."""
import math
import warnings
from functools import lru_cache

from . import _torch as torch
from .continuous import Beta, Cauchy, Exponential, Gamma, Gumbel, Laplace, Normal, Uniform
from .discrete import Bernoulli, Binomial, Categorical, OneHotCategorical, Poisson
from .multivariate import Dirichlet, MultivariateNormal
from .transformed import Independent, TransformedDistribution
from .utils import sum_rightmost

__all__ = ["register_kl", "kl_divergence"]

_REGISTRY = {}
_EULER = 0.57721566490153286061
_F = torch.nn.functional


def register_kl(type_p, type_q):
    """Decorator registering fn(p, q) as KL(p || q) for instances of type_p and type_q."""
    def decorator(fn):
        _REGISTRY[type_p, type_q] = fn
        _lookup.cache_clear()
        return fn
    return decorator


@lru_cache(maxsize=None)
def _lookup(type_p, type_q):
    matches = [(p, q) for p, q in _REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return None
    # keep the pairs no other match is more specific than (in both places, strictly in one)
    best = [m for m in matches if not any(o != m and issubclass(o[0], m[0]) and issubclass(o[1], m[1])
                                          for o in matches)]
    best.sort(key=lambda m: (type_p.__mro__.index(m[0]), type_q.__mro__.index(m[1])))
    if len(best) > 1:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({best[0][0].__name__}, {best[1][1].__name__})", RuntimeWarning)
    return _REGISTRY[best[0]]


def kl_divergence(p, q):
    """KL(p || q) over the batch shape."""
    fn = _lookup(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
                                  f"{q.__class__.__name__}")
    return fn(p, q)


def _inf_where(mask, value):
    return torch.where(mask, torch.full_like(value, math.inf), value)


def _infinite(p, q):
    """Supports that do not nest: p puts mass where q has none."""
    like = p.mean if not isinstance(p, Normal) else p.loc
    return torch.full_like(like, math.inf).expand(p.batch_shape)


def _normal_log_density_mean(q, mean, second_moment):
    """E_p[log q(x)] for Normal q, from E_p[x] and E_p[x^2]."""
    sq = (second_moment - 2 * q.loc * mean + q.loc.pow(2)) / (2 * q.scale.pow(2))
    return -q.scale.log() - 0.5 * math.log(2 * math.pi) - sq


def _gamma_log_density_mean(q, mean, mean_log):
    """E_p[log q(x)] for Gamma q, from E_p[x] and E_p[log x]."""
    a, b = q.concentration, q.rate
    return torch.xlogy(a, b) - torch.lgamma(a) + (a - 1) * mean_log - b * mean


def _binary(lp, lq, n=1):
    """n times KL of Bernoulli(logits lp) from Bernoulli(logits lq)."""
    p = torch.sigmoid(lp)
    return n * (p * (_F.logsigmoid(lp) - _F.logsigmoid(lq)) + (1 - p) * (_F.logsigmoid(-lp) - _F.logsigmoid(-lq)))


# ---------------------------------------------------------------------------
# same family


@register_kl(Normal, Normal)
def _normal_normal(p, q):
    ratio = (p.scale / q.scale).pow(2)
    return 0.5 * (ratio + ((p.loc - q.loc) / q.scale).pow(2) - 1 - ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _bernoulli_bernoulli(p, q):
    return _binary(p.logits, q.logits)


@register_kl(Binomial, Binomial)
def _binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = _binary(p.logits, q.logits, p.total_count)
    return _inf_where(p.total_count > q.total_count, kl)


@register_kl(Categorical, Categorical)
def _categorical_categorical(p, q):
    terms = p.probs * (p.logits - q.logits)
    terms = torch.where(p.probs == 0, torch.zeros_like(terms), terms)
    terms = _inf_where((q.probs == 0).expand_as(terms) & (p.probs > 0), terms)
    return terms.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _onehot_onehot(p, q):
    return _categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _uniform_uniform(p, q):
    kl = ((q.high - q.low) / (p.high - p.low)).log()
    return _inf_where((q.low > p.low) | (q.high < p.high), kl)


@register_kl(Beta, Beta)
def _beta_beta(p, q):
    return _dirichlet_dirichlet(p._dirichlet, q._dirichlet)


@register_kl(Dirichlet, Dirichlet)
def _dirichlet_dirichlet(p, q):
    a, b = p.concentration, q.concentration
    a0 = a.sum(-1)
    return (torch.lgamma(a0) - torch.lgamma(a).sum(-1) - torch.lgamma(b.sum(-1)) + torch.lgamma(b).sum(-1)
            + ((a - b) * (torch.digamma(a) - torch.digamma(a0).unsqueeze(-1))).sum(-1))


@register_kl(Gamma, Gamma)
def _gamma_gamma(p, q):
    a, b, c, d = p.concentration, p.rate, q.concentration, q.rate
    return ((a - c) * torch.digamma(a) - torch.lgamma(a) + torch.lgamma(c) + c * (b.log() - d.log())
            + a * (d - b) / b)


@register_kl(Exponential, Exponential)
def _exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return ratio - 1 - ratio.log()


@register_kl(Poisson, Poisson)
def _poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Laplace, Laplace)
def _laplace_laplace(p, q):
    ratio = p.scale / q.scale
    gap = (p.loc - q.loc).abs()
    return -ratio.log() + gap / q.scale + ratio * torch.exp(-gap / p.scale) - 1


@register_kl(Cauchy, Cauchy)
def _cauchy_cauchy(p, q):
    spread = (p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)
    return (spread / (4 * p.scale * q.scale)).log()


@register_kl(Gumbel, Gumbel)
def _gumbel_gumbel(p, q):
    c = p.scale / q.scale
    shift = (p.loc - q.loc) / q.scale
    return (q.scale.log() - p.scale.log() - _EULER - 1 + shift + c * _EULER
            + torch.exp(-shift + torch.lgamma(1 + c)))


@register_kl(MultivariateNormal, MultivariateNormal)
def _mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot "
                         "be computed")
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    n = p.event_shape[0]
    batch = torch.broadcast_shapes(tuple(Lp.shape[:-2]), tuple(Lq.shape[:-2]), tuple(p.batch_shape),
                                   tuple(q.batch_shape))
    Lp, Lq = Lp.expand(tuple(batch) + (n, n)), Lq.expand(tuple(batch) + (n, n))
    trace = torch.linalg.solve_triangular(Lq, Lp, upper=False).pow(2).sum((-2, -1))
    diff = (q.loc - p.loc).expand(tuple(batch) + (n,)).unsqueeze(-1)
    maha = torch.linalg.solve_triangular(Lq, diff, upper=False).pow(2).sum((-2, -1))
    return q._half_log_det().expand(batch) - p._half_log_det().expand(batch) + 0.5 * (trace + maha - n)


@register_kl(Independent, Independent)
def _independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _transformed_transformed(p, q):
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    extra = len(p.event_shape) - len(p.base_dist.event_shape)
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra)


# ---------------------------------------------------------------------------
# across families: -H(p) - E_p[log q]


@register_kl(Exponential, Gamma)
def _exponential_gamma(p, q):
    return -p.entropy() - _gamma_log_density_mean(q, 1 / p.rate, -_EULER - p.rate.log())


@register_kl(Exponential, Normal)
def _exponential_normal(p, q):
    return -p.entropy() - _normal_log_density_mean(q, 1 / p.rate, 2 / p.rate.pow(2))


@register_kl(Uniform, Normal)
def _uniform_normal(p, q):
    lo, hi = p.low, p.high
    second = (hi.pow(3) - lo.pow(3)) / (3 * (hi - lo))
    return -p.entropy() - _normal_log_density_mean(q, (lo + hi) / 2, second)


@register_kl(Uniform, Gamma)
def _uniform_gamma(p, q):
    lo, hi = p.low, p.high
    safe_lo = lo.clamp(min=0)
    mean_log = (torch.xlogy(hi, hi) - torch.xlogy(safe_lo, safe_lo)) / (hi - safe_lo) - 1
    kl = -p.entropy() - _gamma_log_density_mean(q, (lo + hi) / 2, mean_log)
    return _inf_where(lo < 0, kl)


@register_kl(Gamma, Normal)
def _gamma_normal(p, q):
    a, b = p.concentration, p.rate
    return -p.entropy() - _normal_log_density_mean(q, a / b, a * (a + 1) / b.pow(2))


@register_kl(Beta, Normal)
def _beta_normal(p, q):
    a, b = p.concentration1, p.concentration0
    t = a + b
    return -p.entropy() - _normal_log_density_mean(q, a / t, a * (a + 1) / (t * (t + 1)))


@register_kl(Beta, Uniform)
def _beta_uniform(p, q):
    kl = -p.entropy() + (q.high - q.low).log()
    return _inf_where((q.low > 0) | (q.high < 1), kl)


@register_kl(Laplace, Normal)
def _laplace_normal(p, q):
    return -p.entropy() - _normal_log_density_mean(q, p.loc, 2 * p.scale.pow(2) + p.loc.pow(2))


@register_kl(Normal, Laplace)
def _normal_laplace(p, q):
    d = p.loc - q.loc
    s = p.scale
    mean_abs = s * math.sqrt(2 / math.pi) * torch.exp(-0.5 * (d / s).pow(2)) + d * torch.erf(d / (s * math.sqrt(2)))
    return -p.entropy() + (2 * q.scale).log() + mean_abs / q.scale


@register_kl(Normal, Gumbel)
def _normal_gumbel(p, q):
    m = (p.loc - q.loc) / q.scale
    s = p.scale / q.scale
    return -p.entropy() + q.scale.log() + m + torch.exp(-m + 0.5 * s.pow(2))


for _pair in [(Normal, Beta), (Gamma, Uniform), (Exponential, Beta), (Gamma, Beta), (Normal, Gamma),
              (Normal, Exponential), (Normal, Uniform), (Laplace, Beta), (Laplace, Gamma), (Laplace, Exponential),
              (Laplace, Uniform), (Exponential, Uniform), (Cauchy, Normal), (Gumbel, Beta), (Gumbel, Gamma),
              (Gumbel, Exponential), (Gumbel, Uniform), (Poisson, Bernoulli), (Poisson, Binomial)]:
    register_kl(*_pair)(_infinite)
del _pair
