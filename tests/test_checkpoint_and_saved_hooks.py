"""torch.autograd.graph's saved-tensor hooks and torch.utils.checkpoint (both variants).

Expected behaviour (call counts, errors, warnings) was checked on PyTorch 2.13."""
import random
import warnings

import numpy as np
import pytest

import mindtorch_v2 as torch
from mindtorch_v2.autograd.graph import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks
from mindtorch_v2.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential


def _x(n=4, seed=0):
    return torch.tensor(np.random.default_rng(seed).standard_normal(n), requires_grad=True)


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a.detach()), np.asarray(b.detach()), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------
# saved_tensors_hooks


def test_pack_sees_saved_tensors_and_unpack_runs_in_backward():
    x = _x()
    calls = []

    def pack(t):
        calls.append(("pack", t is x))
        return t

    def unpack(t):
        calls.append("unpack")
        return t

    with saved_tensors_hooks(pack, unpack):
        w = (x * x).exp()   # mul saves x twice, exp saves its output (as PyTorch)
    assert calls == [("pack", True), ("pack", True), ("pack", False)]
    w.sum().backward()
    assert calls[3:] == ["unpack"] * 3
    _close(x.grad, 2 * x * torch.exp(x * x))


def test_hooks_can_keep_another_representation():
    x = _x()
    with saved_tensors_hooks(lambda t: t.detach().numpy().copy(), lambda a: torch.from_numpy(a)):
        y = x.sin() * x
    y.sum().backward()
    _close(x.grad, x.cos() * x + x.sin())


def test_values_kept_through_hooks_are_not_version_checked():
    x = _x()
    with saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        b = x * 1
        z = b.sin()
    b.mul_(2)  # the clone the hook kept is what backward reads
    z.sum().backward()
    _close(x.grad, x.cos())


def test_pack_runs_without_grad_and_cannot_write_its_input():
    x = _x()
    seen = []

    def pack(t):
        seen.append((t * 2).requires_grad)
        return t

    with saved_tensors_hooks(pack, lambda t: t):
        (x * x).sum()
    assert seen == [False, False]
    with saved_tensors_hooks(lambda t: t.add_(1), lambda t: t):
        with pytest.raises(RuntimeError, match="pack hook is modifying its input in place"):
            (x * 2).sin()


def test_unpack_must_return_a_tensor():
    x = _x()
    with saved_tensors_hooks(lambda t: 3, lambda t: 5):
        y = (x * 2).sin()
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor but got result of type int"):
        y.sum().backward()


def test_disable_saved_tensors_hooks():
    with disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):  # allowed again outside
        pass


def test_hooks_apply_to_custom_function_saves():
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            a, = ctx.saved_tensors
            return 2 * a * g

    x = _x()
    packed = []
    with saved_tensors_hooks(lambda t: packed.append(t) or ("box", t), lambda p: p[1]):
        y = Square.apply(x)
    assert len(packed) == 1 and packed[0] is x
    y.sum().backward()
    _close(x.grad, 2 * x)


def test_save_on_cpu_gives_the_same_gradients():
    x = _x()
    with save_on_cpu(pin_memory=True):
        y = (x * 3).tanh() * x
    y.sum().backward()
    g = x.grad.clone()
    x.grad = None
    ((x * 3).tanh() * x).sum().backward()
    _close(g, x.grad)


def test_double_backward_through_hooked_values():
    x = _x()
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        y = (x ** 3).sum()
    g, = torch.autograd.grad(y, x, create_graph=True)
    gg, = torch.autograd.grad(g.sum(), x)
    _close(gg, 6 * x)


def test_gradient_edge_and_increment_version():
    x = _x()
    y = x * 2
    edge = torch.autograd.graph.get_gradient_edge(y)
    assert edge.node is y.grad_fn and edge.output_nr == 0
    assert type(torch.autograd.graph.get_gradient_edge(x).node).__name__ == "AccumulateGrad"
    with pytest.raises(RuntimeError, match="does not require gradients"):
        torch.autograd.graph.get_gradient_edge(torch.ones(2))
    z = y.sin()
    v = y._version
    torch.autograd.graph.increment_version(y)
    assert y._version == v + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


# ---------------------------------------------------------------------------
# checkpoint


def _counted():
    n = [0]

    def f(a, b=None):
        n[0] += 1
        out = a.sin().exp() * a
        return out if b is None else out + b.tanh()
    return f, n


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_gradients_equal_plain_and_recompute_once(reentrant):
    f, n = _counted()
    x = _x()
    f(x).sum().backward()
    expected = x.grad.clone()
    x.grad = None
    n[0] = 0
    y = checkpoint(f, x, use_reentrant=reentrant)
    assert n[0] == 1
    y.sum().backward()
    assert n[0] == 2
    _close(x.grad, expected)
    assert (type(y.grad_fn).__name__ == "CheckpointFunctionBackward") is reentrant


def test_checkpoint_without_reentrant_serves_grad_create_graph_and_kwargs():
    f, _ = _counted()
    x, b = _x(), _x(seed=1)
    g1 = torch.autograd.grad(f(x, b=b).sum(), (x, b), create_graph=True)
    g2 = torch.autograd.grad(checkpoint(f, x, b=b, use_reentrant=False).sum(), (x, b), create_graph=True)
    for a, c in zip(g1, g2):
        _close(a, c)
    _close(torch.autograd.grad(g1[0].sum(), x)[0], torch.autograd.grad(g2[0].sum(), x)[0])


def test_checkpoint_retain_graph_recomputes_for_each_backward():
    f, n = _counted()
    x = _x()
    y = checkpoint(f, x, use_reentrant=False).sum()
    y.backward(retain_graph=True)
    first = x.grad.clone()
    y.backward()
    assert n[0] == 3
    _close(x.grad, 2 * first)


def test_reentrant_checkpoint_refuses_autograd_grad_and_kwargs():
    f, _ = _counted()
    x = _x()
    with pytest.raises(RuntimeError, match="incompatible with .grad"):
        torch.autograd.grad(checkpoint(f, x, use_reentrant=True).sum(), x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: b"):
        checkpoint(f, x, b=x, use_reentrant=True)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(f, x, use_reentrant=True, debug=True)


def test_checkpoint_warnings():
    f, _ = _counted()
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        y = checkpoint(f, _x(), )
    assert y.requires_grad
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = checkpoint(f, torch.ones(3), use_reentrant=True)
    assert not y.requires_grad
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not checkpoint(f, torch.ones(3), use_reentrant=False).requires_grad


def test_checkpoint_detects_a_different_recomputation():
    x = _x()
    state = {"first": True}

    def g(a):
        if state["first"]:
            state["first"] = False
            return a.sin().cos().exp()
        return a * 2

    y = checkpoint(g, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="different number of tensors was saved"):
        y.sum().backward()
    shapes = iter([(4,), (2, 2)])

    def h(a):
        return (a.reshape(next(shapes)) * 1.5).exp()

    y = checkpoint(h, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="different metadata"):
        y.sum().backward()


def test_checkpoint_replays_the_random_stream():
    for reentrant in (False, True):
        torch.manual_seed(0)
        x = torch.ones(200, requires_grad=True)
        y = checkpoint(lambda a: torch.nn.functional.dropout(a, 0.5) * a, x, use_reentrant=reentrant)
        after = torch.rand(3)
        y.sum().backward()
        assert torch.equal(x.grad, (y != 0).to(x.dtype) * 2 * 2)  # d(mask*2*a*a)/da = 4 * mask
        torch.manual_seed(0)
        torch.nn.functional.dropout(torch.ones(200), 0.5)
        assert torch.equal(after, torch.rand(3))  # recomputation left the global stream where it was


def test_checkpoint_early_stop_skips_the_tail():
    seen = []

    def f(a):
        b = a.exp()
        seen.append("mid")
        c = b.detach() * 3  # nothing after exp saves a tensor
        seen.append("end")
        return b + c

    x = _x()
    checkpoint(f, x, use_reentrant=False).sum().backward()
    assert seen == ["mid", "end"]  # the recomputation stopped inside exp, once its output was saved again
    seen.clear()
    checkpoint(f, x, use_reentrant=False, early_stop=False).sum().backward()
    assert seen == ["mid", "end", "mid", "end"]


def test_nested_checkpoints():
    x = _x()

    def inner(a):
        return a.sin() * a

    def outer(a):
        return checkpoint(inner, a.exp(), use_reentrant=False).tanh()

    checkpoint(outer, x, use_reentrant=False).sum().backward()
    g = x.grad.clone()
    x.grad = None
    outer(x).sum().backward()
    _close(g, x.grad)


def test_checkpoint_sequential_matches_the_plain_model():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 4), torch.nn.Tanh(),
                            torch.nn.Linear(4, 2))
    inp = torch.randn(3, 4, requires_grad=True)
    for reentrant in (False, True):
        m.zero_grad()
        out = checkpoint_sequential(m, 2, inp, use_reentrant=reentrant)
        out.sum().backward()
        got = [p.grad.clone() for p in m.parameters()]
        m.zero_grad()
        m(inp).sum().backward()
        for a, p in zip(got, m.parameters()):
            _close(a, p.grad)


def test_checkpoint_in_a_module_training_step():
    torch.manual_seed(0)

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(6, 6)
            self.norm = torch.nn.LayerNorm(6)

        def forward(self, h):
            return h + self.norm(self.lin(h)).relu()

    blocks = torch.nn.ModuleList([Block() for _ in range(3)])
    data = torch.randn(5, 6)
    losses = {}
    for use_ck in (False, True):
        grads = []
        h = data
        for blk in blocks:
            h = checkpoint(blk, h, use_reentrant=False) if use_ck else blk(h)
        h.pow(2).mean().backward()
        for p in blocks.parameters():
            grads.append(p.grad.clone())
            p.grad = None
        losses[use_ck] = grads
    for a, b in zip(losses[False], losses[True]):
        _close(a, b)


def test_random_choice_in_function_is_caught_not_silently_wrong():
    x = _x()
    rng = random.Random(1)

    def f(a):
        return a * 2 if rng.random() < 0.5 else a.sin().cos()

    with pytest.raises(CheckpointError):
        for _ in range(20):
            checkpoint(f, x, use_reentrant=False).sum().backward()
