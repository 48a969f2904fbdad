"""Univariate continuous distributions. The location-scale families share one class: each gives its standard
member (log density, cdf, quantile, entropy, mean and variance of the standard variable, a sampler), and
x = loc + scale * z does the rest."""
import math

from . import _torch as torch
from . import constraints
from ._samplers import standard_gamma
from .distribution import Distribution, ExponentialFamily
from .utils import broadcast_all

__all__ = ["Normal", "Laplace", "Cauchy", "Gumbel", "StudentT", "Uniform", "Exponential", "Gamma", "Chi2", "Beta"]

_EULER = 0.57721566490153286061


def _uniform_open(shape, like):
    """Uniforms strictly inside (0, 1) with like's dtype and device."""
    u = torch.rand(shape, dtype=like.dtype, device=like.device)
    info = torch.finfo(like.dtype)
    return u.clamp(min=info.tiny, max=1 - info.eps)


def _filled(shape, value, like):
    return torch.full(shape, value, dtype=like.dtype, device=like.device)


class _LocationScale(Distribution):
    """x = loc + scale * z with z from the family's standard member."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _expand = ("loc", "scale")
    _z_mean = 0.0  # E[z] (nan: undefined)
    _z_var = 1.0  # Var[z] (inf: infinite)
    _z_entropy = 0.0  # entropy of z

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def rsample(self, sample_shape=()):
        z = self._draw_z(self._extended_shape(sample_shape))
        return self.loc + z * self.scale

    def log_prob(self, value):
        value = self._checked(value)
        return self._z_log_prob((value - self.loc) / self.scale) - self.scale.log()

    def cdf(self, value):
        value = self._checked(value)
        return self._z_cdf((value - self.loc) / self.scale)

    def icdf(self, value):
        return self.loc + self.scale * self._z_icdf(value)

    def entropy(self):
        return self._z_entropy + self.scale.log()

    @property
    def mean(self):
        if math.isnan(self._z_mean):
            return _filled(self._extended_shape(), math.nan, self.loc)
        return self.loc + self._z_mean * self.scale

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        if math.isinf(self._z_var):
            return _filled(self._extended_shape(), math.inf, self.loc)
        return self._z_var * self.scale.pow(2)

    @property
    def stddev(self):
        return self.variance.sqrt()


class Normal(_LocationScale, ExponentialFamily):
    """Normal(loc, scale): density exp(-z^2 / 2) / sqrt(2 pi) / scale."""
    _z_entropy = 0.5 + 0.5 * math.log(2 * math.pi)

    def _draw_z(self, shape):
        return torch.randn(shape, dtype=self.loc.dtype, device=self.loc.device)

    def _z_log_prob(self, z):
        return -0.5 * z * z - 0.5 * math.log(2 * math.pi)

    def _z_cdf(self, z):
        return 0.5 * (1 + torch.erf(z / math.sqrt(2)))

    def _z_icdf(self, q):
        return math.sqrt(2) * torch.erfinv(2 * q - 1)

    @property
    def stddev(self):
        return self.scale

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 / self.scale.pow(2))

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * torch.log(-math.pi / y)

    _mean_carrier_measure = 0


class Laplace(_LocationScale):
    """Laplace(loc, scale): density exp(-|z|) / 2 / scale."""
    _z_var = 2.0
    _z_entropy = 1 + math.log(2)

    def _draw_z(self, shape):
        u = torch.rand(shape, dtype=self.loc.dtype, device=self.loc.device) * 2 - 1  # in [-1, 1)
        u = u.clamp(min=torch.finfo(self.loc.dtype).eps - 1)
        return -u.sign() * torch.log1p(-u.abs())

    def _z_log_prob(self, z):
        return -z.abs() - math.log(2)

    def _z_cdf(self, z):
        return 0.5 - 0.5 * z.sign() * torch.expm1(-z.abs())

    def _z_icdf(self, q):
        d = q - 0.5
        return -d.sign() * torch.log1p(-2 * d.abs())


class Cauchy(_LocationScale):
    """Cauchy(loc, scale): density 1 / (pi scale (1 + z^2)); no mean, infinite variance."""
    _z_mean = math.nan
    _z_var = math.inf
    _z_entropy = math.log(4 * math.pi)

    def _draw_z(self, shape):
        return self._z_icdf(_uniform_open(shape, self.loc))

    def _z_log_prob(self, z):
        return -math.log(math.pi) - torch.log1p(z * z)

    def _z_cdf(self, z):
        return torch.atan(z) / math.pi + 0.5

    def _z_icdf(self, q):
        return torch.tan(math.pi * (q - 0.5))


class Gumbel(_LocationScale):
    """Gumbel(loc, scale): cdf exp(-exp(-z))."""
    _z_mean = _EULER
    _z_var = math.pi ** 2 / 6
    _z_entropy = _EULER + 1

    def _draw_z(self, shape):
        return self._z_icdf(_uniform_open(shape, self.loc))

    def _z_log_prob(self, z):
        return -(z + torch.exp(-z))

    def _z_cdf(self, z):
        return torch.exp(-torch.exp(-z))

    def _z_icdf(self, q):
        return -torch.log(-torch.log(q))


class StudentT(Distribution):
    """Student's t with df degrees of freedom, shifted by loc and scaled by scale."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _expand = ("df", "loc", "scale")

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        super().__init__(self.df.shape, validate_args=validate_args)

    def rsample(self, sample_shape=()):
        # z / sqrt(chi2_df / df) with chi2_df = 2 Gamma(df / 2)
        shape = self._extended_shape(sample_shape)
        z = torch.randn(shape, dtype=self.df.dtype, device=self.df.device)
        chi2 = 2 * standard_gamma(0.5 * self.df.expand(shape))
        return self.loc + self.scale * z * torch.rsqrt(chi2 / self.df)

    def log_prob(self, value):
        value = self._checked(value)
        n = self.df
        z = (value - self.loc) / self.scale
        norm = torch.lgamma(0.5 * (n + 1)) - torch.lgamma(0.5 * n) - 0.5 * torch.log(n * math.pi)
        return norm - self.scale.log() - 0.5 * (n + 1) * torch.log1p(z * z / n)

    def entropy(self):
        n = self.df
        log_beta = torch.lgamma(0.5 * n) + math.lgamma(0.5) - torch.lgamma(0.5 * (n + 1))
        return (self.scale.log() + 0.5 * (n + 1) * (torch.digamma(0.5 * (n + 1)) - torch.digamma(0.5 * n))
                + 0.5 * n.log() + log_beta)

    @property
    def mean(self):
        return torch.where(self.df > 1, self.loc, torch.full_like(self.loc, math.nan))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        n = self.df
        finite = self.scale.pow(2) * n / (n - 2)
        return torch.where(n > 2, finite, torch.where(n > 1, torch.full_like(n, math.inf),
                                                       torch.full_like(n, math.nan)))


class Uniform(Distribution):
    """Uniform on [low, high)."""
    has_rsample = True
    _expand = ("low", "high")

    @property
    def arg_constraints(self):
        if "low" not in self.__dict__:
            return {"low": constraints.dependent(is_discrete=False, event_dim=0),
                    "high": constraints.dependent(is_discrete=False, event_dim=0)}
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape=()):
        u = torch.rand(self._extended_shape(sample_shape), dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        value = self._checked(value)
        inside = ((self.low <= value) & (value < self.high)).to(self.low.dtype)
        return torch.log(inside) - torch.log(self.high - self.low)

    def cdf(self, value):
        value = self._checked(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        return self.low + value * (self.high - self.low)

    def entropy(self):
        return torch.log(self.high - self.low)

    mean = property(lambda self: (self.low + self.high) / 2)
    mode = property(lambda self: self.high * math.nan)
    variance = property(lambda self: (self.high - self.low).pow(2) / 12)
    stddev = property(lambda self: (self.high - self.low) / 12 ** 0.5)


class Exponential(ExponentialFamily):
    """Exponential(rate): density rate exp(-rate x) on x >= 0."""
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _expand = ("rate",)

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    def rsample(self, sample_shape=()):
        u = torch.rand(self._extended_shape(sample_shape), dtype=self.rate.dtype, device=self.rate.device)
        return -torch.log1p(-u) / self.rate

    def log_prob(self, value):
        value = self._checked(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        value = self._checked(value)
        return -torch.expm1(-self.rate * value)

    def icdf(self, value):
        return -torch.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()

    mean = property(lambda self: self.rate.reciprocal())
    mode = property(lambda self: torch.zeros_like(self.rate))
    variance = property(lambda self: self.rate.pow(-2))
    stddev = property(lambda self: self.rate.reciprocal())


class Gamma(ExponentialFamily):
    """Gamma(concentration, rate): density rate^a x^(a-1) exp(-rate x) / Gamma(a)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _expand = ("concentration", "rate")

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return x.clamp(min=torch.finfo(x.dtype).tiny)

    def log_prob(self, value):
        value = self._checked(value)
        a, b = self.concentration, self.rate
        return torch.xlogy(a, b) + torch.xlogy(a - 1, value) - b * value - torch.lgamma(a)

    def cdf(self, value):
        value = self._checked(value)
        return torch.special.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        a = self.concentration
        return a - self.rate.log() + torch.lgamma(a) + (1 - a) * torch.digamma(a)

    mean = property(lambda self: self.concentration / self.rate)
    mode = property(lambda self: ((self.concentration - 1) / self.rate).clamp(min=0))
    variance = property(lambda self: self.concentration / self.rate.pow(2))


class Chi2(Gamma):
    """Chi-squared with df degrees of freedom: Gamma(df / 2, 1 / 2)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, torch.full_like(df, 0.5), validate_args=validate_args)

    df = property(lambda self: self.concentration * 2)


class Beta(ExponentialFamily):
    """Beta(concentration1, concentration0) on [0, 1]: the first coordinate of a two-category Dirichlet."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True
    _expand = ("_dirichlet",)

    def __init__(self, concentration1, concentration0, validate_args=None):
        from .multivariate import Dirichlet
        c1, c0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(torch.stack([c1, c0], -1), validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    concentration1 = property(lambda self: self._dirichlet.concentration[..., 0])
    concentration0 = property(lambda self: self._dirichlet.concentration[..., 1])

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        value = self._checked(value)
        return self._dirichlet.log_prob(torch.stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))
