"""torch.optim optimizers against NumPy transcriptions of PyTorch's update formulas."""
import math
import re
import warnings

import numpy as np
import pytest

import mindtorch_v2 as torch

# ---------------------------------------------------------------------------
# NumPy references: PyTorch's single-tensor algorithms, written out by hand


def ref_sgd(p, grads, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False):
    p = p.copy()
    buf = None
    for g in grads:
        d_p = -g if maximize else g
        if weight_decay:
            d_p = d_p + weight_decay * p
        if momentum:
            buf = d_p.copy() if buf is None else momentum * buf + (1 - dampening) * d_p
            d_p = d_p + momentum * buf if nesterov else buf
        p = p - lr * d_p
    return p


def ref_adam(p, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, maximize=False,
             decoupled=False):
    p = p.copy()
    b1, b2 = betas
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    vmax = np.zeros_like(p)
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        if weight_decay:
            if decoupled:
                p = p * (1 - lr * weight_decay)
            else:
                g = g + weight_decay * p
        m = m + (1 - b1) * (g - m)
        v = b2 * v + (1 - b2) * g * g
        if amsgrad:
            vmax = np.maximum(vmax, v)
            denom = np.sqrt(vmax) / math.sqrt(1 - b2 ** t) + eps
        else:
            denom = np.sqrt(v) / math.sqrt(1 - b2 ** t) + eps
        p = p - lr / (1 - b1 ** t) * (m / denom)
    return p


def ref_rmsprop(p, grads, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                maximize=False):
    p = p.copy()
    sq = np.zeros_like(p)
    gavg = np.zeros_like(p)
    buf = np.zeros_like(p)
    for g in grads:
        g = -g if maximize else g
        if weight_decay:
            g = g + weight_decay * p
        sq = alpha * sq + (1 - alpha) * g * g
        if centered:
            gavg = gavg + (1 - alpha) * (g - gavg)
            avg = np.sqrt(sq - gavg * gavg) + eps
        else:
            avg = np.sqrt(sq) + eps
        if momentum > 0:
            buf = momentum * buf + g / avg
            p = p - lr * buf
        else:
            p = p - lr * g / avg
    return p


def ref_adagrad(p, grads, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                maximize=False):
    p = p.copy()
    s = np.full_like(p, initial_accumulator_value)
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        if weight_decay:
            g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        p = p - clr * g / (np.sqrt(s) + eps)
    return p


# ---------------------------------------------------------------------------
# helpers


def _data(seed=0, shape=(3, 4), steps=6):
    rng = np.random.default_rng(seed)
    p0 = rng.standard_normal(shape)
    grads = [rng.standard_normal(shape) for _ in range(steps)]
    return p0, grads


def _run(opt_cls, p0, grads, dtype=torch.float64, **kw):
    """Step opt_cls over the given gradients (assigned to .grad); return the parameter and optimizer."""
    p = torch.tensor(p0, dtype=dtype, requires_grad=True)
    opt = opt_cls([p], **kw)
    for g in grads:
        p.grad = torch.tensor(g, dtype=dtype)
        opt.step()
    return p, opt


def _np(t):
    return t.detach().numpy()


SGD_CASES = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.01),
    dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1),
    dict(lr=0.02, momentum=0.5, maximize=True, weight_decay=0.05),
]
ADAM_CASES = [
    dict(lr=0.01),
    dict(lr=0.05, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1),
    dict(lr=0.05, betas=(0.3, 0.9), amsgrad=True),  # 1 - beta1 >= 0.5 takes lerp's other branch
    dict(lr=0.02, amsgrad=True, maximize=True, weight_decay=0.01),
]
RMSPROP_CASES = [
    dict(lr=0.01),
    dict(lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.1),
    dict(lr=0.01, momentum=0.8),
    dict(lr=0.01, alpha=0.8, centered=True),
    dict(lr=0.005, alpha=0.3, centered=True, momentum=0.9, weight_decay=0.05, maximize=True),
]
ADAGRAD_CASES = [
    dict(lr=0.1),
    dict(lr=0.1, lr_decay=0.2, weight_decay=0.1),
    dict(lr=0.05, initial_accumulator_value=0.5, eps=1e-6, maximize=True),
]


@pytest.mark.parametrize("kw", SGD_CASES)
def test_sgd_matches_pytorch_formula(kw):
    p0, grads = _data()
    p, _ = _run(torch.optim.SGD, p0, grads, **kw)
    np.testing.assert_allclose(_np(p), ref_sgd(p0, grads, **kw), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kw", ADAM_CASES)
def test_adam_matches_pytorch_formula(kw):
    p0, grads = _data(1)
    p, _ = _run(torch.optim.Adam, p0, grads, **kw)
    np.testing.assert_allclose(_np(p), ref_adam(p0, grads, **kw), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kw", ADAM_CASES + [dict(lr=0.05, weight_decay=0.3, betas=(0.7, 0.9))])
def test_adamw_matches_pytorch_formula(kw):
    p0, grads = _data(2)
    p, _ = _run(torch.optim.AdamW, p0, grads, **kw)
    kw = dict(kw)
    kw.setdefault("weight_decay", 1e-2)
    np.testing.assert_allclose(_np(p), ref_adam(p0, grads, decoupled=True, **kw), rtol=1e-12, atol=1e-14)


def test_adamw_decay_differs_from_adam_l2():
    p0, grads = _data(3)
    a, _ = _run(torch.optim.Adam, p0, grads, lr=0.05, weight_decay=0.5)
    w, _ = _run(torch.optim.AdamW, p0, grads, lr=0.05, weight_decay=0.5)
    assert not np.allclose(_np(a), _np(w))


@pytest.mark.parametrize("kw", RMSPROP_CASES)
def test_rmsprop_matches_pytorch_formula(kw):
    p0, grads = _data(4)
    p, _ = _run(torch.optim.RMSprop, p0, grads, **kw)
    np.testing.assert_allclose(_np(p), ref_rmsprop(p0, grads, **kw), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kw", ADAGRAD_CASES)
def test_adagrad_matches_pytorch_formula(kw):
    p0, grads = _data(5)
    p, _ = _run(torch.optim.Adagrad, p0, grads, **kw)
    np.testing.assert_allclose(_np(p), ref_adagrad(p0, grads, **kw), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("opt_cls,kw,ref", [
    (torch.optim.SGD, dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1), ref_sgd),
    (torch.optim.Adam, dict(lr=0.05, amsgrad=True, weight_decay=0.1), ref_adam),
    (torch.optim.RMSprop, dict(lr=0.01, centered=True, momentum=0.5), ref_rmsprop),
    (torch.optim.Adagrad, dict(lr=0.1, lr_decay=0.1), ref_adagrad),
])
def test_float32_params_and_state_stay_float32(opt_cls, kw, ref):
    p0, grads = _data(6)
    p0 = p0.astype(np.float32)
    grads = [g.astype(np.float32) for g in grads]
    p, opt = _run(opt_cls, p0, grads, dtype=torch.float32, **kw)
    assert p.dtype == torch.float32
    for name, value in opt.state[p].items():
        if name != "step":
            assert value.dtype == torch.float32, name
    expected = ref(p0.astype(np.float64), [g.astype(np.float64) for g in grads], **kw)
    np.testing.assert_allclose(_np(p), expected, rtol=2e-5, atol=1e-6)


def test_step_counts_are_float32_tensors_like_torch():
    p0, grads = _data(steps=3)
    p, opt = _run(torch.optim.Adam, p0, grads)
    step = opt.state[p]["step"]
    assert isinstance(step, torch.Tensor) and step.dtype == torch.float32 and step.item() == 3.0


def test_sgd_first_step_copies_the_gradient_into_the_momentum_buffer():
    p = torch.tensor([1.0, 2.0], requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.5)
    p.grad = torch.tensor([1.0, -1.0])
    opt.step()
    buf = opt.state[p]["momentum_buffer"]
    np.testing.assert_allclose(buf.numpy(), [1.0, -1.0])  # no (1 - dampening) on the first step
    p.grad.mul_(3.0)  # the buffer is a copy, not an alias of the gradient
    np.testing.assert_allclose(buf.numpy(), [1.0, -1.0])
    np.testing.assert_allclose(_np(p), [0.9, 2.1], rtol=1e-6)


# ---------------------------------------------------------------------------
# in-place updates


def test_step_updates_parameter_in_place_and_views_see_it():
    p = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.5)
    view = p.detach()[1]
    version = p._version
    p.grad = torch.ones(2, 2)
    ident = id(p)
    opt.step()
    assert id(p) == ident and p.is_leaf and p.requires_grad and p.grad_fn is None
    assert p._version > version
    np.testing.assert_allclose(_np(p), [[0.5, 1.5], [2.5, 3.5]])
    np.testing.assert_allclose(view.numpy(), [2.5, 3.5])


def test_parameter_that_is_a_view_of_a_buffer_writes_through_to_it():
    flat = torch.zeros(6)
    w = flat[2:5]
    w.requires_grad_(True)
    opt = torch.optim.SGD([w], lr=1.0)
    w.grad = torch.tensor([1.0, 2.0, 3.0])
    opt.step()
    np.testing.assert_allclose(flat.numpy(), [0, 0, -1, -2, -3, 0])


def test_params_without_grad_are_skipped_and_get_no_state():
    a = torch.tensor([1.0], requires_grad=True)
    b = torch.tensor([2.0], requires_grad=True)
    opt = torch.optim.Adam([a, b], lr=0.1)
    a.grad = torch.tensor([1.0])
    opt.step()
    assert b.item() == 2.0 and len(opt.state[b]) == 0 and "exp_avg" in opt.state[a]


def test_step_records_no_history_even_when_grad_mode_is_on():
    p = torch.tensor([1.0, 2.0], requires_grad=True)
    opt = torch.optim.RMSprop([p], lr=0.1, momentum=0.9, centered=True)
    p.grad = torch.tensor([0.5, -0.5])
    assert torch.is_grad_enabled()
    opt.step()
    assert torch.is_grad_enabled()
    assert p.grad_fn is None and p.is_leaf
    for v in opt.state[p].values():
        assert not v.requires_grad and v.grad_fn is None


def test_training_with_backward_reaches_low_loss():
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((64, 3)), dtype=torch.float32)  # float64 @ float32 raises in torch
    true_w = torch.tensor([[1.5], [-2.0], [0.5]])
    y = x @ true_w + 0.3
    for opt_cls, kw in [(torch.optim.SGD, dict(lr=0.1, momentum=0.9)), (torch.optim.Adam, dict(lr=0.1)),
                        (torch.optim.AdamW, dict(lr=0.1, weight_decay=0.0)), (torch.optim.RMSprop, dict(lr=0.02)),
                        (torch.optim.Adagrad, dict(lr=0.5))]:
        w = torch.zeros(3, 1, requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        opt = opt_cls([w, b], **kw)
        for _ in range(300):
            opt.zero_grad()
            loss = ((x @ w + b - y) ** 2).mean()
            loss.backward()
            opt.step()
        assert loss.item() < 1e-3, (opt_cls.__name__, loss.item())


def test_closure_is_called_with_grad_enabled_and_its_loss_returned():
    p = torch.tensor([3.0], requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.25)
    seen = []

    def closure():
        seen.append(torch.is_grad_enabled())
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with torch.no_grad():
        loss = opt.step(closure)
    assert seen == [True] and loss.item() == 9.0
    np.testing.assert_allclose(_np(p), [1.5])  # 3 - 0.25 * 6


def test_nn_parameter_works_if_present():
    Parameter = getattr(getattr(torch, "nn", None), "Parameter", None)
    if Parameter is None:
        try:
            from mindtorch_v2.nn.parameter import Parameter
        except ImportError:
            pytest.skip("torch.nn.Parameter not available yet")
    w = Parameter(torch.tensor([1.0, -1.0]))
    opt = torch.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    assert isinstance(w, Parameter) and w.is_leaf and w.requires_grad
    np.testing.assert_allclose(_np(w), ref_adam(np.array([1.0, -1.0]), [np.array([2.0, -2.0])], lr=0.1),
                               rtol=1e-6)


# ---------------------------------------------------------------------------
# zero_grad


def test_zero_grad_sets_grads_to_none_by_default():
    p = torch.tensor([1.0], requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.1)
    (p * 2).sum().backward()
    opt.zero_grad()
    assert p.grad is None


def test_zero_grad_set_to_none_false_zeroes_the_same_tensor():
    p = torch.tensor([1.0, 2.0], requires_grad=True)
    q = torch.tensor([1.0], requires_grad=True)  # no grad: left alone
    opt = torch.optim.SGD([p, q], lr=0.1)
    (p * 3).sum().backward()
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])
    assert q.grad is None


# ---------------------------------------------------------------------------
# param groups and construction errors


def test_param_groups_fill_defaults_and_use_their_own_lr():
    a = torch.tensor([1.0], requires_grad=True)
    b = torch.tensor([1.0], requires_grad=True)
    opt = torch.optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5, "momentum": 0.9}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[0]["momentum"] == 0 and opt.param_groups[1]["momentum"] == 0.9
    assert opt.param_groups[1]["params"][0] is b
    assert set(opt.param_groups[0]) >= {"params", "lr", "momentum", "dampening", "weight_decay", "nesterov",
                                        "maximize"}
    a.grad = torch.tensor([1.0])
    b.grad = torch.tensor([1.0])
    opt.step()
    assert a.item() == pytest.approx(0.9) and b.item() == pytest.approx(0.5)


def test_add_param_group_and_duplicate_param_error():
    a = torch.tensor([1.0], requires_grad=True)
    b = torch.tensor([1.0], requires_grad=True)
    opt = torch.optim.Adam([a], lr=0.1)
    opt.add_param_group({"params": [b], "lr": 0.01})
    assert len(opt.param_groups) == 2 and opt.param_groups[1]["betas"] == (0.9, 0.999)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})
    assert len(opt.param_groups) == 2
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([b])


def test_adagrad_initialises_state_eagerly_and_for_added_groups():
    a = torch.tensor([1.0], requires_grad=True)
    opt = torch.optim.Adagrad([a], initial_accumulator_value=0.25)
    assert opt.state[a]["sum"].item() == 0.25 and opt.state[a]["step"].item() == 0.0
    b = torch.tensor([1.0], requires_grad=True)
    opt.add_param_group({"params": [b]})
    b.grad = torch.tensor([1.0])
    opt.step()
    assert opt.state[b]["step"].item() == 1.0


@pytest.mark.parametrize("make,exc,msg", [
    (lambda p: torch.optim.SGD([], lr=0.1), ValueError, "optimizer got an empty parameter list"),
    (lambda p: torch.optim.SGD([p], lr=-1), ValueError, "Invalid learning rate: -1"),
    (lambda p: torch.optim.SGD([p], lr=0.1, momentum=-0.5), ValueError, "Invalid momentum value: -0.5"),
    (lambda p: torch.optim.SGD([p], lr=0.1, weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
    (lambda p: torch.optim.SGD([p], lr=0.1, nesterov=True), ValueError,
     "Nesterov momentum requires a momentum and zero dampening"),
    (lambda p: torch.optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), ValueError,
     "Nesterov momentum requires a momentum and zero dampening"),
    (lambda p: torch.optim.SGD(p, lr=0.1), TypeError, "should be an iterable of Tensors or dicts"),
    (lambda p: torch.optim.SGD([{"params": {p}}], lr=0.1), TypeError, "organized in ordered collections"),
    (lambda p: torch.optim.SGD([p, 1.0], lr=0.1), TypeError, "optimizer can only optimize Tensors"),
    (lambda p: torch.optim.SGD([p * 2], lr=0.1), ValueError, "can't optimize a non-leaf Tensor"),
    (lambda p: torch.optim.Adam([p], lr=-0.1), ValueError, "Invalid learning rate: -0.1"),
    (lambda p: torch.optim.Adam([p], eps=-1.0), ValueError, "Invalid epsilon value: -1.0"),
    (lambda p: torch.optim.Adam([p], betas=(1.0, 0.9)), ValueError, "Invalid beta parameter at index 0: 1.0"),
    (lambda p: torch.optim.AdamW([p], betas=(0.9, -0.1)), ValueError, "Invalid beta parameter at index 1: -0.1"),
    (lambda p: torch.optim.RMSprop([p], alpha=-0.1), ValueError, "Invalid alpha value: -0.1"),
    (lambda p: torch.optim.Adagrad([p], lr_decay=-1), ValueError, "Invalid lr_decay value: -1"),
    (lambda p: torch.optim.Adagrad([p], initial_accumulator_value=-1), ValueError,
     "Invalid initial_accumulator_value value: -1"),
])
def test_construction_errors_match_torch(make, exc, msg):
    p = torch.tensor([1.0], requires_grad=True)
    with pytest.raises(exc, match=re.escape(msg)):
        make(p)


def test_duplicate_params_in_one_group_warn():
    p = torch.tensor([1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        torch.optim.SGD([p, p], lr=0.1)


def test_named_parameters_are_accepted_and_names_kept():
    a = torch.tensor([1.0], requires_grad=True)
    opt = torch.optim.SGD([("weight", a)], lr=0.1)
    assert opt.param_groups[0]["params"][0] is a and opt.param_groups[0]["param_names"] == ["weight"]


def test_repr_lists_group_options():
    p = torch.tensor([1.0], requires_grad=True)
    text = repr(torch.optim.SGD([p], lr=0.1, momentum=0.9))
    assert text.startswith("SGD (\nParameter Group 0\n") and "    lr: 0.1\n" in text and "momentum: 0.9" in text


def test_step_hooks_run_around_step_and_can_be_removed():
    p = torch.tensor([1.0], requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", p.item())))
    opt.register_step_post_hook(lambda o, a, k: calls.append(("post", p.item())))
    p.grad = torch.tensor([1.0])
    opt.step()
    h1.remove()
    opt.step()
    assert calls == [("pre", 1.0), ("post", pytest.approx(0.9)), ("post", pytest.approx(0.8))]


# ---------------------------------------------------------------------------
# state dicts


def _two_group_setup(opt_cls, kw, seed=0):
    rng = np.random.default_rng(seed)
    a = torch.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    b = torch.tensor(rng.standard_normal(4), requires_grad=True)
    opt = opt_cls([{"params": [a]}, {"params": [b], "lr": 0.03}], **kw)
    return [a, b], opt


def _feed(params, opt, grads):
    for ga, gb in grads:
        params[0].grad = torch.tensor(ga)
        params[1].grad = torch.tensor(gb)
        opt.step()


@pytest.mark.parametrize("opt_cls,kw", [
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
    (torch.optim.Adam, dict(lr=0.05, amsgrad=True, weight_decay=0.1)),
    (torch.optim.AdamW, dict(lr=0.05)),
    (torch.optim.RMSprop, dict(lr=0.01, momentum=0.5, centered=True)),
    (torch.optim.Adagrad, dict(lr=0.1, lr_decay=0.05)),
])
def test_state_dict_round_trip_resumes_identically(opt_cls, kw):
    rng = np.random.default_rng(1)
    grads = [(rng.standard_normal((3, 2)), rng.standard_normal(4)) for _ in range(6)]
    params, opt = _two_group_setup(opt_cls, kw)
    _feed(params, opt, grads[:3])
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1]]
    assert set(sd["state"]) == {0, 1}
    snapshot = [p.detach().clone() for p in params]

    _feed(params, opt, grads[3:])  # the original keeps going ...

    params2, opt2 = _two_group_setup(opt_cls, dict(kw, lr=123.0), seed=9)
    with torch.no_grad():
        for p2, s in zip(params2, snapshot):
            p2.copy_(s)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == kw["lr"] and opt2.param_groups[1]["lr"] == 0.03  # hyperparameters loaded
    assert opt2.param_groups[0]["params"][0] is params2[0]
    _feed(params2, opt2, grads[3:])  # ... and the restored copy follows the same path
    for p, p2 in zip(params, params2):
        np.testing.assert_allclose(_np(p2), _np(p), rtol=0, atol=0)


def test_state_dict_tensors_are_snapshots():
    p = torch.tensor([1.0, 2.0], requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = torch.tensor([1.0, 1.0])
    opt.step()
    sd = opt.state_dict()
    before = sd["state"][0]["momentum_buffer"].numpy().copy()
    opt.step()
    np.testing.assert_array_equal(sd["state"][0]["momentum_buffer"].numpy(), before)
    opt2 = torch.optim.SGD([p], lr=0.1, momentum=0.9)
    opt2.load_state_dict(sd)
    opt2.step()  # stepping the loaded optimizer leaves the dict alone too
    np.testing.assert_array_equal(sd["state"][0]["momentum_buffer"].numpy(), before)


def test_state_dict_of_shared_param_across_positions_and_unused_param():
    a = torch.tensor([1.0], requires_grad=True)
    b = torch.tensor([1.0], requires_grad=True)
    opt = torch.optim.Adam([a, b], lr=0.1)
    b.grad = torch.tensor([1.0])
    opt.step()
    sd = opt.state_dict()
    assert list(sd["state"]) == [1]  # only b has state
    assert sd["param_groups"][0]["params"] == [0, 1]
    assert sd["param_groups"][0]["betas"] == (0.9, 0.999)


def test_load_state_dict_casts_state_to_param_dtype():
    p64 = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([p64], lr=0.1)
    p64.grad = torch.tensor([1.0, 1.0], dtype=torch.float64)
    opt.step()
    p32 = torch.tensor([1.0, 2.0], requires_grad=True)
    opt32 = torch.optim.Adam([p32], lr=0.1)
    opt32.load_state_dict(opt.state_dict())
    assert opt32.state[p32]["exp_avg"].dtype == torch.float32
    assert opt32.state[p32]["step"].dtype == torch.float32


def test_load_state_dict_rejects_mismatched_groups():
    a = torch.tensor([1.0], requires_grad=True)
    b = torch.tensor([1.0], requires_grad=True)
    sd = torch.optim.SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        torch.optim.SGD([a], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        torch.optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(sd)


def test_load_state_dict_accepts_plain_number_steps_from_old_checkpoints():
    p = torch.tensor([1.0], requires_grad=True)
    opt = torch.optim.Adam([p], lr=0.1)
    p.grad = torch.tensor([1.0])
    opt.step()
    sd = opt.state_dict()
    sd["state"][0]["step"] = 1
    opt2 = torch.optim.Adam([p], lr=0.1)
    opt2.load_state_dict(sd)
    assert isinstance(opt2.state[p]["step"], torch.Tensor)
    opt2.step()
    assert opt2.state[p]["step"].item() == 2.0


def test_optimizer_warnings_free_in_normal_use():
    p = torch.tensor([1.0], requires_grad=True)
    opt = torch.optim.AdamW([p], lr=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            opt.zero_grad()
            (p * p).sum().backward()
            opt.step()
