"""What the MLP benches share: the 784-512-512-10 model and the same step written by hand in NumPy (the floor
that bench/train_step.py, bench/compile.py and bench/jit.py measure against)."""
import numpy as np

SIZES = (784, 512, 512, 10)
LR = 0.01


def mlp_model(torch):
    """The MLP as torch modules (torch: mindtorch_v2 or PyTorch), seeded."""
    torch.manual_seed(0)
    nn = torch.nn
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


class NumpyMLP:
    """The same model by hand: forward, backward and the SGD update in NumPy."""

    def __init__(self, weights, lr=LR):
        self.params = [(w.copy(), b.copy()) for w, b in weights]  # (out, in) weights, as nn.Linear's
        self.lr = lr

    def step(self, x, y):
        acts = [x]
        h = x
        for i, (w, b) in enumerate(self.params):
            h = h @ w.T + b
            if i < len(self.params) - 1:
                h = np.maximum(h, 0)
            acts.append(h)
        logits = acts[-1]
        e = np.exp(logits - logits.max(1, keepdims=True))
        p = e / e.sum(1, keepdims=True)
        loss = -np.log(p[np.arange(len(y)), y]).mean()
        g = p
        g[np.arange(len(y)), y] -= 1
        g /= len(y)
        for i in reversed(range(len(self.params))):
            w, b = self.params[i]
            gw = g.T @ acts[i]
            gb = g.sum(0)
            if i:
                g = (g @ w) * (acts[i] > 0)
            w -= self.lr * gw
            b -= self.lr * gb
        return loss
