"""core.jit against hand-written NumPy (issue 14's jit targets), side by side in one run.

    jit(grad(chain)): the 100-op tanh chain on 1000 float32, forward + backward   target <= 1.1x NumPy
    jit'd MLP 784-512-512-10 SGD step (softmax cross-entropy), batch 16 and 128    target <= 1.0x NumPy
Also shown: the same without jit, and the call overhead of a jitted one-op function.

    python bench/jit.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _reference import LR, SIZES, NumpyMLP  # noqa: E402
from _timing import per_call, side_by_side, table  # noqa: E402

from mindtorch_v2 import core  # noqa: E402

N_OPS = 100


def chain_numpy(x):
    ys = []
    y = x
    for _ in range(N_OPS):
        y = np.tanh(y)
        ys.append(y)
    g = np.ones_like(y)
    for y in reversed(ys):
        g = g * (1 - y * y)
    return g


def chain(x):
    for _ in range(N_OPS):
        x = core.tanh(x)
    return core.sum(x)


def mlp_loss(params, x, y):
    a = x
    for i, (w, b) in enumerate(params):  # (out, in) weights, as nn.Linear's and NumpyMLP's
        a = core.matmul(a, core.matrix_transpose(w)) + b
        if i < len(params) - 1:
            a = core.relu(a)
    logp = core.log_softmax(a, axis=1)
    return -core.mean(core.take_along_axis(logp, y[:, None], axis=1))


def mlp_step(params, x, y):
    grads = core.grad(mlp_loss)(params, x, y)
    return [(w - LR * gw, b - LR * gb) for (w, b), (gw, gb) in zip(params, grads)]


def main():
    rng = np.random.default_rng(0)
    rows = []
    x = rng.standard_normal(1000).astype(np.float32)
    xa = core.asarray(x)
    grad_chain = core.grad(chain)
    jit_chain = core.jit(grad_chain)
    assert np.allclose(np.asarray(jit_chain(xa)), chain_numpy(x), rtol=1e-5, atol=1e-6)
    ours, floor = side_by_side(lambda: jit_chain(xa), lambda: chain_numpy(x))
    rows.append(("jit(grad(chain)), 100 tanh on 1000 float32", ours, floor, "1.1x"))
    rows.append(("grad(chain) without jit", per_call(lambda: grad_chain(xa)), floor))
    for batch in (16, 128):
        params = [((rng.standard_normal((o, i)) * 0.05).astype(np.float32), np.zeros(o, np.float32))
                  for i, o in zip(SIZES[:-1], SIZES[1:])]
        x = rng.standard_normal((batch, SIZES[0])).astype(np.float32)
        y = rng.integers(0, SIZES[-1], batch)
        state = [[(core.asarray(w), core.asarray(b)) for w, b in params]]
        xa, ya = core.asarray(x), core.asarray(y)
        step = core.jit(mlp_step, donate_argnums=0)

        def run():
            state[0] = step(state[0], xa, ya)
        run()
        ref = NumpyMLP(params)
        ref.step(x, y)
        ours, floor = side_by_side(run, lambda: ref.step(x, y))  # both train step for step from one start
        rows.append((f"jit MLP SGD step, batch {batch} (params donated)", ours, floor, "1.0x"))
        plain = [(core.asarray(w), core.asarray(b)) for w, b in params]
        rows.append((f"MLP SGD step without jit, batch {batch}", per_call(lambda: mlp_step(plain, xa, ya)), floor))
    one = core.asarray(np.float32(1.0))
    add_one = core.jit(lambda v: v + 1)
    one_np = np.float32(1.0)
    rows.append(("call overhead: jit(lambda v: v + 1), 1 element", per_call(lambda: add_one(one)),
                 per_call(lambda: np.add(one_np, 1))))
    table(rows, "core.jit against hand-written NumPy (ratio = ours / NumPy)")


if __name__ == "__main__":
    main()
