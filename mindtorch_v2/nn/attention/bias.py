"""torch.nn.attention.bias: causal masks that scaled_dot_product_attention accepts as attn_mask.

    causal_upper_left(2, 5)  ->  [[T F F F F],      causal_lower_right(2, 5)  ->  [[T T T T F],
                                  [T T F F F]]                                      [T T T T T]]
"""
import enum
import warnings

from ...core import bool_
from ...eager.creation import ones

__all__ = ["CausalVariant", "CausalBias", "causal_upper_left", "causal_lower_right"]


class CausalVariant(enum.IntEnum):
    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias:
    """A causal mask of seq_len_q x seq_len_kv, aligned at the upper left or the lower right corner."""

    def __init__(self, variant, seq_len_q, seq_len_kv):
        if not isinstance(variant, CausalVariant):
            raise AssertionError("CausalBias variant must be a CausalVariant")
        self.variant, self.seq_len_q, self.seq_len_kv = variant, seq_len_q, seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warnings.warn("Lower right causal bias will produce NaNs in the output when seq_len_q > seq_len_kv!")

    def _upper_left(self, device):
        return ones(self.seq_len_q, self.seq_len_kv, dtype=bool_, device=device).tril()

    def _lower_right(self, device):
        diagonal = self.seq_len_kv - self.seq_len_q
        return ones(self.seq_len_q, self.seq_len_kv, dtype=bool_, device=device).tril(diagonal=diagonal)

    def _materialize(self, device=None):
        """The bool mask (True = attend)."""
        if self.variant == CausalVariant.UPPER_LEFT:
            return self._upper_left(device)
        return self._lower_right(device)

    def __repr__(self):
        return repr(self._materialize())


def causal_upper_left(*size):
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    return CausalBias(CausalVariant.UPPER_LEFT, *size)


def causal_lower_right(*size):
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    return CausalBias(CausalVariant.LOWER_RIGHT, *size)
