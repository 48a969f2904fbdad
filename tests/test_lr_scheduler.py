"""torch.optim.lr_scheduler: lr sequences against closed forms and hand-computed values."""
import math
import warnings

import pytest

import mindtorch_v2 as torch
from mindtorch_v2.optim import lr_scheduler as sched


def _opt(lr=0.1, cls=None, groups=1, **kw):
    cls = cls or torch.optim.SGD
    params = [torch.tensor([1.0], requires_grad=True) for _ in range(groups)]
    if groups == 1:
        return cls(params, lr=lr, **kw)
    return cls([{"params": [p], "lr": lr * (i + 1)} for i, p in enumerate(params)], lr=lr, **kw)


def _lrs(opt, scheduler, n, metric=None):
    """The lr of group 0 before each of n epochs (optimizer.step then scheduler.step, as in torch's docs)."""
    out = []
    for _ in range(n):
        out.append(opt.param_groups[0]["lr"])
        opt.step()
        scheduler.step()
    return out


def test_steplr_follows_closed_form():
    opt = _opt(0.1)
    s = sched.StepLR(opt, step_size=3, gamma=0.5)
    assert s.get_last_lr() == [0.1] and s.last_epoch == 0 and s.base_lrs == [0.1]
    got = _lrs(opt, s, 10)
    assert got == pytest.approx([0.1 * 0.5 ** (e // 3) for e in range(10)], rel=1e-12)
    assert s.last_epoch == 10 and s.get_last_lr() == [opt.param_groups[0]["lr"]]


def test_multisteplr_counts_repeated_milestones():
    opt = _opt(1.0)
    s = sched.MultiStepLR(opt, milestones=[2, 5, 5], gamma=0.1)
    got = _lrs(opt, s, 8)
    assert got == pytest.approx([1, 1, 0.1, 0.1, 0.1, 1e-3, 1e-3, 1e-3], rel=1e-12)


def test_exponentiallr_per_group():
    opt = _opt(0.2, groups=2)
    s = sched.ExponentialLR(opt, gamma=0.9)
    for e in range(6):
        assert [g["lr"] for g in opt.param_groups] == pytest.approx([0.2 * 0.9 ** e, 0.4 * 0.9 ** e], rel=1e-12)
        opt.step()
        s.step()


@pytest.mark.parametrize("eta_min", [0.0, 0.01])
def test_cosine_annealing_recursive_form_matches_closed_form(eta_min):
    base, T = 0.5, 7
    opt = _opt(base)
    s = sched.CosineAnnealingLR(opt, T_max=T, eta_min=eta_min)
    got = _lrs(opt, s, 3 * T + 2)  # past T_max the schedule climbs back up, like torch
    expected = [eta_min + (base - eta_min) * (1 + math.cos(math.pi * e / T)) / 2 for e in range(3 * T + 2)]
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert got[T] == pytest.approx(eta_min, abs=1e-12)


def test_cosine_annealing_is_recursive_so_external_lr_changes_carry_over():
    opt = _opt(1.0)
    s = sched.CosineAnnealingLR(opt, T_max=10)
    opt.step()
    s.step()
    opt.param_groups[0]["lr"] *= 0.5  # a manual change scales the rest of the schedule, as in torch
    opt.step()
    s.step()
    closed = lambda e: (1 + math.cos(math.pi * e / 10)) / 2  # noqa: E731
    assert opt.param_groups[0]["lr"] == pytest.approx(0.5 * closed(2), rel=1e-12)


def test_lambdalr_per_group_and_state_dict_of_callable_objects():
    class Warmup:
        def __init__(self, n):
            self.n = n

        def __call__(self, e):
            return min(1.0, (e + 1) / self.n)

    opt = _opt(0.1, groups=2)
    s = sched.LambdaLR(opt, [Warmup(4), lambda e: 0.5 ** e])
    for e in range(6):
        assert [g["lr"] for g in opt.param_groups] == pytest.approx([0.1 * min(1, (e + 1) / 4), 0.2 * 0.5 ** e])
        opt.step()
        s.step()
    sd = s.state_dict()
    assert sd["lr_lambdas"] == [{"n": 4}, None] and "optimizer" not in sd
    s2 = sched.LambdaLR(_opt(0.1, groups=2), [Warmup(99), lambda e: 1.0])
    s2.load_state_dict(sd)
    assert s2.lr_lambdas[0].n == 4 and s2.last_epoch == 6
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        sched.LambdaLR(opt, [lambda e: 1.0])


def test_multiplicative_constant_and_linear_lr():
    opt = _opt(1.0)
    s = sched.MultiplicativeLR(opt, lambda e: 0.5)
    assert _lrs(opt, s, 4) == pytest.approx([1, 0.5, 0.25, 0.125])
    opt = _opt(1.0)
    s = sched.ConstantLR(opt, factor=0.25, total_iters=3)
    assert _lrs(opt, s, 5) == pytest.approx([0.25, 0.25, 0.25, 1, 1])
    opt = _opt(1.0)
    s = sched.LinearLR(opt, start_factor=0.2, end_factor=1.0, total_iters=4)
    assert _lrs(opt, s, 7) == pytest.approx([0.2, 0.4, 0.6, 0.8, 1.0, 1.0, 1.0], rel=1e-12)


def _one_cycle_reference(step, total, max_lr, pct_start=0.3, div=25.0, final_div=1e4, strategy="cos",
                         three_phase=False):
    """torch's phase table, written out independently."""
    initial = max_lr / div
    low = initial / final_div
    if strategy == "cos":
        anneal = lambda a, b, pct: b + (a - b) / 2 * (math.cos(math.pi * pct) + 1)  # noqa: E731
    else:
        anneal = lambda a, b, pct: (b - a) * pct + a  # noqa: E731
    up = pct_start * total - 1
    if three_phase:
        phases = [(0.0, up, initial, max_lr), (up, 2 * pct_start * total - 2, max_lr, initial),
                  (2 * pct_start * total - 2, total - 1, initial, low)]
    else:
        phases = [(0.0, up, initial, max_lr), (up, total - 1, max_lr, low)]
    for i, (start, end, a, b) in enumerate(phases):
        if step <= end or i == len(phases) - 1:
            return anneal(a, b, (step - start) / (end - start))


def test_one_cycle_known_values_cos():
    opt = _opt(0.123, momentum=0.9)
    s = sched.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    got = _lrs(opt, s, 10)
    # warm-up over steps 0..2: 0.04 -> 0.52 -> 1.0, then cosine down to 0.04 / 1e4 at step 9
    assert got[:3] == pytest.approx([0.04, 0.52, 1.0], rel=1e-12)
    assert got[9] == pytest.approx(4e-6, rel=1e-9)
    assert got == pytest.approx([_one_cycle_reference(e, 10, 1.0) for e in range(10)], rel=1e-12)
    assert opt.param_groups[0]["initial_lr"] == pytest.approx(0.04)
    assert opt.param_groups[0]["max_lr"] == 1.0 and opt.param_groups[0]["min_lr"] == pytest.approx(4e-6)
    with pytest.raises(ValueError, match="Tried to step 11 times. The specified number of total steps is 10"):
        s.step()


def test_one_cycle_linear_three_phase_and_epochs():
    opt = _opt(0.1, momentum=0.9)
    s = sched.OneCycleLR(opt, max_lr=0.5, epochs=4, steps_per_epoch=5, pct_start=0.25, anneal_strategy="linear",
                         three_phase=True, div_factor=10.0, final_div_factor=100.0)
    assert s.total_steps == 20
    got = _lrs(opt, s, 20)
    expected = [_one_cycle_reference(e, 20, 0.5, 0.25, 10.0, 100.0, "linear", True) for e in range(20)]
    assert got == pytest.approx(expected, rel=1e-12)
    assert got[4] == pytest.approx(0.5) and got[8] == pytest.approx(0.05) and got[19] == pytest.approx(5e-4)


def test_one_cycle_cycles_sgd_momentum_inversely():
    opt = _opt(0.1, momentum=0.5)
    s = sched.OneCycleLR(opt, max_lr=1.0, total_steps=10, base_momentum=0.8, max_momentum=0.9)
    moms = []
    for _ in range(10):
        moms.append(opt.param_groups[0]["momentum"])
        opt.step()
        s.step() if len(moms) < 10 else None
    assert moms[0] == pytest.approx(0.9) and moms[2] == pytest.approx(0.8) and moms[9] == pytest.approx(0.9)
    assert moms[1] == pytest.approx(0.85)


def test_one_cycle_cycles_adam_beta1_and_keeps_beta2():
    opt = _opt(0.1, cls=torch.optim.Adam, betas=(0.5, 0.99))
    s = sched.OneCycleLR(opt, max_lr=0.01, total_steps=10)
    assert opt.param_groups[0]["betas"] == (0.95, 0.99)
    opt.step()
    s.step()
    assert opt.param_groups[0]["betas"] == pytest.approx((0.9, 0.99))


def test_one_cycle_argument_errors():
    opt = _opt(0.1, momentum=0.9)
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        sched.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="Expected positive integer total_steps, but got 0"):
        sched.OneCycleLR(opt, max_lr=1.0, total_steps=0)
    with pytest.raises(ValueError, match="Expected float between 0 and 1 pct_start, but got 1.5"):
        sched.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=1.5)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
        sched.OneCycleLR(opt, max_lr=1.0, total_steps=10, anneal_strategy="exp")
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        sched.OneCycleLR(_opt(0.1, cls=torch.optim.Adagrad), max_lr=1.0, total_steps=10)
    with pytest.raises(ValueError, match="max_lr must have the same length as optimizer.param_groups"):
        sched.OneCycleLR(opt, max_lr=[1.0, 2.0], total_steps=10)


def test_reduce_on_plateau_waits_patience_then_cools_down():
    opt = _opt(1.0)
    s = sched.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=2, cooldown=1)
    lrs = []
    for loss in [5.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 3.0]:
        s.step(loss)
        lrs.append(opt.param_groups[0]["lr"])
    # bad epochs at steps 3,4,5 -> reduce after the 3rd (> patience 2); cooldown 1 swallows step 6,
    # then 3 more bad epochs (7, 8, 9) -> reduce again; step 10 improves
    assert lrs == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25]
    assert s.get_last_lr() == [0.25] and s.best == 3.0 and s.num_bad_epochs == 0


def test_reduce_on_plateau_thresholds_modes_and_min_lr():
    opt = _opt(1.0)
    s = sched.ReduceLROnPlateau(opt, mode="max", factor=0.1, patience=0, threshold=0.1, threshold_mode="abs",
                                min_lr=0.05)
    s.step(1.0)   # improves on -inf
    s.step(1.05)  # not better than 1.0 + 0.1: reduce to 0.1
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1)
    s.step(2.0)   # better
    s.step(1.0)   # worse: 0.1 * 0.1 = 0.01, clamped to min_lr 0.05
    assert opt.param_groups[0]["lr"] == pytest.approx(0.05)
    s.step(0.0)   # already at min_lr: unchanged
    assert opt.param_groups[0]["lr"] == pytest.approx(0.05)

    opt = _opt(1.0)
    s = sched.ReduceLROnPlateau(opt, patience=0, threshold=0.1)  # rel: must beat best * 0.9
    s.step(10.0)
    s.step(9.5)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1)
    s.step(8.0)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1) and s.best == 8.0


def test_reduce_on_plateau_accepts_tensor_metrics_and_round_trips_state():
    opt = _opt(1.0, groups=2)
    s = sched.ReduceLROnPlateau(opt, patience=1, min_lr=[0.0, 0.15])
    for v in [1.0, 2.0, 2.0, 2.0, 2.0]:
        s.step(torch.tensor(v))
    assert [g["lr"] for g in opt.param_groups] == pytest.approx([0.01, 0.15])  # 2 -> 0.2 -> clamped
    sd = s.state_dict()
    s2 = sched.ReduceLROnPlateau(_opt(1.0, groups=2))
    s2.load_state_dict(sd)
    assert s2.best == 1.0 and s2.patience == 1 and s2.min_lrs == [0.0, 0.15] and s2.last_epoch == 5
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        sched.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode avg is unknown!"):
        sched.ReduceLROnPlateau(opt, mode="avg")
    with pytest.raises(ValueError, match="expected 2 min_lrs, got 1"):
        sched.ReduceLROnPlateau(opt, min_lr=[0.1])


def test_scheduler_state_dict_round_trip_resumes():
    opt = _opt(1.0)
    s = sched.StepLR(opt, step_size=2, gamma=0.5)
    _lrs(opt, s, 3)
    sd = s.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 3
    opt2 = _opt(1.0)
    opt2.load_state_dict(opt.state_dict())  # carries lr and initial_lr
    s2 = sched.StepLR(opt2, step_size=99, last_epoch=sd["last_epoch"])
    s2.load_state_dict(sd)
    assert s2.step_size == 2
    assert _lrs(opt2, s2, 4) == _lrs(opt, s, 4)


def test_resuming_without_initial_lr_raises():
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
        sched.StepLR(_opt(), step_size=1, last_epoch=3)


def test_scheduler_rejects_non_optimizer():
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        sched.StepLR([], step_size=1)


def test_warns_when_scheduler_steps_before_optimizer():
    opt = _opt()
    s = sched.StepLR(opt, step_size=1)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"):
        s.step()
    opt = _opt()
    s = sched.StepLR(opt, step_size=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        s.step()
        s.get_last_lr()


def test_get_lr_outside_step_warns():
    s = sched.StepLR(_opt(), step_size=1)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        s.get_lr()


def test_step_with_epoch_uses_closed_form_and_warns():
    opt = _opt(1.0)
    s = sched.CosineAnnealingLR(opt, T_max=10)
    opt.step()
    with pytest.warns(UserWarning, match="epoch parameter in `scheduler.step\\(\\)` was not necessary"):
        s.step(5)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.5)
    opt = _opt(1.0)
    s = sched.MultiStepLR(opt, milestones=[2, 4], gamma=0.1)
    opt.step()
    with pytest.warns(UserWarning, match="epoch parameter"):
        s.step(4)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.01)


def test_scheduled_lr_drives_the_optimizer_update():
    p = torch.tensor([0.0], requires_grad=True)
    opt = torch.optim.SGD([p], lr=1.0)
    s = sched.StepLR(opt, step_size=1, gamma=0.5)
    for _ in range(3):
        p.grad = torch.tensor([1.0])
        opt.step()
        s.step()
    assert p.item() == pytest.approx(-(1 + 0.5 + 0.25))


def test_lr_scheduler_base_aliases():
    assert sched._LRScheduler is sched.LRScheduler
    assert issubclass(sched.ReduceLROnPlateau, sched.LRScheduler)
    assert torch.optim.lr_scheduler.StepLR is sched.StepLR
