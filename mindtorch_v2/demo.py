"""`python -m mindtorch_v2.demo`: train a small classifier with the functional core,
then show grad / jacobian / hessian on a small function."""
import time

import numpy as np

from mindtorch_v2 import core


def two_spirals(n_per_class=200, noise=0.1, seed=0):
    rng = np.random.default_rng(seed)
    t = np.sqrt(rng.random(n_per_class)) * 3 * np.pi
    a = np.stack([t * np.cos(t), t * np.sin(t)], 1) / (3 * np.pi)
    x = np.concatenate([a, -a]) + noise * rng.standard_normal((2 * n_per_class, 2)) / 3
    y = np.concatenate([np.zeros(n_per_class), np.ones(n_per_class)]).astype(np.int64)
    return x.astype(np.float32), y


def init_params(key, sizes):
    params = []
    for k, (m, n) in zip(core.random.split(key, len(sizes) - 1), zip(sizes[:-1], sizes[1:])):
        bound = 1 / np.sqrt(m)
        params.append({"w": core.random.uniform(k, (m, n), minval=-bound, maxval=bound),
                       "b": core.zeros((n,))})
    return params


def forward(params, x):
    for layer in params[:-1]:
        x = core.tanh(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, y):
    logits = forward(params, x)
    logp = core.log_softmax(logits, axis=-1)
    return -core.mean(core.take_along_axis(logp, y[:, None], axis=1))


def train(epochs=200, lr=0.5, batch=50, log=print):
    x_np, y_np = two_spirals()
    x, y = core.asarray(x_np), core.asarray(y_np)
    params = init_params(core.random.key(0), [2, 64, 64, 2])
    value_and_grad = core.value_and_grad(loss_fn)
    order_key = core.random.key(1)
    for epoch in range(1, epochs + 1):
        order_key, sub = core.random.split(order_key)
        perm = np.asarray(core.random.permutation(sub, len(x_np)))
        total = 0.0
        for start in range(0, len(perm), batch):
            idx = core.asarray(perm[start:start + batch])
            loss, grads = value_and_grad(params, x[idx], y[idx])
            params = [{k: p[k] - lr * g[k] for k in p} for p, g in zip(params, grads)]
            total += float(loss) * len(idx.tolist())
        if epoch % 20 == 0 or epoch == 1:
            acc = float(core.mean(core.argmax(forward(params, x), axis=1) == y))
            log(f"epoch {epoch:3d}  loss {total / len(perm):.4f}  accuracy {acc:.3f}")
    acc = float(core.mean(core.argmax(forward(params, x), axis=1) == y))
    return params, acc


def main():
    t0 = time.perf_counter()
    print("== training a 2-64-64-2 MLP on two spirals with core.value_and_grad ==")
    _, acc = train()
    print(f"final accuracy: {acc:.3f}  ({time.perf_counter() - t0:.1f} s)")

    print("\n== the functional transforms ==")
    f = lambda x: core.sum(core.sin(x) * x ** 2)  # noqa: E731
    x = core.asarray([0.5, 1.0, 2.0], dtype=core.float64)
    print("f(x)           =", float(f(x)))
    print("grad f(x)      =", np.asarray(core.grad(f)(x)))
    print("hessian f(x)   =\n", np.asarray(core.hessian(f)(x)))
    d3 = core.grad(core.grad(core.grad(lambda s: s ** 4)))(core.asarray(2.0))
    print("d3/ds3 s**4 at 2 =", float(d3), "(expected 48)")
    print("jacrev(softmax) shape:", core.jacrev(lambda v: core.softmax(v))(x).shape)
    print("meta device:", (core.ones((4096, 4096), device="meta") @ core.ones((4096, 10), device="meta")).shape)


if __name__ == "__main__":
    main()
