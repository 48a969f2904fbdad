"""The Distribution base: shapes, argument and sample validation, sampling shapes, expand, and the
probs/logits parameterisation the discrete families share."""
import warnings

from . import _torch as torch
from . import constraints
from .utils import _show, all_true, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Distribution", "ExponentialFamily"]


class Distribution:
    """A batch of probability distributions over events of `event_shape`.

    Subclasses list their parameters in `arg_constraints` (validated at construction when validate_args)
    and the tensors `expand` must broadcast in `_expand` (each keeps its dimensions beyond the batch)."""
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__
    arg_constraints = {}
    support = None
    _expand = ()

    @staticmethod
    def set_default_validate_args(value):
        """Turn argument and sample validation on or off for distributions made without validate_args."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = torch.Size(batch_shape)
        self._event_shape = torch.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self):
        for name, constraint in self.arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if name not in self.__dict__ and isinstance(getattr(type(self), name, None), lazy_property):
                continue  # the other half of a probs/logits pair, never given
            value = getattr(self, name)
            if not all_true(constraint.check(value)):
                raise ValueError(
                    f"Expected parameter {name} ({type(value).__name__} of shape {tuple(value.shape)}) of "
                    f"distribution {self!r} to satisfy the constraint {constraint!r}, but found invalid "
                    f"values:\n{_show(value)}")

    batch_shape = property(lambda self: self._batch_shape)
    event_shape = property(lambda self: self._event_shape)

    def expand(self, batch_shape, _instance=None):
        """This distribution with its parameters broadcast to batch_shape (no copies)."""
        batch_shape = torch.Size(batch_shape)
        new = _instance if _instance is not None else type(self).__new__(type(self))
        n_batch = len(self._batch_shape)
        for key, value in self.__dict__.items():
            if key in self._expand and isinstance(value, torch.Tensor):
                value = value.expand(tuple(batch_shape) + tuple(value.shape[n_batch:]))
            elif key in self._expand and isinstance(value, Distribution):
                value = value.expand(tuple(batch_shape) + tuple(value.batch_shape[n_batch:]))
            new.__dict__[key] = value
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _extended_shape(self, sample_shape=()):
        return torch.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape=()):
        """A draw of shape sample_shape + batch_shape + event_shape, without gradient."""
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample(torch.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return torch.exp(self.entropy())

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def _validate_sample(self, value):
        if not isinstance(value, torch.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape, event = value.shape, self._event_shape
        if tuple(shape[len(shape) - len(event):]) != tuple(event) or len(shape) < len(event):
            raise ValueError(f"The right-most size of value must match event_shape: {shape} vs {event}.")
        full = torch.Size(tuple(self._batch_shape) + tuple(event))
        if any(a != b and a != 1 and b != 1 for a, b in zip(reversed(shape), reversed(full))):
            raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {shape} vs {full}.")
        support = self.support
        if not all_true(support.check(value)):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be within the "
                f"support ({support!r}) of the distribution {self!r}, but found invalid values:\n{value}")

    def _checked(self, value):
        """value, validated against the support and shapes when validation is on."""
        if self._validate_args:
            self._validate_sample(value)
        return value

    def __repr__(self):
        shown = ", ".join(f"{k}: {_show(v) if v.numel() == 1 else v.size()}"
                          for k, v in ((k, self.__dict__[k]) for k in self.arg_constraints if k in self.__dict__))
        return f"{type(self).__name__}({shown})"


class ExponentialFamily(Distribution):
    """Distributions with density h(x) exp(<eta, T(x)> - A(eta)); subclasses give `_natural_params`,
    `_log_normalizer(*eta)` and `_mean_carrier_measure` (E[log h(x)]). Entropy follows as
    A(eta) - <eta, grad A(eta)> - E[log h(x)]."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        eta = [p.detach().requires_grad_() for p in self._natural_params]
        with torch.enable_grad():
            lg = self._log_normalizer(*eta)
            grads = torch.autograd.grad(lg.sum(), eta, create_graph=True)
        out = lg - self._mean_carrier_measure
        for e, g in zip(eta, grads):
            out = out - sum_event(e * g, len(self._event_shape))
        return out


def sum_event(x, n):
    return x.reshape(tuple(x.shape[:x.dim() - n]) + (-1,)).sum(-1) if n else x


class ProbsOrLogits:
    """The probs / logits parameterisation: exactly one is given, the other is derived on first use.
    `_binary` says whether logits are log-odds (Bernoulli-like) or log-probabilities over the last axis."""
    _binary = True

    def _take_probs_or_logits(self, probs, logits, *others):
        """Stores the given one (normalised when categorical), broadcast with `others`; returns them all."""
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        if not self._binary:
            if value.dim() < 1:
                raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
            value = value / value.sum(-1, keepdim=True) if name == "probs" else \
                value - value.logsumexp(-1, keepdim=True)
            self.__dict__[name] = value
            return (value,) + others
        value, *others = broadcast_all(value, *others)
        self.__dict__[name] = value
        return (value, *others)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=self._binary)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=self._binary)

    @property
    def _param(self):
        return self.__dict__["probs"] if "probs" in self.__dict__ else self.__dict__["logits"]

    @property
    def param_shape(self):
        return self._param.size()
