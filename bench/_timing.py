"""Shared timing helper for the bench scripts: best-of-repeats per-call time."""
import timeit


def per_call(fn, number=None, repeat=5):
    """Seconds per call of fn(), the best of `repeat` runs (auto-sized)."""
    timer = timeit.Timer(fn)
    if number is None:
        number, _ = timer.autorange()
    return min(timer.repeat(repeat=repeat, number=number)) / number


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
