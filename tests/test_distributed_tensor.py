"""torch.distributed.tensor's pure parts in process: placements and where a rank's shard lies.

The expected values were produced with PyTorch 2.13 (`Shard.local_shard_size_and_offset`,
`_StridedShard.local_shard_size_and_offset`, `_compute_local_shape_and_global_offset(global_shape,
mesh_shape, coordinate, placements)`, which needs no process group) and are written out here, so the tests
run without PyTorch. The collective parts (DeviceMesh, DTensor, functional collectives, fully_shard) run
on MPI ranks in tests/test_distributed.py.
"""
import itertools
import json
import struct

import numpy as np
import pytest

from mindtorch_v2.distributed.tensor._utils import _local_shape_and_offset
from mindtorch_v2.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard, _StridedShard


def test_placements_compare_hash_and_print_as_pytorch():
    assert Shard(1) == Shard(1) and Shard(1) != Shard(0) and Shard(0) != _StridedShard(0, split_factor=2)
    assert _StridedShard(0, split_factor=2) != Shard(0) and Partial() == Partial("sum") != Partial("avg")
    assert Replicate() == Replicate() and Replicate() != Partial()
    assert (hash(Shard(1)), hash(Shard(2)), hash(Replicate())) == (1, 2, -2)
    assert len({Shard(0), Shard(0), Replicate(), Partial(), Partial("max")}) == 4
    assert [repr(p) for p in (Shard(1), Replicate(), Partial(), _StridedShard(0, split_factor=2))] == \
        ["Shard(dim=1)", "Replicate()", "Partial(sum)", "_StridedShard(dim=0, sf=2)"]
    assert [str(p) for p in (Shard(1), Replicate(), Partial("avg"), _StridedShard(0, split_factor=2))] == \
        ["S(1)", "R", "P(avg)", "_S(0, 2)"]
    assert Shard(0).is_shard() and Shard(0).is_shard(0) and not Shard(0).is_shard(1)
    assert not _StridedShard(0, split_factor=2).is_shard() and Partial().is_partial("sum")
    assert Replicate().is_replicate() and not Partial().is_replicate()
    assert all(isinstance(p, Placement) for p in (Shard(0), Replicate(), Partial(), _StridedShard(0, 2)))
    assert not isinstance(_StridedShard(0, 2), Shard)  # as in PyTorch 2.13
    assert (Shard(dim=2).dim, Partial().reduce_op, _StridedShard(1, split_factor=3).split_factor) == (2, "sum", 3)
    with pytest.raises(TypeError):
        Shard()


# PyTorch 2.13: {size: [Shard.local_shard_size_and_offset(size, k, r) for k in (2, 3, 4) for r in range(k)]}
SHARD_TABLE = {
    0: [(0, 0)] * 9,
    1: [(1, 0), (0, 1), (1, 0), (0, 1), (0, 1), (1, 0), (0, 1), (0, 1), (0, 1)],
    5: [(3, 0), (2, 3), (2, 0), (2, 2), (1, 4), (2, 0), (2, 2), (1, 4), (0, 5)],
    7: [(4, 0), (3, 4), (3, 0), (3, 3), (1, 6), (2, 0), (2, 2), (2, 4), (1, 6)],
    8: [(4, 0), (4, 4), (3, 0), (3, 3), (2, 6), (2, 0), (2, 2), (2, 4), (2, 6)],
}


@pytest.mark.parametrize("size", sorted(SHARD_TABLE))
def test_shard_sizes_and_offsets_follow_torch_chunk(size):
    got = [Shard.local_shard_size_and_offset(size, k, r) for k in (2, 3, 4) for r in range(k)]
    assert got == SHARD_TABLE[size]
    assert Shard._local_shard_size_and_offset is Shard.local_shard_size_and_offset


def test_strided_shard_sizes_and_first_offsets():
    # PyTorch 2.13: _StridedShard(0, split_factor=sf).local_shard_size_and_offset(n, 2, r)
    table = {(3, 2): [(2, 0), (1, 1)], (3, 3): [(3, 0), (0, -1)], (5, 2): [(3, 0), (2, 2)],
             (5, 3): [(3, 0), (2, 1)], (7, 2): [(4, 0), (3, 2)], (7, 3): [(5, 0), (2, 2)],
             (8, 2): [(4, 0), (4, 2)], (8, 3): [(5, 0), (3, 2)]}
    for (n, sf), want in table.items():
        got = [_StridedShard(0, split_factor=sf).local_shard_size_and_offset(n, 2, r) for r in range(2)]
        assert got == want, (n, sf)
    assert _StridedShard(0, split_factor=2).local_shard_size_and_offset(8, 2, 1, "all") == (4, [2, 3, 6, 7])
    with pytest.raises(ValueError, match="_StridedShardOffsetMode"):
        _StridedShard(0, split_factor=2).local_shard_size_and_offset(8, 2, 1, "every")


S, R, P, SS = Shard, Replicate, Partial, _StridedShard
# PyTorch 2.13's _compute_local_shape_and_global_offset for every coordinate of the mesh
LAYOUT_TABLE = [
    ((10, 6), (2,), [S(0)], [((5, 6), (0, 0)), ((5, 6), (5, 0))]),
    ((5, 5), (2, 2), [S(1), S(1)], [((5, 2), (0, 0)), ((5, 1), (0, 2)), ((5, 1), (0, 3)), ((5, 1), (0, 4))]),
    ((7, 3), (2, 2), [S(0), R()], [((4, 3), (0, 0)), ((4, 3), (0, 0)), ((3, 3), (4, 0)), ((3, 3), (4, 0))]),
    ((6, 4), (2, 2), [P(), S(1)], [((6, 2), (0, 0)), ((6, 2), (0, 2)), ((6, 2), (0, 0)), ((6, 2), (0, 2))]),
    ((9, 4), (2, 2), [S(0), S(1)], [((5, 2), (0, 0)), ((5, 2), (0, 2)), ((4, 2), (5, 0)), ((4, 2), (5, 2))]),
    ((8,), (2, 2), [S(0), SS(0, split_factor=2)], [((2,), (0,)), ((2,), (1,)), ((2,), (4,)), ((2,), (5,))]),
    ((3, 2), (4,), [S(0)], [((1, 2), (0, 0)), ((1, 2), (1, 0)), ((1, 2), (2, 0)), ((0, 2), (3, 0))]),
    ((1, 2), (2, 2), [S(0), S(0)], [((1, 2), (0, 0)), ((0, 2), (1, 0)), ((0, 2), (1, 0)), ((0, 2), (1, 0))]),
    ((8, 3), (2, 2), [SS(0, split_factor=2), S(0)],
     [((2, 3), (0, 0)), ((2, 3), (4, 0)), ((2, 3), (2, 0)), ((2, 3), (6, 0))]),
]


@pytest.mark.parametrize("global_shape,mesh_shape,placements,want", LAYOUT_TABLE)
def test_local_shape_and_global_offset_match_pytorch(global_shape, mesh_shape, placements, want):
    coords = list(itertools.product(*[range(m) for m in mesh_shape]))
    got = [_local_shape_and_offset(global_shape, mesh_shape, list(c), placements) for c in coords]
    assert got == want
    assert [_local_shape_and_offset(global_shape, mesh_shape, list(c), placements, skip_offset=True)
            for c in coords] == [(shape, ()) for shape, _ in want]


@pytest.mark.parametrize("global_shape,mesh_shape,placements,want", LAYOUT_TABLE)
def test_the_shards_split_by_placements_sit_at_the_computed_offsets(global_shape, mesh_shape, placements, want):
    # the numpy pieces DTensor keeps (each placement's _split, left to right) are the blocks the layout names
    x = np.arange(int(np.prod(global_shape))).reshape(global_shape)
    for c, (shape, offset) in zip(itertools.product(*[range(m) for m in mesh_shape]), want):
        local = x
        for i, p in enumerate(placements):
            if isinstance(p, (Shard, _StridedShard)):
                local = p._split(local, mesh_shape[i])[c[i]]
        assert local.shape == shape
        if local.size and not any(isinstance(p, _StridedShard) for p in placements):
            block = x[tuple(slice(o, o + s) for o, s in zip(offset, shape))]
            np.testing.assert_array_equal(local, block)
        elif local.size:  # strided: not a block, but it starts at the offset
            assert local.flat[0] == x[tuple(offset)]


def _write_safetensors(path, tensors, metadata=None):
    header, blobs, at = {}, [], 0
    for name, (code, arr) in tensors.items():
        b = arr.tobytes()
        header[name] = {"dtype": code, "shape": list(arr.shape), "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    if metadata:
        header["__metadata__"] = metadata
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))


def test_hf_storage_reader_reads_tensor_metadata_from_safetensors_headers(tmp_path):
    import mindtorch_v2 as torch
    from mindtorch_v2.distributed.checkpoint.hf_storage import HuggingFaceStorageReader, HuggingFaceStorageWriter
    _write_safetensors(tmp_path / "model-00001-of-00002.safetensors",
                       {"a.weight": ("F32", np.zeros((3, 4), np.float32)), "b": ("I64", np.zeros(2, np.int64))})
    sharding = {"c": {"saved_offsets": [2, 0], "shape": [4, 3]}}
    _write_safetensors(tmp_path / "model-00002-of-00002.safetensors", {"c": ("F16", np.zeros((2, 3), np.float16))},
                       {"DCP_SHARDING_INFO": json.dumps(sharding)})
    meta = HuggingFaceStorageReader(str(tmp_path)).read_metadata()
    sd = meta.state_dict_metadata
    assert sorted(sd) == ["a.weight", "b", "c"]
    assert sd["a.weight"].size == (3, 4) and sd["a.weight"].properties.dtype is torch.float32
    assert sd["b"].properties.dtype is torch.int64
    assert sd["c"].size == (4, 3) and [(ch.offsets, ch.sizes) for ch in sd["c"].chunks] == [((2, 0), (2, 3))]
    with pytest.raises(FileNotFoundError):
        HuggingFaceStorageReader(str(tmp_path / "nowhere")).read_metadata()
    w = HuggingFaceStorageWriter(path=str(tmp_path), save_distributed=True, enable_consolidation=False)
    with pytest.raises(NotImplementedError, match="save engine"):
        w.write_data(None, None)
