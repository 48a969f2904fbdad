"""The autograd graph is freed by reference counting alone (no cycles for the collector), and concurrent
backward passes into shared leaves lose no gradient update."""
import gc
import sys
import threading
import weakref

import pytest

import mindtorch_v2 as torch

F = torch.nn.functional


class _Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        y = a * a
        ctx.save_for_backward(a, y)
        return y

    @staticmethod
    def backward(ctx, g):
        a, _ = ctx.saved_tensors
        return 2 * a * g


PROGRAMS = {
    "mlp": lambda w, x: F.relu(x @ w).tanh() * 2,
    "views": lambda w, x: (w[1:] * 2).t().reshape(-1),
    "inplace": lambda w, x: (w * 1).mul_(2),
    "cross_entropy": lambda w, x: F.cross_entropy(x @ w, torch.tensor([0, 1, 2])).reshape(1),  # a saved output
    "module": lambda w, x: torch.nn.Linear(4, 4)(x @ w),
    "function": lambda w, x: _Square.apply(w),
    "exp_saves_output": lambda w, x: w.exp(),
}


def _nodes(root):
    seen, out, stack = set(), [], [root]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        out.append(weakref.ref(n))
        stack.extend(f for f, _ in n.next_functions)
    return out


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_finished_backward_frees_graph_and_leaves_without_the_cycle_collector(name):
    gc.collect()
    gc.disable()
    try:
        w = torch.randn(4, 4, requires_grad=True)
        x = torch.randn(3, 4)
        out = PROGRAMS[name](w, x)
        refs = _nodes(out.grad_fn)
        leaf = weakref.ref(w)
        out.sum().backward()
        assert w.grad is not None
        del out, w
        alive = [r() for r in refs if r() is not None]
        assert not alive, f"{name}: nodes alive after backward: {[n.name() for n in alive]}"
        assert leaf() is None, f"{name}: the leaf tensor is kept alive by a reference cycle"

    finally:
        gc.enable()


def test_graph_never_run_is_freed_by_refcount():
    gc.collect()
    gc.disable()
    try:
        w = torch.randn(3, requires_grad=True)
        out = w.exp().log_softmax(0)  # a saved output (exp) and a stop-gradient max inside log_softmax
        refs = _nodes(out.grad_fn)
        del out
        alive = [r() for r in refs if r() is not None]
        assert [n.name() for n in alive] == ["AccumulateGrad"]  # only the sink of w, which is alive
    finally:
        gc.enable()


def test_concurrent_backward_passes_lose_no_gradient_update():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible, inside .grad accumulation too
    try:
        w = torch.ones(3, requires_grad=True)
        n, threads = 100, 4

        def work():
            for _ in range(n):
                (w * 2).sum().backward()
        ts = [threading.Thread(target=work) for _ in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert w.grad.tolist() == [2.0 * n * threads] * 3


def test_version_error_still_names_the_node_whose_output_was_modified():
    x = torch.ones(2, requires_grad=True)
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"output 0 of ExpBackward0, is at version 1; expected version 0"):
        y.sum().backward()
