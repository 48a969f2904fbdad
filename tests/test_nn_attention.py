"""torch.nn.attention: sdpa_kernel, SDPBackend, the causal biases and flex_attention (behaviour checked on PyTorch
2.13)."""
import numpy as np
import pytest

import mindtorch_v2 as torch
import mindtorch_v2.nn.functional as F
from mindtorch_v2.nn.attention import SDPAParams, SDPBackend, can_use_flash_attention, sdpa_kernel
from mindtorch_v2.nn.attention.bias import CausalVariant, causal_lower_right, causal_upper_left


def _qkv(lq=2, lk=5, seed=0):
    rng = np.random.default_rng(seed)
    return [torch.tensor(rng.standard_normal((1, 2, n, 4))) for n in (lq, lk, lk)]


def test_backend_values_are_pytorchs():
    assert [(b.name, int(b)) for b in SDPBackend] == [
        ("ERROR", -1), ("MATH", 0), ("FLASH_ATTENTION", 1), ("EFFICIENT_ATTENTION", 2), ("CUDNN_ATTENTION", 3),
        ("OVERRIDEABLE", 4)]


def test_sdpa_kernel_sets_and_restores_the_flags():
    assert torch.backends.cuda.flash_sdp_enabled() and torch.backends.cuda.math_sdp_enabled()
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        assert torch.backends.cuda.flash_sdp_enabled() and not torch.backends.cuda.math_sdp_enabled()
        assert not torch.backends.cuda.mem_efficient_sdp_enabled()
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.CUDNN_ATTENTION]):
        assert torch.backends.cuda.math_sdp_enabled() and torch.backends.cuda.cudnn_sdp_enabled()
        assert not torch.backends.cuda.flash_sdp_enabled()
    assert torch.backends.cuda.flash_sdp_enabled() and torch.backends.cuda.mem_efficient_sdp_enabled()


@pytest.mark.parametrize("backends", [SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, [SDPBackend.MATH]])
def test_cpu_kernels_give_the_math_result(backends):
    q, k, v = _qkv()
    expected = F.scaled_dot_product_attention(q, k, v)
    with sdpa_kernel(backends):
        assert torch.equal(F.scaled_dot_product_attention(q, k, v), expected)


@pytest.mark.parametrize("backend", [SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION])
def test_gpu_only_kernels_leave_no_viable_backend(backend):
    q, k, v = _qkv()
    with sdpa_kernel(backend):
        with pytest.raises(RuntimeError, match="No viable backend for scaled_dot_product_attention"):
            F.scaled_dot_product_attention(q, k, v)


def test_sdpa_kernel_rejects_other_values():
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
        with sdpa_kernel("math"):
            pass


def test_can_use_checks_answer_for_the_missing_cuda_kernels():
    q, k, v = _qkv()
    assert can_use_flash_attention(SDPAParams(q, k, v, None, 0.0, False, False)) is False


def test_causal_biases():
    assert causal_upper_left(2, 5)._materialize().tolist() == [
        [True, False, False, False, False], [True, True, False, False, False]]
    assert causal_lower_right(2, 5)._materialize().tolist() == [
        [True, True, True, True, False], [True, True, True, True, True]]
    assert causal_lower_right(2, 5).variant is CausalVariant.LOWER_RIGHT
    with pytest.warns(UserWarning, match="Lower right causal bias will produce NaNs"):
        causal_lower_right(5, 2)
    with pytest.raises(AssertionError, match="only supports 2D"):
        causal_upper_left(2, 3, 4)


def test_sdpa_takes_a_causal_bias_as_mask():
    q, k, v = _qkv()
    for bias in (causal_upper_left(2, 5), causal_lower_right(2, 5)):
        got = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        assert torch.equal(got, F.scaled_dot_product_attention(q, k, v, attn_mask=bias._materialize()))
    q, k, v = _qkv(lq=5, lk=5)
    assert torch.allclose(F.scaled_dot_product_attention(q, k, v, attn_mask=causal_upper_left(5, 5)),
                          F.scaled_dot_product_attention(q, k, v, is_causal=True))


# ---------------------------------------------------------------------------
# torch.nn.attention.flex_attention

def _causal(b, h, q, kv):
    return q >= kv


def test_create_block_mask_lists_partial_and_full_tiles_as_pytorch_does():
    from mindtorch_v2.nn.attention.flex_attention import create_block_mask
    bm = create_block_mask(_causal, 2, 1, 5, 6, device="cpu", BLOCK_SIZE=2)
    # PyTorch 2.13's answers for this mask (rows past Q_LEN count as masked, so the last row is all partial)
    assert bm.kv_num_blocks.dtype == torch.int32 and bm.kv_num_blocks.tolist() == [[[1, 1, 3]]] * 2
    assert bm.kv_indices.tolist() == [[[[0, 1, 2], [1, 0, 2], [0, 1, 2]]]] * 2
    assert bm.full_kv_num_blocks.tolist() == [[[0, 1, 0]]] * 2
    assert bm.q_num_blocks.tolist() == [[[2, 2, 1]]] * 2
    assert bm.q_indices.tolist() == [[[[0, 2, 1], [1, 2, 0], [2, 0, 1]]]] * 2
    assert bm.to_dense().tolist() == [[[[1, 0, 0], [1, 1, 0], [1, 1, 1]]]] * 2
    assert bm.shape == (2, 1, 5, 6) and bm.BLOCK_SIZE == (2, 2) and bm.sparsity() == pytest.approx(20.0)


def test_mask_combinators_and_create_mask():
    from mindtorch_v2.nn.attention.flex_attention import and_masks, create_mask, noop_mask, or_masks
    pad = torch.tensor([[True] * 4, [False, True, True, True]])

    def padded(b, h, q, kv):
        return pad[b, kv]

    q, kv = np.arange(3)[:, None], np.arange(4)[None, :]
    both = create_mask(and_masks(_causal, padded), 2, 1, 3, 4)
    either = create_mask(or_masks(_causal, padded), 2, None, 3, 4)
    p = pad.numpy()[:, None, None, :]
    assert both.dtype == torch.bool and both.shape == (2, 1, 3, 4)
    assert np.array_equal(both.numpy(), (q >= kv) & p) and np.array_equal(either.numpy(), (q >= kv) | p)
    assert create_mask(noop_mask, 1, 1, 2, 2).all()
    with pytest.raises(RuntimeError, match="should be callable"):
        and_masks(_causal, 3)


def _reference(q, k, v, allowed, scale, bias):
    s = np.einsum("bhle,bhse->bhls", q, k) * scale + bias
    s = np.where(allowed, s, -np.inf)
    m = s.max(-1, keepdims=True)
    w = np.exp(s - np.where(np.isfinite(m), m, 0))
    tot = w.sum(-1, keepdims=True)
    out = np.einsum("bhls,bhse->bhle", w / np.where(tot > 0, tot, 1), v)
    with np.errstate(divide="ignore"):
        return out, np.log(tot[..., 0]) + np.where(np.isfinite(m), m, 0)[..., 0]


def test_flex_attention_with_score_mod_block_mask_and_gqa_equals_dense_attention():
    from mindtorch_v2.nn.attention.flex_attention import AuxRequest, and_masks, create_block_mask, flex_attention
    rng = np.random.RandomState(0)
    qn, kn, vn = (rng.randn(*s).astype(np.float32) for s in ((2, 4, 6, 8), (2, 2, 6, 8), (2, 2, 6, 8)))
    pad = torch.tensor([[True] * 6, [False, False, True, True, True, True]])

    def padded(b, h, q, kv):
        return pad[b, kv]

    def bias(score, b, h, q, kv):
        return score + 0.1 * (q - kv) * (h + 1)

    bm = create_block_mask(and_masks(_causal, padded), 2, None, 6, 6, BLOCK_SIZE=2)
    out, aux = flex_attention(torch.tensor(qn), torch.tensor(kn), torch.tensor(vn), score_mod=bias, block_mask=bm,
                              enable_gqa=True, return_aux=AuxRequest(lse=True))
    L = np.arange(6)
    allowed = (L[:, None] >= L[None, :]) & pad.numpy()[:, None, None, :]
    b = 0.1 * (L[:, None] - L[None, :]) * (np.arange(4)[:, None, None] + 1)
    want, lse = _reference(qn, np.repeat(kn, 2, 1), np.repeat(vn, 2, 1), allowed, 1 / np.sqrt(8), b)
    assert np.allclose(out.numpy(), want, atol=1e-5) and out.dtype == torch.float32
    # row 0 of batch 1 sees only padding: output 0 and logsumexp -inf, as PyTorch gives
    assert np.all(out.numpy()[1, :, 0] == 0) and np.all(np.isneginf(aux.lse.numpy()[1, :, 0]))
    assert np.allclose(aux.lse.numpy()[np.isfinite(lse)], lse[np.isfinite(lse)], atol=1e-5) and aux.max_scores is None
    plain, plain_lse = flex_attention(torch.tensor(qn[:, :2]), torch.tensor(kn), torch.tensor(vn), scale=0.5,
                                      return_lse=True)
    want, lse = _reference(qn[:, :2], kn, vn, np.ones((6, 6), bool), 0.5, 0.0)
    assert np.allclose(plain.numpy(), want, atol=1e-5) and np.allclose(plain_lse.numpy(), lse, atol=1e-5)


def test_flex_attention_refuses_what_pytorchs_cpu_kernel_refuses():
    from mindtorch_v2.nn.attention.flex_attention import AuxRequest, create_block_mask, flex_attention
    q = torch.ones(1, 2, 4, 8)
    with pytest.raises(NotImplementedError, match="does not support backward on CPU"):
        flex_attention(q.requires_grad_(), torch.ones(1, 2, 4, 8), torch.ones(1, 2, 4, 8))
    q = torch.ones(1, 2, 4, 8)
    with pytest.raises(NotImplementedError, match="max scores is not supported on CPU"):
        flex_attention(q, q, q, return_aux=AuxRequest(max_scores=True))
    with pytest.raises(ValueError, match="Try setting enable_gqa=True"):
        flex_attention(q, torch.ones(1, 1, 4, 8), torch.ones(1, 1, 4, 8))
    with pytest.raises(ValueError, match="block_mask was created for"):
        flex_attention(q, q, q, block_mask=create_block_mask(_causal, 1, 1, 8, 8, BLOCK_SIZE=4))
