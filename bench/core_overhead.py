"""Overhead of the functional core against plain NumPy.

Prints per-call time of core.add on tiny and 1,000-element float32 arrays, and
of core.grad over a 100-op elementwise chain on 1,000 elements, beside the
plain NumPy time for the same work (a hand-written forward + backward for the
chain). Targets: add on tiny arrays within 8x of np.add; the chain's grad
within 4x of the hand-written NumPy.

    python bench/core_overhead.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import per_call, table  # noqa: E402

from mindtorch_v2 import core  # noqa: E402

N_OPS = 100


def chain(x):
    for i in range(N_OPS // 4):
        x = core.sin(x)
        x = x * 1.01
        x = core.tanh(x)
        x = x + 0.5
    return core.sum(x)


def numpy_chain_grad(x):
    """Forward keeping what the backward needs, then the backward by hand."""
    saved = []
    for i in range(N_OPS // 4):
        saved.append(x)
        x = np.sin(x)
        x = x * np.float32(1.01)
        t = np.tanh(x)
        saved.append(t)
        x = t + np.float32(0.5)
    value = x.sum()
    g = np.ones_like(x)
    for i in reversed(range(N_OPS // 4)):
        t = saved[2 * i + 1]
        g = g * (1 - t * t)
        g = g * np.float32(1.01)
        g = g * np.cos(saved[2 * i])
    return value, g


def main():
    rows = []
    for n in (1, 1000):
        a_np = np.random.rand(n).astype(np.float32)
        b_np = np.random.rand(n).astype(np.float32)
        a, b = core.asarray(a_np), core.asarray(b_np)
        ours = per_call(lambda: core.add(a, b))
        floor = per_call(lambda: np.add(a_np, b_np))
        rows.append((f"core.add, {n} float32", ours, floor, "8x" if n == 1 else ""))
        ours = per_call(lambda: a + b)
        rows.append((f"a + b (operator), {n} float32", ours, floor, ""))

    x_np = np.random.rand(1000).astype(np.float32)
    x = core.asarray(x_np)
    vg = core.value_and_grad(chain)
    v, g = vg(x)
    v_ref, g_ref = numpy_chain_grad(x_np)
    np.testing.assert_allclose(np.asarray(g), g_ref, rtol=1e-4, atol=1e-6)
    ours = per_call(lambda: vg(x), repeat=5)
    floor = per_call(lambda: numpy_chain_grad(x_np), repeat=5)
    rows.append((f"value_and_grad, {N_OPS}-op chain, 1000 float32", ours, floor, "4x"))
    ours = per_call(lambda: chain(x), repeat=5)
    floor_fwd = per_call(lambda: numpy_chain_forward(x_np), repeat=5)
    rows.append((f"forward only, {N_OPS}-op chain, 1000 float32", ours, floor_fwd, ""))
    table(rows, "core overhead (best of 5; ratio = ours / numpy)")


def numpy_chain_forward(x):
    for i in range(N_OPS // 4):
        x = np.tanh(np.sin(x) * np.float32(1.01)) + np.float32(0.5)
    return x.sum()


if __name__ == "__main__":
    main()
