"""Overhead of the eager front end against plain NumPy, and against PyTorch when it is installed.

Prints per-op time of `a + b` (1 and 1,000 float32 elements; without and with
requires_grad), a 100-op chain forward+backward on 1,000 elements, and
`x[i] += 1` on a row of a 1000x1000 tensor (copy-on-write with ownership makes
it O(row), not O(base)). Targets: `a + b` with grad recording within 12x of
np.add; the row update O(row).

With PyTorch installed, a second table times the same `a + b` with requires_grad
and the same chain in PyTorch, side by side with ours in one run: each case is
measured interleaved (_timing.side_by_side: rounds of ours, PyTorch, ours, ...) and
the best of each side is kept, so both see the same machine load. ratio = ours /
PyTorch; target <= 1.5x.

    python bench/eager_overhead.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import fmt, per_call, side_by_side, table  # noqa: E402

import mindtorch_v2 as mt  # noqa: E402

try:  # optional peer
    import torch as real_torch
except ImportError:
    real_torch = None

N_OPS = 100


def chain(lib, x):
    for _ in range(N_OPS // 4):
        x = lib.sin(x)
        x = x * 1.01
        x = lib.tanh(x)
        x = x + 0.5
    return x.sum()


def numpy_chain_grad(x):
    saved = []
    for _ in range(N_OPS // 4):
        saved.append(x)
        x = np.sin(x)
        x = x * np.float32(1.01)
        t = np.tanh(x)
        saved.append(t)
        x = t + np.float32(0.5)
    g = np.ones_like(x)
    for i in reversed(range(N_OPS // 4)):
        t = saved[2 * i + 1]
        g = g * (1 - t * t) * np.float32(1.01) * np.cos(saved[2 * i])
    return g


def fwd_bwd(lib, x_np):
    """One forward+backward of the chain in `lib` (mindtorch_v2 or torch); returns x.grad."""
    x = lib.tensor(x_np, requires_grad=True)
    chain(lib, x).backward()
    return x.grad


def peer_table(rows):
    """Print rows of (label, ours, PyTorch, target) with the ratio ours / PyTorch."""
    print("\nagainst PyTorch on the same machine (one run, alternating rounds; ratio = ours / PyTorch)")
    print(f"{'case':48s} {'mindtorch_v2':>12s} {'PyTorch':>12s} {'ratio':>7s} {'target':>7s}")
    for label, ours, theirs, target in rows:
        print(f"{label:48s} {fmt(ours):>12s} {fmt(theirs):>12s} {ours / theirs:6.2f}x {target:>7s}")


def main():
    rows = []
    peer = []
    for n in (1, 1000):
        a_np, b_np = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
        floor = per_call(lambda: np.add(a_np, b_np))
        a, b = mt.tensor(a_np), mt.tensor(b_np)
        rows.append((f"a + b, {n} float32", per_call(lambda: a + b), floor, ""))
        ag, bg = mt.tensor(a_np, requires_grad=True), mt.tensor(b_np, requires_grad=True)
        rows.append((f"a + b, {n} float32, requires_grad", per_call(lambda: ag + bg), floor, "12x"))
        if real_torch is not None:
            ta, tb = real_torch.tensor(a_np, requires_grad=True), real_torch.tensor(b_np, requires_grad=True)
            peer.append((f"a + b, {n} float32, requires_grad",
                         *side_by_side(lambda: ag + bg, lambda: ta + tb), "<=1.5x"))

    x_np = np.random.rand(1000).astype(np.float32)
    np.testing.assert_allclose(fwd_bwd(mt, x_np).numpy(), numpy_chain_grad(x_np), rtol=1e-4, atol=1e-6)
    rows.append((f"{N_OPS}-op chain forward+backward, 1000", per_call(lambda: fwd_bwd(mt, x_np), repeat=5),
                 per_call(lambda: numpy_chain_grad(x_np), repeat=5), ""))
    if real_torch is not None:
        peer.append((f"{N_OPS}-op chain forward+backward, 1000",
                     *side_by_side(lambda: fwd_bwd(mt, x_np), lambda: fwd_bwd(real_torch, x_np)), "<=1.5x"))

    copies = []
    for n in (1000, 4000):
        big_np = np.zeros((n, n), np.float32)
        big = mt.zeros(n, n)
        row_floor = per_call(lambda: big_np[3].__iadd__(1))

        def row_update():
            big[3] += 1
        rows.append((f"x[i] += 1, a row of {n}x{n}", per_call(row_update), row_floor, "O(row)"))
        copies.append((n, per_call(lambda: big_np.copy(), repeat=3), rows[-1][1]))
    table(rows, "eager overhead (best of 5; ratio = ours / numpy)")
    for n, base_copy, ours in copies:
        print(f"  {n}x{n}: copying the whole base alone takes {fmt(base_copy)}; the row update took {fmt(ours)}")
    if real_torch is not None:
        peer_table(peer)


if __name__ == "__main__":
    main()
