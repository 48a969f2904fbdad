"""Pickling and deep-copying tensors, Parameters, Modules and Optimizers; tensors across processes."""
import copy
import multiprocessing
import pickle
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest

import mindtorch_v2 as torch
from mindtorch_v2 import nn
from mindtorch_v2.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info


def roundtrip(obj):
    return pickle.loads(pickle.dumps(obj))


# ---------------------------------------------------------------------------
# tensors

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2",
                                   "complex64", "complex128", "bool", "int8", "uint8", "int16", "int32", "int64",
                                   "uint16", "uint32", "uint64"])
def test_pickle_keeps_values_and_dtype(dtype):
    t = torch.arange(6).reshape(2, 3).to(getattr(torch, dtype))
    u = roundtrip(t)
    assert u.dtype == t.dtype and u.shape == t.shape
    np.testing.assert_array_equal(np.asarray(u), np.asarray(t))


def test_pickle_keeps_geometry_of_views():
    x = torch.arange(12.0).reshape(3, 4)
    v = x.t()[1:, ::2]
    u = roundtrip(v)
    assert u.stride() == v.stride() and u.storage_offset() == v.storage_offset() and u.shape == v.shape
    np.testing.assert_array_equal(u.numpy(), v.numpy())


def test_views_pickled_together_share_storage():
    x = torch.arange(6.0)
    y, row, mat = roundtrip((x, x[2:], x.view(2, 3)))
    row[0] = 100.0
    assert y.tolist() == [0.0, 1.0, 100.0, 3.0, 4.0, 5.0]
    assert mat[0, 2].item() == 100.0
    assert x[2].item() == 2.0  # the original is untouched


def test_pickle_keeps_requires_grad_not_grad():
    a = torch.ones(3, requires_grad=True)
    a.grad = torch.full((3,), 2.0)
    u = roundtrip(a)
    assert u.requires_grad and u.is_leaf and u.grad is None
    assert not roundtrip(torch.ones(2)).requires_grad


def test_pickle_of_non_leaf_gives_a_leaf_requiring_grad():
    b = torch.ones(3, requires_grad=True) * 2
    u = roundtrip(b)
    assert u.is_leaf and u.requires_grad and u.grad_fn is None
    assert u.tolist() == [2.0, 2.0, 2.0]


def test_pickle_keeps_attributes_and_meta_device():
    t = torch.ones(2)
    t.tag = "x"
    assert roundtrip(t).tag == "x"
    m = torch.empty(4, 5, dtype=torch.float16, device="meta")
    u = roundtrip(m)
    assert u.is_meta and u.shape == (4, 5) and u.dtype == torch.float16


def test_unpickled_tensor_is_writable_and_differentiable():
    u = roundtrip(torch.ones(3, requires_grad=True))
    (u * u).sum().backward()
    assert u.grad.tolist() == [2.0, 2.0, 2.0]
    w = roundtrip(torch.zeros(3))
    w.add_(1)
    assert w.tolist() == [1.0, 1.0, 1.0] and w._version == 1


def test_deepcopy_is_an_independent_leaf_with_grad():
    a = torch.ones(3, requires_grad=True)
    a.grad = torch.full((3,), 2.0)
    a.tag = [1]
    c = copy.deepcopy(a)
    assert c.requires_grad and c.is_leaf and c.grad.tolist() == [2.0, 2.0, 2.0]
    assert c.grad is not a.grad and c.tag == [1] and c.tag is not a.tag
    with torch.no_grad():
        c.add_(1)
    assert a.tolist() == [1.0, 1.0, 1.0]


def test_deepcopy_of_views_together_shares_new_storage():
    x = torch.arange(6.0)
    y, v = copy.deepcopy((x, x[2:]))
    v[0] = -1.0
    assert y.tolist() == [0.0, 1.0, -1.0, 3.0, 4.0, 5.0] and x[2].item() == 2.0
    assert v.stride() == (1,) and v.storage_offset() == 2


def test_deepcopy_of_non_leaf_raises():
    b = torch.ones(3, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="graph leaves.*deepcopy protocol"):
        copy.deepcopy(b)


def test_forking_pickler_refuses_non_leaf_requiring_grad():
    b = torch.ones(3, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor which requires_grad"):
        ForkingPickler.dumps(b)
    u = pickle.loads(ForkingPickler.dumps(b.detach()))
    assert u.tolist() == [2.0, 2.0, 2.0] and not u.requires_grad


# ---------------------------------------------------------------------------
# Parameter, Module, Optimizer

def test_parameter_pickles_as_parameter():
    p = nn.Parameter(torch.ones(2))
    q = roundtrip(p)
    assert type(q) is nn.Parameter and q.requires_grad
    assert not roundtrip(nn.Parameter(torch.ones(2), requires_grad=False)).requires_grad


def test_parameter_deepcopy_clones_data_without_grad():
    p = nn.Parameter(torch.ones(2))
    p.grad = torch.ones(2)
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q.grad is None  # as torch: the grad is not copied
    with torch.no_grad():
        q.mul_(3)
    assert p.tolist() == [1.0, 1.0]


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)
        self.b.weight = self.a.weight
        self.register_buffer("count", torch.zeros(()))

    def forward(self, x):
        return self.b(self.a(x))


def test_module_pickles_with_tied_weights_buffers_and_hooks():
    m = Tied()
    m.register_forward_hook(print)
    m2 = roundtrip(m)
    assert m2.a.weight is m2.b.weight and type(m2.a.weight) is nn.Parameter
    assert m2.a.weight is not m.a.weight
    assert list(m2._forward_hooks.values()) == [print]
    assert dict(m2.named_buffers()).keys() == {"count"}
    x = torch.ones(2, 3)
    np.testing.assert_allclose(m2(x).detach().numpy(), m(x).detach().numpy())


def test_module_deepcopy_keeps_ties_and_is_distinct():
    m = Tied()
    m2 = copy.deepcopy(m)
    assert m2.a.weight is m2.b.weight and m2.a.weight is not m.a.weight
    with torch.no_grad():
        m2.a.weight.zero_()
    assert m.a.weight.abs().sum().item() > 0


def test_module_setstate_fills_missing_hook_dicts():
    m = nn.Linear(2, 2)
    state = m.__getstate__()
    del state["_forward_hooks"]
    n = nn.Linear.__new__(nn.Linear)
    n.__setstate__(state)
    assert n(torch.ones(1, 2)).shape == (1, 2)


def test_optimizer_pickles_with_its_module():
    m = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 1))
    opt = torch.optim.Adam(m.parameters(), lr=0.1)
    m(torch.ones(2, 3)).sum().backward()
    opt.step()
    m2, opt2 = roundtrip((m, opt))
    assert opt2.param_groups[0]["params"][0] is m2[0].weight
    state = opt2.state[m2[0].weight]
    assert state.keys() == {"step", "exp_avg", "exp_avg_sq"} and state["step"].item() == 1
    m2(torch.ones(2, 3)).sum().backward()
    opt2.step()  # a pickled optimizer keeps working
    assert opt2.state[m2[0].weight]["step"].item() == 2
    m3, opt3 = copy.deepcopy((m, opt))
    assert opt3.param_groups[0]["params"][0] is m3[0].weight


# ---------------------------------------------------------------------------
# processes

def _send_back(inq, outq):
    t = inq.get()
    outq.put((t * 2, t[1:]))


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_tensor_through_multiprocessing_queue(method):
    ctx = multiprocessing.get_context(method)
    inq, outq = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=_send_back, args=(inq, outq))
    p.start()
    inq.put(torch.arange(4.0, dtype=torch.bfloat16))
    doubled, view = outq.get(timeout=60)
    p.join(timeout=60)
    assert p.exitcode == 0
    assert doubled.dtype == torch.bfloat16 and doubled.tolist() == [0.0, 2.0, 4.0, 6.0]
    assert view.tolist() == [1.0, 2.0, 3.0] and view.storage_offset() == 1


def test_queue_refuses_non_leaf_requiring_grad():
    q = multiprocessing.get_context("fork").SimpleQueue()
    with pytest.raises(RuntimeError, match="Cowardly refusing"):
        q.put(torch.ones(2, requires_grad=True) * 3)


class Squares(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        info = get_worker_info()
        return torch.tensor([float(i * i)]), info.id


class Fails(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise ValueError("bad sample 2")
        return i


class Shards(IterableDataset):
    def __iter__(self):
        info = get_worker_info()
        return iter(range(info.id, 7, info.num_workers))


def _record_init(worker_id):
    info = get_worker_info()
    assert info.id == worker_id and info.num_workers == 2
    torch.manual_seed(100 + worker_id)


@pytest.mark.parametrize("context", [None, "spawn"])
def test_dataloader_workers_keep_order(context):
    dl = DataLoader(Squares(), batch_size=3, num_workers=2, multiprocessing_context=context,
                    worker_init_fn=_record_init)
    batches = list(dl)
    assert [b[0].flatten().tolist() for b in batches] == [[0.0, 1.0, 4.0], [9.0, 16.0, 25.0],
                                                          [36.0, 49.0, 64.0], [81.0]]
    assert [b[1].tolist() for b in batches] == [[0, 0, 0], [1, 1, 1], [0, 0, 0], [1]]  # round robin
    assert get_worker_info() is None


def test_dataloader_workers_with_iterable_dataset_shard_by_worker_info():
    batches = list(DataLoader(Shards(), batch_size=2, num_workers=2))
    assert [b.tolist() for b in batches] == [[0, 2], [1, 3], [4, 6], [5]]  # torch's order


def test_dataloader_worker_error_is_reraised_with_its_type():
    dl = DataLoader(Fails(), batch_size=1, num_workers=2)
    with pytest.raises(ValueError, match=r"(?s)Caught ValueError in DataLoader worker process 0.*bad sample 2"):
        list(dl)


def test_dataloader_workers_twice_and_persistent():
    dl = DataLoader(Squares(), batch_size=5, num_workers=2, persistent_workers=True)
    assert [len(b[0]) for b in dl] == [5, 5]
    assert [len(b[0]) for b in dl] == [5, 5]
