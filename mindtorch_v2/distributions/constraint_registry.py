"""biject_to(c) and transform_to(c): a transform from unconstrained reals onto the region of constraint c.
biject_to gives bijections (for samplers that move in unconstrained space); transform_to may give any
surjection (for optimising a constrained parameter). Both dispatch on the constraint's class."""
from numbers import Number

from . import constraints
from . import transforms as T

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Constraint class -> factory(constraint) -> Transform."""

    def __init__(self):
        self._registry = {}

    def register(self, constraint, factory=None):
        """Register factory for a constraint class (or the class of a constraint); usable as a decorator."""
        if factory is None:
            return lambda f: self.register(constraint, f)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not (isinstance(constraint, type) and issubclass(constraint, constraints.Constraint)):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or instance, "
                            f"but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        factory = self._registry.get(type(constraint))
        if factory is None:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(constraint_classes, factory):
    for c in constraint_classes:
        biject_to.register(c, factory)
        transform_to.register(c, factory)


def _is(x, number):
    return isinstance(x, Number) and x == number


def _shifted_exp(c):
    if hasattr(c, "upper_bound"):  # less_than: upper - exp(x)
        return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(c.upper_bound, -1)])
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(c.lower_bound, 1)])


def _squashed(c):
    lo, hi = c.lower_bound, c.upper_bound
    if _is(lo, 0) and _is(hi, 1):
        return T.SigmoidTransform()
    return T.ComposeTransform([T.SigmoidTransform(), T.AffineTransform(lo, hi - lo)])


_both([constraints._Real], lambda c: T.identity_transform)
_both([type(constraints.positive), type(constraints.nonnegative)],
      lambda c: T.ExpTransform() if _is(c.lower_bound, 0) else _shifted_exp(c))
_both([constraints._LessThan], _shifted_exp)
_both([constraints._Interval, constraints._HalfOpenInterval], _squashed)
_both([constraints._CorrCholesky], lambda c: T.CorrCholeskyTransform())
biject_to.register(constraints._Simplex, lambda c: T.StickBreakingTransform())
transform_to.register(constraints._Simplex, lambda c: T.SoftmaxTransform())
transform_to.register(constraints._LowerCholesky, lambda c: T.LowerCholeskyTransform())
transform_to.register(constraints._PositiveDefinite, lambda c: T.PositiveDefiniteTransform())
transform_to.register(constraints._PositiveSemidefinite, lambda c: T.PositiveDefiniteTransform())

for _registry in (biject_to, transform_to):
    _registry.register(constraints._IndependentConstraint, lambda c, r=_registry: T.IndependentTransform(
        r(c.base_constraint), c.reinterpreted_batch_ndims))
    _registry.register(constraints._Cat, lambda c, r=_registry: T.CatTransform(
        [r(x) for x in c.cseq], c.dim, c.lengths))
    _registry.register(constraints._Stack, lambda c, r=_registry: T.StackTransform(
        [r(x) for x in c.cseq], c.dim))
del _registry
