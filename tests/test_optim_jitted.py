"""Adam's and AdamW's per-parameter update as one jit'd program (optim/_jitted.py): the same numbers bit for bit
and the same version counts as the eager ops, and the eager ops wherever the program does not apply."""
import warnings

import pytest

import mindtorch_v2 as torch
from mindtorch_v2.optim import _jitted


@pytest.fixture
def jitted_runs(monkeypatch):
    """The params whose update ran as the jit'd program (in order)."""
    runs = []
    real = _jitted.applies

    def applies(group, written, read):
        ok = real(group, written, read)
        if ok:
            runs.append(written[0])
        return ok
    monkeypatch.setattr(_jitted, "applies", applies)
    return runs


def _train(cls, dtype, steps=4, jitted=True, **options):
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(33, 17, dtype=dtype)), torch.nn.Parameter(torch.randn(5, dtype=dtype))]
    opt = cls(params, **options)
    applies = _jitted.applies
    if not jitted:
        _jitted.applies = lambda *args: False
    try:
        for _ in range(steps):
            for p in params:
                p.grad = torch.randn(*p.shape, dtype=dtype)
            opt.step()
    finally:
        _jitted.applies = applies
    state = [v for st in opt.state.values() for k, v in sorted(st.items()) if k != "step"]
    return [t.detach().numpy().copy() for t in params + state], [t._version for t in params + state]


@pytest.mark.parametrize("cls, dtype", [(torch.optim.Adam, torch.float32), (torch.optim.AdamW, torch.float32),
                                        (torch.optim.AdamW, torch.float64)])
def test_the_jitted_update_gives_the_eager_ops_bits_and_version_counts(cls, dtype, jitted_runs):
    # each flag both ways (betas: both branches of lerp)
    for maximize, decay, amsgrad, betas in [(False, 0, False, (0.9, 0.999)), (True, 0.1, True, (0.3, 0.99)),
                                            (False, 0.1, False, (0.3, 0.99)), (True, 0, True, (0.9, 0.999))]:
        options = dict(lr=0.01, maximize=maximize, weight_decay=decay, amsgrad=amsgrad, betas=betas)
        jitted_runs.clear()
        fast, fast_versions = _train(cls, dtype, **options)
        assert len(jitted_runs) == 8  # (2 params, 4 steps)
        eager, eager_versions = _train(cls, dtype, jitted=False, **options)
        assert len(jitted_runs) == 8
        assert [a.tobytes() for a in fast] == [b.tobytes() for b in eager], options
        assert fast_versions == eager_versions, options


def test_the_eager_ops_run_where_the_program_does_not_apply(jitted_runs):
    base = torch.nn.Parameter(torch.randn(4, 6))
    view = base.detach()[:, :3]  # (a view of another tensor's storage: not the whole of it)
    half = torch.nn.Parameter(torch.randn(3, dtype=torch.float16))
    for params in ([view.requires_grad_()], [half]):
        for p in params:
            p.grad = torch.ones_like(p)
        before = [p.detach().clone() for p in params]
        torch.optim.AdamW(params, lr=0.1).step()
        assert jitted_runs == []
        assert all(not torch.equal(p.detach(), b) for p, b in zip(params, before))  # (stepped, eagerly)
    meta = torch.nn.Parameter(torch.empty(3, device="meta"))
    meta.grad = torch.empty(3, device="meta")
    torch.optim.AdamW([meta], lr=0.1).step()
    assert jitted_runs == [] and meta._version == 2


def test_views_of_a_jitted_parameter_see_its_new_values(jitted_runs):
    p = torch.nn.Parameter(torch.zeros(2, 3))
    row = p.detach()[1]
    p.grad = torch.ones(2, 3)
    torch.optim.Adam([p], lr=0.5).step()
    assert jitted_runs == [p]
    assert row.tolist() == pytest.approx([-0.5] * 3, abs=1e-6) and p.detach()[1].tolist() == row.tolist()


def test_a_compiled_step_traces_the_eager_ops(jitted_runs):
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.AdamW(model.parameters(), lr=0.1)

    def step(x):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
    compiled = torch.compile(step)
    x = torch.randn(3, 4)
    for _ in range(3):
        compiled(x)
    jitted_eager = len(jitted_runs)  # (the first call runs eagerly to create the state: jitted there)
    compiled(x)
    assert len(jitted_runs) == jitted_eager and torch._compile.counters["traces"] >= 1


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_an_sgd_momentum_step_jitted_gives_the_eager_ops_bits_and_version_counts(dtype, jitted_runs):
    for maximize, decay, nesterov, dampening, momentum in [(False, 0, False, 0, 0.9), (True, 0.01, True, 0, 0.9),
                                                           (False, 0.01, False, 0.5, 1.0), (True, 0, False, 0.1, 0.5)]:
        options = dict(lr=0.1, maximize=maximize, weight_decay=decay, nesterov=nesterov, dampening=dampening,
                       momentum=momentum)
        jitted_runs.clear()
        fast, fast_versions = _train(torch.optim.SGD, dtype, **options)
        assert len(jitted_runs) == 6  # (2 params, the 3 steps after the first: that one makes the buffer)
        eager, eager_versions = _train(torch.optim.SGD, dtype, jitted=False, **options)
        assert [a.tobytes() for a in fast] == [b.tobytes() for b in eager], options
        assert fast_versions == eager_versions, options


def test_a_model_with_many_parameter_shapes_steps_without_recompile_warnings():
    params = [torch.nn.Parameter(torch.randn(i + 1, 3)) for i in range(40)]  # (40 shapes: one trace each)
    for p in params:
        p.grad = torch.ones_like(p)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for opt in (torch.optim.Adam(params), torch.optim.SGD(params, lr=0.1, momentum=0.9)):
            for _ in range(2):
                opt.step()


def test_tensor_hyperparameters_reuse_one_program():
    # (a 0-d tensor lr or beta is keyed as a Python bool: the program cache would otherwise miss every step)
    from mindtorch_v2.optim import adam, sgd
    for module, make in ((sgd, lambda ps: torch.optim.SGD(ps, lr=torch.tensor(0.01), momentum=torch.tensor(0.9))),
                         (adam, lambda ps: torch.optim.Adam(ps, lr=torch.tensor(0.01),
                                                           betas=(torch.tensor(0.9), torch.tensor(0.999))))):
        p = torch.nn.Parameter(torch.randn(4, 4))
        opt = make([p])
        before = module._update.cache_info().currsize
        for _ in range(5):
            p.grad = torch.randn(4, 4)
            opt.step()
        assert module._update.cache_info().currsize - before <= 1


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_plain_sgd_runs_the_program_with_p_add_s_bits(dtype, jitted_runs):
    # SGD without momentum: p.add_(g, alpha=-lr), a multiply and an add, as one program (one loop with numba)
    for options in [dict(lr=0.05), dict(lr=0.05, weight_decay=0.1, maximize=True), dict(lr=1.0)]:
        jitted_runs.clear()
        fast, fast_versions = _train(torch.optim.SGD, dtype, **options)
        assert len(jitted_runs) == 8
        torch.manual_seed(0)  # (the same steps by hand, as _train draws them)
        ps = [torch.randn(33, 17, dtype=dtype), torch.randn(5, dtype=dtype)]
        versions = [0, 0]
        for _ in range(4):
            for i, p in enumerate(ps):
                g = torch.randn(*p.shape, dtype=dtype)
                if options.get("maximize"):
                    g = -g
                if options.get("weight_decay"):
                    g = g.add(p, alpha=options["weight_decay"])
                p.add_(g, alpha=-options["lr"])
                versions[i] += 1
        assert [a.tobytes() for a in fast] == [p.numpy().tobytes() for p in ps], options
        assert fast_versions == versions


@pytest.mark.parametrize("cls, options", [(torch.optim.SGD, {}), (torch.optim.SGD, {"momentum": 0.9}),
                                          (torch.optim.Adam, {}), (torch.optim.AdamW, {})])
def test_a_tensor_lr_of_another_dtype_keeps_the_weights_dtype(cls, options):
    # a float32 lr for float16 weights (the update then runs op by op): the weights stay float16, as PyTorch's
    # in-place updates keep them (promoted, they had come back float32)
    p = torch.nn.Parameter(torch.randn(8, 4, dtype=torch.float16))
    opt = cls([p], lr=torch.tensor(0.01), **options)
    for _ in range(2):
        p.grad = torch.randn(8, 4, dtype=torch.float16)
        opt.step()
    assert p.dtype == torch.float16 and p.detach().numpy().dtype == "float16"
    assert all(v.dtype == torch.float16 for st in opt.state.values() for k, v in st.items()
               if k != "step" and isinstance(v, torch.Tensor))
