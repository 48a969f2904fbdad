"""torch.distributions for mindtorch_v2: parameterised distributions with sampling (reparameterised where the
family allows), log densities, moments and entropies, constraints, transforms, biject_to / transform_to and a
KL registry, all written with mindtorch_v2's tensor ops so that autograd, torch.func and meta tensors work
through them. The samplers PyTorch keeps in C++ (gamma with its implicit gradient, Dirichlet, Poisson,
binomial) are in `_samplers.py`.

Layout: `distribution.py` (the base class and the probs/logits parameterisation), `continuous.py`
(location-scale families, Uniform, Exponential, Gamma, Beta, StudentT), `discrete.py`, `multivariate.py`,
`transformed.py` (Independent, TransformedDistribution, LogNormal), `kl.py`, `constraints.py`,
`transforms.py`, `constraint_registry.py`.
"""
from . import constraints, transforms
from .constraint_registry import biject_to, transform_to
from .continuous import Beta, Cauchy, Chi2, Exponential, Gamma, Gumbel, Laplace, Normal, StudentT, Uniform
from .discrete import (
    Bernoulli, Binomial, Categorical, OneHotCategorical, OneHotCategoricalStraightThrough, Poisson,
)
from .distribution import Distribution, ExponentialFamily
from .kl import kl_divergence, register_kl
from .multivariate import Dirichlet, MultivariateNormal
from .transformed import Independent, LogNormal, TransformedDistribution
from .transforms import (
    AbsTransform, AffineTransform, CatTransform, ComposeTransform, CorrCholeskyTransform,
    CumulativeDistributionTransform, ExpTransform, IndependentTransform, LowerCholeskyTransform,
    PositiveDefiniteTransform, PowerTransform, ReshapeTransform, SigmoidTransform, SoftmaxTransform,
    SoftplusTransform, StackTransform, StickBreakingTransform, TanhTransform, Transform, identity_transform,
)

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet", "Distribution", "Exponential",
    "ExponentialFamily", "Gamma", "Gumbel", "Independent", "Laplace", "LogNormal", "MultivariateNormal", "Normal",
    "OneHotCategorical", "OneHotCategoricalStraightThrough", "Poisson", "StudentT", "TransformedDistribution",
    "Uniform", "biject_to", "kl_divergence", "register_kl", "transform_to",
]
__all__.extend(transforms.__all__)
