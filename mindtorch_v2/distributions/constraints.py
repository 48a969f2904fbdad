"""Constraints: the region a parameter or a value must lie in. `check(value)` returns a bool tensor over the
value's batch dimensions (its `event_dim` rightmost dimensions are reduced); `is_discrete` says whether the
region is countable. Singletons for fixed regions, classes (lower-case aliases) for parameterised ones."""
from . import _torch as torch
from .utils import _show

__all__ = [
    "Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property", "greater_than",
    "greater_than_eq", "independent", "integer_interval", "interval", "half_open_interval", "is_dependent",
    "less_than", "lower_cholesky", "lower_triangular", "MixtureSameFamilyConstraint", "multinomial", "nonnegative",
    "nonnegative_integer", "one_hot", "positive", "positive_semidefinite", "positive_definite", "positive_integer",
    "real", "real_vector", "simplex", "square", "stack", "symmetric", "unit_interval",
]


class Constraint:
    """A region; subclasses give `check`. The class name (less its leading underscore) names it."""
    is_discrete = False
    event_dim = 0
    _fields = ()  # the attributes the repr shows as keyword arguments

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        args = ", ".join(f"{f}={_show(getattr(self, f))}" for f in self._fields)
        return f"{type(self).__name__.lstrip('_')}({args})"


def _all_last(ok, n):
    """ok reduced with `all` over its n rightmost dimensions."""
    for _ in range(n):
        ok = ok.all(-1)
    return ok


def _is_integer(v):
    return v % 1 == 0


class _Dependent(Constraint):
    """A constraint that depends on other parameters (resolved by the distribution, never checked here)."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        return _Dependent(is_discrete=self._is_discrete if is_discrete is NotImplemented else is_discrete,
                          event_dim=self._event_dim if event_dim is NotImplemented else event_dim)

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    """Whether the constraint depends on other parameters (the distribution validates it itself)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property whose class-level value is a dependent constraint: `Uniform.support` is dependent,
    `Uniform(0, 1).support` is the interval it computes."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """base_constraint with `reinterpreted_batch_ndims` more dimensions treated as one event."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    is_discrete = property(lambda self: self.base_constraint.is_discrete)
    event_dim = property(lambda self: self.base_constraint.event_dim + self.reinterpreted_batch_ndims)

    def check(self, value):
        ok = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if ok.dim() < n:
            need = self.base_constraint.event_dim + n
            raise ValueError(f"Expected value.dim() >= {need} but got {value.dim()}")
        return _all_last(ok, n)

    def __repr__(self):
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class MixtureSameFamilyConstraint(Constraint):
    """The support of a mixture: the component support, checked without the component dimension."""

    def __init__(self, base_constraint):
        self.base_constraint = base_constraint

    is_discrete = property(lambda self: self.base_constraint.is_discrete)
    event_dim = property(lambda self: self.base_constraint.event_dim)

    def check(self, value):
        ok = self.base_constraint.check(value)
        keep = value.dim() - self.event_dim
        return ok if ok.dim() == 0 else ok.reshape(tuple(ok.shape[:keep]) + (-1,)).all(-1)

    def __repr__(self):
        return f"MixtureSameFamilyConstraint({self.base_constraint!r})"


def _region(name, fields, check, discrete=False):
    """A constraint class holding `fields` (its constructor's arguments) and checking elementwise."""
    def __init__(self, *bounds):
        for field, bound in zip(fields, bounds):
            setattr(self, field, bound)
    return type(name, (Constraint,), {"__init__": __init__, "_fields": fields, "check": check,
                                      "is_discrete": discrete})


_Real = _region("_Real", (), lambda s, v: v == v)  # not nan
_Boolean = _region("_Boolean", (), lambda s, v: (v == 0) | (v == 1), True)
_GreaterThan = _region("_GreaterThan", ("lower_bound",), lambda s, v: s.lower_bound < v)
_GreaterThanEq = _region("_GreaterThanEq", ("lower_bound",), lambda s, v: s.lower_bound <= v)
_LessThan = _region("_LessThan", ("upper_bound",), lambda s, v: v < s.upper_bound)
_Interval = _region("_Interval", ("lower_bound", "upper_bound"),
                    lambda s, v: (s.lower_bound <= v) & (v <= s.upper_bound))
_HalfOpenInterval = _region("_HalfOpenInterval", ("lower_bound", "upper_bound"),
                            lambda s, v: (s.lower_bound <= v) & (v < s.upper_bound))
_IntegerInterval = _region("_IntegerInterval", ("lower_bound", "upper_bound"),
                           lambda s, v: _is_integer(v) & (s.lower_bound <= v) & (v <= s.upper_bound), True)
_IntegerLessThan = _region("_IntegerLessThan", ("upper_bound",),
                           lambda s, v: _is_integer(v) & (v <= s.upper_bound), True)
_IntegerGreaterThan = _region("_IntegerGreaterThan", ("lower_bound",),
                              lambda s, v: _is_integer(v) & (v >= s.lower_bound), True)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Multinomial(Constraint):
    """Non-negative integer counts summing to at most upper_bound."""
    is_discrete = True
    event_dim = 1
    _fields = ("upper_bound",)

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return (value >= 0).all(-1) & (value.sum(-1) <= self.upper_bound)


class _Matrix(Constraint):
    """A predicate on square matrices (the last two dimensions)."""
    event_dim = 2


class _LowerTriangular(_Matrix):
    def check(self, value):
        return _all_last(value.tril() == value, 2)


class _LowerCholesky(_Matrix):
    def check(self, value):
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return _LowerTriangular.check(self, value) & positive_diagonal


class _CorrCholesky(_Matrix):
    """Lower Cholesky factors of correlation matrices: rows of unit norm."""

    def check(self, value):
        tol = torch.finfo(value.dtype).eps * value.shape[-1] * 10
        norms = value.detach().square().sum(-1).sqrt()
        return _LowerCholesky.check(self, value) & ((norms - 1).abs() <= tol).all(-1)


class _Square(_Matrix):
    def check(self, value):
        return torch.full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1], dtype=torch.bool,
                          device=value.device)


class _Symmetric(_Square):
    def check(self, value):
        square = _Square.check(self, value)
        if not bool(square.all()):
            return square
        return _all_last(torch.isclose(value, value.transpose(-2, -1), atol=1e-6), 2)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        sym = _Symmetric.check(self, value)
        return sym if not bool(sym.all()) else (torch.linalg.eigvalsh(value) >= 0).all(-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        sym = _Symmetric.check(self, value)
        return sym if not bool(sym.all()) else torch.linalg.cholesky_ex(value).info == 0


class _Joined(Constraint):
    """Constraints applied to the pieces of a value along `dim` (cat: pieces of `lengths`; stack: slices)."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq, self.dim = list(cseq), dim
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)

    is_discrete = property(lambda self: any(c.is_discrete for c in self.cseq))
    event_dim = property(lambda self: max(c.event_dim for c in self.cseq))


class _Cat(_Joined):
    def check(self, value):
        pieces = value.split(self.lengths, self.dim)
        return torch.cat([c.check(p) for c, p in zip(self.cseq, pieces)], self.dim)


class _Stack(_Joined):
    def check(self, value):
        dim = self.dim if self.dim >= 0 else self.dim + value.dim()
        return torch.stack([c.check(value.select(dim, i)) for i, c in enumerate(self.cseq)], dim)


greater_than, greater_than_eq, less_than = _GreaterThan, _GreaterThanEq, _LessThan
interval, half_open_interval, integer_interval = _Interval, _HalfOpenInterval, _IntegerInterval
integer_greater_than = _IntegerGreaterThan
dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = integer_greater_than(0)
positive_integer = integer_greater_than(1)
real = _Real()
real_vector = independent(real, 1)
positive = greater_than(0.0)
nonnegative = greater_than_eq(0.0)
unit_interval = interval(0.0, 1.0)
multinomial = _Multinomial
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
