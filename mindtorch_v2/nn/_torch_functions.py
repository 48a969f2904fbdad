"""The nn ops PyTorch also exports at the top level (torch.conv2d, torch.layer_norm, torch.dropout, ...).

Where torch.X is torch.nn.functional.X in PyTorch (the convolutions, bilinear, cosine_similarity, ...), the
same function is re-exported. The others keep ATen's signatures, which differ from F's: torch.dropout(input,
p, train) with train required, torch.embedding(weight, indices, padding_idx=-1, ...) with weight first,
torch.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled),
and the losses take an integer reduction (0 none, 1 mean, 2 sum, any other value none) that defaults to 0
in PyTorch's Python binding.
"""
from . import functional as F

__all__ = [
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "bilinear",
    "avg_pool1d", "adaptive_avg_pool1d", "pixel_shuffle", "pixel_unshuffle", "cosine_similarity",
    "pairwise_distance", "celu_", "max_pool1d", "max_pool2d", "max_pool3d", "adaptive_max_pool1d",
    "layer_norm", "group_norm", "batch_norm", "instance_norm", "embedding", "dropout", "dropout_", "alpha_dropout",
    "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_", "celu", "kl_div", "margin_ranking_loss",
    "hinge_embedding_loss", "cosine_embedding_loss", "poisson_nll_loss", "binary_cross_entropy_with_logits",
]

# the same functions as torch.nn.functional's, in PyTorch too
conv1d, conv2d, conv3d = F.conv1d, F.conv2d, F.conv3d
conv_transpose1d, conv_transpose2d, conv_transpose3d = F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d
bilinear, avg_pool1d, adaptive_avg_pool1d = F.bilinear, F.avg_pool1d, F.adaptive_avg_pool1d
pixel_shuffle, pixel_unshuffle = F.pixel_shuffle, F.pixel_unshuffle
cosine_similarity, pairwise_distance, celu_ = F.cosine_similarity, F.pairwise_distance, F.celu_


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


def adaptive_max_pool1d(input, output_size):
    """(values, indices) of the adaptive max pooling (always both, unlike F's)."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    return F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """weight's rows at indices; a padding_idx >= 0 gets no gradient (a negative one means none)."""
    return F.embedding(indices, weight, padding_idx if padding_idx >= 0 else None,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def _aten_dropout(name, f, inplace=False):
    """torch.<name>(input, p, train): F's dropout with train required and p checked first, as ATen's."""
    def op(input, p, train):
        if not 0.0 <= p <= 1.0:
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
        return f(input, p, train, inplace=True) if inplace else f(input, p, train)
    op.__name__ = op.__qualname__ = name
    return op


dropout, dropout_ = _aten_dropout("dropout", F.dropout), _aten_dropout("dropout_", F.dropout, True)
alpha_dropout = _aten_dropout("alpha_dropout", F.alpha_dropout)
alpha_dropout_ = _aten_dropout("alpha_dropout_", F.alpha_dropout, True)
feature_alpha_dropout = _aten_dropout("feature_alpha_dropout", F.feature_alpha_dropout)
feature_alpha_dropout_ = _aten_dropout("feature_alpha_dropout_", F.feature_alpha_dropout, True)


def celu(input, alpha=1.0):
    return F.celu(input, alpha)


def _reduction(reduction, op, position):
    """ATen's integer reduction as F's string."""
    if isinstance(reduction, bool) or not isinstance(reduction, int):
        raise TypeError(f"{op}(): argument 'reduction' (position {position}) must be int, not "
                        f"{type(reduction).__name__}")
    return {1: "mean", 2: "sum"}.get(reduction, "none")


def kl_div(input, target, reduction=0, *, log_target=False):
    """The pointwise KL divergence; reduction 1 is the mean over all elements (not 'batchmean')."""
    loss = F.kl_div(input, target, reduction="none", log_target=log_target)
    mode = _reduction(reduction, "kl_div", 3)
    return loss if mode == "none" else loss.mean() if mode == "mean" else loss.sum()


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction(reduction, "margin_ranking_loss", 5))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction, "hinge_embedding_loss", 4))


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction, "cosine_embedding_loss", 5))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction, "poisson_nll_loss", 6))


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    return F.binary_cross_entropy_with_logits(input, target, weight, pos_weight=pos_weight,
                                              reduction=_reduction(reduction, "binary_cross_entropy_with_logits", 5))
