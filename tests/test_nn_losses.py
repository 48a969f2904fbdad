"""Loss functions and modules against NumPy versions of PyTorch's documented formulas, every reduction,
their gradients, numerical stability at the extremes, and the errors torch raises."""
import numpy as np
import pytest

import mindtorch_v2 as torch
import mindtorch_v2.nn as nn
import mindtorch_v2.nn.functional as F

RNG = np.random.default_rng(99)


def T(a, requires_grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def L(a):
    return torch.tensor(np.asarray(a, dtype=np.int64))


def N(t):
    return np.asarray(t.detach())


def randn(*shape):
    return RNG.standard_normal(shape)


def reduce(loss, reduction):
    return {"none": loss, "mean": loss.mean(), "sum": loss.sum()}[reduction]


REDUCTIONS = ["none", "mean", "sum"]


# ---------------------------------------------------------------------------
# regression losses


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_pointwise_regression_losses(reduction):
    x, y = randn(4, 3) * 2, randn(4, 3) * 2
    d = x - y
    ad = np.abs(d)
    cases = [
        (F.mse_loss(T(x), T(y), reduction=reduction), d ** 2),
        (F.l1_loss(T(x), T(y), reduction=reduction), ad),
        (F.smooth_l1_loss(T(x), T(y), reduction=reduction, beta=0.7),
         np.where(ad < 0.7, 0.5 * d ** 2 / 0.7, ad - 0.35)),
        (F.smooth_l1_loss(T(x), T(y), reduction=reduction, beta=0.0), ad),
        (F.huber_loss(T(x), T(y), reduction=reduction, delta=1.3),
         np.where(ad < 1.3, 0.5 * d ** 2, 1.3 * (ad - 0.65))),
    ]
    for got, ref in cases:
        np.testing.assert_allclose(N(got), reduce(ref, reduction), rtol=1e-12)


def test_regression_loss_gradients():
    x, y = randn(5), randn(5)
    xt = T(x, True)
    F.mse_loss(xt, T(y)).backward()
    np.testing.assert_allclose(N(xt.grad), 2 * (x - y) / 5)
    xt = T(x, True)
    F.l1_loss(xt, T(y), reduction="sum").backward()
    np.testing.assert_allclose(N(xt.grad), np.sign(x - y))
    xt = T(x, True)
    F.smooth_l1_loss(xt, T(y), reduction="sum", beta=2.0).backward()
    d = x - y
    np.testing.assert_allclose(N(xt.grad), np.where(np.abs(d) < 2, d / 2, np.sign(d)))


def test_regression_losses_warn_on_broadcasting_targets_and_reject_bad_arguments():
    with pytest.warns(UserWarning, match="Using a target size .* that is different to the input size"):
        F.mse_loss(T(randn(3, 1)), T(randn(3)))
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        F.mse_loss(T([1.0]), T([2.0]), reduction="avg")
    with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values for beta"):
        F.smooth_l1_loss(T([1.0]), T([2.0]), beta=-1.0)
    with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values for delta"):
        F.huber_loss(T([1.0]), T([2.0]), delta=0.0)


def test_legacy_size_average_and_reduce_arguments():
    x, y = randn(4), randn(4)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        got = F.mse_loss(T(x), T(y), size_average=False)
    np.testing.assert_allclose(N(got), ((x - y) ** 2).sum())
    with pytest.warns(UserWarning):
        assert nn.L1Loss(reduce=False).reduction == "none"


# ---------------------------------------------------------------------------
# cross entropy / nll


def log_softmax(x, axis=1):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def ce_ref(logits, target, weight=None, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    """torch's documented cross entropy for class indices (logits (N, C))."""
    logp = log_softmax(logits)
    n, c = logits.shape
    w = np.ones(c) if weight is None else weight
    valid = target != ignore_index
    safe = np.where(valid, target, 0)
    wt = np.where(valid, w[safe], 0.0)
    nll = -wt * logp[np.arange(n), safe]
    smooth = np.where(valid, -(logp * w).sum(1), 0.0)
    loss = (1 - label_smoothing) * nll + label_smoothing / c * smooth
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / wt.sum()


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.25])
def test_cross_entropy_class_indices(reduction, weighted, label_smoothing):
    logits = randn(6, 4) * 2
    target = np.array([0, 3, 1, -100, 2, 3])
    weight = np.array([0.5, 2.0, 1.0, 3.0]) if weighted else None
    got = F.cross_entropy(T(logits), L(target), weight=None if weight is None else T(weight),
                          reduction=reduction, label_smoothing=label_smoothing)
    np.testing.assert_allclose(N(got), ce_ref(logits, target, weight, -100, label_smoothing, reduction),
                               rtol=1e-12)


def test_cross_entropy_custom_ignore_index_and_gradient():
    logits, target = randn(5, 3), np.array([2, 0, 1, 1, 0])
    xt = T(logits, True)
    loss = F.cross_entropy(xt, L(target), ignore_index=1)
    np.testing.assert_allclose(N(loss), ce_ref(logits, target, ignore_index=1), rtol=1e-12)
    loss.backward()
    sm = np.exp(log_softmax(logits))
    onehot = np.eye(3)[target]
    valid = (target != 1)[:, None]
    np.testing.assert_allclose(N(xt.grad), valid * (sm - onehot) / valid.sum(), atol=1e-12)


def test_cross_entropy_label_smoothing_gradient():
    logits, target = randn(4, 5), np.array([1, 4, 0, 2])
    xt = T(logits, True)
    F.cross_entropy(xt, L(target), label_smoothing=0.1).backward()
    y = 0.9 * np.eye(5)[target] + 0.1 / 5
    np.testing.assert_allclose(N(xt.grad), (np.exp(log_softmax(logits)) - y) / 4, atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_probability_targets(reduction):
    logits = randn(4, 3)
    probs = np.exp(log_softmax(randn(4, 3)))
    weight = np.array([1.0, 2.0, 0.5])
    for ls in (0.0, 0.2):
        y = probs * (1 - ls) + ls / 3
        loss = -(log_softmax(logits) * y * weight).sum(1)
        ref = {"none": loss, "sum": loss.sum(), "mean": loss.sum() / 4}[reduction]
        got = F.cross_entropy(T(logits), T(probs), weight=T(weight), reduction=reduction, label_smoothing=ls)
        np.testing.assert_allclose(N(got), ref, rtol=1e-12)


def test_cross_entropy_spatial_inputs_and_unbatched():
    logits = randn(2, 4, 3, 5)
    target = RNG.integers(0, 4, (2, 3, 5))
    flat_logits = logits.transpose(0, 2, 3, 1).reshape(-1, 4)
    got = F.cross_entropy(T(logits), L(target), reduction="none")
    assert tuple(got.shape) == (2, 3, 5)
    np.testing.assert_allclose(N(got).ravel(), ce_ref(flat_logits, target.ravel(), reduction="none"), rtol=1e-12)
    np.testing.assert_allclose(N(F.cross_entropy(T(logits), L(target), label_smoothing=0.3)),
                               ce_ref(flat_logits, target.ravel(), label_smoothing=0.3), rtol=1e-12)
    x = randn(4)
    np.testing.assert_allclose(N(F.cross_entropy(T(x), L(2))), -log_softmax(x[None])[0, 2], rtol=1e-12)


def test_nll_loss_matches_numpy():
    logp = log_softmax(randn(5, 4))
    target = np.array([3, 0, 0, 2, 1])
    w = np.array([1.0, 0.5, 2.0, 1.5])
    got = F.nll_loss(T(logp), L(target), weight=T(w))
    picked = w[target] * logp[np.arange(5), target]
    np.testing.assert_allclose(N(got), -picked.sum() / w[target].sum(), rtol=1e-12)
    np.testing.assert_allclose(N(F.nll_loss(T(logp), L(target), reduction="none")), -logp[np.arange(5), target])
    np.testing.assert_allclose(N(nn.NLLLoss(reduction="sum")(T(logp), L(target))), -logp[np.arange(5), target].sum())


def test_classification_loss_errors():
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)"):
        F.cross_entropy(T(randn(3, 4)), L([1, 2]))
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.cross_entropy(T(randn(2, 4)), L([1, 7]))
    with pytest.raises(IndexError, match="Target -2 is out of bounds"):
        F.nll_loss(T(randn(2, 4)), L([1, -2]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        F.nll_loss(T(randn(2, 4)), torch.tensor([1.0, 0.0]))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 4 classes or no classes"):
        F.cross_entropy(T(randn(2, 4)), L([1, 0]), weight=T([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(T(randn(2, 4)), L([1, 0]), label_smoothing=1.5)


# ---------------------------------------------------------------------------
# binary cross entropy


def sigmoid(x):
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(reduction):
    p, y, w = sigmoid(randn(3, 4)), RNG.random((3, 4)), RNG.random((3, 4))
    ref = -w * (y * np.log(p) + (1 - y) * np.log(1 - p))
    np.testing.assert_allclose(N(F.binary_cross_entropy(T(p), T(y), T(w), reduction=reduction)),
                               reduce(ref, reduction), rtol=1e-12)
    np.testing.assert_allclose(N(nn.BCELoss(weight=T(w), reduction=reduction)(T(p), T(y))), reduce(ref, reduction),
                               rtol=1e-12)


def test_binary_cross_entropy_clamps_the_log_at_minus_100():
    loss = F.binary_cross_entropy(T([0.0, 1.0, 1.0]), T([1.0, 0.0, 1.0]), reduction="none")
    np.testing.assert_allclose(N(loss), [100.0, 100.0, 0.0])
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(T([1.5]), T([1.0]))
    with pytest.raises(ValueError, match="Using a target size .* that is different to the input size"):
        F.binary_cross_entropy(T([0.5, 0.5]), T([1.0]))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits_matches_the_stable_formula(reduction):
    x, y = randn(3, 4) * 3, RNG.random((3, 4))
    pw, w = np.array([1.0, 2.0, 0.5, 3.0]), RNG.random((3, 4))
    lw = 1 + (pw - 1) * y
    ref = w * ((1 - y) * x + lw * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0)))
    got = F.binary_cross_entropy_with_logits(T(x), T(y), T(w), reduction=reduction, pos_weight=T(pw))
    np.testing.assert_allclose(N(got), reduce(ref, reduction), rtol=1e-12)
    plain = -(y * np.log(sigmoid(x)) + (1 - y) * np.log(1 - sigmoid(x)))
    np.testing.assert_allclose(N(nn.BCEWithLogitsLoss(reduction=reduction)(T(x), T(y))), reduce(plain, reduction),
                               rtol=1e-10)


def test_bce_with_logits_is_stable_and_its_gradient_is_exact_everywhere():
    x = np.array([-800.0, -30.0, 0.0, 0.0, 30.0, 800.0])
    y = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    xt = T(x, True)
    loss = F.binary_cross_entropy_with_logits(xt, T(y), reduction="sum")
    np.testing.assert_allclose(N(loss), 800 + 30 + np.log(2) * 2 + 30 + 800 + 2 * np.log1p(np.exp(-30)), rtol=1e-12)
    loss.backward()
    np.testing.assert_allclose(N(xt.grad), sigmoid(x) - y, atol=1e-15)  # 0.5 - y at 0, as in torch
    pw = T([3.0])
    xt = T([0.0, 1.0], True)
    F.binary_cross_entropy_with_logits(xt, T([1.0, 1.0]), pos_weight=pw, reduction="sum").backward()
    np.testing.assert_allclose(N(xt.grad), 3.0 * (sigmoid(np.array([0.0, 1.0])) - 1), rtol=1e-12)
    with pytest.raises(ValueError, match=r"Target size \(.*\) must be the same as input size"):
        F.binary_cross_entropy_with_logits(T([0.5, 0.5]), T([1.0]))


# ---------------------------------------------------------------------------
# KL divergence and others


def test_kl_div_reductions_and_log_target():
    logq = log_softmax(randn(4, 5))
    p = np.exp(log_softmax(randn(4, 5)))
    p[0, 1] = 0.0
    point = np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0) - p * logq
    np.testing.assert_allclose(N(F.kl_div(T(logq), T(p), reduction="none")), point, rtol=1e-12)
    np.testing.assert_allclose(N(F.kl_div(T(logq), T(p), reduction="batchmean")), point.sum() / 4, rtol=1e-12)
    np.testing.assert_allclose(N(F.kl_div(T(logq), T(p), reduction="sum")), point.sum(), rtol=1e-12)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        np.testing.assert_allclose(N(F.kl_div(T(logq), T(p))), point.mean(), rtol=1e-12)
    logp = log_softmax(randn(4, 5))
    np.testing.assert_allclose(N(nn.KLDivLoss(reduction="sum", log_target=True)(T(logq), T(logp))),
                               (np.exp(logp) * (logp - logq)).sum(), rtol=1e-12)


def test_other_losses_match_numpy():
    x1, x2, y = randn(6), randn(6), np.sign(randn(6))
    np.testing.assert_allclose(N(F.margin_ranking_loss(T(x1), T(x2), T(y), margin=0.3)),
                               np.maximum(0, -y * (x1 - x2) + 0.3).mean())
    np.testing.assert_allclose(N(F.soft_margin_loss(T(x1), T(y))), np.log1p(np.exp(-y * x1)).mean())
    np.testing.assert_allclose(N(F.hinge_embedding_loss(T(x1), T(y), margin=0.5)),
                               np.where(y == 1, x1, np.maximum(0, 0.5 - x1)).mean())
    a, p_, n_ = randn(3, 4), randn(3, 4), randn(3, 4)
    d = lambda u, v: np.linalg.norm(u - v + 1e-6, axis=-1)  # noqa: E731
    np.testing.assert_allclose(N(F.triplet_margin_loss(T(a), T(p_), T(n_))),
                               np.maximum(d(a, p_) - d(a, n_) + 1, 0).mean())
    lam = RNG.random(5) + 0.5
    k = RNG.integers(0, 4, 5).astype(float)
    np.testing.assert_allclose(N(F.poisson_nll_loss(T(np.log(lam)), T(k))), (lam - k * np.log(lam)).mean())
    mu, tgt, var = randn(4), randn(4), RNG.random(4) + 0.1
    np.testing.assert_allclose(N(F.gaussian_nll_loss(T(mu), T(tgt), T(var))),
                               (0.5 * (np.log(var) + (mu - tgt) ** 2 / var)).mean())


def test_loss_modules_hold_their_options_and_print_like_torch():
    logits, target = randn(5, 3), np.array([0, 1, 2, 1, 0])
    w = np.array([1.0, 2.0, 3.0])
    mod = nn.CrossEntropyLoss(weight=T(w), label_smoothing=0.1, ignore_index=2)
    np.testing.assert_allclose(N(mod(T(logits), L(target))), ce_ref(logits, target, w, 2, 0.1), rtol=1e-12)
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    assert repr(nn.MSELoss()) == "MSELoss()"
    assert "weight" in dict(mod.named_buffers())
    x, y = randn(4), randn(4)
    np.testing.assert_allclose(N(nn.SmoothL1Loss(beta=0.5)(T(x), T(y))),
                               N(F.smooth_l1_loss(T(x), T(y), beta=0.5)))
    np.testing.assert_allclose(N(nn.HuberLoss(reduction="sum", delta=2.0)(T(x), T(y))),
                               N(F.huber_loss(T(x), T(y), "sum", 2.0)))
    np.testing.assert_allclose(N(nn.MSELoss(reduction="none")(T(x), T(y))), (x - y) ** 2)
