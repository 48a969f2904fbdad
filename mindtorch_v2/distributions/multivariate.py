"""Distributions over vectors: Dirichlet on the simplex and the multivariate normal."""
import math

from . import _torch as torch
from . import constraints
from ._samplers import sample_dirichlet
from .distribution import Distribution, ExponentialFamily
from .utils import cholesky, lazy_property

__all__ = ["Dirichlet", "MultivariateNormal"]


class Dirichlet(ExponentialFamily):
    """Dirichlet(concentration) over the simplex of the last dimension."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True
    _expand = ("concentration",)

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def rsample(self, sample_shape=()):
        return sample_dirichlet(self.concentration.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        value = self._checked(value)
        a = self.concentration
        return (torch.xlogy(a - 1.0, value).sum(-1) + torch.lgamma(a.sum(-1)) - torch.lgamma(a).sum(-1))

    def entropy(self):
        a = self.concentration
        k, total = a.shape[-1], a.sum(-1)
        log_norm = torch.lgamma(a).sum(-1) - torch.lgamma(total)
        return log_norm + (total - k) * torch.digamma(total) - ((a - 1.0) * torch.digamma(a)).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        # (a - 1) / (sum a - k) when every a > 1; otherwise mass piles on the corners with a < 1
        a = self.concentration
        m = (a - 1).clamp(min=0.0)
        m = m / m.sum(-1, keepdim=True)
        below = (a < 1).all(-1)
        corner = torch.nn.functional.one_hot(a.argmax(-1), a.shape[-1]).to(m.dtype)
        return torch.where(below.unsqueeze(-1), corner, m)

    @property
    def variance(self):
        total = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))


def _batch_mahalanobis(scale_tril, diff):
    """|L^{-1} diff|^2 over the last dimension, L broadcast against diff's batch."""
    shape = torch.broadcast_shapes(tuple(scale_tril.shape[:-2]), tuple(diff.shape[:-1]))
    n = diff.shape[-1]
    L = scale_tril.expand(tuple(shape) + (n, n))
    d = diff.expand(tuple(shape) + (n,)).unsqueeze(-1)
    return torch.linalg.solve_triangular(L, d, upper=False).squeeze(-1).pow(2).sum(-1)


class MultivariateNormal(Distribution):
    """N(loc, covariance), the covariance given as itself, its inverse, or its lower Cholesky factor."""
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True
    _expand = ("loc", "covariance_matrix", "precision_matrix", "scale_tril")

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(k, m) for k, m in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix), ("scale_tril", scale_tril))
                 if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, with optional leading batch dimensions")
        n = loc.shape[-1]
        batch = torch.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        self.__dict__[name] = matrix.expand(tuple(batch) + (n, n))
        self.loc = loc.expand(tuple(batch) + (n,))
        super().__init__(batch, (n,), validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-1, -2)).expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        return torch.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        eps = torch.randn(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        value = self._checked(value)
        n = self._event_shape[0]
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (n * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        n = self._event_shape[0]
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if not self._batch_shape else h.expand(self._batch_shape)


def _precision_to_scale_tril(P):
    """Lower L with L L^T = P^{-1}: the Cholesky factor of P taken from the bottom-right corner (U with
    P = U U^T, U upper), inverted, is lower."""
    flip = lambda m: torch.flip(m, (-2, -1))  # noqa: E731
    upper = flip(cholesky(flip(P)))  # P = upper upper^T
    eye = torch.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    # L = upper^{-T} is lower triangular and L L^T = (upper upper^T)^{-1}
    return torch.linalg.solve_triangular(upper, eye, upper=True).transpose(-2, -1)
