"""torch.distributed.tensor.placement_types: how a DTensor lies along each mesh dimension.

Shard(dim) splits tensor dim `dim` the way torch.chunk does (chunks of ceil(size / n); the tail chunks may
be short or empty); Replicate() keeps a full copy on every rank of the mesh dimension; Partial(op) holds
per-rank values whose reduction by `op` is the tensor; _StridedShard(dim, split_factor) is the sharding a
Shard applied *after* another Shard of the same dim on a mesh dimension to its right would give
(chunk into split_factor pieces, chunk each piece over the ranks, concatenate this rank's pieces).
Equality, hash and repr are PyTorch 2.13's.
"""

__all__ = ["Placement", "Shard", "Replicate", "Partial"]


class Placement:
    """The base of every placement type."""
    __slots__ = ()

    def is_shard(self, dim=None):
        return False

    def is_replicate(self):
        return False

    def is_partial(self, reduce_op=None):
        return False


def _chunk_bounds(size, num_chunks, index):
    """[start, end) of chunk `index` when `size` elements are cut torch.chunk-style into num_chunks."""
    if size % num_chunks == 0:
        c = size // num_chunks
        return c * index, c * (index + 1)
    c = (size + num_chunks - 1) // num_chunks
    return min(size, c * index), min(size, c * (index + 1))


class Shard(Placement):
    """Tensor dim `dim` split over the ranks of a mesh dimension, torch.chunk-style."""
    __slots__ = ("dim",)

    def __init__(self, dim):
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise TypeError(f"Shard(dim): dim must be an int, got {type(dim).__name__}")
        self.dim = dim

    def is_shard(self, dim=None):
        return dim is None or dim == self.dim

    @staticmethod
    def local_shard_size_and_offset(curr_local_size, num_chunks, rank):
        """(size of chunk `rank`, its offset) when curr_local_size elements are split into num_chunks
        torch.chunk-style; an empty chunk's offset is curr_local_size."""
        start, end = _chunk_bounds(curr_local_size, num_chunks, rank)
        return max(0, end - start), start

    _local_shard_size_and_offset = local_shard_size_and_offset  # the name PyTorch < 2.10 used

    def _split(self, array, num_chunks):
        """The num_chunks numpy pieces of `array` along self.dim (views; some possibly empty)."""
        n = array.shape[self.dim]
        idx = [slice(None)] * array.ndim
        out = []
        for r in range(num_chunks):
            start, end = _chunk_bounds(n, num_chunks, r)
            idx[self.dim] = slice(start, end)
            out.append(array[tuple(idx)])
        return out

    def __eq__(self, other):
        return type(other) is Shard and other.dim == self.dim

    def __hash__(self):
        return hash(self.dim)

    def __repr__(self):
        return f"Shard(dim={self.dim})"

    def __str__(self):
        return f"S({self.dim})"


class _StridedShard(Placement):
    """Shard of tensor dim `dim` in right-to-left order: the dim is chunked into split_factor pieces, each
    piece chunked over the ranks, and a rank holds its chunk of every piece, concatenated."""
    __slots__ = ("dim", "split_factor")

    def __init__(self, dim, split_factor):
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise TypeError(f"_StridedShard(dim): dim must be an int, got {type(dim).__name__}")
        if int(split_factor) < 1:
            raise ValueError(f"_StridedShard: split_factor must be positive, got {split_factor}")
        self.dim = dim
        self.split_factor = int(split_factor)

    def _indices(self, size, num_chunks, rank):
        out = []
        for j in range(self.split_factor):
            s0, e0 = _chunk_bounds(size, self.split_factor, j)
            s1, e1 = _chunk_bounds(e0 - s0, num_chunks, rank)
            out.extend(range(s0 + s1, s0 + e1))
        return out

    def local_shard_size_and_offset(self, curr_local_size, num_chunks, rank, offset_mode="first"):
        """(local size, offsets): offset_mode "first" gives the first index (-1 for an empty shard),
        "all" the list of indices, "none" None. PyTorch 2.13's rule."""
        mode = getattr(offset_mode, "value", offset_mode)
        idx = self._indices(curr_local_size, num_chunks, rank)
        if mode == "none":
            return len(idx), None
        if mode == "all":
            return len(idx), idx
        if mode == "first":
            return len(idx), (idx[0] if idx else -1)
        raise ValueError(f"'{offset_mode}' is not a valid _StridedShardOffsetMode")

    _local_shard_size_and_offset = local_shard_size_and_offset

    def _split(self, array, num_chunks):
        import numpy as np
        n = array.shape[self.dim]
        return [np.take(array, self._indices(n, num_chunks, r), axis=self.dim) for r in range(num_chunks)]

    def __eq__(self, other):
        return type(other) is _StridedShard and (other.dim, other.split_factor) == (self.dim, self.split_factor)

    def __hash__(self):
        return hash((self.dim, self.split_factor))

    def __repr__(self):
        return f"_StridedShard(dim={self.dim}, sf={self.split_factor})"

    def __str__(self):
        return f"_S({self.dim}, {self.split_factor})"


class Replicate(Placement):
    """A full copy on every rank of the mesh dimension."""
    __slots__ = ()

    def is_replicate(self):
        return True

    def __eq__(self, other):
        return type(other) is Replicate

    def __hash__(self):
        return -1  # CPython turns a hash of -1 into -2, as PyTorch's Replicate hashes

    def __repr__(self):
        return "Replicate()"

    def __str__(self):
        return "R"


class Partial(Placement):
    """Per-rank values whose reduction by reduce_op ("sum", "avg", "max", "min") over the mesh
    dimension is the tensor."""
    __slots__ = ("reduce_op",)

    def __init__(self, reduce_op="sum"):
        reduce_op = "sum" if reduce_op is None else str(reduce_op).lower()
        self.reduce_op = reduce_op

    def is_partial(self, reduce_op=None):
        return reduce_op is None or reduce_op == self.reduce_op

    def _partition(self, array, num_chunks):
        """A replicated value -> this rank's partial value (PyTorch's _partition_value)."""
        if self.reduce_op == "sum":
            return array / num_chunks
        if self.reduce_op in ("avg", "min", "max"):
            return array
        raise ValueError(f"Replicate to Partial({self.reduce_op}) conversion is not supported.")

    def __eq__(self, other):
        return type(other) is Partial and other.reduce_op == self.reduce_op

    def __hash__(self):
        return hash(("Partial", self.reduce_op))

    def __repr__(self):
        return f"Partial({self.reduce_op})"

    def __str__(self):
        return f"P({self.reduce_op})"

