"""torch.compile: time per call of compiled programs beside our eager and a peer, in one table.

    python bench/compile.py

Cases and targets (ratio = compiled / peer):
  - LSTM(32, 64) on (8, 20, 32), forward + backward        peer: PyTorch eager      target <= 1.0x
  - tiny GPT training step (2 layers, 64 dims, AdamW)       peer: PyTorch eager      target <= 1.0x
  - MLP 784-512-512-10 SGD step, batch 16 and 128          peer: hand-written NumPy target <= 1.0x
Without PyTorch installed the PyTorch-peer rows print our times alone. Best of repeats; the machine is
shared, so run it more than once. On a loaded machine BLAS and PyTorch threads oversubscribe the cores and
every column swings by 10x; compare single-threaded there. The columns of a row are timed interleaved
(_timing.side_by_side), so they see the same machine:

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python bench/compile.py
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _reference import NumpyMLP, mlp_model  # noqa: E402
from _timing import fmt, side_by_side  # noqa: E402

import mindtorch_v2 as mt  # noqa: E402

try:
    import torch as real_torch
except ImportError:
    real_torch = None

REPEAT = 7


# ---------------------------------------------------------------------------
# models, written once for any torch-like namespace


def lstm_case(torch):
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(32, 64, batch_first=True)
    x = torch.randn(8, 20, 32, requires_grad=True)

    def run(module):
        def call():
            out, (h, c) = module(x)
            (out.sum() + h.sum()).backward()
        return call
    return lstm, run


def gpt_model(torch, vocab=128, d=64, T=32, layers=2, heads=4):
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            self.register_buffer("mask", torch.tril(torch.ones(T, T)).view(1, 1, T, T))

        def forward(self, x):
            B, T_, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T_, heads, C // heads).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // heads))
            att = F.softmax(att.masked_fill(self.mask[:, :, :T_, :T_] == 0, float("-inf")), dim=-1)
            x = x + self.proj((att @ v).transpose(1, 2).contiguous().view(B, T_, C))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(T, d)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
            for b in self.blocks:
                x = b(x)
            return self.head(self.ln(x))

    torch.manual_seed(0)
    return GPT()


def train_step(torch, model, opt):
    F = torch.nn.functional

    def step(x, y):
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        loss.backward()
        opt.step()
        return loss
    return step


# ---------------------------------------------------------------------------


def _time(*fns, warm=3):
    """Per-call times of fns, interleaved round by round (_timing.side_by_side); None for a missing peer."""
    present = [f for f in fns if f is not None]
    for f in present:
        for _ in range(warm):
            f()
    times = iter(side_by_side(*present, rounds=REPEAT))
    return [next(times) if f is not None else None for f in fns]


def main():
    rows = []  # (case, our eager, our compiled, peer, peer name, target)
    traces_before = mt._compile.counters["traces"]

    lstm, run = lstm_case(mt)
    peer = None
    if real_torch is not None:
        tl, trun = lstm_case(real_torch)
        peer = trun(tl)
    eager, compiled, peer = _time(run(lstm), run(mt.compile(lstm)), peer)
    rows.append(("LSTM(32,64) (8,20,32) fwd+bwd", eager, compiled, peer, "PyTorch", "1.0x"))

    rng = np.random.default_rng(0)
    idx = rng.integers(0, 128, (8, 32))
    tgt = rng.integers(0, 128, (8, 32))
    steps = []
    for compile_it in (False, True):
        model = gpt_model(mt)
        step = train_step(mt, model, mt.optim.AdamW(model.parameters(), lr=1e-3))
        step = mt.compile(step) if compile_it else step
        x, y = mt.tensor(idx), mt.tensor(tgt)
        steps.append(lambda step=step, x=x, y=y: step(x, y))
    peer = None
    if real_torch is not None:
        tm = gpt_model(real_torch)
        ts = train_step(real_torch, tm, real_torch.optim.AdamW(tm.parameters(), lr=1e-3))
        tx, ty = real_torch.tensor(idx), real_torch.tensor(tgt)
        peer = lambda: ts(tx, ty)  # noqa: E731
    rows.append(("tiny GPT step (2x64, AdamW, 8x32 tokens)", *_time(*steps, peer), "PyTorch", "1.0x"))

    for batch in (16, 128):
        x_np = rng.standard_normal((batch, 784)).astype(np.float32)
        y_np = rng.integers(0, 10, batch)
        steps = []
        for compile_it in (False, True):
            model = mlp_model(mt)
            step = train_step(mt, model, mt.optim.SGD(model.parameters(), lr=0.01))
            step = mt.compile(step) if compile_it else step
            x, y = mt.tensor(x_np), mt.tensor(y_np)
            steps.append(lambda step=step, x=x, y=y: step(x, y))
        weights = [(m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy())
                   for m in mlp_model(mt) if isinstance(m, mt.nn.Linear)]
        ref = NumpyMLP(weights, 0.01)
        peer = None
        if real_torch is not None:
            tm = mlp_model(real_torch)
            ts = train_step(real_torch, tm, real_torch.optim.SGD(tm.parameters(), lr=0.01))
            tx, ty = real_torch.tensor(x_np), real_torch.tensor(y_np)
            peer = lambda: ts(tx, ty)  # noqa: E731
        # every model trains from the same weights, step for step (side_by_side runs each as often)
        eager, compiled, floor, torch_time = _time(*steps, lambda: ref.step(x_np, y_np), peer)
        rows.append((f"MLP 784-512-512-10 SGD step, batch {batch}", eager, compiled, floor, "NumPy", "1.0x"))
        if torch_time is not None:
            rows.append((f"  (PyTorch eager, batch {batch}, for reference)", None, torch_time, floor, "NumPy", ""))

    print(f"torch.compile (interleaved, best of {REPEAT} rounds; ratio = compiled / peer; "
          f"{'PyTorch ' + real_torch.__version__ if real_torch else 'PyTorch not installed'})")
    print(f"{'case':48s} {'ours eager':>12s} {'compiled':>12s} {'peer':>12s} {'':7s} {'ratio':>7s} {'target':>7s}")
    for case, eager, compiled, peer, who, target in rows:
        e = fmt(eager) if eager is not None else ""
        p = fmt(peer) if peer is not None else "-"
        ratio = f"{compiled / peer:6.2f}x" if peer is not None else ""
        print(f"{case:48s} {e:>12s} {fmt(compiled):>12s} {p:>12s} {who:7s} {ratio:>7s} {target:>7s}")
    print(f"(programs traced: {mt._compile.counters['traces'] - traces_before})")


if __name__ == "__main__":
    main()
