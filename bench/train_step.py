"""Time per training step of a 784-512-512-10 MLP with SGD (cross-entropy), batch 16 and 128,
beside a hand-written NumPy forward / backward / update of the same model (and PyTorch when
installed). Target: within 1.5x of the NumPy floor at batch 128.

    python bench/train_step.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _reference import LR, NumpyMLP, mlp_model  # noqa: E402
from _timing import per_call, table  # noqa: E402

import mindtorch_v2 as mt  # noqa: E402

try:
    import torch as real_torch
except ImportError:
    real_torch = None


def step_fn(torch, model):
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def main():
    rows, peer = [], []
    model = mlp_model(mt)
    weights = [(m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy())
               for m in model if isinstance(m, mt.nn.Linear)]
    step = step_fn(mt, model)
    ref = NumpyMLP(weights)
    rng = np.random.default_rng(0)
    for batch in (16, 128):
        x_np = rng.standard_normal((batch, 784)).astype(np.float32)
        y_np = rng.integers(0, 10, batch)
        x, y = mt.tensor(x_np), mt.tensor(y_np)
        ours = per_call(lambda: step(x, y), repeat=5)
        floor = per_call(lambda: ref.step(x_np, y_np), repeat=5)
        rows.append((f"SGD step, batch {batch}", ours, floor, "1.5x" if batch == 128 else ""))
        if real_torch is not None:
            tm = mlp_model(real_torch)
            ts = step_fn(real_torch, tm)
            tx, ty = real_torch.tensor(x_np), real_torch.tensor(y_np)
            peer.append((f"PyTorch SGD step, batch {batch}", per_call(lambda: ts(tx, ty), repeat=5), floor))
    # the same numbers as the NumPy model for the same weights and data
    check = NumpyMLP(weights)
    m2 = mlp_model(mt)
    s2 = step_fn(mt, m2)
    x_np = rng.standard_normal((8, 784)).astype(np.float32)
    y_np = rng.integers(0, 10, 8)
    for _ in range(3):
        a = float(s2(mt.tensor(x_np), mt.tensor(y_np)))
        b = float(check.step(x_np, y_np))
        assert abs(a - b) < 1e-4 * max(1, abs(b)), (a, b)
    table(rows, "training step (best of 5; ratio = ours / numpy floor)")
    if peer:
        table(peer, "\nPyTorch on the same machine", who="PyTorch")


if __name__ == "__main__":
    main()
