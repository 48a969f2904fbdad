"""The unrolled eager paths (binary operators, elementwise functions) keep every behaviour of the general
bind hook: grad mode per thread, inference tensors, version counters, saved-value checks, torch's errors,
the profiler and tracers."""
import threading

import numpy as np
import pytest

import mindtorch_v2 as torch
from mindtorch_v2.eager import grad_mode
from mindtorch_v2.profiler import profile


def _leaves(n=3):
    return (torch.tensor(np.arange(1.0, n + 1, dtype=np.float32), requires_grad=True),
            torch.tensor(np.arange(2.0, n + 2, dtype=np.float32), requires_grad=True))


def test_a_thread_inside_no_grad_stops_recording_there_only():
    a, b = _leaves()
    inside, release = threading.Event(), threading.Event()
    seen = {}

    def worker():
        with torch.no_grad():
            inside.set()
            release.wait(10)
            seen["worker"] = (a + b).requires_grad, torch.sin(a).requires_grad, (a * 2.0).grad_fn
    t = threading.Thread(target=worker)
    t.start()
    assert inside.wait(10)
    try:
        here = a + b, torch.sin(a), a * 2.0
        assert all(r.requires_grad and r.grad_fn is not None for r in here)
    finally:
        release.set()
        t.join()
    assert seen["worker"] == (False, False, None)
    assert grad_mode.threads_not_recording == 0  # every context left: the hot path skips the thread-local read
    assert (a + b).grad_fn is not None


def test_a_thread_that_ends_inside_no_grad_leaves_other_threads_recording():
    a, b = _leaves()
    cm = torch.no_grad()
    t = threading.Thread(target=cm.__enter__)  # a thread that exits without leaving its no_grad
    t.start()
    t.join()
    try:
        assert (a + b).grad_fn is not None and torch.tanh(a).grad_fn is not None
        with torch.no_grad():
            assert (a + b).grad_fn is None
        assert torch.is_grad_enabled() and (a * b).requires_grad
    finally:
        grad_mode._count_lock.acquire()
        grad_mode.threads_not_recording -= 1  # (the dead thread's count, restored for the other tests)
        grad_mode._count_lock.release()


def test_results_made_in_inference_mode_are_inference_tensors_even_when_recorded():
    a, b = _leaves()
    with torch.inference_mode():
        plain = a + b
        assert plain.is_inference() and not plain.requires_grad
        with torch.enable_grad():
            recorded = a + b
            unary = torch.exp(a)
    assert recorded.is_inference() and recorded.grad_fn is not None and recorded.requires_grad
    assert unary.is_inference() and unary.grad_fn is not None
    with torch.inference_mode(False):
        assert not (a + b).is_inference()
    assert not (a + b).is_inference() and not torch.sin(a).is_inference()


def test_op_results_start_at_version_zero_and_share_the_counter_with_their_views():
    a, b = _leaves(4)
    y = a + b
    v = y.view(2, 2)
    d = y.detach()
    assert y._version == v._version == d._version == 0
    with torch.no_grad():
        v[0].add_(1)
    assert y._version == v._version == d._version == 1
    with torch.no_grad():
        v[0] += 1        # an in-place add on the row, then its copy back by setitem: two writes, as in torch
    assert y._version == v._version == d._version == 3
    assert y._version_counter is v._version_counter is d._version_counter
    assert (a * 1.0)._version_counter is not y._version_counter


def test_a_saved_operand_modified_in_place_is_refused_and_an_unsaved_one_is_not():
    a, b = _leaves()
    x, w = a * 1.0, b * 1.0
    y = x * w            # mul saves both operands
    z = x + w            # add saves nothing
    with torch.no_grad():
        w.add_(1)
    z.sum().backward()
    assert np.allclose(a.grad.numpy(), 1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_unary_result_saved_for_backward_is_checked():
    a, _ = _leaves()
    y = torch.tanh(a)    # tanh's rule reads its output
    with torch.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        y.sum().backward()


def test_errors_on_the_unrolled_paths_are_torchs():
    a, b = _leaves(3)
    c = torch.ones(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="broadcast"):
        a + c
    z = torch.tensor([1 + 1j, 2 - 1j])
    with pytest.raises(RuntimeError):  # maximum is not defined for complex numbers (NotImplementedError in torch)
        torch.maximum(z, z)
    assert (a + b).requires_grad and a.grad is None  # nothing recorded or written by the failures


def test_binary_operators_with_python_numbers_record_only_the_tensor():
    a, _ = _leaves()
    y = a * 3.0 + 1
    assert y.grad_fn.name() == "AddBackward0"
    y.sum().backward()
    assert np.allclose(a.grad.numpy(), 3.0)


def test_profiler_sees_ops_of_the_unrolled_paths():
    a, b = _leaves()
    with profile() as prof:
        a + b
        torch.sin(a)
        a * 2.0
    counts = {avg.key: avg.count for avg in prof.key_averages()}
    assert counts["aten::add"] == 1 and counts["aten::sin"] == 1 and counts["aten::mul"] == 1


def test_unrolled_paths_run_under_torch_func_transforms():
    x = torch.tensor([0.5, 1.0, 2.0])
    g = torch.func.grad(lambda t: (torch.sin(t) * t + t).sum())(x)
    expected = np.cos(x.numpy()) * x.numpy() + np.sin(x.numpy()) + 1
    assert np.allclose(g.numpy(), expected, atol=1e-6)
    batched = torch.func.vmap(lambda t: torch.exp(t) + t)(torch.ones(2, 3))
    assert batched.shape == (2, 3) and np.allclose(batched.numpy(), np.e + 1)


def test_views_and_leaves_as_operands_keep_their_edges():
    a, b = _leaves(4)
    v = a.view(2, 2)[0]          # a view of a leaf: its history comes from the base
    y = (v + b[:2]).sum() + torch.exp(a).sum()
    y.backward()
    assert np.allclose(a.grad.numpy(), np.exp(a.detach().numpy()) + np.array([1, 1, 0, 0]))
    assert np.allclose(b.grad.numpy(), [1, 1, 0, 0])
