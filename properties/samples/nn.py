"""Samples for the nn family (conv, max_pool, avg_pool, windows, windows_transpose) and einsum.

Arrays stay tiny (N <= 2, C <= 4, spatial <= 6) so the finite-difference checks are fast.
Values come from a drawn seed; max_pool draws a scaled permutation so no window has ties, which
keeps its samples away from the kinks (so they count as smooth, like abs and maximum samples).
"""
import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from mindtorch_v2 import core

from . import Sample, register


def _normal(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape)


def _distinct(seed, shape):
    n = int(np.prod(shape, dtype=np.int64))
    perm = np.random.default_rng(seed).permutation(n).reshape(shape)
    return (perm - n / 2.0) * 0.25  # gaps of 0.25 are far above the finite-difference step


def _out_size(size, k, s, lo, hi, d, ceil_mode):
    """torch's pooling output size, with (lo, hi) padding."""
    extent = d * (k - 1) + 1
    total = size + lo + hi
    if ceil_mode:
        o = -(-(total - extent) // s) + 1
        if (o - 1) * s >= size + lo:
            o -= 1
        return o
    return (total - extent) // s + 1


@st.composite
def _geometry(draw, rank=None, max_kernel=3, pad=True, dilate=True, max_rank=3, half_pad=False):
    """Spatial rank, sizes, kernel, stride, padding pairs and dilation such that the kernel fits."""
    k = draw(st.integers(1, max_rank)) if rank is None else rank
    small = k == 3  # keep 3-d samples tiny
    kernel, stride, dilation, padding, spatial = [], [], [], [], []
    for _ in range(k):
        kk = draw(st.integers(1, 2 if small else max_kernel))
        d = draw(st.integers(1, 2)) if dilate else 1
        top = min(1, kk // 2) if half_pad else 1  # pools: padding at most half the window (torch's rule)
        lo = draw(st.integers(0, top)) if pad else 0
        hi = draw(st.integers(0, top)) if pad else 0
        extent = d * (kk - 1) + 1
        size = draw(st.integers(max(1, extent - lo - hi), (4 if small else 6)))
        kernel.append(kk)
        stride.append(draw(st.integers(1, 2)))
        dilation.append(d)
        padding.append((lo, hi))
        spatial.append(size)
    return tuple(spatial), tuple(kernel), tuple(stride), tuple(padding), tuple(dilation)


@st.composite
def conv_samples(draw):
    spatial, kernel, stride, padding, dilation = draw(_geometry())
    groups = draw(st.integers(1, 2))
    cg = draw(st.integers(1, 2))
    og = draw(st.integers(1, 2))
    n = draw(st.integers(1, 2))
    seed = draw(st.integers(0, 2**31 - 1))
    x = _normal(seed, (n, groups * cg) + spatial)
    w = _normal(seed + 1, (groups * og, cg) + kernel)
    return Sample(args=(x, w), params=dict(stride=stride, padding=padding, dilation=dilation, groups=groups),
                  diff=(0, 1), smooth=True)


@st.composite
def windows_samples(draw):
    spatial, kernel, stride, _, dilation = draw(_geometry(pad=False))
    lead = tuple(draw(st.lists(st.integers(1, 2), min_size=0, max_size=2)))
    seed = draw(st.integers(0, 2**31 - 1))
    return Sample(args=(_normal(seed, lead + spatial),),
                  params=dict(kernel=kernel, stride=stride, dilation=dilation), diff=(0,), smooth=True)


@st.composite
def windows_transpose_samples(draw):
    spatial, kernel, stride, _, dilation = draw(_geometry(pad=False))
    out = tuple((s - (d * (k - 1) + 1)) // st_ + 1 for s, k, st_, d in zip(spatial, kernel, stride, dilation))
    lead = tuple(draw(st.lists(st.integers(1, 2), min_size=0, max_size=2)))
    seed = draw(st.integers(0, 2**31 - 1))
    return Sample(args=(_normal(seed, lead + out + kernel),),
                  params=dict(spatial=spatial, kernel=kernel, stride=stride, dilation=dilation),
                  diff=(0,), smooth=True)


def _every_window_hits_input(spatial, window, stride, padding, dilation, ceil_mode):
    """No window lies wholly in the padding (torch forbids it; its max would be -inf)."""
    for s, k, st_, (lo, hi), d in zip(spatial, window, stride, padding, dilation):
        for i in range(_out_size(s, k, st_, lo, hi, d, ceil_mode)):
            if not any(0 <= i * st_ - lo + j * d < s for j in range(k)):
                return False
    return True


@st.composite
def _pool_geometry(draw, dilate):
    spatial, window, stride, padding, dilation = draw(_geometry(max_rank=3, dilate=dilate, half_pad=True))
    ceil_mode = draw(st.booleans())
    assume(_every_window_hits_input(spatial, window, stride, padding, dilation, ceil_mode))
    return spatial, window, stride, padding, dilation, ceil_mode


@st.composite
def max_pool_samples(draw):
    spatial, window, stride, padding, dilation, ceil_mode = draw(_pool_geometry(dilate=True))
    lead = (draw(st.integers(1, 2)), draw(st.integers(1, 3)))
    seed = draw(st.integers(0, 2**31 - 1))
    return Sample(args=(_distinct(seed, lead + spatial),),
                  params=dict(window=window, stride=stride, padding=padding, dilation=dilation,
                              ceil_mode=ceil_mode),
                  diff=(0,), smooth=True)  # no ties, gaps of 0.25: central differences stay on one branch


@st.composite
def avg_pool_samples(draw):
    spatial, window, stride, padding, _, ceil_mode = draw(_pool_geometry(dilate=False))
    lead = (draw(st.integers(1, 2)), draw(st.integers(1, 3)))
    seed = draw(st.integers(0, 2**31 - 1))
    return Sample(args=(_normal(seed, lead + spatial),),
                  params=dict(window=window, stride=stride, padding=padding, ceil_mode=ceil_mode,
                              count_include_pad=draw(st.booleans())),
                  diff=(0,), smooth=True)


# normalized explicit specs: matmul, batch matmul, outer, transpose, reductions, three operands,
# a 0-d operand, and a letter only one operand has (its cotangent is broadcast back)
_EINSUM_SPECS = (
    "ij,jk->ik", "bij,bjk->bik", "i,j->ij", "ij->ji", "ijk->ki", "ij->", "ij,ij->i",
    "ij,jk,kl->il", ",ij->ij", "ij,ik->k", "nchw,oc->nohw", "abc,cd->dba",
)


@st.composite
def einsum_samples(draw):
    spec = draw(st.sampled_from(_EINSUM_SPECS))
    ins = spec.split("->")[0].split(",")
    sizes = {c: draw(st.integers(1, 4)) for c in sorted(set("".join(ins)))}
    seed = draw(st.integers(0, 2**31 - 1))
    args = tuple(_normal(seed + i, tuple(sizes[c] for c in term)) for i, term in enumerate(ins))
    return Sample(args=args, params=dict(spec=spec), diff=tuple(range(len(args))), smooth=True)


register(core.conv_p, conv_samples())
register(core.windows_p, windows_samples(), linear=True)
register(core.windows_transpose_p, windows_transpose_samples(), linear=True)
register(core.max_pool_p, max_pool_samples())
register(core.avg_pool_p, avg_pool_samples(), linear=True)
register(core.einsum_p, einsum_samples())
