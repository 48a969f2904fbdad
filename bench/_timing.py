"""Shared timing helpers for the bench scripts: best-of-repeats per-call time, and side-by-side measurement."""
import timeit


def per_call(fn, number=None, repeat=5):
    """Seconds per call of fn(), the best of `repeat` runs (auto-sized)."""
    timer = timeit.Timer(fn)
    if number is None:
        number, _ = timer.autorange()
    return min(timer.repeat(repeat=repeat, number=number)) / number


def side_by_side(*fns, rounds=15, seconds=0.05):
    """Seconds per call of each fn, measured interleaved: each round runs every fn the same number of calls
    (sized so the slowest takes about `seconds`), and each keeps its best round.

    This machine is shared: the caches and the clock drift by up to 3x within a minute, so a ratio of two
    times taken one after the other measures the drift as much as the code. Interleaved, both sides see the
    same machine. The same number of calls also keeps training steps in step: two models trained from the
    same weights take the same number of steps (their speed depends on the weights: denormal gradients in a
    saturated softmax slow BLAS 3x)."""
    timers = [timeit.Timer(f) for f in fns]
    slowest = max(t.timeit(1) for t in timers)
    number = max(1, int(seconds / max(slowest, 1e-9)))
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, t in enumerate(timers):
            best[i] = min(best[i], t.timeit(number) / number)
    return best


def fmt(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:9.2f} us"
    return f"{seconds * 1e3:9.2f} ms"


def table(rows, title, who="mindtorch_v2"):
    """Print rows of (label, time, floor[, target]) with the ratio time / floor."""
    print(title)
    print(f"{'case':48s} {who:>12s} {'floor':>12s} {'ratio':>7s} {'target':>7s}")
    for row in rows:
        label, ours, floor = row[:3]
        target = row[3] if len(row) > 3 else ""
        print(f"{label:48s} {fmt(ours):>12s} {fmt(floor):>12s} {ours / floor:6.2f}x {target:>7s}")
