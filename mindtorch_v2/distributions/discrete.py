"""Discrete distributions: the probs/logits families (Bernoulli, Binomial, Categorical, OneHotCategorical)
and Poisson."""
from . import _torch as torch
from . import constraints
from . import _samplers
from .distribution import Distribution, ExponentialFamily, ProbsOrLogits
from .utils import broadcast_all

__all__ = ["Bernoulli", "Binomial", "Categorical", "OneHotCategorical", "OneHotCategoricalStraightThrough",
           "Poisson"]

_F = torch.nn.functional


def _values_along_first(n, like, batch_ndim, expand_to=None):
    """0..n-1 as like's dtype, shaped (n, 1, ..., 1) for batch_ndim batch dims (expanded when asked)."""
    v = torch.arange(n, dtype=like.dtype, device=like.device).reshape((-1,) + (1,) * batch_ndim)
    return v.expand((n,) + tuple(expand_to)) if expand_to is not None else v


class Bernoulli(ProbsOrLogits, ExponentialFamily):
    """1 with probability probs (log-odds logits), else 0."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _expand = ("probs", "logits")

    def __init__(self, probs=None, logits=None, validate_args=None):
        (param,) = self._take_probs_or_logits(probs, logits)
        super().__init__(param.shape, validate_args=validate_args)

    def sample(self, sample_shape=()):
        with torch.no_grad():
            return torch.bernoulli(self.probs.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        value = self._checked(value)
        logits, value = broadcast_all(self.logits, value)
        return value * logits - _F.softplus(logits)

    def entropy(self):
        return _F.softplus(self.logits) - self.probs * self.logits

    def enumerate_support(self, expand=True):
        return _values_along_first(2, self._param, len(self._batch_shape),
                                   self._batch_shape if expand else None)

    mean = property(lambda self: self.probs)
    variance = property(lambda self: self.probs * (1 - self.probs))

    @property
    def mode(self):
        p = self.probs
        return torch.where(p == 0.5, torch.full_like(p, float("nan")), (p > 0.5).to(p.dtype))


class Binomial(ProbsOrLogits, Distribution):
    """Successes in total_count Bernoulli(probs) trials."""
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True
    _expand = ("total_count", "probs", "logits")

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        param, self.total_count = self._take_probs_or_logits(probs, logits, total_count)
        self.total_count = self.total_count.type_as(param)
        super().__init__(param.shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return _samplers._binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        value = self._checked(value)
        n, lg = self.total_count, self.logits
        log_choose = torch.lgamma(n + 1) - torch.lgamma(value + 1) - torch.lgamma(n - value + 1)
        # k log p + (n - k) log(1 - p) = k logits - n log(1 + e^logits)
        return log_choose + value * lg - n * _F.softplus(lg)

    def _homogeneous_count(self, what):
        n = int(self.total_count.max())
        if not bool((self.total_count == n).all()):
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return n

    def entropy(self):
        self._homogeneous_count("entropy")
        lp = self.log_prob(self.enumerate_support(False))
        return -(torch.exp(lp) * lp).sum(0)

    def enumerate_support(self, expand=True):
        n = self._homogeneous_count("enumerate_support")
        return _values_along_first(n + 1, self._param, len(self._batch_shape),
                                   self._batch_shape if expand else None)

    mean = property(lambda self: self.total_count * self.probs)
    variance = property(lambda self: self.total_count * self.probs * (1 - self.probs))
    mode = property(lambda self: ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count))


class Categorical(ProbsOrLogits, Distribution):
    """An index in 0..K-1 drawn with probabilities probs (normalised over the last dimension)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True
    _binary = False
    _expand = ("probs", "logits")

    def __init__(self, probs=None, logits=None, validate_args=None):
        (param,) = self._take_probs_or_logits(probs, logits)
        self._num_events = param.shape[-1]
        super().__init__(param.shape[:-1], validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            flat = self.probs.reshape(-1, self._num_events)
            draws = torch.multinomial(flat, max(1, torch.Size(sample_shape).numel()), True)
            return draws.transpose(0, 1).reshape(shape)

    def log_prob(self, value):
        value = self._checked(value)
        index = value.long().unsqueeze(-1)
        index, logits = torch.broadcast_tensors(index, self.logits)
        return logits.gather(-1, index[..., :1]).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=torch.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        v = torch.arange(self._num_events, dtype=torch.int64, device=self._param.device)
        v = v.reshape((-1,) + (1,) * len(self._batch_shape))
        return v.expand((self._num_events,) + tuple(self._batch_shape)) if expand else v

    @property
    def mean(self):
        return torch.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype, device=self.probs.device)

    variance = mean

    @property
    def mode(self):
        return self.probs.argmax(-1)


class OneHotCategorical(Distribution):
    """A Categorical draw written as a one-hot vector."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True
    _expand = ("_categorical",)

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        param = self._categorical._param
        super().__init__(param.shape[:-1], param.shape[-1:], validate_args=validate_args)

    probs = property(lambda self: self._categorical.probs)
    logits = property(lambda self: self._categorical.logits)
    _param = property(lambda self: self._categorical._param)
    param_shape = property(lambda self: self._categorical.param_shape)

    def _one_hot(self, index):
        return _F.one_hot(index, self._event_shape[0]).to(self.probs.dtype)

    def sample(self, sample_shape=()):
        return self._one_hot(self._categorical.sample(sample_shape))

    def log_prob(self, value):
        value = self._checked(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self._event_shape[0]
        v = torch.eye(n, dtype=self._param.dtype, device=self._param.device)
        v = v.reshape((n,) + (1,) * len(self._batch_shape) + (n,))
        return v.expand((n,) + tuple(self._batch_shape) + (n,)) if expand else v

    mean = property(lambda self: self.probs)
    mode = property(lambda self: self._one_hot(self.probs.argmax(-1)))
    variance = property(lambda self: self.probs * (1 - self.probs))


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose rsample passes gradients to probs as if the draw were probs itself."""
    has_rsample = True

    def rsample(self, sample_shape=()):
        draw = self.sample(sample_shape)
        return draw + (self.probs - self.probs.detach())


class Poisson(ExponentialFamily):
    """Counts with mean rate."""
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer
    _expand = ("rate",)

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    def sample(self, sample_shape=()):
        with torch.no_grad():
            return _samplers._poisson(self.rate.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        value = self._checked(value)
        rate, value = broadcast_all(self.rate, value)
        return torch.xlogy(value, rate) - rate - torch.lgamma(value + 1)

    mean = property(lambda self: self.rate)
    mode = property(lambda self: self.rate.floor())
    variance = property(lambda self: self.rate)
