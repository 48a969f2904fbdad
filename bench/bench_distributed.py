"""Distributed benchmarks (not a test).

    python bench/bench_distributed.py             # launches itself on 2 ranks, then 1/2/4 for the DDP step

1. all_reduce of 1 KB / 1 MB / 64 MB float32 on 2 ranks: torch.distributed.all_reduce (ours, through the
   eager write point) beside mpi4py's own Allreduce on NumPy arrays; the ratio is our overhead
   (the issue's target: <= 1.2x at 1 MB and up).
2. one DDP training step (forward, backward with bucketed allreduce, SGD) of a 3-layer MLP for 1, 2, 4 ranks.
"""
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _median_time(fn, reps, comm):
    ts = []
    for _ in range(reps):
        comm.Barrier()
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def allreduce_bench():
    import mindtorch_v2 as torch
    import mindtorch_v2.distributed as dist
    from mpi4py import MPI
    dist.init_process_group("mpi")
    comm = MPI.COMM_WORLD
    for label, nbytes, reps in (("1 KB", 1 << 10, 200), ("1 MB", 1 << 20, 50), ("64 MB", 64 << 20, 7)):
        n = nbytes // 4
        a = np.ones(n, np.float32)
        out = np.empty_like(a)
        t_mpi = _median_time(lambda: comm.Allreduce(a, out, op=MPI.SUM), reps, comm)
        t = torch.ones(n)
        t_ours = _median_time(lambda: dist.all_reduce(t), reps, comm)
        if comm.Get_rank() == 0:
            print(f"all_reduce {label:>6} x{comm.Get_size()} ranks: mpi4py {t_mpi * 1e3:8.3f} ms   ours "
                  f"{t_ours * 1e3:8.3f} ms   ratio {t_ours / t_mpi:5.2f}", flush=True)
    dist.destroy_process_group()


def ddp_bench():
    import mindtorch_v2 as torch
    import mindtorch_v2.distributed as dist
    from mindtorch_v2 import nn
    from mpi4py import MPI
    dist.init_process_group("mpi")
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(
        nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(64, 256), torch.randint(0, 10, (64,))
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    for _ in range(3):
        step()
    t = _median_time(step, 20, MPI.COMM_WORLD)
    if dist.get_rank() == 0:
        print(f"DDP step, MLP 256-512-512-10, batch 64 per rank, {dist.get_world_size()} rank(s): "
              f"{t * 1e3:8.2f} ms", flush=True)
    dist.destroy_process_group()


def _launch(n, what):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    subprocess.run([sys.executable, "-m", "mindtorch_v2.distributed.run", "--nproc-per-node", str(n),
                    __file__, what], env=env, check=True, timeout=600)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        {"allreduce": allreduce_bench, "ddp": ddp_bench}[sys.argv[1]]()
    else:
        _launch(2, "allreduce")
        for n in (1, 2, 4):
            _launch(n, "ddp")
