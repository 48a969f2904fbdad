"""Big buffers a compiled program reuses on every call live on transparent huge pages (core/_hugepages.py):
torch.compile's lent weights and grads, and a jit program's arena. Where the kernel offers none, NumPy's
allocations are used, and the same programs give the same numbers."""
import sys

import numpy as np
import pytest

import mindtorch_v2 as torch
from mindtorch_v2 import core
from mindtorch_v2.core import _hugepages

HUGE = 2 << 20


def test_a_big_empty_array_is_c_ordered_writable_and_starts_on_a_huge_page_boundary():
    a = _hugepages.empty((512, 784), np.float32)
    if not _hugepages.AVAILABLE:
        assert a is None
        return
    assert a.shape == (512, 784) and a.dtype == np.float32 and a.flags.c_contiguous and a.flags.writeable
    assert a.ctypes.data % HUGE == 0 and _hugepages.on_huge_pages(a)
    a[...] = 3.0
    assert float(a.sum()) == 3.0 * a.size


def test_small_arrays_stay_numpys():
    assert _hugepages.empty((100, 100), np.float32) is None  # 40 KB: a 2 MiB page would be mostly waste
    assert _hugepages.empty((512, 512), np.float32) is None  # 1 MiB: half of one


def test_a_page_is_huge_where_the_buffer_fills_three_quarters_of_it():
    mib = 1 << 20
    assert [_hugepages._huge_bytes(n) for n in (mib, 3 * mib // 2 - 1, 3 * mib // 2, 2 * mib, 2 * mib + mib // 5,
                                                 3 * mib + 3 * mib // 5, 9 * mib)] == \
        [0, 0, 2 * mib, 2 * mib, 2 * mib, 4 * mib, 8 * mib]
    bufs = _hugepages.empty_many([((10, 10), np.float32), ((3,), np.int64)])
    assert all(b.base is None for b in bufs)


def test_many_buffers_share_one_mapping_each_aligned_and_disjoint():
    specs = [((256, 512), np.float32), ((7,), np.float64), ((512, 512), np.float32), ((3, 5), np.int32)]
    bufs = _hugepages.empty_many(specs)
    assert [(b.shape, b.dtype) for b in bufs] == [(s, np.dtype(d)) for s, d in specs]
    for k, b in enumerate(bufs):
        b[...] = k
    assert [int(b.reshape(-1)[0]) for b in bufs] == [0, 1, 2, 3]
    assert all(b.ctypes.data % 64 == 0 and b.flags.c_contiguous for b in bufs)
    assert all(b.base is bufs[0].base for b in bufs) == _hugepages.AVAILABLE


def test_an_array_owns_its_mapping_until_someone_else_holds_it():
    assert _hugepages.owned(np.empty(4))
    assert not _hugepages.owned(np.empty(4)[1:])
    a = _hugepages.empty((1 << 19,), np.float32)
    if not _hugepages.AVAILABLE:
        assert a is None
        return
    assert _hugepages.owned(a)
    held = a.base  # another reference to the mapping: its memory is no longer the array's alone
    assert not _hugepages.owned(a)
    del held
    assert _hugepages.owned(a)


def _mlp_step(seed, momentum=0.0):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=momentum)

    def step(x, y):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return model, opt, step


def _train_both(momentum, steps=4):
    model, opt, step = _mlp_step(0, momentum)
    eager_model, _, eager_step = _mlp_step(0, momentum)
    step = torch.compile(step)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        x = torch.tensor(rng.standard_normal((32, 784)).astype(np.float32))
        y = torch.tensor(rng.integers(0, 10, 32))
        assert float(step(x, y)) == float(eager_step(x, y))
    for p, q in zip(model.parameters(), eager_model.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    return model, opt, step


def test_a_compiled_training_step_updates_big_weights_and_grads_in_place_on_huge_pages_with_eagers_numbers():
    model, _, _ = _train_both(momentum=0.0)
    w = model[0].weight  # 1.6 MB: its value and grad are written in place on huge pages
    assert _hugepages.on_huge_pages(w._storage.value._buf) == _hugepages.AVAILABLE
    assert _hugepages.on_huge_pages(w.grad._storage.value._buf) == _hugepages.AVAILABLE
    assert not _hugepages.on_huge_pages(model[2].weight._storage.value._buf)  # 20 KB: NumPy's


def test_momentum_sgd_writes_weights_and_buffers_in_place_on_huge_pages():
    model, opt, step = _train_both(momentum=0.9)
    w = model[0].weight
    buffers = lambda: {id(w._storage.value._buf), id(opt.state[w]["momentum_buffer"]._storage.value._buf)}  # noqa: E731
    x, y = torch.randn(32, 784), torch.randint(0, 10, (32,))  # (the signature _train_both compiled)
    for _ in range(2):  # (_train_both read the weights as numpy: exported buffers are not lent again; the first
        step(x, y)  # step makes new ones, the second moves them onto huge pages)
    before = buffers()
    step(x, y)
    # (the one fused run's two results go over the two donated buffers; they may trade places)
    assert buffers() == before
    assert _hugepages.on_huge_pages(w._storage.value._buf) == _hugepages.AVAILABLE


def test_a_buffer_the_program_does_not_write_in_place_is_moved_once_then_left_to_numpy(monkeypatch):
    moves = []
    real = _hugepages.empty
    monkeypatch.setattr(_hugepages, "empty", lambda shape, dtype: moves.append(shape) or real(shape, dtype))
    torch.manual_seed(0)
    w = torch.randn(768, 512) / 30  # 1.5 MiB
    m = torch.eye(512)

    @torch.compile
    def rotate():
        w.copy_(w @ m)  # a GEMM's result: a new buffer each call, never the one lent

    for _ in range(6):
        rotate()
    assert len(moves) == (1 if _hugepages.AVAILABLE else 0)
    np.testing.assert_allclose(w.numpy(), (torch.manual_seed(0), torch.randn(768, 512) / 30)[1].numpy())


def test_a_weight_the_user_holds_as_numpy_is_not_written_over_and_moves_back_in_later():
    model, _, step = _mlp_step(1)
    step = torch.compile(step)
    x, y = torch.randn(8, 784), torch.randint(0, 10, (8,))
    for _ in range(2):
        step(x, y)
    held = model[0].weight.detach().numpy()  # shares the weight's buffer
    kept = held.copy()
    step(x, y)
    np.testing.assert_array_equal(held, kept)  # the step wrote a new buffer, not the one the user holds
    assert not np.array_equal(model[0].weight.detach().numpy(), kept)  # (a buffer once exported is never
    del held  # donated again: the next step writes a fresh one, the one after writes that in place)
    for _ in range(2):
        step(x, y)
    assert _hugepages.on_huge_pages(model[0].weight._storage.value._buf) == _hugepages.AVAILABLE


def test_a_jit_programs_arena_lives_on_one_huge_page_mapping():
    def f(x, w):
        return core.tanh(x @ w) @ core.transpose(w, (1, 0))
    rng = np.random.default_rng(0)
    x = core.asarray(rng.standard_normal((1024, 512)).astype(np.float32))
    w = core.asarray(rng.standard_normal((512, 512)).astype(np.float32))
    g = core.jit(f)
    want = np.tanh(np.asarray(x) @ np.asarray(w)) @ np.asarray(w).T
    for _ in range(2):
        np.testing.assert_allclose(np.asarray(g(x, w)), want, rtol=1e-5, atol=1e-4)
    exe = g.lower(x, w)
    arena = exe._arenas[0]
    assert _hugepages.worth(sum(b.nbytes for b in arena)) == _hugepages.AVAILABLE
    assert all(_hugepages.on_huge_pages(b) == _hugepages.AVAILABLE for b in arena)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="transparent huge pages are Linux's")
def test_the_kernel_mode_is_read_from_sysfs():
    with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
        mode = f.read()
    assert _hugepages._thp_enabled() == ("[always]" in mode or "[madvise]" in mode)


def test_a_weight_other_code_replaces_between_steps_is_moved_a_few_times_then_left(monkeypatch):
    moves = []
    real = _hugepages.empty
    monkeypatch.setattr(_hugepages, "empty", lambda shape, dtype: moves.append(shape) or real(shape, dtype))
    model, _, step = _mlp_step(2)
    step = torch.compile(step)
    x, y = torch.randn(8, 784), torch.randint(0, 10, (8,))
    for _ in range(12):
        step(x, y)
        with torch.no_grad():
            model[0].weight.clamp_(-1, 1)  # an eager write between compiled steps: a new buffer each time
    assert len([s for s in moves if s == (512, 784)]) <= 2 * 3 + 1  # (the weight's and its grad's budgets)
