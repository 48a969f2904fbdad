"""`python -m mindtorch_v2.demo`: train a small classifier the PyTorch way, then show the
functional core's transforms (grad, hessian, vmap) on small functions."""
import math
import time

import numpy as np

import mindtorch_v2 as torch
from mindtorch_v2 import core

nn = torch.nn
F = torch.nn.functional


def two_spirals(n_per_class=300, noise=0.03, seed=0):
    """Two interleaved spirals in the plane, labels 0 and 1 (made in code, no download)."""
    g = torch.Generator().manual_seed(seed)
    t = torch.sqrt(torch.rand(n_per_class, generator=g)) * 3 * math.pi
    arm = torch.stack([t * torch.cos(t), t * torch.sin(t)], 1) / (3 * math.pi)
    x = torch.cat([arm, -arm]) + noise * torch.randn(2 * n_per_class, 2, generator=g)
    y = torch.cat([torch.zeros(n_per_class, dtype=torch.long), torch.ones(n_per_class, dtype=torch.long)])
    return x, y


def train(epochs=60, log=print):
    """Train a 2-64-64-2 MLP with Adam on the spirals; return the model and its accuracy."""
    torch.manual_seed(0)
    x, y = two_spirals()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=32, shuffle=True,
                                         generator=torch.Generator().manual_seed(0))
    model = nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    for epoch in range(1, epochs + 1):
        total = 0.0
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(xb)
        sched.step()
        with torch.no_grad():
            acc = (model(x).argmax(1) == y).float().mean().item()
        log(f"epoch {epoch:3d}/{epochs}  loss {total / len(x):.4f}  accuracy {acc:.3f}")
    return model, acc


def functional_tour(log=print):
    f = lambda v: core.sum(core.sin(v) * v ** 2)  # noqa: E731
    x = core.asarray([0.5, 1.0, 2.0], dtype=core.float64)
    log(f"f(x) = sum(sin(x) * x**2) at x = {np.asarray(x)}: {float(f(x)):.6f}")
    log(f"grad f(x)     = {np.round(np.asarray(core.grad(f)(x)), 6)}")
    log(f"hessian f(x)  =\n{np.round(np.asarray(core.hessian(f)(x)), 6)}")
    d3 = core.grad(core.grad(core.grad(lambda s: s ** 4)))(core.asarray(2.0))
    log(f"d^3/ds^3 s**4 at s=2: {float(d3)} (exactly 48)")
    w = core.random.normal(core.random.key(0), (3,))
    per_example = core.vmap(core.grad(lambda w, xi: core.tanh(core.sum(w * xi)) ** 2), in_axes=(None, 0))
    log(f"per-example gradients with vmap(grad): shape {per_example(w, core.ones((5, 3))).shape}")
    big = core.ones((4096, 4096), device="meta") @ core.ones((4096, 10), device="meta")
    log(f"a 4096x4096 matmul on the meta device: shape {big.shape}, no memory used")


def main():
    t0 = time.perf_counter()
    print("== training a 2-64-64-2 MLP on two spirals (nn, optim, DataLoader) ==")
    _, acc = train()
    print(f"final accuracy: {acc:.3f}  ({time.perf_counter() - t0:.1f} s)\n")
    print("== the functional core: grad, hessian, vmap, meta ==")
    functional_tour()


if __name__ == "__main__":
    main()
