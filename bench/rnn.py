"""Recurrent layers in eager mode: nn.LSTM / nn.GRU / nn.RNN against PyTorch eager (no torch.compile).

One layer, batch_first input of shape (8, 20, 32), hidden size 64, float32: forward alone (under no_grad)
and forward + backward (`out, _ = m(x); out.sum().backward()`). Target: within 2x of PyTorch's time.
Without torch installed, our times are printed alone.

Both run single-threaded (OPENBLAS/OMP/MKL_NUM_THREADS=1 unless set, torch.set_num_threads(1)): at these
sizes threads do not help, and on a busy machine a multi-threaded OpenBLAS stalls NumPy's small products
for milliseconds, which would measure the machine's load rather than the code.

    python bench/rnn.py
"""
import os
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before numpy loads its BLAS

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _timing import fmt, per_call, side_by_side  # noqa: E402

import mindtorch_v2 as mt  # noqa: E402

try:
    import torch
except ImportError:  # peer absent: our numbers alone
    torch = None

SHAPE, HIDDEN = (8, 20, 32), 64
CASES = (("LSTM", {}), ("GRU", {}), ("RNN", {}))


def make_case(lib, kind, kw, x_np):
    m = getattr(lib.nn, kind)(SHAPE[-1], HIDDEN, batch_first=True, **kw)
    x = lib.from_numpy(x_np.copy())

    def fwd():
        with lib.no_grad():
            m(x)

    def fwd_bwd():
        out, _ = m(x)
        out.sum().backward()
        for p in m.parameters():
            p.grad = None

    return fwd, fwd_bwd


def main():
    x_np = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
    if torch is not None:
        torch.set_num_threads(1)
    print(f"recurrent layers, input {SHAPE} batch_first -> hidden {HIDDEN}, float32, eager, one thread"
          + ("" if torch is not None else " (torch not installed: ours alone)"))
    head = f"{'case':28s} {'mindtorch_v2':>12s}"
    if torch is not None:
        head += f" {'torch':>12s} {'ratio':>7s} {'target':>7s}"
    print(head)
    for kind, kw in CASES:
        ours = make_case(mt, kind, kw, x_np)
        theirs = make_case(torch, kind, kw, x_np) if torch is not None else None
        for label, i in (("forward", 0), ("forward+backward", 1)):
            if theirs is None:
                print(f"{kind + ' ' + label:28s} {fmt(per_call(ours[i])):>12s}")
                continue
            t_ours, t_theirs = side_by_side(ours[i], theirs[i])  # interleaved: both see the same machine
            print(f"{kind + ' ' + label:28s} {fmt(t_ours):>12s} {fmt(t_theirs):>12s} {t_ours / t_theirs:6.2f}x "
                  f"{'<=2x':>7s}")


if __name__ == "__main__":
    main()
