"""The loss functions of torch.nn.functional (re-exported there), as composites of tensor ops.

Reductions: 'none' keeps the per-element loss, 'sum' adds it up, 'mean' divides by
the element count, or for nll_loss / cross_entropy with class indices by the sum
of the weights of the targets that are not ignore_index (torch's definition).
"""
import math
import warnings

import numpy as np

from ..core import float16, int64, uint8
from ..core import nll_loss as _core_nll_loss
from ..eager.autocast_state import full_precision
from ..eager.creation import arange, full, tensor
from ..eager.grad_mode import is_grad_enabled
from ..eager.ops import exp, log, log1p, log_softmax, minimum, sqrt, stack, where
from ..eager.tensor import Tensor, _named
from ._utils import concrete, pad_last

_REDUCTIONS = ("none", "mean", "sum")


def _legacy_reduction(size_average, reduce, reduction):
    """torch's size_average / reduce arguments mapped onto `reduction` (they win when given)."""
    if size_average is None and reduce is None:
        return reduction
    warnings.warn("size_average and reduce args will be deprecated, please use reduction='{}' instead.".format(
        "mean" if (size_average is None or size_average) and (reduce is None or reduce) else
        "sum" if reduce is None or reduce else "none"), UserWarning, stacklevel=3)
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_reduction(reduction, allowed=_REDUCTIONS):
    if reduction not in allowed:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _warn_size(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", UserWarning, stacklevel=3)


def _neg_logsigmoid(x):
    """-log(sigmoid(x)) = softplus(-x), stable for large |x|, with the exact derivative -(1 - sigmoid(x))
    everywhere (also at 0; an |x| form gives a wrong subgradient there)."""
    pos = log1p(exp(-x.clamp(min=0)))
    neg = log1p(exp(x.clamp(max=0))) - x
    return where(x >= 0, pos, neg)


# ---------------------------------------------------------------------------
# regression


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """(input - target)^2, reduced."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _warn_size(input, target)
    d = input - target
    loss = d * d
    if weight is not None:
        return _reduce(loss * weight, reduction)
    return _named(_reduce(loss, reduction), "MseLossBackward0", input, target)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """|input - target|, reduced."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _warn_size(input, target)
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (plain L1 when beta == 0)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _warn_size(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = (input - target).abs()
    if beta == 0.0:
        return _reduce(d, reduction)
    loss = where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    _check_reduction(reduction)
    _warn_size(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = (input - target).abs()
    loss = where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# ---------------------------------------------------------------------------
# classification


def _check_weight(weight, c):
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != c):
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no classes but got "
                           f"weight tensor of shape: {list(weight.shape)}")


def _class_targets(input, target, name):
    """(input as (N, C, ...), target as (N, ...), unbatched?) after torch's shape and dtype checks."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    unbatched = input.ndim == 1
    if not unbatched and (target.ndim == 0 or input.shape[0] != target.shape[0]):  # torch checks this first
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0] if target.ndim else 1}).")
    if target.dtype is not int64 and target.dtype is not uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {target.dtype.scalar_name}")
    if unbatched:
        if target.ndim != 0:
            raise RuntimeError(f"{name}: for an unbatched input of shape {list(input.shape)} the target must be a "
                               f"0-dim tensor, got shape {list(target.shape)}")
        return input.unsqueeze(0), target.reshape(1), True
    if target.ndim == 0 or input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0] if target.ndim else 1}).")
    expected = (input.shape[0],) + tuple(input.shape[2:])
    if tuple(target.shape) != expected:
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(target.shape)}")
    return input, target, False


def _nll(x, target, weight, ignore_index, reduction):
    """-weight[t] * x[n, t, ...] per position (0 where t == ignore_index), reduced: core.nll_loss (one primitive
    each way, PyTorch's nll_loss_forward / nll_loss_backward) after torch's checks of the weight; the lowering
    raises torch's IndexError for a target out of range, as PyTorch's kernel does."""
    if weight is not None:
        if weight.requires_grad and is_grad_enabled():
            op = "nll_loss_forward" if x.ndim == 2 else "nll_loss2d_forward"
            raise RuntimeError(f"The function '{op}' is not differentiable with respect to argument 'weight'. "
                               "This input cannot have requires_grad True.")
        if weight.dtype is not x.dtype:  # (torch does not cast it)
            raise RuntimeError(f"expected scalar type {x.dtype.scalar_name} but found {weight.dtype.scalar_name}")
    return _core_nll_loss(x, target, weight, ignore_index=ignore_index, reduction=reduction)


def _ignore_index(value, fn):
    """ignore_index as an int, with the TypeError of torch's argument parser for anything else (1.0, None)."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise TypeError(f"{fn}(): argument 'ignore_index' (position 5) must be int, not {type(value).__name__}")
    return value.__index__()


def _smoothing_denominator(x, target, weight, ignore_index):
    """(valid, denominator) for label smoothing: the mask of the positions kept (None when all are) and the
    summed weight[t] over them that 'mean' divides by."""
    values = concrete(target)
    valid = None if values is not None and not (values == ignore_index).any() else target != ignore_index
    if weight is None:
        return valid, float(target.numel()) if valid is None else valid.sum()
    safe = target if valid is None else where(valid, target, 0)
    w = weight.to(x.dtype).index_select(0, safe.reshape(-1)).reshape(safe.shape)
    return valid, (w if valid is None else where(valid, w, 0.0)).sum()


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """-weight[t] * input[n, t] for log-probabilities input (N, C, ...) and class indices t; 'mean' divides by
    the summed weights of the targets that are not ignore_index."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    ignore_index = _ignore_index(ignore_index, "nll_loss_nd")
    input, weight = full_precision(input, weight)  # (autocast runs it in float32, as PyTorch's)
    x, t, unbatched = _class_targets(input, target, "nll_loss")
    _check_weight(weight, x.shape[1])
    loss = _nll(x, t, weight, ignore_index, reduction)
    if reduction == "none" and unbatched:
        loss = loss.squeeze(0)
    return _nll_named(loss, x)


def _nll_named(loss, x):
    """loss with torch's node name: NllLossBackward0 for (N, C) input, NllLoss2DBackward0 for (N, C, H, W)."""
    name = {2: "NllLossBackward0", 4: "NllLoss2DBackward0"}.get(x.ndim)
    if x.ndim == 3 or x.ndim > 4:  # torch views (N, C, d...) as (N, C, 1, d): a 'none' loss is that view's node
        name = "ViewBackward0" if loss.ndim else "NllLoss2DBackward0"
    return loss if name is None else _named(loss, name, x)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """log_softmax over the class dim (1, or 0 unbatched) then NLL; targets are class indices or, with the
    input's shape and a float dtype, class probabilities. label_smoothing mixes in the uniform distribution."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    ignore_index = _ignore_index(ignore_index, "cross_entropy_loss")
    input, target, weight = full_precision(input, target, weight)  # (autocast runs it in float32, as PyTorch's)
    class_dim = 0 if input.ndim == 1 else 1
    c = input.shape[class_dim]
    _check_weight(weight, c)
    logp = log_softmax(input, class_dim)
    wshape = tuple(c if i == class_dim else 1 for i in range(input.ndim))
    if target.is_floating_point() and tuple(target.shape) == tuple(input.shape):
        if label_smoothing > 0.0:
            target = target * (1.0 - label_smoothing) + label_smoothing / c
        prod = logp * target
        if weight is not None:
            prod = prod * weight.reshape(wshape)
        loss = -prod.sum(class_dim)
        if reduction == "none":
            return loss
        if reduction == "sum":
            return loss.sum()
        return loss.sum() / (input.numel() // c if c else 0)
    x, t, unbatched = _class_targets(logp, target, "cross_entropy")
    loss = _nll(x, t, weight, ignore_index, reduction)
    if label_smoothing > 0.0:
        valid, denom = _smoothing_denominator(x, t, weight, ignore_index)
        # torch: (1 - eps) * nll + eps / C * smooth, smooth = -sum_c w_c logp_c (0 at ignored positions);
        # 'mean' divides both by the same summed target weights
        xs = x if weight is None else x * weight.reshape((1, c) + (1,) * (x.ndim - 2))
        smooth = -xs.sum(1)
        if valid is not None:
            smooth = where(valid, smooth, 0.0)
        if reduction == "sum":
            smooth = smooth.sum()
        elif reduction == "mean":
            smooth = smooth.sum() / denom
        loss = loss * (1.0 - label_smoothing) + smooth * (label_smoothing / c)
    if reduction == "none" and unbatched:
        loss = loss.squeeze(0)
    return loss if label_smoothing > 0.0 else _nll_named(loss, x)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-w (t log x + (1 - t) log(1 - x)), each log clamped at -100 as in torch."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {target.dtype.scalar_name} but expected {input.dtype.scalar_name}")
    values = concrete(input)
    if values is not None and not np.all((values >= 0) & (values <= 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    loss = (target - 1.0) * log1p(-input).clamp(min=-100.0) - target * log(input).clamp(min=-100.0)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """sigmoid + BCE in one stable expression: (1 - t) x + (1 + (pos_weight - 1) t) softplus(-x)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    sp = _neg_logsigmoid(input)
    if pos_weight is not None:
        loss = (1.0 - target) * input + (1.0 + (pos_weight - 1.0) * target) * sp
    else:
        loss = (1.0 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target * (log target - input) pointwise (input is log-probabilities; target too when log_target)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, _REDUCTIONS + ("batchmean",))
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=2)
    if log_target:
        loss = exp(target) * (target - input)
    else:
        zero = target == 0
        loss = where(zero, 0.0, target * log(where(zero, 1.0, target))) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return _reduce(loss, reduction)


def _int_list(v):
    if isinstance(v, Tensor):
        return [int(a) for a in np.asarray(v.detach()).reshape(-1)]
    if isinstance(v, int):
        return [v]
    return [int(a) for a in v]


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """-log p(target | input) summed over all CTC alignments, for log_probs (T, N, C) (or (T, C)).

    The forward (alpha) recursion runs over time in log space for the whole batch at once, over the
    targets extended with blanks (b, l1, b, l2, ..., b); 'mean' divides each loss by its target length
    (at least 1) before averaging. The impossible-alignment value is a large finite negative number
    rather than -inf, so the masked branches keep finite gradients; a loss that stays at it is inf
    (0 with zero_infinity).
    """
    _check_reduction(reduction)
    unbatched = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    if lp.ndim != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs of 2 or 3 dimensions, got {log_probs.ndim}")
    steps, batch, classes = lp.shape
    in_lens, tgt_lens = _int_list(input_lengths), _int_list(target_lengths)
    if len(in_lens) != batch or len(tgt_lens) != batch:
        raise RuntimeError(f"input_lengths and target_lengths must have {batch} entries, got {len(in_lens)} and "
                           f"{len(tgt_lens)}")
    if any(n > steps for n in in_lens):
        raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got value "
                           f"{max(in_lens)}")
    tv = np.asarray(targets.detach()).astype(np.int64)
    if unbatched or tv.ndim == 1:
        offsets = np.cumsum([0] + tgt_lens)
        rows = [tv[offsets[i]:offsets[i + 1]] for i in range(batch)]
    else:
        rows = [tv[i, :n] for i, n in enumerate(tgt_lens)]
    width = 2 * max(tgt_lens + [0]) + 1
    ext = np.full((batch, width), blank, np.int64)
    skip = np.zeros((batch, width), bool)
    for i, row in enumerate(rows):
        ext[i, 1:2 * len(row):2] = row
        # a label may follow the previous label directly (skipping the blank) unless they are equal
        skip[i, 3:2 * len(row):2] = row[1:] != row[:-1]
    neg = -1e30 if lp.dtype is not float16 else -1e4
    ext_t = tensor(ext, device=lp.device)
    skip_t = tensor(skip, device=lp.device)
    alive = [tensor([t < n for n in in_lens], device=lp.device).unsqueeze(1) for t in range(steps)]
    alpha = full((batch, width), neg, dtype=lp.dtype, device=lp.device)
    alpha = where(arange(width, device=lp.device) == 0, 0.0, alpha)
    for t in range(steps):
        a1 = pad_last(alpha, (1, 0), neg)[:, :width]
        a2 = where(skip_t, pad_last(alpha, (2, 0), neg)[:, :width], neg)
        new = stack([alpha, a1, a2]).logsumexp(0) + lp[t].gather(1, ext_t)
        alpha = where(alive[t], new, alpha)
    last = tensor([[2 * n, max(2 * n - 1, 0)] for n in tgt_lens], device=lp.device)
    ends = alpha.gather(1, last)
    ends = where(tensor([[True, n > 0] for n in tgt_lens], device=lp.device), ends, neg)
    ll = ends.logsumexp(1)
    impossible = ll < neg / 2
    if zero_infinity:
        loss = where(impossible, 0.0, -ll)
    else:
        loss = where(impossible, math.inf, -ll)
    if reduction == "none":
        return loss.squeeze(0) if unbatched else loss
    if reduction == "sum":
        return loss.sum()
    lengths = tensor([max(n, 1) for n in tgt_lens], dtype=loss.dtype, device=lp.device)
    return (loss / lengths).mean()


# ---------------------------------------------------------------------------
# ranking, embedding and other losses


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    loss = where(target != 1, (margin - input).clamp(min=0), 0.0) + where(target != -1, input, 0.0)
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.requires_grad and is_grad_enabled():
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect to argument "
                           "'target'. This input cannot have requires_grad True.")
    return _reduce(_neg_logsigmoid(target * input), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    loss = target * _neg_logsigmoid(input) + (1.0 - target) * _neg_logsigmoid(-input)
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(-1) / input.shape[-1]
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Per sample sum over classes i != y of w[y] * max(0, margin - x[y] + x[i])^p, divided by C (p is 1 or 2)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    if input.ndim > 2:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    unbatched = input.ndim < 2
    x = input.reshape(1, -1) if unbatched else input
    t = target.reshape(-1)
    c = x.shape[1]
    if t.shape[0] != x.shape[0]:
        raise RuntimeError(f"inconsistent target size, expected {x.shape[0]} but got {list(target.shape)}")
    values = concrete(t)
    if values is not None and values.size and (values.min() < 0 or values.max() >= c):
        raise RuntimeError("target out of range")
    z = x - x.gather(1, t.unsqueeze(1)) + margin
    # strict z > 0 and no term for the target class itself, as torch's kernel
    keep = (z > 0) & (t.unsqueeze(1) != arange(c, device=x.device))
    h = where(keep, z if p == 1 else z * z, 0.0)
    if weight is not None:
        h = h * weight.to(h.dtype).index_select(0, t).unsqueeze(1)
    loss = h.sum(1) / c
    if unbatched and reduction == "none":
        return loss.reshape(target.shape) if target.ndim == 0 else loss
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Per sample sum over the target classes j (target's entries up to the first -1) and the other classes i of
    max(0, 1 - (x[j] - x[i])), divided by C."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input.ndim > 2 or tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    unbatched = input.ndim < 2
    x = input.reshape(1, -1) if unbatched else input
    t = target.reshape(x.shape)
    c = x.shape[1]
    values = concrete(t)
    if values is not None and values.size and (values.min() < -1 or values.max() >= c):
        raise RuntimeError("argument #2 'target' is out of range")
    valid = (t == -1).long().cumsum(1) == 0  # entries before the first -1
    safe = where(valid, t, 0)
    classes = arange(c, device=x.device)
    is_target = ((safe.unsqueeze(-1) == classes) & valid.unsqueeze(-1)).any(1)  # (N, C)
    z = 1.0 - x.gather(1, safe).unsqueeze(-1) + x.unsqueeze(1)  # (N, J, C): 1 - x[target_j] + x[i]
    keep = valid.unsqueeze(-1) & ~is_target.unsqueeze(1) & (z > 0)
    loss = where(keep, z, 0.0).sum((1, 2)) / c
    if unbatched and reduction == "none":
        return loss.squeeze(0)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    eps = 1e-12
    dim = input1.ndim - 1
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + eps
    mag2 = (input2 * input2).sum(dim) + eps
    cos = prod / sqrt(mag1 * mag2)
    loss = where(target == 1, 1.0 - cos, 0.0) + where(target == -1, (cos - margin).clamp(min=0), 0.0)
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)

    def dist(a, b):
        return (a - b + eps).norm(p, -1)
    d_ap, d_an = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_an = minimum(d_an, dist(positive, negative))
    return _reduce((d_ap - d_an + margin).clamp(min=0), reduction)


def _pairwise_distance(a, b):
    """functional.pairwise_distance with its defaults (p=2, eps=1e-6)."""
    return (a - b + 1e-6).norm(2.0, -1)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with d pairwise_distance by default (swap: the
    negative distance is min(d(a, n), d(p, n)))."""
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: expected margin to be greater than 0, got {margin} "
                         "instead")
    if not (anchor.ndim == positive.ndim == negative.ndim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    if distance_function is None:
        distance_function = _pairwise_distance
    d_pos = distance_function(anchor, positive)
    d_neg = distance_function(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, distance_function(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0.0), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if log_input:
        loss = exp(input) - target * input
    else:
        loss = input - target * log(input + eps)
    if full:
        safe = where(target > 1, target, 2.0)
        stirling = safe * log(safe) - safe + 0.5 * log(safe * (2 * math.pi))
        loss = loss + where(target > 1, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    _check_reduction(reduction)
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    values = concrete(var)
    if values is not None and np.any(values < 0):
        raise ValueError("var has negative entry/entries")
    var = var + (var.clamp(min=eps) - var).detach()  # clamped value, identity gradient (torch clamps in no_grad)
    loss = 0.5 * (log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)
