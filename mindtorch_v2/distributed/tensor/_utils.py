"""torch.distributed.tensor._utils: where a rank's shard lies in the global tensor."""
import numpy as np

from .placement_types import Shard, _StridedShard

__all__ = ["compute_local_shape_and_global_offset"]


def _local_shape_and_offset(global_shape, mesh_shape, coordinate, placements, skip_offset=False):
    """PyTorch's rule for one mesh coordinate: shard left to right; each tensor dim keeps the global indices
    this rank holds, so a later Shard (or _StridedShard) of the same dim indexes into an earlier one's
    result. An empty shard's offset is the dim's global size."""
    local_shape = list(global_shape)
    held = {}  # tensor dim -> the global indices this rank holds along it
    for mesh_dim, p in enumerate(placements):
        if not isinstance(p, (Shard, _StridedShard)):
            continue
        d = p.dim
        if d >= len(local_shape):
            raise AssertionError(f"Sharding dim {d} greater than tensor ndim {len(local_shape)}")
        size, rank = local_shape[d], coordinate[mesh_dim]
        if isinstance(p, _StridedShard):
            new_size, index = p.local_shard_size_and_offset(size, mesh_shape[mesh_dim], rank, "all")
            index = np.asarray(index, dtype=np.int64)
        else:
            new_size, start = Shard.local_shard_size_and_offset(size, mesh_shape[mesh_dim], rank)
            index = np.arange(start, start + new_size)
        local_shape[d] = new_size
        if new_size == 0:
            held[d] = np.array([global_shape[d]])
        else:
            held[d] = index if d not in held else held[d][index]
    if skip_offset:
        return tuple(local_shape), ()
    offset = [0] * len(global_shape)
    for d, index in held.items():
        offset[d] = int(index[0])
    return tuple(local_shape), tuple(offset)


def compute_local_shape_and_global_offset(global_shape, mesh, placements, skip_offset=False):
    """(local shape, global offset) of this rank's shard of a tensor of global_shape laid out by placements
    on mesh; ((0,), ()) on a rank outside the mesh."""
    coordinate = mesh.get_coordinate()
    if coordinate is None:
        return (0,), ()
    return _local_shape_and_offset(tuple(global_shape), mesh.shape, coordinate, placements, skip_offset)
