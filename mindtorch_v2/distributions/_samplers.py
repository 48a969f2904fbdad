"""Samplers PyTorch has as kernels (torch._standard_gamma, torch._sample_dirichlet, torch.poisson,
torch.binomial), written with tensor ops over the global generator's uniform and normal draws.

Each is a vectorised rejection sampler: every round draws fresh uniforms/normals for the whole shape and
keeps the first accepted proposal of each element, until all are accepted. The numbers come from
torch.rand/torch.randn, so they follow whatever stream the generator gives; the algorithms are PyTorch's
(Marsaglia-Tsang gamma, Hormann's PTRS for Poisson and BTRS for binomial), computed in float64 as
PyTorch's CPU kernels compute in double.

`standard_gamma` is differentiable in its concentration by implicit reparameterisation, as
torch._standard_gamma: d sample / d alpha = -(dCDF/dalpha) / pdf at the drawn sample, evaluated with the
same three approximations as PyTorch's `standard_gamma_grad_one` (Taylor series for small x, Rice saddle
point for large alpha, a bivariate rational fit elsewhere).
"""
import math

from ..eager import grad_mode
from ..eager.inplace import _zero_gradient_to
from ..eager.tensor import _named
from . import _torch as torch
from ._torch import autograd

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _on_meta(t):
    return t.device.type == "meta"


def _accept_loop(shape, propose, generator, dtype):
    """Elementwise rejection sampling: propose(n) -> (value, accepted) per round, first acceptance wins."""
    out = torch.zeros(shape, dtype=dtype)
    pending = torch.ones(shape, dtype=torch.bool)
    while bool(pending.any()):
        value, accepted = propose(generator)
        take = pending & accepted
        out = torch.where(take, value, out)
        pending = pending & ~accepted
    return out


def _gamma_draw(alpha, generator=None):
    """Gamma(alpha, 1) samples (no gradient), alpha a float tensor; float64 inside, alpha's dtype out."""
    if _on_meta(alpha):
        return torch.empty(alpha.shape, dtype=alpha.dtype, device=alpha.device)
    a = alpha.detach().to(torch.float64)
    shape = tuple(a.shape)
    boost = a < 1  # Gamma(a) = Gamma(a + 1) * U ** (1 / a)
    d = torch.where(boost, a + 1, a) - 1.0 / 3.0
    c = 1.0 / torch.sqrt(9.0 * d)

    def propose(gen):
        x = torch.randn(shape, generator=gen, dtype=torch.float64)
        u = torch.rand(shape, generator=gen, dtype=torch.float64)
        v = (1 + c * x) ** 3
        ok = v > 0
        v = torch.where(ok, v, torch.ones_like(v))
        accepted = ok & (torch.log1p(-u) < 0.5 * x * x + d - d * v + d * torch.log(v))
        return d * v, accepted

    g = _accept_loop(shape, propose, generator, torch.float64)
    if bool(boost.any()):
        u = torch.rand(shape, generator=generator, dtype=torch.float64)
        g = torch.where(boost, g * torch.exp(torch.log1p(-u) / a), g)
    tiny = torch.finfo(alpha.dtype).tiny
    return g.clamp(min=tiny).to(alpha.dtype)


_RATIONAL = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084),
    (0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
     -1.5247877e-07),
)


def standard_gamma_grad(alpha, x):
    """d x / d alpha for x ~ Gamma(alpha, 1) held at its quantile (torch._standard_gamma_grad(alpha, x))."""
    dtype = x.dtype
    a, x = torch.broadcast_tensors(alpha.detach().to(torch.float64), x.detach().to(torch.float64))
    # Taylor series of the CDF for small x
    numer, denom = torch.ones_like(x), a
    series1, series2 = 1 / a, 1 / (a * a)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = x ** a
    pdf = x ** (a - 1) * torch.exp(-x)
    cdf = pow_x_alpha * series1
    cdf_alpha = (torch.log(x) - torch.digamma(a)) * cdf - pow_x_alpha * series2
    small = -cdf_alpha / pdf
    small = torch.where(small.isnan(), torch.zeros_like(small), small)
    # Rice saddle point expansion for large alpha: near the mode, and away from it
    near = ((1 + 24 * a * (1 + 12 * a)) * (1440 * a * a + 6 * x * (53 - 120 * x) - 65 * x * x / a
                                           + a * (107 + 3600 * x)) / (1244160 * a * a * a * a))
    root = torch.sqrt(8 * a)
    term2 = root / (a - x)
    term3 = (x - a - a * torch.log(x / a)) ** -1.5
    term23 = torch.where(x < a, term2 - term3, term2 + term3)
    term1 = torch.log(x / a) * term23 - torch.sqrt(2 / a) * (a + x) / ((a - x) * (a - x))
    stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
    far = -stirling * x * term1 / root
    large = torch.where((0.9 * a <= x) & (x <= 1.1 * a), near, far)
    # bivariate rational approximation elsewhere
    u, v = torch.log(x / a), torch.log(a)
    cv = [_RATIONAL[0][i] + u * (_RATIONAL[1][i] + u * _RATIONAL[2][i]) for i in range(8)]
    p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]))
    q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]))
    rational = torch.exp(p / q)
    out = torch.where(x < 0.8, small, torch.where(a > 8, large, rational))
    return out.to(dtype)


class _StandardGamma(autograd.Function):
    """Gamma(alpha, 1) draws with the implicit reparameterisation gradient (torch._standard_gamma)."""

    @staticmethod
    def forward(ctx, alpha, generator):
        x = _gamma_draw(alpha, generator)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    @autograd.function.once_differentiable
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        return grad * standard_gamma_grad(alpha, x), None


def standard_gamma(alpha, generator=None):
    """Gamma(alpha, 1) samples, differentiable in alpha (as torch._standard_gamma)."""
    # the Function only serves the eager tape: inside torch.func transforms the tape is off (and an old-style
    # Function raises there, as PyTorch's)
    if alpha.requires_grad and grad_mode.tape_enabled():
        return _StandardGamma.apply(alpha, generator)
    return _gamma_draw(alpha, generator)


def sample_dirichlet(concentration, generator=None):
    """Dirichlet(concentration) samples on the last dim: normalised standard gammas, each reparameterised,
    so the draw is differentiable in the concentration."""
    g = standard_gamma(concentration, generator)
    x = g / g.sum(-1, True)
    tiny = torch.finfo(x.dtype).tiny
    return x.clamp(min=tiny, max=1 - torch.finfo(x.dtype).eps / 2) if not _on_meta(x) else x


def _poisson(rate, generator=None):
    """Poisson(rate) counts as floats of rate's dtype (torch.poisson): Knuth's product of uniforms for
    rate < 10, Hormann's transformed rejection (PTRS) above."""
    if _on_meta(rate):
        return torch.empty(rate.shape, dtype=rate.dtype, device=rate.device)
    lam = rate.detach().to(torch.float64)
    shape = tuple(lam.shape)
    big = lam >= 10
    # small rates: count uniforms until their product drops below exp(-lam)
    small_lam = torch.where(big, torch.zeros_like(lam), lam)
    limit = torch.exp(-small_lam)
    prod = torch.ones_like(lam)
    count = torch.zeros_like(lam)
    active = ~big & (lam > 0)
    while bool(active.any()):
        prod = prod * torch.rand(shape, generator=generator, dtype=torch.float64)
        go_on = active & (prod > limit)
        count = count + go_on.to(torch.float64)
        active = go_on
    # large rates: PTRS
    lam_b = torch.where(big, lam, torch.full_like(lam, 10.0))
    slam, loglam = torch.sqrt(lam_b), torch.log(lam_b)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)

    def propose(gen):
        u = torch.rand(shape, generator=gen, dtype=torch.float64) - 0.5
        v = torch.rand(shape, generator=gen, dtype=torch.float64)
        us = 0.5 - u.abs()
        k = torch.floor((2 * a / us + b) * u + lam_b + 0.43)
        quick = (us >= 0.07) & (v <= vr)
        possible = (k >= 0) & ~((us < 0.013) & (v > us))
        kk = k.clamp(min=0)
        slow = (torch.log(v) + torch.log(invalpha) - torch.log(a / (us * us) + b)
                <= -lam_b + kk * loglam - torch.lgamma(kk + 1))
        return k, quick | (possible & slow)

    if bool(big.any()):
        drawn = _accept_loop(shape, propose, generator, torch.float64)
        count = torch.where(big, drawn, count)
    return count.to(rate.dtype)


def _stirling_tail(k):
    """log k! minus its Stirling approximation (k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2."""
    return torch.lgamma(k + 1) - ((k + 0.5) * torch.log(k + 1) - (k + 1) + _HALF_LOG_2PI)


def _binomial(count, prob, generator=None):
    """Binomial(count, prob) draws as floats (torch.binomial): inversion by geometric waiting times when
    count * min(p, 1 - p) < 10, Hormann's BTRS otherwise; p > 1/2 is drawn as count - Binomial(count, 1 - p)."""
    count, prob = torch.broadcast_tensors(count, prob)
    if _on_meta(count):
        return torch.empty(count.shape, dtype=count.dtype, device=count.device)
    n = count.detach().to(torch.float64)
    p0 = prob.detach().to(torch.float64)
    shape = tuple(n.shape)
    flip = p0 > 0.5
    p = torch.where(flip, 1 - p0, p0)
    degenerate = (n <= 0) | (p <= 0)
    use_btrs = (n * p >= 10) & ~degenerate
    # inversion: number of geometric waiting times that fit into n trials
    p_inv = torch.where(use_btrs | degenerate, torch.full_like(p, 0.5), p)
    logq = torch.log1p(-p_inv)
    geom_sum = torch.zeros_like(n)
    k_inv = torch.zeros_like(n)
    active = ~use_btrs & ~degenerate
    while bool(active.any()):
        u = torch.rand(shape, generator=generator, dtype=torch.float64)
        geom = torch.ceil(torch.log(u) / logq)
        geom_sum = geom_sum + torch.where(active, geom, torch.zeros_like(geom))
        fits = active & (geom_sum <= n)
        k_inv = k_inv + fits.to(torch.float64)
        active = fits
    # BTRS
    n_b = torch.where(use_btrs, n, torch.full_like(n, 40.0))
    p_b = torch.where(use_btrs, p, torch.full_like(p, 0.5))
    stddev = torch.sqrt(n_b * p_b * (1 - p_b))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * p_b
    c = n_b * p_b + 0.5
    v_r = 0.92 - 4.2 / b
    r = p_b / (1 - p_b)
    alpha = (2.83 + 5.1 / b) * stddev
    m = torch.floor((n_b + 1) * p_b)

    def propose(gen):
        u = torch.rand(shape, generator=gen, dtype=torch.float64) - 0.5
        v = torch.rand(shape, generator=gen, dtype=torch.float64)
        us = 0.5 - u.abs()
        k = torch.floor((2 * a / us + b) * u + c)
        inside = (k >= 0) & (k <= n_b)
        quick = (us >= 0.07) & (v <= v_r)
        kk = k.clamp(min=0).minimum(n_b)
        logv = torch.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * torch.log((m + 1) / (r * (n_b - m + 1)))
                 + (n_b + 1) * torch.log((n_b - m + 1) / (n_b - kk + 1))
                 + (kk + 0.5) * torch.log(r * (n_b - kk + 1) / (kk + 1))
                 + _stirling_tail(m) + _stirling_tail(n_b - m) - _stirling_tail(kk) - _stirling_tail(n_b - kk))
        return k, inside & (quick | (logv <= bound))

    k = k_inv
    if bool(use_btrs.any()):
        k = torch.where(use_btrs, _accept_loop(shape, propose, generator, torch.float64), k)
    k = torch.where(degenerate, torch.zeros_like(k), k)
    k = torch.where(flip, n - k, k)
    return k.to(count.dtype)


# ---------------------------------------------------------------------------
# torch.poisson and torch.binomial: the samplers with PyTorch's checks and autograd behaviour


def poisson(input, generator=None):
    """Counts drawn from Poisson(input) elementwise, as floats of input's dtype (torch.poisson). A rate that
    requires grad gives a result that requires grad, whose gradient is zero (PyTorch's PoissonBackward0)."""
    if not input.is_floating_point():
        raise NotImplementedError(f'"poisson_cpu" not implemented for \'{input.dtype.scalar_name}\'')
    if not _on_meta(input) and input.numel() and bool(((input < 0) | input.isnan()).any()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    infinite = input.isinf() if not _on_meta(input) else None
    if infinite is not None and not bool(infinite.any()):
        infinite = None
    draw = _poisson(input if infinite is None else torch.where(infinite, 0.0, input), generator)
    if infinite is not None:
        draw = torch.where(infinite, input.detach(), draw)  # (an infinite rate: infinitely many)
    return _zero_gradient(draw, input, "PoissonBackward0")


def binomial(count, prob, generator=None):
    """Successes in count trials of probability prob, elementwise, as floats (torch.binomial); its derivative is
    not implemented, as PyTorch's."""
    if not count.is_floating_point():
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{count.dtype.scalar_name}")
    if not prob.is_floating_point():
        raise ValueError(f"binomial only supports floating-point dtypes for prob, got: {prob.dtype.scalar_name}")
    draw = _binomial(count, prob.clamp(0.0, 1.0) if not _on_meta(prob) else prob, generator)
    if grad_mode.is_grad_enabled() and (count.requires_grad or prob.requires_grad):
        return _NoDerivative.apply(draw, count, prob)
    return draw


def _zero_gradient(draw, rate, name):
    """draw, tracking rate with a zero gradient where rate requires grad (the node named as PyTorch's)."""
    if not (grad_mode.is_grad_enabled() and rate.requires_grad):
        return draw
    return _named(_zero_gradient_to(draw, rate), name, rate)


class _NoDerivative(autograd.Function):
    """A draw that tracks its parameters but has no derivative (torch.binomial's NotImplemented node)."""

    @staticmethod
    def forward(ctx, draw, count, prob):
        return draw.clone()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("the derivative for 'binomial' is not implemented.")
