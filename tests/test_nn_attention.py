"""torch.nn.attention: sdpa_kernel, SDPBackend and the causal biases (behaviour checked on PyTorch 2.13)."""
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
