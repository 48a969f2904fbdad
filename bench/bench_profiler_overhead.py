"""Cost of the profiler hooks in eager: `a + b` per call with no profiler (one `is not None` test in
tensor_bind), with a profiler recording, and a forward+backward step with and without recording.

Run it against this tree and the tree before the hooks to compare (the script prints per-call times only):

    PYTHONPATH=. python bench/bench_profiler_overhead.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _timing import fmt, per_call  # noqa: E402

import mindtorch_v2 as mt  # noqa: E402


def main():
    a, b = mt.randn(4), mt.randn(4)
    w = mt.randn(4, requires_grad=True)

    def step():
        (w * a + b).sum().backward()

    off = per_call(lambda: a + b, repeat=15)
    off_step = per_call(step, repeat=7)
    rows = [("a + b, no profiler", off), ("forward+backward (3 ops), no profiler", off_step)]
    profiler = getattr(mt, "profiler", None)
    if profiler is not None:
        with profiler.profile():
            on = per_call(lambda: a + b, number=20000, repeat=5)
        with profiler.profile():
            on_step = per_call(step, number=2000, repeat=5)
        rows += [("a + b, profiler recording", on), ("forward+backward, profiler recording", on_step)]
    for label, t in rows:
        print(f"{label:44s} {fmt(t)}")


if __name__ == "__main__":
    main()
