"""Time of one optimizer step on a 784x512 float32 parameter, beside NumPy doing the same update.

Two floors: one elementwise pass (`np.add(a, g, out=a)`), and the momentum-SGD update written
by hand in NumPy (buf = momentum * buf + g; p -= lr * buf, in place). Momentum SGD is a few
vectorized passes, so the step should stay within ~20x of one pass (the old timed test in
tests/test_optim.py allowed 20x + 2 ms) and close to the hand-written update.

    python bench/optim_step.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import per_call, table  # noqa: E402

import mindtorch_v2 as mt  # noqa: E402

SHAPE = (784, 512)
LR, MOMENTUM = 0.01, 0.9


def optimizer(make, rng):
    p = mt.tensor(rng.standard_normal(SHAPE).astype(np.float32), requires_grad=True)
    p.grad = mt.tensor(rng.standard_normal(SHAPE).astype(np.float32))
    return make([p])


def numpy_momentum_step(p, g, buf):
    def step():
        np.multiply(buf, MOMENTUM, out=buf)
        np.add(buf, g, out=buf)
        np.subtract(p, LR * buf, out=p)
    return step


def main():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(SHAPE).astype(np.float32)
    g = rng.standard_normal(SHAPE).astype(np.float32)
    one_pass = per_call(lambda: np.add(a, g, out=a))
    by_hand = per_call(numpy_momentum_step(a.copy(), g, np.zeros_like(a)))
    sgd = optimizer(lambda ps: mt.optim.SGD(ps, lr=LR, momentum=MOMENTUM), rng)
    plain = optimizer(lambda ps: mt.optim.SGD(ps, lr=LR), rng)
    adam = optimizer(lambda ps: mt.optim.Adam(ps, lr=LR), rng)
    t_sgd = per_call(sgd.step)
    rows = [
        ("SGD(momentum=0.9).step / one np.add pass", t_sgd, one_pass, "20x"),
        ("SGD(momentum=0.9).step / numpy momentum update", t_sgd, by_hand),
        ("SGD().step / one np.add pass", per_call(plain.step), one_pass),
        ("Adam().step / one np.add pass", per_call(adam.step), one_pass),
    ]
    table(rows, f"optimizer step on a {SHAPE[0]}x{SHAPE[1]} float32 parameter (best of 5; ratio = ours / floor)")


if __name__ == "__main__":
    main()
