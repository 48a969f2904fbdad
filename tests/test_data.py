"""torch.utils.data: datasets, samplers, DataLoader batching, shuffling and default_collate."""
import collections
import multiprocessing
import time
import warnings

import numpy as np
import pytest

import mindtorch_v2 as torch
from mindtorch_v2.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset, RandomSampler,
                                     SequentialSampler, StackDataset, Subset, SubsetRandomSampler, TensorDataset,
                                     WeightedRandomSampler, default_collate, default_convert, get_worker_info,
                                     random_split)


def rows(n=10, d=2):
    return torch.arange(n * d, dtype=torch.float32).reshape(n, d), torch.arange(n)


def flat_labels(loader):
    return [int(i) for _, y in loader for i in y.tolist()]


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * i


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


# ---------------------------------------------------------------------------
# datasets


def test_tensor_dataset_items_are_tuples_of_rows():
    x, y = rows()
    ds = TensorDataset(x, y)
    assert len(ds) == 10
    xi, yi = ds[3]
    assert xi.tolist() == [6.0, 7.0] and yi.item() == 3


def test_tensor_dataset_size_mismatch_names_the_sizes():
    with pytest.raises(AssertionError, match=r"Size mismatch between tensors.*\[4, 3\]"):
        TensorDataset(torch.zeros(4, 2), torch.zeros(3))


def test_dataset_base_getitem_is_abstract_and_add_concatenates():
    with pytest.raises(NotImplementedError):
        Dataset()[0]
    both = Squares(2) + Squares(3)
    assert isinstance(both, ConcatDataset) and [both[i] for i in range(5)] == [0, 1, 0, 1, 4]


def test_subset_maps_indices_and_lists():
    sub = Subset(Squares(10), [7, 2, 5])
    assert len(sub) == 3
    assert [sub[i] for i in range(3)] == [49, 4, 25]
    assert sub.__getitems__([2, 0]) == [25, 49]


def test_concat_dataset_indexing_including_negative():
    ds = ConcatDataset([Squares(2), Squares(3)])
    assert len(ds) == 5 and ds.cumulative_sizes == [2, 5]
    assert [ds[i] for i in range(5)] == [0, 1, 0, 1, 4]
    assert ds[-1] == 4 and ds[-5] == 0
    with pytest.raises(ValueError, match="absolute value of index"):
        ds[-6]
    with pytest.raises(IndexError):
        ds[5]


def test_concat_dataset_rejects_empty_and_iterable():
    with pytest.raises(AssertionError, match="empty"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="IterableDataset"):
        ConcatDataset([Stream(3)])


def test_stack_dataset_tuples_and_dicts():
    assert StackDataset(Squares(3), Squares(3))[2] == (4, 4)
    assert StackDataset(a=Squares(3), b=Squares(3))[1] == {"a": 1, "b": 1}
    with pytest.raises(ValueError, match="Size mismatch"):
        StackDataset(Squares(2), Squares(3))


# ---------------------------------------------------------------------------
# random_split


def test_random_split_lengths_are_disjoint_and_cover_the_dataset():
    a, b, c = random_split(Squares(10), [5, 3, 2], generator=torch.Generator().manual_seed(1))
    assert [len(a), len(b), len(c)] == [5, 3, 2]
    assert sorted(a.indices + b.indices + c.indices) == list(range(10))


def test_random_split_fractions_give_the_remainder_round_robin():
    parts = random_split(Squares(11), [0.3, 0.3, 0.4], generator=torch.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [4, 3, 4]  # floor: 3, 3, 4; one left over goes to the first


def test_random_split_is_deterministic_for_a_seed():
    def split(seed):
        return [s.indices for s in random_split(Squares(20), [0.5, 0.5], generator=torch.Generator().manual_seed(seed))]
    assert split(3) == split(3)
    assert split(3) != split(4)


def test_random_split_uses_the_global_generator_by_default():
    torch.manual_seed(7)
    first = random_split(Squares(20), [10, 10])[0].indices
    torch.manual_seed(7)
    assert random_split(Squares(20), [10, 10])[0].indices == first


def test_random_split_errors_and_empty_split_warning():
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(Squares(10), [5, 4])
    with pytest.raises(ValueError, match="Fraction at index 1"):
        random_split(Squares(10), [0.5, -0.5, 1.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parts = random_split(Squares(2), [0.0, 1.0])
    assert [len(p) for p in parts] == [0, 2]
    assert any("Length of split at index 0 is 0" in str(w.message) for w in caught)


# ---------------------------------------------------------------------------
# samplers


def test_sequential_sampler():
    assert list(SequentialSampler(Squares(4))) == [0, 1, 2, 3]
    assert len(SequentialSampler(Squares(4))) == 4


def test_random_sampler_is_a_permutation_reproducible_with_a_generator():
    orders = [list(RandomSampler(Squares(8), generator=torch.Generator().manual_seed(5))) for _ in range(2)]
    assert orders[0] == orders[1]
    assert sorted(orders[0]) == list(range(8))


def test_random_sampler_num_samples_without_replacement_repeats_permutations():
    s = RandomSampler(Squares(4), num_samples=10, generator=torch.Generator().manual_seed(0))
    out = list(s)
    assert len(s) == 10 and len(out) == 10
    assert sorted(out[:4]) == sorted(out[4:8]) == [0, 1, 2, 3]


def test_random_sampler_with_replacement():
    s = RandomSampler(Squares(3), replacement=True, num_samples=70, generator=torch.Generator().manual_seed(0))
    out = list(s)
    assert len(out) == 70 and set(out) <= {0, 1, 2}


def test_random_sampler_validates_arguments():
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        RandomSampler(Squares(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(Squares(3), num_samples=0)
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(Squares(0))


def test_subset_and_weighted_random_samplers():
    out = list(SubsetRandomSampler([10, 20, 30], generator=torch.Generator().manual_seed(0)))
    assert sorted(out) == [10, 20, 30]
    w = list(WeightedRandomSampler([0.0, 1.0, 0.0], 5, generator=torch.Generator().manual_seed(0)))
    assert w == [1, 1, 1, 1, 1]


def test_batch_sampler_batches_and_len():
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, False)) == 3
    assert len(BatchSampler(range(7), 3, True)) == 2
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        BatchSampler(range(7), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean"):
        BatchSampler(range(7), 2, 1)


# ---------------------------------------------------------------------------
# DataLoader


def test_loader_batches_in_order_with_a_short_last_batch():
    x, y = rows(10)
    batches = list(DataLoader(TensorDataset(x, y), batch_size=4))
    assert [b[0].shape for b in batches] == [torch.Size([4, 2]), torch.Size([4, 2]), torch.Size([2, 2])]
    assert isinstance(batches[0], list)  # tuples of fields collate to a list, as in torch
    assert batches[0][0].tolist() == x[:4].tolist()
    assert batches[2][1].tolist() == [8, 9]
    assert batches[0][1].dtype == torch.int64


@pytest.mark.parametrize("drop_last,expected", [(False, 4), (True, 3)])
def test_loader_len_and_drop_last(drop_last, expected):
    loader = DataLoader(TensorDataset(*rows(10)), batch_size=3, drop_last=drop_last)
    assert len(loader) == expected
    assert len(list(loader)) == expected
    assert all(len(y) == 3 for _, y in loader) == drop_last


def test_loader_shuffle_with_a_seeded_generator_is_reproducible():
    ds = TensorDataset(*rows(20))

    def orders(seed):
        loader = DataLoader(ds, batch_size=6, shuffle=True, generator=torch.Generator().manual_seed(seed))
        return [flat_labels(loader) for _ in range(2)]

    first, second = orders(0)
    assert sorted(first) == list(range(20)) and sorted(second) == list(range(20))
    assert first != list(range(20))
    assert first != second  # the generator advances between epochs
    assert orders(0) == [first, second]
    assert orders(1) != [first, second]


def test_loader_shuffle_follows_torch_manual_seed():
    ds = TensorDataset(*rows(20))
    torch.manual_seed(123)
    a = flat_labels(DataLoader(ds, batch_size=5, shuffle=True))
    torch.manual_seed(123)
    b = flat_labels(DataLoader(ds, batch_size=5, shuffle=True))
    assert a == b and sorted(a) == list(range(20))


def test_loader_batches_match_the_per_sample_collate():
    # a TensorDataset (also under a Subset) is batched by one indexing per tensor; same result as stacking samples
    x, y = rows(12, 3)
    for ds in (TensorDataset(x, y), random_split(TensorDataset(x, y), [8, 4], torch.Generator().manual_seed(2))[0]):
        fast = list(DataLoader(ds, batch_size=5, shuffle=True, generator=torch.Generator().manual_seed(9)))
        slow = list(DataLoader(ds, batch_size=5, shuffle=True, generator=torch.Generator().manual_seed(9),
                               collate_fn=lambda b: default_collate(b)))
        assert len(fast) == len(slow)
        for (fx, fy), (sx, sy) in zip(fast, slow):
            assert fx.tolist() == sx.tolist() and fy.tolist() == sy.tolist()
            assert (fx.dtype, fy.dtype, fx.shape) == (sx.dtype, sy.dtype, sx.shape)


def test_loader_over_a_plain_dataset_collates_ints():
    batches = list(DataLoader(Squares(5), batch_size=2))
    assert [b.tolist() for b in batches] == [[0, 1], [4, 9], [16]]
    assert batches[0].dtype == torch.int64


def test_loader_with_dict_samples():
    class Dicts(Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return {"x": torch.full((2,), float(i)), "label": i, "name": f"s{i}"}

    (batch,) = list(DataLoader(Dicts(), batch_size=3))
    assert batch["x"].tolist() == [[0, 0], [1, 1], [2, 2]]
    assert batch["label"].tolist() == [0, 1, 2]
    assert batch["name"] == ["s0", "s1", "s2"]


def test_loader_batch_size_none_converts_without_batching():
    class Arrays(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return np.full(3, i, dtype=np.int32)

    items = list(DataLoader(Arrays(), batch_size=None))
    assert [t.tolist() for t in items] == [[0, 0, 0], [1, 1, 1]]
    assert items[0].dtype == torch.int32 and len(DataLoader(Arrays(), batch_size=None)) == 2


def test_loader_with_custom_sampler_batch_sampler_and_collate_fn():
    ds = Squares(6)
    assert [b.tolist() for b in DataLoader(ds, batch_size=2, sampler=[5, 4, 3, 2, 1, 0])] == [[25, 16], [9, 4], [1, 0]]
    assert [b.tolist() for b in DataLoader(ds, batch_sampler=[[0, 5], [2]])] == [[0, 25], [4]]
    assert list(DataLoader(ds, batch_size=4, collate_fn=sum)) == [14, 41]


def test_loader_num_workers_runs_in_process():
    loader = DataLoader(Squares(5), batch_size=2, num_workers=2, persistent_workers=True, prefetch_factor=2)
    assert [b.tolist() for b in loader] == [[0, 1], [4, 9], [16]]
    assert get_worker_info() is None


def test_loader_rejects_conflicting_options():
    ds = Squares(4)
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(ds, sampler=[0, 1], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(ds, batch_sampler=[[0]], batch_size=2)
    with pytest.raises(ValueError, match="batch_size=None option disables auto-batching"):
        DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Stream(3), shuffle=True)


def test_loader_attributes_are_frozen_after_init():
    loader = DataLoader(Squares(4), batch_size=2)
    with pytest.raises(ValueError, match="batch_size attribute should not be set"):
        loader.batch_size = 3
    loader.num_workers = 0  # other attributes stay settable


def test_loader_over_an_iterable_dataset():
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3, drop_last=True)] == [[0, 1, 2], [3, 4, 5]]
    assert len(DataLoader(Stream(7), batch_size=3)) == 3
    assert len(DataLoader(Stream(7), batch_size=3, drop_last=True)) == 2
    assert list(DataLoader(Stream(2), batch_size=None)) == [0, 1]


def test_loader_draws_from_its_generator_on_every_pass():
    # torch takes a worker base seed from the loader's generator per iterator, even without shuffling
    g = torch.Generator().manual_seed(0)
    loader = DataLoader(Squares(3), batch_size=2, generator=g)
    state = g.get_state().tolist()
    list(loader)
    assert g.get_state().tolist() != state


# ---------------------------------------------------------------------------
# default_collate / default_convert


def test_collate_python_numbers_take_torch_dtypes():
    assert default_collate([1.5, 2.0]).dtype == torch.float64
    assert default_collate([1, 2]).dtype == torch.int64
    assert default_collate([True, False]).dtype == torch.bool


def test_collate_tensors_stack_on_a_new_first_dim():
    out = default_collate([torch.ones(2, 3), torch.zeros(2, 3)])
    assert out.shape == torch.Size([2, 2, 3])
    assert out.tolist()[0] == [[1, 1, 1], [1, 1, 1]]


def test_collate_numpy_arrays_and_scalars():
    out = default_collate([np.array([1, 2], dtype=np.int16), np.array([3, 4], dtype=np.int16)])
    assert out.dtype == torch.int16 and out.tolist() == [[1, 2], [3, 4]]
    s = default_collate([np.float32(1.5), np.float32(2.5)])
    assert s.dtype == torch.float32 and s.tolist() == [1.5, 2.5]
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_collate_sequences_transpose_and_keep_strings():
    assert default_collate(["a", "b"]) == ["a", "b"]
    out = default_collate([(1, "a", [1.0, 2.0]), (2, "b", [3.0, 4.0])])
    assert isinstance(out, list) and out[0].tolist() == [1, 2]
    assert out[1] == ("a", "b")  # torch hands the transposed (zip) tuple of strings back as it is
    assert [t.tolist() for t in out[2]] == [[1.0, 3.0], [2.0, 4.0]]
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])


def test_collate_namedtuples_and_ordered_dicts_keep_their_type():
    Point = collections.namedtuple("Point", "x y")
    p = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert type(p) is Point and p.x.tolist() == [1, 3] and p.y.dtype == torch.float64
    od = default_collate([collections.OrderedDict(b=1, a=2), collections.OrderedDict(b=3, a=4)])
    assert type(od) is collections.OrderedDict and list(od) == ["b", "a"] and od["a"].tolist() == [2, 4]


def test_collate_rejects_unknown_types():
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate([object(), object()])


def test_default_convert():
    assert default_convert(3) == 3
    out = default_convert({"a": np.array([1.0]), "b": (np.int64(2), "s")})
    assert out["a"].dtype == torch.float64 and out["b"][0].item() == 2 and out["b"][1] == "s"
    t = torch.ones(2)
    assert default_convert(t) is t


# ---------------------------------------------------------------------------
# multiprocessing_context is validated and timeout bounds the wait (PyTorch 2.13's errors and messages)


class _SlowAt(Dataset):
    def __init__(self, slow_index, seconds):
        self.slow_index, self.seconds = slow_index, seconds

    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == self.slow_index:
            time.sleep(self.seconds)
        return i


@pytest.mark.parametrize("kwargs,error,words", [
    (dict(num_workers=0, multiprocessing_context="spawn"), ValueError, "only be used with multi-process loading"),
    (dict(num_workers=1, multiprocessing_context="nope"), ValueError, "should specify a valid start method in"),
    (dict(num_workers=1, multiprocessing_context=5), TypeError, "should be a valid context object"),
])
def test_bad_multiprocessing_context_is_refused(kwargs, error, words):
    with pytest.raises(error, match=words):
        DataLoader(list(range(3)), **kwargs)


def test_multiprocessing_context_object_is_kept():
    ctx = multiprocessing.get_context("spawn")
    assert DataLoader(list(range(3)), num_workers=1, multiprocessing_context=ctx).multiprocessing_context is ctx
    assert isinstance(DataLoader(list(range(3)), num_workers=1, multiprocessing_context="fork").multiprocessing_context,
                      multiprocessing.context.BaseContext)


def test_timeout_bounds_the_wait_for_a_batch():
    loader = DataLoader(_SlowAt(2, 5.0), num_workers=1, timeout=0.5)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.5 seconds"):
        list(loader)
    assert time.monotonic() - start < 4.0
    assert list(DataLoader(_SlowAt(2, 0.05), num_workers=1, timeout=5)) == [torch.tensor([i]) for i in range(4)]
