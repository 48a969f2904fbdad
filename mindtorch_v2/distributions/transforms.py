"""Transforms: maps between constrained spaces with an inverse and log |det Jacobian|, used by
TransformedDistribution and by biject_to / transform_to.

A transform gives `_call(x)`, `_inverse(y)` and `log_abs_det_jacobian(x, y)` (summed over its event
dimensions), its `domain` / `codomain` constraints, and `sign` when it is monotone. With cache_size=1 it
remembers the last (x, y) pair so that `t.inv(t(x)) is x`. Elementwise bijections are rows of a table.
"""
import math
import operator
from functools import reduce

from . import _torch as torch
from . import constraints
from .utils import broadcast_all, sum_rightmost, vec_to_tril_matrix, tril_matrix_to_vec

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
    "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
    "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
    "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "Transform",
    "identity_transform",
]

_F = torch.nn.functional


class Transform:
    """An invertible (or at least forward-computable) map y = t(x)."""
    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._pair = None  # the last (x, y) when caching

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        """The inverse transform (its inverse is this transform again)."""
        inverse = self.__dict__.get("_inv")
        if inverse is None:
            inverse = self._inv = _InverseTransform(self)
        return inverse

    @property
    def sign(self):
        raise NotImplementedError

    def _args(self):
        """The constructor's arguments besides cache_size (for with_cache and equality)."""
        return ()

    def with_cache(self, cache_size=1):
        return self if cache_size == self._cache_size else type(self)(*self._args(), cache_size=cache_size)

    def __eq__(self, other):
        return self is other or (type(self) is type(other) and _same_args(self._args(), other._args()))

    def __ne__(self, other):
        return not self == other

    __hash__ = object.__hash__

    def __call__(self, x):
        pair = self._pair
        if pair is not None and pair[0] is x:
            return pair[1]
        y = self._call(x)
        if self._cache_size:
            self._pair = (x, y)
        return y

    def _inv_call(self, y):
        pair = self._pair
        if pair is not None and pair[1] is y:
            return pair[0]
        x = self._inverse(y)
        if self._cache_size:
            self._pair = (x, y)
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __repr__(self):
        return type(self).__name__ + "()"


def _same_args(a, b):
    for u, v in zip(a, b):
        if isinstance(u, torch.Tensor) or isinstance(v, torch.Tensor):
            u, v = torch.as_tensor(u), torch.as_tensor(v)
            if u.shape != v.shape or not bool((u == v).all()):
                return False
        elif isinstance(u, (list, tuple)):
            if len(u) != len(v) or not all(p == q for p, q in zip(u, v)):
                return False
        elif u != v:
            return False
    return len(a) == len(b)


class _InverseTransform(Transform):
    """t.inv: the same map read backwards."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    domain = property(lambda self: self._inv.codomain)
    codomain = property(lambda self: self._inv.domain)
    bijective = property(lambda self: self._inv.bijective)
    sign = property(lambda self: self._inv.sign)

    def with_cache(self, cache_size=1):
        return self._inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)

    def __repr__(self):
        return f"_InverseTransform({self._inv!r})"


# ---------------------------------------------------------------------------
# elementwise bijections: forward, inverse, log |dy/dx| and codomain


def _clamp_open_unit(p):
    info = torch.finfo(p.dtype)
    return p.clamp(min=info.tiny, max=1.0 - info.eps)


def _log_sech2(x):
    """log(1 - tanh(x)^2) = log 4 - 2|x| - 2 log(1 + e^{-2|x|}), without cancellation for large |x|."""
    a = x.abs()
    return math.log(4.0) - 2 * a - 2 * torch.log1p(torch.exp(-2 * a))


def _bijection(name, forward, inverse, ladj, codomain, doc):
    return type(name, (Transform,), {
        "__doc__": doc, "bijective": True, "sign": 1, "codomain": codomain,
        "_call": lambda self, x: forward(x), "_inverse": lambda self, y: inverse(y),
        "log_abs_det_jacobian": lambda self, x, y: ladj(x, y)})


ExpTransform = _bijection("ExpTransform", torch.exp, torch.log, lambda x, y: x, constraints.positive,
                          "y = exp(x).")
SigmoidTransform = _bijection(
    "SigmoidTransform", lambda x: _clamp_open_unit(torch.sigmoid(x)),
    lambda y: (lambda p: torch.log(p) - torch.log1p(-p))(_clamp_open_unit(y)),
    lambda x, y: _F.logsigmoid(x) + _F.logsigmoid(-x), constraints.unit_interval, "y = 1 / (1 + exp(-x)).")
TanhTransform = _bijection("TanhTransform", torch.tanh, torch.atanh, lambda x, y: _log_sech2(x),
                           constraints.interval(-1.0, 1.0), "y = tanh(x).")
SoftplusTransform = _bijection("SoftplusTransform", _F.softplus,
                               lambda y: y + torch.log(-torch.expm1(-y)), lambda x, y: _F.logsigmoid(x),
                               constraints.positive, "y = log(1 + exp(x)).")


class AbsTransform(Transform):
    """y = |x| (not invertible)."""
    codomain = constraints.positive

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y  # the non-negative preimage


class AffineTransform(Transform):
    """y = loc + scale * x, the last `event_dim` dimensions forming one event."""
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    def _args(self):
        return (self.loc, self.scale, self._event_dim)

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return constraints.real if not self._event_dim else constraints.independent(constraints.real,
                                                                                     self._event_dim)

    codomain = domain

    @property
    def sign(self):
        s = self.scale
        if isinstance(s, torch.Tensor):
            return s.sign()
        return (s > 0) - (s < 0)

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        s = self.scale
        if isinstance(s, torch.Tensor):
            per_element = s.abs().log()
        else:
            per_element = torch.full_like(x, math.log(abs(s)))
        per_element = sum_rightmost(per_element, self._event_dim)
        return per_element.expand(tuple(x.shape[:x.dim() - self._event_dim]))

    def _shape(self, shape):
        return torch.broadcast_shapes(shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ()))

    forward_shape = inverse_shape = _shape


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals."""
    bijective = True
    domain = codomain = constraints.positive

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def _args(self):
        return (self.exponent,)

    @property
    def sign(self):
        return self.exponent.sign()

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()  # d x^k / dx = k x^k / x

    def _shape(self, shape):
        return torch.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    forward_shape = inverse_shape = _shape


class SoftmaxTransform(Transform):
    """Real vectors to the simplex by exp and normalising; the inverse picks the zero-sum-free log."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        e = (x - x.max(-1, keepdim=True)[0]).exp()
        return e / e.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()


class StickBreakingTransform(Transform):
    """R^K to the (K+1)-simplex: z_k = sigmoid(x_k - log(K - k)) is the fraction of what remains broken off
    at step k, y_k = z_k * prod_{j<k} (1 - z_j), the last coordinate takes the rest. The offset makes x = 0
    the simplex's centre."""
    bijective = True
    domain = constraints.real_vector
    codomain = constraints.simplex

    @staticmethod
    def _shifted(x):
        k = x.shape[-1]
        remaining = torch.arange(k, 0, -1, dtype=x.dtype, device=x.device)  # K - k for k = 0..K-1
        return x - remaining.log()

    def _call(self, x):
        z = torch.sigmoid(self._shifted(x))
        left = torch.cumprod(1 - z, -1)  # mass left after each break
        ones = torch.ones_like(x[..., :1])
        return torch.cat([z, ones], -1) * torch.cat([ones, left], -1)

    def _inverse(self, y):
        y_head = y[..., :-1]
        left = (1 - y_head.cumsum(-1)).clamp(min=torch.finfo(y.dtype).tiny)
        # z_k = y_k / (y_k + left_k), so logit(z_k) = log y_k - log left_k; then undo the offset
        return y_head.log() - left.log() - self._shifted(torch.zeros_like(y_head))

    def log_abs_det_jacobian(self, x, y):
        # triangular Jacobian: d y_k / d x_k = y_k (1 - z_k), and log(1 - z_k) = logsigmoid(-u_k)
        u = self._shifted(x)
        return (y[..., :-1].log() + _F.logsigmoid(-u)).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape[:-1] + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Square matrices to lower-triangular ones with a positive diagonal (exp of the diagonal)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    @staticmethod
    def _map_diagonal(m, fn):
        return m.tril(-1) + torch.diag_embed(fn(m.diagonal(dim1=-2, dim2=-1)))

    def _call(self, x):
        return self._map_diagonal(x, torch.exp)

    def _inverse(self, y):
        return self._map_diagonal(y, torch.log)


class PositiveDefiniteTransform(Transform):
    """Square matrices to positive definite ones: L L^T with L = LowerCholeskyTransform(x)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        chol = LowerCholeskyTransform()(x)
        return chol @ chol.transpose(-2, -1)

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(torch.linalg.cholesky(y))


class CorrCholeskyTransform(Transform):
    """Vectors of n(n-1)/2 reals to Cholesky factors of n x n correlation matrices.

    r = tanh(x) fills the strict lower triangle row by row; each row is a stick of unit length broken in
    order: L_ij = r_ij sqrt(prod_{k<j} (1 - r_ik^2)) for j < i and the diagonal takes what remains, so every
    row has unit norm. Its log |det| is sum over the strict triangle of log(1 - r^2) (tanh) plus half the log
    of the remaining length (the break)."""
    bijective = True
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky

    @staticmethod
    def _pieces(x):
        """(r as a matrix with 1 on the diagonal, log(1 - r^2) there (0 elsewhere), its exclusive row cumsum)."""
        r = vec_to_tril_matrix(torch.tanh(x), diag=-1)
        n = r.shape[-1]
        r = r + torch.eye(n, dtype=x.dtype, device=x.device)
        log_1mr2 = vec_to_tril_matrix(_log_sech2(x), diag=-1)
        before = log_1mr2.cumsum(-1) - log_1mr2
        return r, log_1mr2, before

    def _call(self, x):
        r, _, before = self._pieces(x)
        return r * torch.exp(0.5 * before)

    def _inverse(self, y):
        used = (y * y).cumsum(-1) - y * y  # squared length already taken before each entry
        r = y / torch.sqrt((1 - used).clamp(min=torch.finfo(y.dtype).tiny))
        return torch.atanh(tril_matrix_to_vec(r, diag=-1))

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        _, log_1mr2, before = self._pieces(x)
        strict = tril_matrix_to_vec(log_1mr2 + 0.5 * before, diag=-1)
        return strict.sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        m = shape[-1]
        n = round((1 + math.sqrt(1 + 8 * m)) / 2)
        if n * (n - 1) // 2 != m:
            raise ValueError("Input is not a flattend lower-diagonal number")
        return shape[:-1] + (n, n)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        n = shape[-1]
        return shape[:-2] + (n * (n - 1) // 2,)


# ---------------------------------------------------------------------------
# transforms built from other transforms or distributions


class ComposeTransform(Transform):
    """parts applied in order; the empty composition is the identity."""

    def __init__(self, parts, cache_size=0):
        parts = [p.with_cache(cache_size) for p in parts] if cache_size else list(parts)
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def _args(self):
        return (self.parts,)

    def _event_dims(self):
        """(domain event_dim, codomain event_dim): the most event dimensions any part needs, carried to the
        input (and then output) coordinates by the parts before it."""
        need, shift = 0, 0  # shift: input event dims minus the current part's
        for p in self.parts:
            need = max(need, p.domain.event_dim + shift)
            shift += p.domain.event_dim - p.codomain.event_dim
        return need, need - shift

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        d, extra = self.parts[0].domain, self._event_dims()[0] - self.parts[0].domain.event_dim
        return constraints.independent(d, extra) if extra > 0 else d

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        c, extra = self.parts[-1].codomain, self._event_dims()[1] - self.parts[-1].codomain.event_dim
        return constraints.independent(c, extra) if extra > 0 else c

    bijective = property(lambda self: all(p.bijective for p in self.parts))
    sign = property(lambda self: reduce(operator.mul, (p.sign for p in self.parts), 1))

    def _call(self, x):
        for p in self.parts:
            x = p(x)
        return x

    def _inverse(self, y):
        for p in reversed(self.parts):
            y = p.inv(y)
        return y

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return torch.zeros_like(x)
        points = [x]
        for p in self.parts[:-1]:
            points.append(p(points[-1]))
        points.append(y)
        total, event_dim = 0, self.domain.event_dim
        for p, a, b in zip(self.parts, points, points[1:]):
            total = total + sum_rightmost(p.log_abs_det_jacobian(a, b), event_dim - p.domain.event_dim)
            event_dim += p.codomain.event_dim - p.domain.event_dim
        return total

    def forward_shape(self, shape):
        for p in self.parts:
            shape = p.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for p in reversed(self.parts):
            shape = p.inverse_shape(shape)
        return shape

    def __repr__(self):
        return "ComposeTransform(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """base_transform with `reinterpreted_batch_ndims` more dimensions in each event."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def _args(self):
        return (self.base_transform, self.reinterpreted_batch_ndims)

    domain = property(lambda self: constraints.independent(self.base_transform.domain,
                                                           self.reinterpreted_batch_ndims))
    codomain = property(lambda self: constraints.independent(self.base_transform.codomain,
                                                             self.reinterpreted_batch_ndims))
    bijective = property(lambda self: self.base_transform.bijective)
    sign = property(lambda self: self.base_transform.sign)

    def _call(self, x):
        return self.base_transform(x)

    def _inverse(self, y):
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the rightmost in_shape dimensions to out_shape (volume preserving)."""
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = torch.Size(in_shape), torch.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    def _args(self):
        return (self.in_shape, self.out_shape)

    domain = property(lambda self: constraints.independent(constraints.real, len(self.in_shape)))
    codomain = property(lambda self: constraints.independent(constraints.real, len(self.out_shape)))

    @staticmethod
    def _swap(x, old, new):
        return x.reshape(tuple(x.shape[:x.dim() - len(old)]) + tuple(new))

    def _call(self, x):
        return self._swap(x, self.in_shape, self.out_shape)

    def _inverse(self, y):
        return self._swap(y, self.out_shape, self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(tuple(x.shape[:x.dim() - len(self.in_shape)]))

    @staticmethod
    def _reshaped(shape, old, new):
        cut = len(shape) - len(old)
        if cut < 0:
            raise ValueError("Too few dimensions on input")
        if tuple(shape[cut:]) != tuple(old):
            raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got {tuple(old)}")
        return torch.Size(tuple(shape[:cut]) + tuple(new))

    def forward_shape(self, shape):
        return self._reshaped(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._reshaped(shape, self.out_shape, self.in_shape)


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x): a distribution's support to the unit interval."""
    bijective = True
    sign = 1
    codomain = constraints.unit_interval

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    def _args(self):
        return (self.distribution,)

    domain = property(lambda self: self.distribution.support)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


class _Along(Transform):
    """Transforms applied to pieces of the input along `dim` (stack: its slices; cat: runs of `lengths`)."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) for t in tseq] if cache_size else list(tseq)
        self.dim = dim
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)

    bijective = property(lambda self: all(t.bijective for t in self.transforms))

    def _map(self, fn, *tensors):
        pieces = [self._split(t) for t in tensors]
        return self._join([fn(t, *parts) for t, *parts in zip(self.transforms, *pieces)])

    def _call(self, x):
        return self._map(lambda t, a: t(a), x)

    def _inverse(self, y):
        return self._map(lambda t, b: t.inv(b), y)

    def log_abs_det_jacobian(self, x, y):
        return self._map(lambda t, a, b: t.log_abs_det_jacobian(a, b), x, y)


class StackTransform(_Along):
    """The i-th transform on the i-th slice along dim; results stacked back."""

    def __init__(self, tseq, dim=0, cache_size=0):
        super().__init__(tseq, dim, None, cache_size)

    def _args(self):
        return (self.transforms, self.dim)

    def _split(self, x):
        return [x.select(self.dim, i) for i in range(x.shape[self.dim])]

    def _join(self, parts):
        return torch.stack(parts, self.dim)

    domain = property(lambda self: constraints.stack([t.domain for t in self.transforms], self.dim))
    codomain = property(lambda self: constraints.stack([t.codomain for t in self.transforms], self.dim))


class CatTransform(_Along):
    """The i-th transform on the i-th run (of lengths[i]) along dim; results concatenated."""

    def _args(self):
        return (self.transforms, self.dim, self.lengths)

    def _split(self, x):
        return x.split(self.lengths, self.dim)

    def _join(self, parts):
        return torch.cat(parts, self.dim)

    domain = property(lambda self: constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths))
    codomain = property(lambda self: constraints.cat([t.codomain for t in self.transforms], self.dim,
                                                     self.lengths))
