"""torch.nn.attention.flex_attention: attention with a user score function and a block-sparse mask.

`flex_attention(q, k, v, score_mod, block_mask)` is softmax(score_mod(q k^T * scale)) v where the block mask
allows it. PyTorch compiles it into a fused kernel that skips empty blocks; here it is computed densely with
eager ops (the same numbers as PyTorch's math reference; like PyTorch's CPU kernel, forward only): `score_mod` and `mask_mod` are
evaluated on index tensors under nested vmap, as PyTorch's reference does.

A `BlockMask` has PyTorch's layout: the mask cut into (Q_BLOCK, KV_BLOCK) tiles; per query-block row the
count and the column indices of the partial tiles (`kv_num_blocks`, `kv_indices`, where mask_mod decides per
element) and of the full tiles (`full_kv_*`, every element allowed), and the same per column (`q_*`).
A tile in neither list is masked out. Rows whose every score is masked give output 0 and logsumexp -inf.
"""
import math
from typing import NamedTuple, TypedDict

from ... import func as _func
from ...core import bool_, float32, int32
from ...eager.creation import arange, zeros
from ...eager.ops import amax, argsort, logsumexp, matmul, where
from ...eager.shape_ops import repeat_interleave
from ...eager.tensor import Tensor

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions", "create_block_mask",
           "create_mask", "or_masks", "and_masks", "noop_mask"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128


class AuxRequest(NamedTuple):
    """Which auxiliary outputs flex_attention should return (each a bool)."""
    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """Auxiliary outputs of flex_attention: None where not requested."""
    lse: Tensor | None = None
    max_scores: Tensor | None = None


class FlexKernelOptions(TypedDict, total=False):
    """Tuning options of PyTorch's fused kernels (block sizes, warps, ...); they do not change the result."""
    BLOCK_M: int
    BLOCK_N: int
    num_warps: int
    num_stages: int
    PRESCALE_QK: bool
    ROWS_GUARANTEED_SAFE: bool
    BLOCKS_ARE_CONTIGUOUS: bool
    WRITE_DQ: bool
    FORCE_USE_FLEX_ATTENTION: bool


def noop_mask(batch, head, token_q, token_kv):
    """The mask_mod that allows every position."""
    return batch.new_ones(size=(), dtype=bool_, device=batch.device)


def _noop_score(score, batch, head, token_q, token_kv):
    return score


def and_masks(*mask_mods):
    """The mask_mod allowing a position only where every one of `mask_mods` does."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b, h, q_idx, kv_idx):
        result = b.new_ones(size=(), dtype=bool_)
        for m in mask_mods:
            result = result & m(b, h, q_idx, kv_idx)
        return result
    return and_mask


def or_masks(*mask_mods):
    """The mask_mod allowing a position where any one of `mask_mods` does."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b, h, q_idx, kv_idx):
        result = b.new_zeros(size=(), dtype=bool_)
        for m in mask_mods:
            result = result | m(b, h, q_idx, kv_idx)
        return result
    return or_mask


def _n_params(fn):
    code = getattr(fn, "__code__", None)
    if code is None:  # a functools.partial or callable object: count what inspect sees
        import inspect
        return len(inspect.signature(fn).parameters)
    return code.co_argcount - (1 if hasattr(fn, "__self__") else 0)


def _vmap4(fn, prefix, b, h, m, n):
    """fn(*prefix, b, h, q, kv) for every (b, h, q, kv): shape (B, H, Q, KV), as PyTorch's nested vmap."""
    p = len(prefix)
    ins = [(None,) * p + d for d in ((None, None, None, 0), (None, None, 0, None), (None, 0, None, None),
                                     (0, None, None, None))]
    for in_dims in ins:
        fn = _func.vmap(fn, in_dims=in_dims, out_dims=0)
    return fn(*prefix, b, h, m, n)


def _vmap_score(fn, score, b, h, m, n):
    """fn(score[b, h, q, kv], b, h, q, kv) over a (B, H, Q, KV) score tensor."""
    dims = [(0, None, None, None, 0), (0, None, None, 0, None), (0, None, 0, None, None), (0, 0, None, None, None)]
    for in_dims in dims:
        fn = _func.vmap(fn, in_dims=in_dims, out_dims=0)
    return fn(score, b, h, m, n)


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device="cpu"):
    """The dense (B, H, Q_LEN, KV_LEN) mask of a mask_mod (bool), or the scores a score_mod gives zeros."""
    B, H = B or 1, H or 1
    b, h, m, n = (arange(k, device=device) for k in (B, H, Q_LEN, KV_LEN))
    if _n_params(mod_fn) == 5:
        return _vmap_score(mod_fn, zeros((B, H, Q_LEN, KV_LEN), device=device), b, h, m, n)
    return _vmap4(mod_fn, (), b, h, m, n).to(bool_)


def _ordered_indices(blocks):
    """(count per row, column indices with the set ones first in ascending order) of a 0/1 block matrix."""
    counts = blocks.sum(-1).to(int32)
    order = argsort(blocks.to(int32), dim=-1, descending=True, stable=True).to(int32)
    return counts, order


def _ordered_to_dense(num_blocks, indices, cols):
    """The 0/1 (…, rows, cols) int32 block matrix that (num_blocks, indices) describes."""
    pos = arange(indices.shape[-1], device=indices.device)
    taken = (pos < num_blocks.unsqueeze(-1)).to(int32)  # which listed indices count
    dense = zeros(tuple(indices.shape[:-1]) + (cols,), dtype=int32, device=indices.device)
    return dense.scatter_add(-1, indices.long(), taken).clamp(max=1)


class BlockMask:
    """A block-sparse attention mask in PyTorch's layout (see the module docstring)."""

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices, q_num_blocks,
                 q_indices, full_q_num_blocks, full_q_indices, BLOCK_SIZE=(128, 128), mask_mod=noop_mask, *,
                 dq_write_order=None, dq_write_order_full=None, dq_kv_order=None, dq_kv_order_spt=None):
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise RuntimeError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks, self.kv_indices = kv_num_blocks, kv_indices
        self.full_kv_num_blocks, self.full_kv_indices = full_kv_num_blocks, full_kv_indices
        self.q_num_blocks, self.q_indices = q_num_blocks, q_indices
        self.full_q_num_blocks, self.full_q_indices = full_q_num_blocks, full_q_indices
        self.BLOCK_SIZE = tuple(BLOCK_SIZE)
        self.mask_mod = mask_mod
        self.dq_write_order, self.dq_write_order_full = dq_write_order, dq_write_order_full
        self.dq_kv_order, self.dq_kv_order_spt = dq_kv_order, dq_kv_order_spt

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None, full_kv_indices=None,
                       BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, mask_mod=None, seq_lengths=None, compute_q_blocks=True,
                       *, dq_write_order=None, dq_write_order_full=None, dq_kv_order=None):
        """A BlockMask from its kv-side lists; the q-side lists are derived from them (compute_q_blocks)."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise RuntimeError("full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        block = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else tuple(BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * block[0], kv_indices.shape[-1] * block[1])
        q = fq = (None, None)
        if compute_q_blocks:
            q = _ordered_indices(_ordered_to_dense(kv_num_blocks, kv_indices, kv_indices.shape[-1]).transpose(-2, -1))
            if full_kv_num_blocks is not None:
                fq = _ordered_indices(_ordered_to_dense(full_kv_num_blocks, full_kv_indices,
                                                        full_kv_indices.shape[-1]).transpose(-2, -1))
        return cls(seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices, q[0], q[1], fq[0],
                   fq[1], block, mask_mod if mask_mod is not None else noop_mask, dq_write_order=dq_write_order,
                   dq_write_order_full=dq_write_order_full,
                   dq_kv_order=dq_kv_order if isinstance(dq_kv_order, Tensor) else None)

    def as_tuple(self, flatten=True):
        """The BlockMask's attributes as a tuple (PyTorch's order)."""
        lengths = self.seq_lengths if flatten else (self.seq_lengths,)
        block = self.BLOCK_SIZE if flatten else (self.BLOCK_SIZE,)
        return (*lengths, self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks, self.full_kv_indices,
                self.q_num_blocks, self.q_indices, self.full_q_num_blocks, self.full_q_indices, self.dq_write_order,
                self.dq_write_order_full, self.dq_kv_order, self.dq_kv_order_spt, *block, self.mask_mod)

    @property
    def shape(self):
        return tuple(self.kv_indices.shape[:-2]) + self.seq_lengths

    def numel(self):
        """The number of elements of the mask (sparsity not counted)."""
        return math.prod(self.shape)

    def sparsity(self):
        """The percentage of blocks that are not computed."""
        computed = int(self.kv_num_blocks.sum())
        if self.full_kv_num_blocks is not None:
            computed += int(self.full_kv_num_blocks.sum())
        return 100 * (1 - computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1] / self.numel())

    def to_dense(self):
        """The (…, Q_BLOCKS, KV_BLOCKS) int32 matrix of the tiles that are computed (partial or full)."""
        dense = _ordered_to_dense(self.kv_num_blocks, self.kv_indices, self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None:
            dense = dense | _ordered_to_dense(self.full_kv_num_blocks, self.full_kv_indices,
                                              self.full_kv_indices.shape[-1])
        return dense

    def to(self, device):
        """This mask with its tensors on `device`."""
        def move(t):
            return t.to(device) if isinstance(t, Tensor) else t
        return BlockMask(self.seq_lengths, *(move(t) for t in self.as_tuple()[2:10]), self.BLOCK_SIZE, self.mask_mod,
                         dq_write_order=move(self.dq_write_order), dq_write_order_full=move(self.dq_write_order_full),
                         dq_kv_order=move(self.dq_kv_order), dq_kv_order_spt=self.dq_kv_order_spt)

    def __repr__(self):
        return f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%)"

    def _allowed(self, device):
        """The element-level (…, Q_LEN, KV_LEN) bool mask: full tiles, and partial tiles where mask_mod allows."""
        q_len, kv_len = self.seq_lengths
        bq, bkv = self.BLOCK_SIZE

        def elements(num, idx):
            tiles = _ordered_to_dense(num, idx, idx.shape[-1]).to(bool_)
            tiles = repeat_interleave(repeat_interleave(tiles, bq, dim=-2), bkv, dim=-1)
            return tiles[..., :q_len, :kv_len]

        partial = elements(self.kv_num_blocks, self.kv_indices)
        B, H = (tuple(partial.shape[:-2]) + (1, 1))[:2] if partial.dim() >= 4 else (1, 1)
        allowed = partial & create_mask(self.mask_mod, B, H, q_len, kv_len, device=device)
        if self.full_kv_num_blocks is not None:
            allowed = allowed | elements(self.full_kv_num_blocks, self.full_kv_indices)
        return allowed


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                      _compile=False, separate_full_blocks=True, compute_dq_write_order=False, dq_kv_order=True):
    """The BlockMask of `mask_mod` over (B, H, Q_LEN, KV_LEN) (B or H None: 1, broadcast over that dim)."""
    if _n_params(mask_mod) != 4:
        raise AssertionError("create_block_mask requires a mask_mod function (4 arguments)")
    bq, bkv = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else tuple(BLOCK_SIZE)
    dense = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=device or "cpu")
    nq, nkv = -(-Q_LEN // bq), -(-KV_LEN // bkv)
    padded = zeros(tuple(dense.shape[:2]) + (nq * bq, nkv * bkv), dtype=bool_, device=dense.device)
    padded[..., :Q_LEN, :KV_LEN] = dense  # positions past the lengths count as masked
    tiles = padded.reshape(*dense.shape[:2], nq, bq, nkv, bkv).to(int32)
    anywhere = tiles.amax(dim=(3, 5))
    everywhere = tiles.amin(dim=(3, 5))
    if separate_full_blocks:
        partial, full = anywhere & (1 - everywhere), everywhere
    else:
        partial, full = anywhere, None
    kv_num, kv_idx = _ordered_indices(partial)
    q_num, q_idx = _ordered_indices(partial.transpose(-2, -1))
    full_kv = full_q = (None, None)
    if full is not None:
        full_kv = _ordered_indices(full)
        full_q = _ordered_indices(full.transpose(-2, -1))
    return BlockMask((Q_LEN, KV_LEN), kv_num, kv_idx, full_kv[0], full_kv[1], q_num, q_idx, full_q[0], full_q[1],
                     (bq, bkv), mask_mod)


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None, enable_gqa=False,
                   return_lse=False, kernel_options=None, *, return_aux=None):
    """softmax(score_mod(query key^T * scale) masked by block_mask) value; with return_lse or
    return_aux=AuxRequest(lse=True), the log-sum-exp (natural log) of each row's scores as well.
    As PyTorch's CPU kernel: inference only (inputs requiring grad raise), no max_scores."""
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    if not (query.dtype == key.dtype == value.dtype):
        raise ValueError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                         f"{query.dtype}, key.dtype: {key.dtype}, and value.dtype: {value.dtype} instead.")
    if query.size(-1) != key.size(-1):
        raise ValueError(f"Expect query and key/value to have the same embedding dimension but got E="
                         f"{query.size(-1)} and E={key.size(-1)}.")
    if return_lse and return_aux is not None:
        raise ValueError("Cannot specify both return_lse and return_aux. return_lse is deprecated, please use "
                         "return_aux=AuxRequest(lse=True) instead.")
    if query.requires_grad or key.requires_grad or value.requires_grad:  # PyTorch's CPU kernel is inference-only
        raise NotImplementedError("FlexAttention does not support backward on CPU. Please set the input "
                                  "requires_grad to False or use another device.")
    if return_aux is not None and return_aux.max_scores:
        raise NotImplementedError("Returning max scores is not supported on CPU/MPS.")
    B, Hq, L, E = query.shape
    Hkv, S = key.size(1), key.size(2)
    if Hq != Hkv:
        if not enable_gqa:
            raise ValueError(f"Expect query and key/value to have the same number of heads but got Hq={Hq} and "
                             f"Hkv={Hkv}. Try setting enable_gqa=True for GQA.")
        if Hq % Hkv:
            raise ValueError(f"Expect number of query heads to be a multiple of kv heads for GQA but got Hq={Hq} "
                             f"and Hkv={Hkv}.")
        key = repeat_interleave(key, Hq // Hkv, dim=1)
        value = repeat_interleave(value, Hq // Hkv, dim=1)
    if block_mask is not None and block_mask.seq_lengths != (L, S):
        raise ValueError(f"block_mask was created for block_mask.shape={block_mask.shape} but got q_len={L} and "
                         f"kv_len={S}. As the block mask was created for a smaller length than you're using it for, "
                         f"you likely need to create a new block mask.")
    scale = 1.0 / math.sqrt(E) if scale is None else scale
    compute = float32 if query.dtype.itemsize < 4 else query.dtype  # half precision accumulates in float32
    scores = matmul(query.to(compute), key.to(compute).transpose(-2, -1)) * scale
    if score_mod is not None:
        idx = [arange(n, device=query.device) for n in (B, Hq, L, S)]
        scores = _vmap_score(score_mod, scores, *idx)
    if block_mask is not None:
        allowed = block_mask._allowed(query.device)
        scores = where(allowed, scores, scores.new_full((), -math.inf))
    row_max = amax(scores, dim=-1, keepdim=True)
    live = row_max > -math.inf  # rows with at least one allowed score
    safe_max = where(live, row_max, zeros((), dtype=compute))
    weights = (scores - safe_max).exp()
    total = weights.sum(-1, keepdim=True)
    out = matmul(weights / where(live, total, total.new_ones(())), value.to(compute)).to(query.dtype)
    lse = (logsumexp(scores, dim=-1)).to(float32)
    if return_lse:
        return out, lse
    if return_aux is not None:
        return out, AuxOutput(lse=lse if return_aux.lse else None)
    return out
