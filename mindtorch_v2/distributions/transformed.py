"""Distributions made from others: Independent (batch dimensions read as event dimensions),
TransformedDistribution (a base pushed through transforms) and LogNormal (a normal through exp)."""
from . import _torch as torch
from . import constraints
from .continuous import Normal
from .distribution import Distribution
from .transforms import ComposeTransform, ExpTransform, Transform
from .utils import sum_rightmost

__all__ = ["Independent", "TransformedDistribution", "LogNormal"]


class Independent(Distribution):
    """base_distribution with its rightmost reinterpreted_batch_ndims batch dimensions made event ones."""
    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        batch = tuple(base_distribution.batch_shape)
        if reinterpreted_batch_ndims > len(batch):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                             f"actual {reinterpreted_batch_ndims} vs {len(batch)}")
        cut = len(batch) - reinterpreted_batch_ndims
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(batch[:cut], batch[cut:] + tuple(base_distribution.event_shape),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = torch.Size(batch_shape)
        moved = self._event_shape[:self.reinterpreted_batch_ndims]
        new = type(self).__new__(type(self)) if _instance is None else _instance
        Independent.__init__(new, self.base_dist.expand(batch_shape + moved), self.reinterpreted_batch_ndims,
                             validate_args=False)
        new._validate_args = self._validate_args
        return new

    has_rsample = property(lambda self: self.base_dist.has_rsample)
    has_enumerate_support = property(
        lambda self: self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support)

    @constraints.dependent_property
    def support(self):
        s = self.base_dist.support
        return constraints.independent(s, self.reinterpreted_batch_ndims) if self.reinterpreted_batch_ndims else s

    mean = property(lambda self: self.base_dist.mean)
    mode = property(lambda self: self.base_dist.mode)
    variance = property(lambda self: self.base_dist.variance)

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"


class TransformedDistribution(Distribution):
    """The law of y = t_n(...t_1(x)) for x from base_distribution."""
    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            transforms = [transforms]
        elif not (isinstance(transforms, list) and all(isinstance(t, Transform) for t in transforms)):
            raise ValueError("transforms must be a Transform or a list of Transforms")
        self.transforms = transforms
        chain = ComposeTransform(transforms)
        base_event = len(base_distribution.event_shape)
        in_event = max(chain.domain.event_dim, base_event)
        # the shape the transforms need on their input, and what they make of it
        base_full = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        out_full = chain.forward_shape(base_full)
        need = tuple(chain.inverse_shape(out_full))
        if need != base_full:
            base_distribution = base_distribution.expand(need[:len(need) - base_event])
        if in_event > base_event:  # transforms act on more dimensions than an event: fold batch into event
            base_distribution = Independent(base_distribution, in_event - base_event)
        self.base_dist = base_distribution
        out_event = chain.codomain.event_dim + max(base_event - chain.domain.event_dim, 0)
        cut = len(out_full) - out_event
        super().__init__(tuple(out_full)[:cut], tuple(out_full)[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = torch.Size(batch_shape)
        shape = tuple(batch_shape) + tuple(self._event_shape)
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        base_batch = tuple(shape)[:len(shape) - len(self.base_dist.event_shape)]
        new = type(self).__new__(type(self)) if _instance is None else _instance
        new.__dict__.update(self.__dict__)
        new.base_dist = self.base_dist.expand(base_batch)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    has_rsample = property(lambda self: self.base_dist.has_rsample)

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        s = self.transforms[-1].codomain
        extra = len(self._event_shape) - s.event_dim
        return constraints.independent(s, extra) if extra > 0 else s

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def sample(self, sample_shape=()):
        with torch.no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def log_prob(self, value):
        y = self._checked(value)
        event_dim = len(self._event_shape)
        total = 0.0
        for t in reversed(self.transforms):  # change of variables, last transform first
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            total = total - sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
            y = x
        return total + sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _sign(self):
        s = 1
        for t in self.transforms:
            s = s * t.sign
        return s

    def cdf(self, value):
        for t in reversed(self.transforms):
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        p = self.base_dist.cdf(value)
        sign = self._sign()
        return p if isinstance(sign, int) and sign == 1 else sign * (p - 0.5) + 0.5

    def icdf(self, value):
        sign = self._sign()
        q = value if isinstance(sign, int) and sign == 1 else sign * (value - 0.5) + 0.5
        x = self.base_dist.icdf(q)
        for t in self.transforms:
            x = t(x)
        return x


class LogNormal(TransformedDistribution):
    """exp of a Normal(loc, scale)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(),
                         validate_args=validate_args)

    loc = property(lambda self: self.base_dist.loc)
    scale = property(lambda self: self.base_dist.scale)
    mean = property(lambda self: (self.loc + self.scale.pow(2) / 2).exp())
    mode = property(lambda self: (self.loc - self.scale.square()).exp())

    @property
    def variance(self):
        s2 = self.scale.pow(2)
        return s2.expm1() * (2 * self.loc + s2).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc
