"""torch.compile: compiled results, grads and trained parameters equal eager's; graph breaks fall back to
eager with a warning (or raise under fullgraph); guards trace again when what the program assumed changes."""
import copy
import math
import warnings

import numpy as np
import pytest

import mindtorch_v2 as torch
import mindtorch_v2.nn.functional as F
from mindtorch_v2 import nn
from mindtorch_v2._compile import counters
from mindtorch_v2._dynamo.exc import Unsupported


@pytest.fixture(autouse=True)
def _fresh():
    torch.compiler.reset()
    yield
    torch.compiler.reset()


def _no_warnings():
    return warnings.catch_warnings(record=True)


def _equal_all(a, b):
    return all(torch.equal(x, y) for x, y in zip(a, b)) and len(list(a)) == len(list(b))


def _sgd_step(model, lr, loss=lambda out: out.sum()):
    """(optimizer, an uncompiled step: zero_grad, loss(model(x)).backward(), SGD step) for a seeded model."""
    opt = torch.optim.SGD(model.parameters(), lr=lr)

    def step(x):
        opt.zero_grad()
        loss(model(x)).backward()
        opt.step()
    return opt, step


# ---------------------------------------------------------------------------
# the compiled path is taken and gives eager's numbers


def test_a_function_is_traced_once_and_then_runs_compiled():
    def f(x, y):
        return (x * y).sin() + x.exp() / 2

    cf = torch.compile(f)
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    with _no_warnings() as w:
        for _ in range(3):
            assert torch.equal(cf(x, y), f(x, y))
    assert not w
    assert counters["traces"] == 1 and counters["compiled_calls"] == 3 and counters["eager_calls"] == 0


def test_the_decorator_form_and_returned_structure():
    @torch.compile(fullgraph=True)
    def f(x):
        return {"a": x + 1, "b": (x * 2, 7)}

    out = f(torch.ones(2))
    assert torch.equal(out["a"], torch.full((2,), 2.0)) and out["b"][1] == 7 and torch.equal(out["b"][0], 2 * torch.ones(2))


def test_in_place_updates_of_inputs_are_written_back_with_eager_versions():
    def g(x, buf):
        x.mul_(2)
        buf[1:].add_(x[:2])
        return x + 1

    a, abuf = torch.ones(3), torch.zeros(3)
    b, bbuf = torch.ones(3), torch.zeros(3)
    cg = torch.compile(g)
    for _ in range(3):
        r1, r2 = g(a, abuf), cg(b, bbuf)
        assert torch.equal(r1, r2) and torch.equal(a, b) and torch.equal(abuf, bbuf)
    assert (a._version, abuf._version) == (b._version, bbuf._version)
    assert counters["traces"] == 1


def test_a_view_argument_sharing_storage_with_another_argument():
    def g(x, v):
        v.add_(1)
        return x.sum()

    base1, base2 = torch.zeros(4), torch.zeros(4)
    cg = torch.compile(g)
    assert torch.equal(g(base1, base1[:2]), cg(base2, base2[:2]))
    assert torch.equal(base1, base2)


def test_autograd_across_the_compiled_boundary_gives_eager_grads():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    cm = torch.compile(m)
    x = torch.randn(5, 4, requires_grad=True)
    out = cm(x)
    assert out.grad_fn is not None and out.requires_grad
    (out ** 2).sum().backward()
    got = [x.grad.clone()] + [p.grad.clone() for p in m.parameters()]
    x.grad = None
    m.zero_grad()
    (m(x) ** 2).sum().backward()
    want = [x.grad] + [p.grad for p in m.parameters()]
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(got, want))


def test_autograd_through_a_non_leaf_input_and_detach_inside():
    w = torch.randn(3, requires_grad=True)

    def f(h):
        return h * h.detach() + h.sin()

    cf = torch.compile(f)
    cf(w * 2).sum().backward()
    got = w.grad.clone()
    w.grad = None
    f(w * 2).sum().backward()
    assert torch.allclose(got, w.grad)


def test_double_backward_through_a_compiled_region_raises():
    x = torch.randn(3, requires_grad=True)
    y = torch.compile(lambda t: (t ** 3).sum())(x)
    with pytest.raises(RuntimeError, match="double backward"):
        torch.autograd.grad(y, x, create_graph=True)


def test_no_grad_calls_trace_a_program_without_backward():
    m = nn.Linear(3, 2)
    cm = torch.compile(m)
    x = torch.randn(4, 3)
    with torch.no_grad():
        out = cm(x)
    assert out.grad_fn is None and torch.equal(out, m(x).detach())
    assert cm(x).grad_fn is not None  # grad mode is a guard: a second program
    assert counters["traces"] == 2


# ---------------------------------------------------------------------------
# training steps: parameters after several steps equal eager's


def _train(make_model, make_opt, make_batch, compiled, steps=4):
    torch.manual_seed(0)
    model = make_model()
    opt = make_opt(model.parameters())

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    fn = torch.compile(step) if compiled else step
    torch.manual_seed(1)
    losses = [fn(*make_batch()).item() for _ in range(steps)]
    return losses, [t.clone() for t in model.state_dict().values()], opt


def _mlp():
    return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 5))


def _mlp_batch():
    return torch.randn(16, 20), torch.randint(0, 5, (16,))


@pytest.mark.parametrize("make_opt", [
    lambda p: torch.optim.SGD(p, lr=0.1),
    lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
    lambda p: torch.optim.Adam(p, lr=1e-2),
    lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1),
], ids=["sgd", "sgd-nesterov", "adam", "adamw"])
def test_mlp_training_equals_eager(make_opt):
    l1, p1, _ = _train(_mlp, make_opt, _mlp_batch, False)
    l2, p2, _ = _train(_mlp, make_opt, _mlp_batch, True)
    assert l1 == l2 and _equal_all(p1, p2)
    # the first step creates optimizer state (momentum, Adam moments) and runs eagerly; the rest compiled
    assert counters["compiled_calls"] >= 3


def test_conv_net_with_batchnorm_training_equals_eager():
    def make():
        return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(8 * 4 * 4, 10))

    def batch():
        return torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,))

    def opt(p):
        return torch.optim.SGD(p, lr=0.05, momentum=0.9)

    l1, p1, _ = _train(make, opt, batch, False)
    l2, p2, _ = _train(make, opt, batch, True)  # running stats and num_batches_tracked included
    assert l1 == l2 and _equal_all(p1, p2)
    assert counters["compiled_calls"] == 3


def test_lstm_forward_and_backward_equal_eager():
    torch.manual_seed(0)
    lstm = nn.LSTM(8, 16, batch_first=True)
    x = torch.randn(3, 5, 8, requires_grad=True)
    out, (h, c) = torch.compile(lstm)(x)
    ref, (hr, cr) = lstm(x)
    assert torch.allclose(out, ref, atol=1e-6) and torch.allclose(c, cr, atol=1e-6)
    (out.sum() + h.sum()).backward()
    got = [x.grad.clone()] + [p.grad.clone() for p in lstm.parameters()]
    x.grad = None
    lstm.zero_grad()
    (ref.sum() + hr.sum()).backward()
    want = [x.grad] + [p.grad for p in lstm.parameters()]
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(got, want))
    assert counters["compiled_calls"] == 1


class _Block(nn.Module):
    def __init__(self, d, heads, T):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.heads = heads
        self.register_buffer("mask", torch.tril(torch.ones(T, T)).view(1, 1, T, T))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = F.softmax(att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf")), dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).contiguous().view(B, T, C))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab=50, d=32, T=8, layers=2):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(T, d)
        self.blocks = nn.ModuleList([_Block(d, 4, T) for _ in range(layers)])
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x)).flatten(0, 1)


def test_tiny_gpt_training_with_adamw_equals_eager():
    def batch():
        return torch.randint(0, 50, (2, 8)), torch.randint(0, 50, (16,))

    def opt(p):
        return torch.optim.AdamW(p, lr=1e-3)

    l1, p1, _ = _train(TinyGPT, opt, batch, False)
    l2, p2, _ = _train(TinyGPT, opt, batch, True)
    assert l1 == l2 and _equal_all(p1, p2)
    assert counters["traces"] == 1 and counters["compiled_calls"] == 3


def test_grads_accumulate_across_compiled_calls_without_zero_grad():
    torch.manual_seed(0)
    m1 = nn.Linear(3, 1)
    m2 = copy.deepcopy(m1)

    def mk(m):
        def step(x):
            m(x).sum().backward()
        return step

    s1, s2 = mk(m1), torch.compile(mk(m2))
    for _ in range(3):
        x = torch.randn(4, 3)
        s1(x)
        s2(x)
    assert torch.allclose(m1.weight.grad, m2.weight.grad) and torch.allclose(m1.bias.grad, m2.bias.grad)


def test_a_step_lets_go_of_the_old_grads_it_replaces_and_leaves_a_held_one_intact():
    import gc
    import weakref
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    cf = torch.compile(_sgd_step(model, 0.1, lambda out: out.pow(2).sum())[1])
    x = torch.randn(5, 4)
    cf(x)
    cf(x)
    held = model.weight.grad
    before = held.clone()
    bias_grad = weakref.ref(model.bias.grad)
    calls = counters["compiled_calls"]
    cf(torch.randn(5, 4))
    assert counters["compiled_calls"] == calls + 1
    gc.collect()
    assert bias_grad() is None  # released (nothing else held it)
    assert torch.equal(held, before) and held is not model.weight.grad  # a grad the user holds is untouched
    assert model.weight.grad is not None and model.bias.grad is not None
    # (the signature with grads present) both old grads go before the program runs, as at eager's zero_grad
    assert [len(e.released) for e in cf._cache.values() if e != "eager"][-1] == 2

    def address(t):  # (read through the storage: numpy() would hand the buffer to the user, unlendable then)
        return t._storage.value._buf.__array_interface__["data"][0]
    old_address = address(model.weight.grad)
    cf(torch.randn(5, 4))
    assert address(model.weight.grad) == old_address  # the new grad was written into the old one's buffer (a GEMM: out=)
    entry = [e for e in cf._cache.values() if e != "eager"][-1]
    assert any(f"out=i{pos})" in entry.donating.source for _, _, pos in entry.released)  # (the weight's GEMM)
    kept = model.bias.grad
    kept_values = kept.clone()
    cf(torch.randn(5, 4))
    assert torch.equal(kept, kept_values) and address(model.bias.grad) != address(kept)  # held: not lent

    def accumulate(x):
        model(x).sum().backward()  # reads the old grads: nothing to let go of
    ca = torch.compile(accumulate)
    ca(x)
    ca(x)
    assert all(not e.released for e in ca._cache.values() if e != "eager")


# ---------------------------------------------------------------------------
# graph breaks: eager with a warning (once per cause), Unsupported under fullgraph


def _breaks(fn, *args, match):
    ref = fn(*args)
    cf = torch.compile(fn)
    with pytest.warns(UserWarning, match=match):
        got = cf(*args)
    with _no_warnings() as w:
        warnings.simplefilter("always")
        again = cf(*args)  # the signature is remembered as eager: no second trace, no second warning
    assert not [x for x in w if "torch.compile" in str(x.message)]
    with pytest.raises(Unsupported):
        torch.compile(fn, fullgraph=True)(*args)
    return ref, got, again


@pytest.mark.parametrize("fn, what", [
    (lambda x: x * x.sum().item(), r"\(item\(\)\)"),
    (lambda x: x * 2 if bool(x.sum() > 0) else x, r"\(the truth value of a tensor \(if/while/and/or\)\)"),
    (lambda x: x * float(x.max()), r"\(item\(\)\)"),
    (lambda x: x * x.tolist()[0], r"\(tolist\(\)\)"),
], ids=["item", "bool", "float", "tolist"])
def test_concrete_values_are_graph_breaks_naming_the_conversion(fn, what):
    ref, got, again = _breaks(fn, torch.randn(4), match="concrete value is needed " + what)
    assert torch.equal(ref, got) and torch.equal(ref, again)


@pytest.mark.parametrize("fn", [lambda x: x[x > 0].sum(), lambda x: x.nonzero().float().sum()],
                         ids=["mask", "nonzero"])
def test_data_dependent_shapes_are_graph_breaks(fn):
    ref, got, _ = _breaks(fn, torch.randn(6), match="data-dependent|concrete")
    assert torch.equal(ref, got)


def test_print_and_numpy_are_graph_breaks(capsys):
    def p(x):
        print("value", x)
        return x + 1

    ref, got, _ = _breaks(p, torch.ones(2), match="print")
    assert torch.equal(ref, got)
    assert capsys.readouterr().out.count("value") == 3  # every eager run printed, the traces did not
    ref, got, _ = _breaks(lambda x: torch.tensor(x.numpy() * 2), torch.ones(2), match="numpy")
    assert torch.equal(ref, got)


def test_random_ops_fall_back_and_keep_the_random_stream_of_eager_with_fallback_random(monkeypatch):
    monkeypatch.setattr(torch._inductor.config, "fallback_random", True)

    def f(x):
        return F.dropout(x, 0.5, training=True) + torch.randn(4)

    torch.manual_seed(3)
    want = [f(torch.ones(4)) for _ in range(3)]
    cf = torch.compile(f)
    torch.manual_seed(3)
    with pytest.warns(UserWarning, match="random"):
        got = [cf(torch.ones(4)) for _ in range(3)]
    assert all(torch.equal(a, b) for a, b in zip(want, got))
    assert counters["traces"] == 0


def test_a_training_step_with_dropout_compiles_and_draws_anew_each_call():
    # any draw was a graph break, so a model with dropout never compiled. Draws from the default generator now
    # split a key the program takes per call (PyTorch's compiled random ops, not eager's stream): the same
    # numbers after the same seed, a new mask each call, the forward's mask in the backward
    x = torch.ones(2000)
    w = torch.ones(2000, requires_grad=True)

    def f(x, w):
        y = F.dropout(x * w, 0.5)
        y.sum().backward()
        return y

    cf = torch.compile(f)
    with _no_warnings() as caught:
        warnings.simplefilter("always")
        torch.manual_seed(0)
        runs = []
        for _ in range(3):
            w.grad = None
            y = cf(x, w)
            assert torch.equal(w.grad, y)  # (dy/dw is the mask scaled: the forward's draw)
            runs.append(y)
        torch.manual_seed(0)
        w.grad = None
        again = cf(x, w)
    assert not [c for c in caught if "torch.compile" in str(c.message)]
    assert torch.equal(again, runs[0]) and not torch.equal(runs[0], runs[1])
    assert set(runs[0].unique().tolist()) == {0.0, 2.0} and 0.45 < float((runs[0] == 0).float().mean()) < 0.55


@pytest.mark.parametrize("draw", ["generator", "fork_rng", "set_rng_state", "seed_inside"])
def test_draws_from_any_generator_fall_back_even_when_the_state_is_put_back(draw):
    # a draw from an explicit Generator, or one inside fork_rng / get_rng_state..set_rng_state (which leave
    # the global generator as it was), was replayed by the compiled program on every call
    g = torch.Generator().manual_seed(0)

    def f(x):
        if draw == "generator":
            return x + torch.rand(2, generator=g)
        if draw == "fork_rng":
            with torch.random.fork_rng():
                return F.dropout(x, 0.5)
        if draw == "seed_inside":
            g.manual_seed(1)
            return x + 1
        state = torch.get_rng_state()
        y = x + torch.rand(2)
        torch.set_rng_state(state)
        return y

    def calls(fn):
        g.manual_seed(0)
        torch.manual_seed(0)
        out = []
        for _ in range(3):
            out.append(fn(torch.ones(2)).tolist())
            torch.rand(1)  # (the global stream moves between calls)
        return out, g.get_state()

    want, want_state = calls(f)
    with pytest.warns(UserWarning, match="(explicit generator, or the code seeds or sets one|reads or sets the "
                                         "generator's state)"):
        got, got_state = calls(torch.compile(f))
    assert got == want and torch.equal(got_state, want_state) and counters["traces"] == 0


def test_dropout_in_eval_mode_compiles():
    m = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    m.eval()
    cm = torch.compile(m)
    x = torch.randn(2, 4)
    with _no_warnings() as w:
        warnings.simplefilter("always")
        assert torch.equal(cm(x), m(x))
    assert not [x for x in w if "torch.compile" in str(x.message)]
    assert counters["traces"] == 1
    m.train()  # the training flag is a guard: dropout now draws (a new program, its key an input per call)
    with _no_warnings() as w:
        warnings.simplefilter("always")
        a, b = cm(x), cm(x)
    assert not [x for x in w if "torch.compile" in str(x.message)] and counters["traces"] == 2
    assert not torch.equal(a, b) and bool(((a == 0) | (b == 0)).any())


def test_a_disabled_function_inside_compiled_code_runs_the_call_eagerly():
    calls = []

    @torch.compiler.disable
    def log(x):
        calls.append(x.sum().item())
        return x

    def f(x):
        return log(x * 2) + 1

    cf = torch.compile(f)
    with pytest.warns(UserWarning, match="disable"):
        out = cf(torch.ones(3))
    assert torch.equal(out, torch.full((3,), 3.0)) and calls == [6.0]
    assert log(torch.ones(2)) is not None and calls[-1] == 2.0  # outside compiled code: runs as is
    with pytest.raises(Unsupported, match="disable"):
        torch.compile(f, fullgraph=True)(torch.ones(3))


def test_a_failed_trace_leaves_parameters_grads_and_state_untouched():
    torch.manual_seed(0)
    m = nn.Linear(3, 3)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    before = [p.clone() for p in m.parameters()]
    versions = [p._version for p in m.parameters()]

    def step(x):
        loss = m(x).sum()
        loss.backward()
        opt.step()
        if loss.item() > 1e9:  # a graph break after the update was traced
            return None
        return loss

    m2 = copy.deepcopy(m)
    opt2 = torch.optim.SGD(m2.parameters(), lr=0.1)

    def ref_step(x):
        loss = m2(x).sum()
        loss.backward()
        opt2.step()
        return loss

    x = torch.randn(2, 3)
    with pytest.warns(UserWarning, match="concrete"):
        torch.compile(step)(x)
    ref_step(x)
    # exactly one (eager) update happened, with eager's version bumps and grads
    assert all(torch.equal(p, q) for p, q in zip(m.parameters(), m2.parameters()))
    assert not all(torch.equal(p, b) for p, b in zip(m.parameters(), before))
    assert [p._version for p in m.parameters()] == [v + 1 for v in versions]
    assert all(torch.equal(p.grad, q.grad) for p, q in zip(m.parameters(), m2.parameters()))


def test_fullgraph_error_is_a_runtime_error_of_dynamo():
    assert issubclass(Unsupported, RuntimeError)
    assert torch._dynamo.exc.Unsupported is Unsupported


# ---------------------------------------------------------------------------
# guards


def test_shape_dtype_and_requires_grad_changes_trace_again():
    cf = torch.compile(lambda x: x * 2 + 1)
    cf(torch.ones(3))
    cf(torch.ones(3))
    assert counters["traces"] == 1
    cf(torch.ones(4))
    cf(torch.ones(3, dtype=torch.float64))
    out = cf(torch.ones(3, requires_grad=True))
    assert out.requires_grad and counters["traces"] == 4


def test_python_arguments_are_guarded_constants():
    cf = torch.compile(lambda x, k: x * k)
    assert torch.equal(cf(torch.ones(2), 2), torch.full((2,), 2.0))
    assert torch.equal(cf(torch.ones(2), 3), torch.full((2,), 3.0))
    assert counters["traces"] == 2


def test_learning_rate_changes_are_guarded():
    torch.manual_seed(0)
    m = nn.Linear(2, 1, bias=False)
    opt, step = _sgd_step(m, 0.1)
    step = torch.compile(step)

    x = torch.ones(1, 2)
    w0 = m.weight.clone()
    step(x)
    step(x)
    assert torch.allclose(m.weight, w0 - 0.2)
    opt.param_groups[0]["lr"] = 1.0
    step(x)
    assert torch.allclose(m.weight, w0 - 1.2)
    assert counters["traces"] == 3  # (no grads yet, grads present) at lr 0.1, then lr 1.0


def test_parameters_are_inputs_so_replacing_one_needs_no_constant_baked_in():
    m = nn.Linear(2, 2)
    cm = torch.compile(m)
    x = torch.randn(3, 2)
    cm(x)
    with torch.no_grad():
        m.weight.copy_(torch.zeros(2, 2))
    assert torch.equal(cm(x), m(x))
    m.weight = nn.Parameter(torch.ones(2, 2))
    assert torch.equal(cm(x), m(x))


def _shifted_step(model, opt, x):
    opt.zero_grad()
    out = model(x)
    if getattr(model, "shift", None) is not None:
        out = out + model.shift
    out.sum().backward()
    opt.step()
    return out


def test_what_the_function_reaches_is_remembered_and_every_change_to_it_is_seen():
    # the walk of closures, globals, modules and optimizers is kept between calls (_World) and checked by
    # identity: each change below must reach the program as the eager call sees it
    torch.manual_seed(0)
    m = nn.Linear(3, 2)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    model = m

    def step(x):
        return _shifted_step(model, opt, x)  # (model and opt are closure cells, rebound below)

    cstep = torch.compile(step)
    x = torch.randn(4, 3)
    em, eopt = copy.deepcopy((m, opt))

    def eager_step(x):
        return _shifted_step(em, eopt, x)

    def both(check_traced=None):
        before = counters["traces"]
        got, want = cstep(x), eager_step(x)
        assert torch.equal(got, want) and torch.equal(m.weight, em.weight) and torch.equal(m.bias, em.bias)
        if check_traced is not None:
            assert (counters["traces"] > before) == check_traced

    for _ in range(4):
        both()
    both(check_traced=False)
    m.shift = torch.ones(2)  # a tensor attribute appears on a module
    em.shift = torch.ones(2)
    both(check_traced=True)
    both(check_traced=False)
    m.shift.fill_(3.0)  # (its value is an input, read in place)
    em.shift.fill_(3.0)
    both(check_traced=False)
    m.shift = torch.full((2,), -1.0)  # replaced by another tensor: an input again, nothing baked in
    em.shift = torch.full((2,), -1.0)
    both()
    m._parameters["bias"] = nn.Parameter(torch.zeros(2))  # a parameter swapped in the module's own dict
    em._parameters["bias"] = nn.Parameter(torch.zeros(2))
    opt.param_groups[0]["params"][1] = m.bias  # (and in the optimizer, in place)
    eopt.param_groups[0]["params"][1] = em.bias
    both()
    both()
    opt.state[m.weight]["momentum_buffer"] = torch.zeros(2, 3)  # optimizer state replaced in its dict
    eopt.state[em.weight]["momentum_buffer"] = torch.zeros(2, 3)
    both()
    torch.manual_seed(1)
    other = nn.Linear(3, 2)
    model = other  # the closure cell now holds another module
    em.load_state_dict(other.state_dict())
    del em.shift
    eopt = torch.optim.SGD(em.parameters(), lr=0.1, momentum=0.9)
    opt = torch.optim.SGD(other.parameters(), lr=0.1, momentum=0.9)
    m = other
    for _ in range(3):
        both()


def test_tensors_found_in_another_order_do_not_share_a_program():
    # the program reads its k-th input where the trace found the k-th tensor: a module attribute deleted and set
    # again moves to the end of the module's __dict__, and a dict's keys can be reordered, so the same tensors
    # (same shapes, same flags) come in another order; the guard key holds where each was found
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.ones(3)
            self.b = torch.zeros(3)

    m = M()
    table = {"p": torch.full((3,), 2.0), "q": torch.full((3,), 5.0)}

    def f(x):
        return (x + m.a - m.b) * table["p"] - table["q"]

    for compiled in (torch.compile(f), torch.compile(f, fullgraph=True)):
        x = torch.zeros(3)
        assert torch.equal(compiled(x), f(x))
        a = m.a
        del m.a
        m.a = a  # __dict__ order: b, a
        assert torch.equal(compiled(x), f(x))
        table["p"] = table.pop("p")  # keys: q, p
        assert torch.equal(compiled(x), f(x))
        m.a, m.b = m.b, m.a  # the same paths, other tensors
        assert torch.equal(compiled(x), f(x))


def test_what_a_module_holds_besides_parameters_is_read_and_guarded():
    # a plain list of layers or masks, a config object and the forward hooks: read live, never baked in
    class Config:
        scale = None

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Linear(3, 3)]  # (not registered: eager still runs it)
            self.masks = [torch.ones(3), torch.full((3,), 2.0)]
            self.cfg = Config()
            self.cfg.scale = 2.0

        def forward(self, x):
            return self.layers[0](x * self.masks[1] * self.cfg.scale)

    class Doubled(M):
        def forward(self, x):
            return super().forward(x) * 2

    m = M()
    cm = torch.compile(m)
    x = torch.randn(3)
    handles = []
    for change in (lambda: None, lambda: m.masks[1].fill_(5.0), lambda: m.masks.__setitem__(1, torch.ones(3)),
                   lambda: setattr(m.cfg, "scale", 3.0), lambda: m.layers[0].weight.data.add_(1.0),
                   lambda: handles.append(m.register_forward_hook(lambda mod, inp, out: out * 2)),
                   lambda: handles.pop().remove(),
                   lambda: m.register_forward_pre_hook(lambda mod, inp: (inp[0] + 1,)),
                   lambda: setattr(m, "__class__", Doubled)):
        with torch.no_grad():
            change()
        assert torch.equal(cm(x), m(x))


def test_numpy_arrays_it_reads_are_guarded_by_content():
    mask = np.ones(3, np.float32)

    def f(x, scale):
        return x * torch.from_numpy(mask) * torch.from_numpy(scale)

    cf = torch.compile(f)
    x, scale = torch.ones(3), np.full(3, 2.0, np.float32)
    for change in (lambda: None, lambda: mask.fill(5.0), lambda: scale.fill(3.0)):
        change()
        assert torch.equal(cf(x, scale), f(x, scale))
    big = np.ones(300_000, np.float32)  # 1.2 MB: more than a call should compare, so it runs eagerly
    with pytest.warns(UserWarning, match="MiB of NumPy arrays"):
        assert torch.compile(lambda x: x + float(big[0]))(x).tolist() == [2.0] * 3


def test_the_global_modes_a_trace_bakes_in_are_guarded():
    w = torch.randn(3, 3)

    def f(x):
        return x @ w, torch.ones(3)

    cf = torch.compile(f)
    x = torch.randn(3)

    def same():
        return all(a.dtype == b.dtype and torch.equal(a, b) for a, b in zip(cf(x), f(x)))
    assert same() and cf(x)[0].dtype == torch.float32
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert same() and cf(x)[0].dtype == torch.bfloat16
    try:
        torch.set_default_dtype(torch.float64)
        assert same() and cf(x)[1].dtype == torch.float64
    finally:
        torch.set_default_dtype(torch.float32)
    assert same()


def test_gradient_hooks_on_leaves_are_guarded():
    torch.manual_seed(0)
    lin = nn.Linear(3, 1)

    def step(x):
        lin.zero_grad()
        lin(x).sum().backward()
        return lin.weight.grad.clone(), lin.bias.grad.clone()

    cs = torch.compile(step)
    x = torch.randn(4, 3)
    handles = []
    for change in (lambda: None, lambda: handles.append(lin.weight.register_hook(lambda g: g * 2)),
                   lambda: handles.pop().remove(), lambda: handles.append(lin.bias.register_hook(lambda g: g + 5)),
                   lambda: lin.bias.register_hook(lambda g: g * 3)):
        change()
        assert all(torch.equal(a, b) for a, b in zip(cs(x), step(x)))


def test_a_leafs_gradient_hooks_run_once_when_backward_crosses_the_compiled_boundary():
    # the region's backward hands the leaf its gradient; the eager engine runs the leaf's hooks then (they
    # used to be traced into the backward program as well: twice)
    torch.manual_seed(0)
    lin = nn.Linear(2, 2)
    handle = lin.weight.register_hook(lambda g: g * 2)
    grads = []
    for model in (lin, torch.compile(lin), lin, torch.compile(lin)):
        lin.weight.grad = None
        model(torch.ones(1, 2)).sum().backward()
        grads.append(lin.weight.grad.clone())
        if len(grads) == 2:
            handle.remove()
    assert torch.equal(grads[0], grads[1]) and grads[0].tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert torch.equal(grads[2], grads[3]) and grads[2].tolist() == [[1.0, 1.0], [1.0, 1.0]]
    f = torch.compile(lambda x: x * 1.0)
    for _ in range(2):
        x = torch.ones(2, requires_grad=True)
        x.register_hook(lambda g: g * 2)
        f(x).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]


def test_a_non_leaf_input_reads_as_a_non_leaf_inside_the_trace():
    # the trace ends the backward at the region's boundary; is_leaf and grad_fn read as eager's meanwhile
    # (a non-leaf input read as a leaf, and this branch was traced the wrong way)
    def f(x):
        return x * 2 if x.is_leaf else x * (3 if "Mul" in x.grad_fn.name() else 4)

    cf = torch.compile(f)
    w = torch.ones(2, requires_grad=True)
    for x in (w * 1, w * 1, w):
        y = cf(x)
        assert torch.equal(y, f(x))
        y.sum().backward()
    assert w.grad.tolist() == [8.0, 8.0]  # 3 + 3 + 2


def _data_assign(x):
    x.data = x.data * 2
    return x.sum()


def _transpose_in_place(x):
    x.t_()
    return x * 1


def _requires_grad_in_place(x):
    x.requires_grad_()
    return x * 2


@pytest.mark.parametrize("fn, make, cause", [
    (_data_assign, lambda: torch.ones(2), "storage or shape of a tensor it reads"),
    (_transpose_in_place, lambda: torch.arange(6.0).reshape(2, 3), "storage or shape of a tensor it reads"),
    (_requires_grad_in_place, lambda: torch.ones(2), "requires_grad of a tensor it reads"),
], ids=["data=", "t_", "requires_grad_"])
def test_changes_to_a_tensor_besides_its_values_run_eagerly(fn, make, cause):
    # a program replays values only: `.data =` left a traced value inside the user's tensor, t_ ran once
    # at trace time, requires_grad_ was undone
    def runs(f):
        out = []
        for _ in range(3):
            x = make()
            y = f(x)
            out.append((x.tolist(), tuple(x.shape), x.requires_grad, y.tolist()))
        return out

    want = runs(fn)
    with pytest.warns(UserWarning, match=cause):
        assert runs(torch.compile(fn)) == want


def test_grad_mode_enabled_inside_runs_eagerly_where_it_is_off():
    def f(x):
        with torch.enable_grad():
            return x * 2

    x = torch.ones(2, requires_grad=True)
    with torch.no_grad(), pytest.warns(UserWarning, match="enables grad mode inside"):
        y = torch.compile(f)(x)
    assert y.requires_grad and y.grad_fn is not None


def test_a_frozen_parameters_grad_let_go_by_zero_grad_inside_the_step_is_let_go():
    torch.manual_seed(0)
    models = [nn.Linear(2, 1) for _ in range(2)]
    models[1].load_state_dict(models[0].state_dict())
    opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in models]

    def step(model, opt, x):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()

    steps = (step, torch.compile(step))
    for i in range(4):
        if i == 2:
            for m in models:
                m.weight.requires_grad_(False)
        for s_, m, o in zip(steps, models, opts):
            s_(m, o, torch.ones(1, 2))
        a, b = models
        assert (a.weight.grad is None) == (b.weight.grad is None) == (i >= 2)
        assert torch.equal(a.weight, b.weight) and torch.equal(a.bias, b.bias)


_DEEP_W = torch.ones(2)
_DEEP_CFG = {"a": {"b": {"c": {"d": {"e": {"w": torch.ones(2)}}}}}}


def _deep_c(x):
    return x * _DEEP_W


def _deep_b(x):
    return _deep_c(x)


def _deep_a(x):
    return _deep_b(x)


@torch.no_grad()  # (a library decorator's wrapper: its closure holds this function, whose globals are read)
def _deep_f(x):
    return _deep_a(x) + _DEEP_CFG["a"]["b"]["c"]["d"]["e"]["w"]


def test_tensors_reached_through_deep_call_chains_and_containers_are_inputs():
    # a global read four calls down, or a tensor nested six dicts deep, was baked in as a constant
    cf = torch.compile(_deep_f)
    x = torch.ones(2)
    for k in range(1, 4):
        assert cf(x).tolist() == _deep_f(x).tolist() == [3.0 ** (k - 1) + 3.0 ** (k - 1)] * 2
        _DEEP_W.mul_(3)
        _DEEP_CFG["a"]["b"]["c"]["d"]["e"]["w"].mul_(3)


def test_a_function_reaching_deeper_than_the_guards_follow_runs_eagerly():
    nest = torch.ones(2)
    for _ in range(40):
        nest = [nest]

    def f(x):
        inner = nest
        while isinstance(inner, list):
            inner = inner[0]
        return x + inner

    cf = torch.compile(f)
    with pytest.warns(UserWarning, match="deeper than 32 levels"):
        assert cf(torch.zeros(2)).tolist() == [1.0, 1.0]
    assert counters["traces"] == 0


@pytest.mark.parametrize("make", [lambda ps: torch.optim.SGD(ps, lr=torch.tensor(0.1), momentum=0.9),
                                  lambda ps: torch.optim.Adam(ps, lr=torch.tensor(0.01))], ids=["SGD", "Adam"])
def test_a_tensor_lr_updated_in_place_is_an_input_of_the_compiled_step(make):
    # it was baked in: a scheduler's fill_ of the lr tensor went unseen
    runs = []
    for compiled in (False, True):
        w = torch.ones(2, requires_grad=True)
        opt = make([w])

        def step():
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()

        fn = torch.compile(step) if compiled else step
        out = []
        for i in range(5):
            if i == 3:
                opt.param_groups[0]["lr"].fill_(0.5)
            fn()
            out.append(w.tolist())
        runs.append(out)
    np.testing.assert_allclose(runs[1], runs[0], rtol=1e-5, atol=1e-7)  # (Adam's last step: an ulp of 0.47 - 0.47)
    assert counters["traces"] == 1 and counters["compiled_calls"] >= 3  # (compiled, the first call eager)


@pytest.mark.parametrize("fn, raises", [(lambda x, w: x * w, True), (lambda x, w: x + w, False)], ids=["mul", "add"])
def test_an_input_saved_for_backward_and_modified_in_place_before_it_raises_as_in_eager(fn, raises):
    # the compiled backward used the saved value silently where eager's saved-tensor check raises
    for f in (fn, torch.compile(fn)):
        x, w = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
        y = f(x, w)
        with torch.no_grad():
            w.add_(1)
        if raises:
            with pytest.raises(RuntimeError, match="modified by an inplace operation.*is at version 1; expected "
                                                   "version 0"):
                y.sum().backward()
        else:
            y.sum().backward()
            assert w.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("fn", [lambda x: x[0], lambda x: x, lambda x: x.add_(1), lambda x: x.t(),
                                lambda x: x.view(-1), lambda x: x.detach(), lambda x: x.chunk(2)[1],
                                lambda x: (x[1], x * 1)],
                         ids=["select", "itself", "add_", "t", "view", "detach", "chunk", "tuple"])
def test_a_returned_view_of_an_input_aliases_it_as_in_eager(fn):
    # it came back as a copy: writes through it did not reach the input, `out is x` was False
    def runs(f):
        out = []
        for _ in range(3):
            x = torch.zeros(2, 2)
            y = f(x)
            y = y[0] if isinstance(y, tuple) else y
            is_x, base_is_x = y is x, y._base is x
            y.add_(1)
            out.append((x.tolist(), is_x, base_is_x, tuple(y.stride()), tuple(y.shape)))
        return out

    assert runs(torch.compile(fn)) == runs(fn)


def test_a_loss_returned_by_a_step_that_ran_backward_requires_grad_as_in_eager():
    # it came back as a plain tensor (requires_grad False); eager's keeps its spent graph
    for compiled in (False, True):
        torch.manual_seed(0)
        m = nn.Linear(2, 1)
        opt = torch.optim.SGD(m.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = m(x).sum()
            loss.backward()
            opt.step()
            return loss

        fn = torch.compile(step) if compiled else step
        for _ in range(3):
            loss = fn(torch.ones(1, 2))
        assert loss.requires_grad and not loss.is_leaf and loss.grad_fn is not None
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            loss.backward()


@pytest.mark.parametrize("kind", ["retain_graph", "apart"])
def test_a_result_whose_graph_outlives_the_regions_own_backward_runs_eagerly(kind):
    # the compiled call gave the result a spent graph: a second backward outside raised where eager's works
    # (retain_graph=True), or where the result was never part of that backward (an auxiliary output)
    results = []
    for compiled in (False, True):
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)

        def step(x):
            loss = (w * x).sum()
            if kind == "retain_graph":
                loss.backward(retain_graph=True)
                return loss
            loss.backward()
            return (w * x * 2.0).sum()

        fn = torch.compile(step) if compiled else step
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(2):
                out = fn(torch.tensor([1.0, 2.0, 3.0]))
                out.backward()
        if compiled:
            assert any("graph is still alive" in str(c.message) for c in caught)
        results.append((out.item(), w.grad.tolist()))
    assert results[0] == results[1]
    assert results[0][1] == ([4.0, 8.0, 12.0] if kind == "retain_graph" else [6.0, 12.0, 18.0])


def test_retain_grad_inside_a_compiled_region_runs_eagerly():
    # the hook retain_grad registers ran once, at trace time: the returned hidden tensor had no .grad
    results = []
    for compiled in (False, True):
        torch.manual_seed(0)
        m = nn.Linear(3, 2)

        def step(x):
            h = m(x)
            h.retain_grad()
            (h * h).sum().backward()
            return h

        fn = torch.compile(step) if compiled else step
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            hs = [fn(torch.ones(1, 3)) for _ in range(2)]
        if compiled:
            assert any("retain_grad() on a traced tensor" in str(c.message) for c in caught)
        results.append([h.grad.tolist() for h in hs])
    assert results[0] == results[1] and results[0][0] is not None
    with pytest.raises(Unsupported, match="retain_grad"):
        torch.compile(step, fullgraph=True)(torch.ones(1, 3))


def _runs(step, calls, compiled):
    """step's results over `calls` calls, eager or through torch.compile (warnings silenced)."""
    fn = torch.compile(step) if compiled else step
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [fn(x) for x in calls]


def test_python_state_a_trace_changes_is_changed_once_per_call():
    # the trace ran the code's Python side effects, and the graph break's eager run ran them again (a
    # scheduler stepped twice per call, a counter counted twice); a counter that cycles back to an old value
    # was not bumped on replay; a tensor appended to a list or set as an attribute kept a tracer
    results = []
    for compiled in (False, True):
        torch.manual_seed(0)
        m = nn.Linear(3, 1)
        opt = torch.optim.SGD(m.parameters(), lr=1.0)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        state = {"step": 0, "micro": 0}
        history = []

        def step(x):
            state["step"] += 1
            state["micro"] = (state["micro"] + 1) % 2
            loss = m(x).mean()
            loss.backward()
            if state["micro"] == 0:
                opt.step()
                opt.zero_grad()
                sched.step()
            history.append(loss.detach())
            m.last = loss.detach() * 2
            return loss

        losses = _runs(step, [torch.ones(2, 3) * k for k in range(6)], compiled)
        results.append(([x.item() for x in losses], opt.param_groups[0]["lr"], dict(state),
                         [h.item() for h in history], m.last.item(), m.bias.item()))
    assert results[0] == results[1]
    assert results[0][1] == 0.125 and results[0][2] == {"step": 6, "micro": 0} and len(results[0][3]) == 6


_COUNT = 0


class _Config:
    k = 0


def test_globals_closure_cells_and_class_attributes_a_trace_changes_change_once_per_call():
    # each is undone (_Checkpoint) before the graph break's eager run (they happened twice a call): a global,
    # a closure cell, a class attribute of the user's, bumped by the code
    global _COUNT
    _COUNT = 0
    _Config.k = 0
    cell = [0]

    def make():
        n = 0

        def f(x):
            global _COUNT
            nonlocal n
            _COUNT += 1
            n += 1
            _Config.k += 1
            cell[0] = n
            if float(x.sum()) > 0:  # (a graph break after the changes: the eager run makes them again)
                return x * _COUNT
            return x
        return f

    outs = _runs(make(), [torch.ones(1)] * 4, True)
    assert [o.item() for o in outs] == [1.0, 2.0, 3.0, 4.0]
    assert _COUNT == 4 and _Config.k == 4 and cell == [4]


def test_a_parameter_created_by_the_first_call_is_kept():
    results = []
    for compiled in (False, True):
        class Lazy(nn.Module):
            def forward(self, x):
                if not hasattr(self, "w"):
                    self.w = nn.Parameter(torch.ones(3))
                return (x * self.w).sum()

        m = Lazy()
        outs = _runs(m, [torch.ones(3), torch.ones(3) * 2], compiled)
        assert all(o.requires_grad for o in outs)
        outs[0].backward()
        results.append((m.w.grad.tolist(), [o.item() for o in outs]))
    assert results[0] == results[1] == ([1.0, 1.0, 1.0], [3.0, 6.0])


def test_a_counter_bumped_every_call_stops_tracing_at_the_recompile_limit(monkeypatch):
    # each call was a new signature whose trace broke, and broken traces did not count: it traced every call
    from mindtorch_v2 import _compile
    traced = []
    real = _compile._trace
    monkeypatch.setattr(_compile, "_trace", lambda *a: traced.append(1) or real(*a))
    n = {"calls": 0}

    def f(x):
        n["calls"] += 1
        return x * n["calls"]

    outs = _runs(f, [torch.ones(1)] * 20, True)
    assert [o.item() for o in outs] == [float(k) for k in range(1, 21)] and n["calls"] == 20
    assert counters["traces"] == 0 and counters["eager_calls"] == 20
    assert len(traced) == torch._dynamo.config.recompile_limit


def test_a_returned_container_pytree_does_not_know_runs_eagerly():
    # a dataclass or a dict subclass was a constant leaf: the object the trace built, holding tracers, came
    # back on every call
    import collections
    import dataclasses

    @dataclasses.dataclass
    class Output:
        loss: torch.Tensor

    class ModelOutput(collections.OrderedDict):
        pass

    torch.manual_seed(0)
    lin = nn.Linear(3, 2)
    for make in (lambda v: Output(v), lambda v: ModelOutput(loss=v)):
        def f(x):
            return make(lin(x).pow(2).mean())

        outs = _runs(f, [torch.ones(4, 3), torch.ones(4, 3) * 2], True)
        values = [o["loss"] if isinstance(o, dict) else o.loss for o in outs]
        expected = [f(torch.ones(4, 3) * k) for k in (1, 2)]
        assert outs[0] is not outs[1] and type(outs[0]) is type(expected[0])
        assert [v.item() for v in values] == [(e["loss"] if isinstance(e, dict) else e.loss).item() for e in expected]
        with pytest.raises(Unsupported, match="cannot rebuild"):
            torch.compile(f, fullgraph=True)(torch.ones(4, 3))


_SCALE = 1.0
_LAMBDA = 1.0


class _Scaled(nn.Module):
    scale = 1.0

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.lin = nn.Linear(2, 2)

    def forward(self, x):
        return self.lin(x) * _SCALE * self.scale * getattr(self.cfg, "residual_scale", 1.0)


class _GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return -_LAMBDA * g


class _Helper:
    k = 1.0

    @staticmethod
    def scale(x):
        return x * _Helper.k


def test_what_a_modules_forward_and_a_static_helper_read_is_guarded():
    # read at trace time only: a global a module's forward reads (its code was not walked), a class attribute
    # read as self.scale, getattr(cfg, "name") (a string, not in the code's names), a global a custom
    # Function's backward or a staticmethod reads
    global _SCALE, _LAMBDA

    class Cfg:
        residual_scale = 1.0

    torch.manual_seed(0)
    m = _Scaled(Cfg())
    cm = torch.compile(m)
    cf = torch.compile(lambda w, x: _GradReverse.apply(w * x).sum())
    ch = torch.compile(lambda x: _Helper.scale(x))
    try:
        for which in ("_SCALE", "scale", "residual_scale", "_LAMBDA", "k"):
            for value in (2.0, 3.0):
                if which == "_SCALE":
                    _SCALE = value
                elif which == "scale":
                    _Scaled.scale = value
                elif which == "residual_scale":
                    m.cfg.residual_scale = value
                elif which == "_LAMBDA":
                    _LAMBDA = value
                else:
                    _Helper.k = value
                assert torch.equal(cm(torch.ones(2)), m(torch.ones(2))), which
                w = torch.ones(3, requires_grad=True)
                cf(w, torch.ones(3)).backward()
                assert w.grad.tolist() == [-_LAMBDA] * 3, which
                assert ch(torch.ones(1)).item() == _Helper.k, which
    finally:
        _SCALE = _LAMBDA = _Scaled.scale = _Helper.k = 1.0


def test_a_leafs_gradient_hook_reads_current_state_when_backward_runs_inside():
    # the hook's closure was not walked: the scale it read was baked in at trace time
    results = []
    for compiled in (False, True):
        w = torch.ones(3, requires_grad=True)
        cfg = {"scale": 1.0}
        w.register_hook(lambda g: g * cfg["scale"])

        def step(x):
            w.grad = None
            (w * x).sum().backward()
            return w.grad.clone()

        fn = torch.compile(step) if compiled else step
        grads = []
        for k in range(4):
            cfg["scale"] = float(k + 1)
            grads.append(fn(torch.ones(3))[0].item())
        results.append(grads)
    assert results[0] == results[1] == [1.0, 2.0, 3.0, 4.0]


def test_returned_grads_inputs_and_repeated_results_alias_as_in_eager():
    # new grads came back as copies of p.grad; y, y, y[0], y.detach() as four unrelated tensors; an input
    # requiring grad, returned, as a copy (the autograd path)
    torch.manual_seed(0)
    m = nn.Linear(3, 1)

    def fwd_bwd(x):
        m.zero_grad(set_to_none=True)
        m(x).pow(2).sum().backward()
        return [p.grad for p in m.parameters()]

    def fresh(x):
        y = x * 2
        return y, y, y[0], y.detach()

    def same(w, x):
        return w, (w * x).sum()

    cb, cf, cs = torch.compile(fwd_bwd), torch.compile(fresh), torch.compile(same)
    for _ in range(3):
        grads = cb(torch.ones(2, 3))
        assert grads[0] is m.weight.grad and grads[1] is m.bias.grad
        a, b, row, det = cf(torch.ones(2, 2))
        assert a is b and row._base is a and det._base is None
        row.fill_(9.0)
        det[1, 0] = 5.0
        assert a.tolist() == [[9.0, 9.0], [5.0, 2.0]]
        w = torch.ones(3, requires_grad=True)
        out, loss = cs(w, torch.ones(3) * 2)
        assert out is w and out.is_leaf
        loss.backward()
        assert w.grad.tolist() == [2.0, 2.0, 2.0]


def test_an_iterator_the_code_advances_runs_eagerly_and_is_advanced_once():
    # the item drawn at trace time was baked in (the iterator never advanced), or the trace took one the eager
    # run then lacked (a DataLoader skipped batches)
    for make in (lambda: iter([torch.full((1,), float(k)) for k in range(8)]),
                 lambda: (torch.full((1,), float(k)) for k in range(8))):
        it = make()
        outs = _runs(lambda it: next(it) * 10, [it] * 5, True)
        assert [o.item() for o in outs] == [0.0, 10.0, 20.0, 30.0, 40.0] and next(it).item() == 5.0


def test_compiled_backward_state_as_eager():
    # a second backward without retain_graph ran again (grads doubled); a leaf made inside and returned came
    # back as a program output (no .grad after a backward outside)
    torch.manual_seed(0)
    lin = nn.Linear(3, 2)
    cf = torch.compile(lambda x: lin(x).tanh())
    x = torch.randn(4, 3)
    for _ in range(3):
        y = cf(x)
        y.sum().backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.sum().backward()

    def attack(x):
        delta = torch.zeros_like(x, requires_grad=True)
        return lin(x + delta).pow(2).sum(), delta

    loss, want = attack(x)
    loss.backward()
    for loss, delta in _runs(lambda x: attack(x), [x] * 3, True):
        loss.backward()
        assert delta.is_leaf and torch.equal(delta.grad, want.grad)


def test_the_key_holds_a_tensors_class_and_a_slots_dataclasss_fields():
    # a Parameter and a plain tensor shared a program (isinstance branches baked in); a dataclass(slots=True)
    # argument changed in place kept its trace-time value
    import dataclasses

    def f(t):
        return t * (0.9 if isinstance(t, nn.Parameter) else 1.0)

    cf = torch.compile(f)
    for t in (nn.Parameter(torch.ones(3)), torch.ones(3, requires_grad=True)):
        assert torch.equal(cf(t), f(t))

    @dataclasses.dataclass(slots=True)
    class Cfg:
        scale: float = 1.0

    cfg = Cfg()
    cg = torch.compile(lambda x, c: x * c.scale)
    for k in (1.0, 2.0, 3.0):
        cfg.scale = k
        assert cg(torch.ones(1), cfg).item() == k


def test_torch_func_over_detached_parameters_inside_a_compiled_function_requires_no_grad():
    # the detached alias read the trace's lifted storage: the per-sample gradients required grad
    torch.manual_seed(0)
    lin = nn.Linear(3, 1)

    def per_sample(x):
        params = {k: v.detach() for k, v in lin.named_parameters()}
        g = torch.func.vmap(torch.func.grad(lambda p, xi: torch.func.functional_call(lin, p, (xi[None],)).sum()),
                            in_dims=(None, 0))(params, x)
        return g["weight"]

    x = torch.randn(5, 3)
    outs = _runs(per_sample, [x] * 3, True)
    assert all(not o.requires_grad and torch.allclose(o, per_sample(x)) for o in outs)


def test_common_training_patterns_compile_without_a_break():
    # zero_grad after step (grads None before and after: the trace missed that backward ran and broke on the
    # update), a scheduler filling a tensor lr (it assigned a new tensor: a new signature per step), and a
    # non-reentrant checkpoint (its rng state save and restore read as a draw)
    from mindtorch_v2.utils.checkpoint import checkpoint
    torch.manual_seed(0)
    lin1, lin2 = nn.Linear(4, 4), nn.Linear(4, 1)
    opt = torch.optim.Adam([*lin1.parameters(), *lin2.parameters()], lr=torch.tensor(0.01))
    sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=1.0, end_factor=0.1, total_iters=20)
    lr = opt.param_groups[0]["lr"]

    def step(x):
        h = checkpoint(lambda t: torch.tanh(lin1(t)), x, use_reentrant=False)
        loss = lin2(h).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    cs = torch.compile(step)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(6):
            cs(torch.ones(3, 4))
            sched.step()
    assert not [c for c in caught if "runs eagerly" in str(c.message)]
    assert opt.param_groups[0]["lr"] is lr and counters["traces"] == 1 and counters["compiled_calls"] == 5


def test_a_tensor_in_a_deque_is_found_and_its_in_place_update_replayed():
    import collections
    queue = collections.deque([torch.zeros(3)])

    def f(x):
        queue[0].add_(1.0)
        return x + queue[0]

    cf = torch.compile(f)
    for k in range(1, 4):
        assert cf(torch.zeros(3)).tolist() == [float(k)] * 3 and queue[0].tolist() == [float(k)] * 3


def test_draws_from_pythons_or_numpys_global_generator_run_eagerly():
    import random

    def python_draw(x):
        return x + random.random()

    def numpy_draw(x):
        return x + float(np.random.rand())

    for f in (python_draw, numpy_draw):  # (warned once per function and cause)
        cf = torch.compile(f)
        with pytest.warns(UserWarning, match="Python's `random` or NumPy's global random generator"):
            a = cf(torch.zeros(2))
        b = cf(torch.zeros(2))
        assert a[0].item() != b[0].item() and counters["traces"] == 0  # (each call draws anew, eagerly)


def test_default_argument_values_are_read_and_guarded():
    w = torch.ones(3)

    def f(x, w=w, s=2.0, *, shift=1.0):
        return x * w * s + shift

    cf = torch.compile(f)
    x = torch.randn(3)
    for change in (lambda: None, lambda: w.mul_(3.0), lambda: setattr(f, "__defaults__", (w, 5.0)),
                   lambda: f.__kwdefaults__.__setitem__("shift", -1.0)):
        change()
        assert torch.equal(cf(x), f(x))


def test_attributes_of_the_users_config_modules_and_classes_are_guarded(tmp_path):
    import importlib.util
    (tmp_path / "train_cfg.py").write_text("SCALE = 2.0\n")
    spec = importlib.util.spec_from_file_location("train_cfg", tmp_path / "train_cfg.py")
    cfg = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cfg)

    class Config:
        shift = 1.0

        @classmethod
        def offset(cls):  # (read as stored: the same classmethod object every call)
            return 0.5

    env = {"cfg": cfg, "Config": Config}
    exec("def f(x):\n    return x * cfg.SCALE + Config.shift + Config.offset()\n"
         "def g(xs):\n    return [x * cfg.SCALE for x in xs]\n", env)  # (a user's module: its globals)
    f, g = env["f"], env["g"]
    cf, cg = torch.compile(f), torch.compile(g)
    x = torch.randn(3)
    for change in (lambda: None, lambda: setattr(cfg, "SCALE", 5.0), lambda: setattr(Config, "shift", -1.0)):
        change()
        assert torch.equal(cf(x), f(x)) and torch.equal(cg([x])[0], g([x])[0])
    n = counters["traces"]
    cf(x), cg([x])
    assert counters["traces"] == n  # (nothing changed: no new trace)


def test_objects_passed_as_arguments_are_keyed_by_their_attributes_or_their_live_identity():
    # a new batch object each call often lands at the address of the one just freed: a key holding the id alone
    # matched it and ran the program traced with the old object's scale (silently wrong)
    import dataclasses

    @dataclasses.dataclass
    class Batch:
        x: object
        scale: float

    class Slotted:
        __slots__ = ("k",)

        def __init__(self, k):
            self.k = k

    def f(b):
        return b.x * b.scale

    def g(x, s):
        return x * s.k

    cf, cg = torch.compile(f), torch.compile(g)
    # (an object with no __dict__ is keyed by identity: each new one traces, up to the recompile limit)
    with pytest.warns(UserWarning, match="recompile limit"):
        for i in range(9):
            b, s, x = Batch(torch.full((3,), float(i)), float(i % 3)), Slotted(float(i % 3)), torch.ones(2)
            assert torch.equal(cf(b), f(b)) and torch.equal(cg(x, s), g(x, s))
            del b, s
    assert cf._n_traces == 3  # a dataclass by its fields: one program per scale, the tensor read where it is


def test_an_objects_attributes_are_guarded_where_the_code_names_them():
    # as dynamo guards what the code reads: trainer.step, bumped every step and read by no code, must not make
    # every call a new trace; trainer.scale (read here) and trainer.factor (read by the method it calls) are
    # guarded
    class Trainer:
        def __init__(self):
            self.scale, self.factor, self.step = 2.0, 3.0, 0

        def loss(self, x):
            return (x * self.factor).sum()

    trainer = Trainer()

    def f(x):
        return trainer.loss(x * trainer.scale)

    cf = torch.compile(f)
    x = torch.randn(3)
    for change in (lambda: None, lambda: setattr(trainer, "scale", 5.0), lambda: setattr(trainer, "factor", -1.0)):
        change()
        for _ in range(3):
            trainer.step += 1
            assert torch.equal(cf(x), f(x))
    assert cf._n_traces == 3


def test_a_function_that_reaches_too_much_runs_eagerly_with_a_warning():
    junk = [object() for _ in range(25000)]

    def f(x):
        return x + len(junk)

    cf = torch.compile(f)
    with pytest.warns(UserWarning, match="reaches more than 20000 objects"):
        assert torch.equal(cf(torch.zeros(2)), torch.full((2,), 25000.0))
    assert torch.equal(cf(torch.zeros(2)), torch.full((2,), 25000.0)) and counters["traces"] == 0
    with pytest.raises(torch._dynamo.exc.Unsupported, match="reaches more than"):
        torch.compile(f, fullgraph=True)(torch.zeros(2))


def test_a_function_whose_reach_changes_every_call_is_walked_every_call():
    box = [1.0]
    w = torch.ones(3)

    def f(x):
        return x * w * box[0]

    cf = torch.compile(f)
    for k in range(8):
        box[0] = float(str(1.0))  # another object before every call (the same value): the remembered walk never holds
        assert torch.equal(cf(torch.full((3,), float(k))), torch.full((3,), float(k)))
    assert cf._world is False and counters["traces"] == 1
    w.fill_(2.0)
    assert torch.equal(cf(torch.ones(3)), torch.full((3,), 2.0))


def test_python_values_the_function_reads_are_guarded():
    # a trace bakes in the Python values it reads: a new value is a new program (PyTorch's dynamo guards them too)
    env = {}
    exec("scale = 2.0\ndef f(x):\n    return x * scale", env)  # (a module's global)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.k, self.act, self.lin = 2, torch.relu, nn.Linear(3, 3)

        def forward(self, x):
            return self.act(self.lin(x)) * self.k

    m, box, opts = M(), [1.0], {"shift": 1}
    cm, cf = torch.compile(m), torch.compile(env["f"])
    ch = torch.compile(lambda x: x * box[0] + opts["shift"])
    x = torch.randn(3)
    for change in (lambda: None, lambda: env.__setitem__("scale", 3.0), lambda: setattr(m, "k", 5),
                   lambda: setattr(m, "act", torch.tanh), lambda: box.__setitem__(0, 4.0),
                   lambda: opts.__setitem__("shift", 2)):
        change()
        assert torch.equal(cm(x), m(x)) and torch.equal(cf(x), x * env["scale"])
        assert torch.equal(ch(x), x * box[0] + opts["shift"])


def test_a_compiled_function_nobody_holds_is_freed_with_its_model_and_programs():
    import gc
    import weakref
    m = nn.Linear(3, 2)
    cm = torch.compile(m)
    cm(torch.randn(4, 3))
    cm(torch.randn(4, 3))
    alive = weakref.ref(m), weakref.ref(cm)
    del m, cm
    gc.collect()
    assert all(r() is None for r in alive)


def test_too_many_recompiles_warn_and_run_eagerly():
    cf = torch.compile(lambda x: x + 1)
    limit = torch._dynamo.config.recompile_limit
    for n in range(1, limit + 1):
        cf(torch.ones(n))
    with pytest.warns(UserWarning, match="recompile limit"):
        out = cf(torch.ones(limit + 1))
    assert torch.equal(out, torch.full((limit + 1,), 2.0)) and counters["traces"] == limit


# ---------------------------------------------------------------------------
# the torch.compiler surface


def test_is_compiling_is_true_only_while_tracing():
    def f(x):
        return x + (1.0 if torch.compiler.is_compiling() else 0.0)

    cf = torch.compile(f)
    assert [cf(torch.ones(1)).item() for _ in range(2)] == [2.0, 2.0] and f(torch.ones(1)).item() == 1.0
    assert not torch.compiler.is_compiling() and not torch._dynamo.is_compiling()


def test_reset_forgets_compiled_programs():
    cf = torch.compile(lambda x: x - 1)
    cf(torch.ones(2))
    torch._dynamo.reset()
    cf(torch.ones(2))
    assert counters["traces"] == 1  # (reset also cleared the counters)


def test_module_compile_in_place_and_optimized_module():
    torch.manual_seed(0)
    m = nn.Linear(3, 2)
    x = torch.randn(4, 3)
    want = m(x)
    om = torch.compile(m)
    assert isinstance(om, torch._dynamo.OptimizedModule) and om._orig_mod is m
    assert om.weight is m.weight and list(om.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    assert torch.equal(om(x), want)
    m.compile()
    assert torch.equal(m(x), want) and counters["traces"] == 2
    assert torch.compile(m, disable=True) is m


def test_buffers_lent_to_the_program_never_belong_to_a_clone_or_a_saved_tensor():
    torch.manual_seed(0)
    m = nn.Linear(4, 4)
    step = torch.compile(_sgd_step(m, 0.5)[1])

    x = torch.randn(2, 4)
    step(x)
    step(x)
    clone = m.weight.clone()  # may share the immutable value copy-on-write
    kept = clone.tolist()
    pending = (m.weight * 2).sum()  # an eager graph saving the current value
    step(x)
    step(x)
    assert clone.tolist() == kept and not torch.equal(clone, m.weight)
    pending.backward()
    assert m.weight.grad is not None


@pytest.mark.parametrize("case", ["ce", "emb", "one_hot", "gather", "index_select"])
def test_an_index_out_of_range_raises_in_a_compiled_program_as_in_eager(case):
    # negative indices wrapped in the program (core's take and gather are NumPy's): a target of -1 gave a loss,
    # an embedding index of -1 the last row; eager raises. A traced index is checked when the program runs
    torch.manual_seed(0)
    emb = nn.Embedding(5, 2)
    W = torch.randn(5, 3)
    f, good, bad, error, words = {
        "ce": (F.cross_entropy, (torch.randn(4, 3), torch.tensor([0, 1, 2, 1])),
               (torch.randn(4, 3), torch.tensor([0, -1, 2, 1])), IndexError, "Target -1 is out of bounds"),
        "emb": (emb, (torch.tensor([0, 4]),), (torch.tensor([0, -1]),), IndexError, "index out of range in self"),
        "one_hot": (lambda i: F.one_hot(i, 3), (torch.tensor([0, 2]),), (torch.tensor([0, 3]),), RuntimeError,
                    "Class values must be smaller than num_classes"),
        "gather": (lambda i: W.gather(1, i), (torch.tensor([[0], [1], [2], [0], [1]]),),
                   (torch.tensor([[0], [1], [-1], [0], [1]]),), RuntimeError,
                   "index -1 is out of bounds for dimension 1 with size 3"),
        "index_select": (lambda i: W.index_select(0, i), (torch.tensor([0, 4]),), (torch.tensor([0, -1]),),
                         IndexError, "index out of range in self"),
    }[case]
    cf = torch.compile(f)
    assert torch.equal(cf(*good), f(*good)) and torch.equal(cf(*good), f(*good))
    for fn in (f, cf):
        with pytest.raises(error, match=words):
            fn(*bad)
    assert counters["compiled_calls"] == 3


def test_a_counter_a_bound_methods_object_bumps_outside_is_no_guard():
    # `super().__init__()` in a library class names __init__: the object's __init__ was walked, and every
    # attribute it sets (a step counter bumped between calls) became a guard: a new signature every call
    class Trainer:
        def __init__(self):
            self.model = nn.Linear(4, 2)
            self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
            self.global_step = 0

        def train_step(self, x):
            self.opt.zero_grad()
            loss = self.model(x).pow(2).mean()
            loss.backward()
            self.opt.step()
            return loss.detach()

    t = Trainer()
    step = torch.compile(t.train_step)
    with _no_warnings() as w:
        warnings.simplefilter("always")
        for _ in range(6):
            step(torch.ones(3, 4))
            t.global_step += 1
    assert not [x for x in w if "torch.compile" in str(x.message)] and counters["traces"] <= 2


def test_a_masked_assignment_of_a_scalar_compiles():
    # `labels[labels == pad] = -100` was a graph break (a data-dependent shape): it is a masked fill
    def f(labels, logits):
        labels = labels.clone()
        labels[labels == 0] = -100
        logits = logits.clone()
        logits[logits < 0] = 0.0
        return labels, logits

    cf = torch.compile(f)
    with _no_warnings() as w:
        warnings.simplefilter("always")
        for k in range(3):
            torch.manual_seed(k)
            args = (torch.randint(0, 3, (8,)), torch.randn(2, 4))
            got, want = cf(*args), f(*args)
            assert all(torch.equal(a, b) for a, b in zip(got, want))
    assert not [x for x in w if "torch.compile" in str(x.message)] and counters["traces"] == 1


@pytest.mark.parametrize("name", ["NAdam", "RAdam", "ASGD"])
def test_optimizers_that_read_their_state_as_numbers_compile_and_match_eager(name):
    # NAdam's mu_product.item(), RAdam's `if rho_t > 5`, ASGD's eta.item() and `mu != 1` broke every trace;
    # while tracing they read the state as tensors (torch's _get_value) and RAdam takes both updates by where
    results = []
    for compiled in (False, True):
        torch.manual_seed(0)
        m = nn.Linear(4, 3)
        opt = getattr(torch.optim, name)(m.parameters(), lr=0.05)

        def step(x):
            opt.zero_grad()
            m(x).pow(2).mean().backward()
            opt.step()

        fn = torch.compile(step) if compiled else step
        with _no_warnings() as w:
            warnings.simplefilter("always")
            for k in range(10):  # (RAdam's rectification starts at step 6)
                fn(torch.full((2, 4), 0.1 * (k + 1)))
        if compiled:
            assert not [x for x in w if "torch.compile" in str(x.message)] and counters["compiled_calls"] >= 8
        results.append([p.detach().clone() for p in m.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)


def test_batchnorm_with_a_cumulative_average_compiles_and_matches_eager():
    # momentum=None read its counter with float() every step: every trace broke
    results = []
    for compiled in (False, True):
        torch.manual_seed(0)
        bn = nn.BatchNorm1d(3, momentum=None)
        fn = torch.compile(bn) if compiled else bn
        with _no_warnings() as w:
            warnings.simplefilter("always")
            outs = [fn(torch.randn(4, 3) + k) for k in range(5)]
        if compiled:
            assert not [x for x in w if "torch.compile" in str(x.message)]
        results.append((outs, bn.running_mean.clone(), bn.running_var.clone(), int(bn.num_batches_tracked)))
    (eo, em, ev, en), (co, cm, cv, cn) = results
    assert en == cn == 5 and all(torch.allclose(a, b, atol=1e-6) for a, b in zip(eo, co))
    assert torch.allclose(em, cm, atol=1e-6) and torch.allclose(ev, cv, atol=1e-6)


@pytest.mark.parametrize("kind", ["setattr", "class"])
def test_state_written_under_a_name_the_code_does_not_spell_is_undone(kind):
    # `setattr(stats, "k_" + str(n), t)` and `type(self).last = t` were not seen: the object kept a tracer
    # (reading it raised ConcretizationTypeError) and later calls did not write it
    class Stats:
        pass

    stats = Stats()

    class Holder:
        def fwd(self, x):
            if kind == "setattr":
                setattr(stats, "k_" + str(x.shape[0]), x.sum())
            else:
                type(self).last = x.sum()
            return x * 2

    h = Holder()
    f = torch.compile(h.fwd)
    for i in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f(torch.ones(2) * i)
        got = stats.k_2 if kind == "setattr" else Holder.last
        assert got.item() == 2.0 * i


def test_a_dict_key_is_no_attribute_guard():
    # string constants counted as names everywhere: `metrics["step"]` made an unread `trainer.step`, bumped
    # every call, a guard (a new signature per call); they count where the code reads attributes by name
    class Trainer:
        def __init__(self):
            self.w, self.step = torch.ones(3), 0

    trainer = Trainer()
    metrics = {"step": 1.0}

    def f(x):
        return x * trainer.w * metrics["step"]

    cf = torch.compile(f)
    for _ in range(4):
        trainer.step += 1
        assert torch.equal(cf(torch.ones(3)), f(torch.ones(3)))
    assert counters["traces"] == 1


def test_a_call_that_raises_leaves_a_buffer_it_would_update_in_place_untouched():
    # the program's epilogue may be reordered (updates last), but an equation that raises on its data (nll_loss's
    # target check) is not moved past an in-place write into a lent buffer: as in eager, the write after it in
    # program order has not happened when it raises
    import mindtorch_v2.nn.functional as F
    w = torch.ones(1000)

    @torch.compile
    def f(x):
        y = x * 3.0
        t = (y[:, 0] > 0).long() * 7  # 7 is out of range for 4 classes where a row's first entry is positive
        loss = F.nll_loss(y, t)
        w.mul_(2.0)
        return y, loss

    ok = torch.tensor(-np.ones((5, 4), np.float32))
    for _ in range(4):
        f(ok)
    before = w._storage.value._buf.copy()  # (not .numpy(): an exported buffer is never lent again)
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        f(torch.tensor(np.ones((5, 4), np.float32)))
    np.testing.assert_array_equal(w._storage.value._buf, before)
