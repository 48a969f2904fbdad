"""torch.distributed, DDP and the core collectives on real MPI ranks.

Each test launches this file itself under `python -m mindtorch_v2.distributed.run` (mpiexec of the mpich
wheel) with 1, 2 or 4 local ranks, under a timeout; the ranks run `worker()` below, which checks every
collective against NumPy, DDP against one process on the full batch, and the core collectives under
spmd against vmap(axis_name=...). A failed check raises on its rank, which aborts the whole job (nonzero
exit, "[rankK]" traceback). Many checks share one launch to keep CI fast.
"""
import datetime
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
THIS = Path(__file__).resolve()
LAUNCH_TIMEOUT = 120


def _launch(nproc, *args, timeout=LAUNCH_TIMEOUT):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("RANK", None), env.pop("WORLD_SIZE", None)
    cmd = [sys.executable, "-m", "mindtorch_v2.distributed.run", "--nproc-per-node", str(nproc), str(THIS), *args]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=str(ROOT))
    return p, time.monotonic() - t0


# ---------------------------------------------------------------------------
# the tests (in the pytest process)


@pytest.mark.parametrize("nproc", [1, 2, 4])
def test_collectives_ddp_and_core_on_mpi_ranks(nproc):
    p, _ = _launch(nproc, "worker")
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-6000:]
    for r in range(nproc):
        assert f"worker rank {r} of {nproc}: all checks passed" in p.stdout, out[-6000:]


def test_a_failing_rank_ends_the_job_quickly():
    p, seconds = _launch(2, "fail", timeout=60)
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert "[rank1]" in out and "ZeroDivisionError" in out, out
    assert seconds < 30, f"the job took {seconds:.1f} s to end after rank 1 failed"


def test_launcher_finds_the_wheels_mpiexec():
    from mindtorch_v2.distributed.run import find_mpiexec
    assert Path(find_mpiexec()).name.startswith("mpiexec") and Path(find_mpiexec()).exists()


def test_distributed_sampler_takes_rank_and_size_from_the_group_or_raises_without_one():
    import mindtorch_v2.utils.data as data
    from mindtorch_v2.utils.data.distributed import DistributedSampler
    assert data.DistributedSampler is DistributedSampler
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(10))
    # PyTorch's shuffling: seeded by seed + epoch, padded to a multiple of the replicas
    parts = [list(DistributedSampler(range(11), num_replicas=3, rank=r, seed=5)) for r in range(3)]
    assert sorted(sum(parts, [])) == sorted(list(range(11)) + parts[0][:1])


def test_ddp_needs_a_default_group():
    import mindtorch_v2 as torch
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))


# ---------------------------------------------------------------------------
# what each rank runs


def _check(cond, what):
    if not cond:
        raise AssertionError(what)


def _close(a, b, what, tol=0.0):
    a, b = np.asarray(a), np.asarray(b)
    _check(a.shape == b.shape and np.allclose(a, b, rtol=0, atol=tol), f"{what}: {a} != {b}")


def check_collectives(torch, dist, r, n):
    R = np.arange(n)
    base = lambda k: np.arange(6.0).reshape(2, 3) * (k + 1) + k  # noqa: E731  rank k's data
    ref = np.stack([base(k) for k in R])
    Op = dist.ReduceOp
    for op, fn in [(Op.SUM, ref.sum(0)), (Op.PRODUCT, ref.prod(0)), (Op.MIN, ref.min(0)), (Op.MAX, ref.max(0)),
                   (Op.AVG, ref.mean(0))]:
        t = torch.tensor(base(r))
        dist.all_reduce(t, op=op)
        _close(t.numpy(), fn, f"all_reduce {op}", 1e-12)
    ints = np.stack([np.array([r + 1, 3 * r + 6, 12 | r]) for r in R])
    for op, fn in [(Op.BAND, np.bitwise_and.reduce(ints, 0)), (Op.BOR, np.bitwise_or.reduce(ints, 0)),
                   (Op.BXOR, np.bitwise_xor.reduce(ints, 0))]:
        t = torch.tensor(ints[r])
        dist.all_reduce(t, op=op)
        _close(t.numpy(), fn, f"all_reduce {op}")
    # in place through views: the base sees it, the version counter moves once
    t = torch.tensor(base(r))
    row, v0 = t[1], t._version
    dist.all_reduce(row)
    _close(t.numpy(), np.concatenate([base(r)[:1], ref.sum(0)[1:]]), "all_reduce into a view")
    _check(t._version == v0 + 1, "all_reduce bumps the version once")
    # a tensor saved for backward and then all-reduced fails autograd's version check, as any in-place op
    w = torch.tensor(base(r), requires_grad=True)
    h = w * 1.0
    y = (h * h).sum()
    dist.all_reduce(h)
    try:
        y.backward()
        _check(False, "backward after all_reduce of a saved tensor should raise")
    except RuntimeError as e:
        _check("modified by an inplace operation" in str(e), str(e))
    # async
    t = torch.tensor(base(r))
    work = dist.all_reduce(t, async_op=True)
    _check(work.wait(timeout=datetime.timedelta(seconds=30)) and work.is_completed(), "Work.wait")
    _close(work.get_future().wait()[0].numpy(), ref.sum(0), "async all_reduce future")
    # broadcast / reduce
    for src in {0, n - 1}:
        t = torch.tensor(base(r))
        dist.broadcast(t, src=src)
        _close(t.numpy(), base(src), "broadcast")
        t = torch.tensor(base(r))
        dist.reduce(t, dst=src, op=Op.SUM)
        _close(t.numpy(), ref.sum(0) if r == src else base(r), "reduce", 1e-12)
    # gathers and scatters
    out = [torch.zeros(2, 3, dtype=torch.float64) for _ in R]
    dist.all_gather(out, torch.tensor(base(r)))
    _close(np.stack([o.numpy() for o in out]), ref, "all_gather")
    o = torch.zeros(2 * n, 3, dtype=torch.float64)
    dist.all_gather_into_tensor(o, torch.tensor(base(r)))
    _close(o.numpy(), ref.reshape(2 * n, 3), "all_gather_into_tensor")
    gl = [torch.zeros(2, 3, dtype=torch.float64) for _ in R] if r == 0 else None
    dist.gather(torch.tensor(base(r)), gl, dst=0)
    if r == 0:
        _close(np.stack([g.numpy() for g in gl]), ref, "gather")
    t = torch.zeros(2, 3, dtype=torch.float64)
    dist.scatter(t, [torch.tensor(base(k) * 10) for k in R] if r == n - 1 else None, src=n - 1)
    _close(t.numpy(), base(r) * 10, "scatter")
    blocks = np.stack([np.stack([base(k) + 100 * j for j in R]) for k in R])  # [sender k][block j]
    t = torch.zeros(2, 3, dtype=torch.float64)
    dist.reduce_scatter(t, [torch.tensor(blocks[r, j]) for j in R])
    _close(t.numpy(), blocks[:, r].sum(0), "reduce_scatter", 1e-12)
    t = torch.zeros(2, 3, dtype=torch.float64)
    dist.reduce_scatter_tensor(t, torch.tensor(blocks[r].reshape(2 * n, 3)), op=Op.MAX)
    _close(t.numpy(), blocks[:, r].max(0), "reduce_scatter_tensor")
    outs = [torch.zeros(2, 3, dtype=torch.float64) for _ in R]
    dist.all_to_all(outs, [torch.tensor(blocks[r, j]) for j in R])
    _close(np.stack([x.numpy() for x in outs]), blocks[:, r], "all_to_all")
    t = torch.zeros(2 * n, 3, dtype=torch.float64)
    dist.all_to_all_single(t, torch.tensor(blocks[r].reshape(2 * n, 3)))
    _close(t.numpy(), blocks[:, r].reshape(2 * n, 3), "all_to_all_single")
    # uneven all_to_all_single: rank k sends j+1 rows to rank j
    rows = lambda k, j: np.full((j + 1, 2), 10.0 * k + j)  # noqa: E731
    inp = np.concatenate([rows(r, j) for j in R])
    t = torch.zeros(n * (r + 1), 2, dtype=torch.float64)
    dist.all_to_all_single(t, torch.tensor(inp), output_split_sizes=[r + 1] * n,
                           input_split_sizes=[j + 1 for j in R])
    _close(t.numpy(), np.concatenate([rows(k, r) for k in R]), "all_to_all_single with splits")
    # point to point: a ring
    if n > 1:
        t = torch.zeros(2, 3, dtype=torch.float64)
        ops = [dist.P2POp(dist.isend, torch.tensor(base(r)), (r + 1) % n),
               dist.P2POp(dist.irecv, t, (r - 1) % n)]
        for wk in dist.batch_isend_irecv(ops):
            wk.wait()
        _close(t.numpy(), base((r - 1) % n), "batch_isend_irecv ring")
        if r == 0:
            dist.send(torch.tensor(base(0)), dst=1)
        elif r == 1:
            t = torch.zeros(2, 3, dtype=torch.float64)
            _check(dist.recv(t, src=0) == 0, "recv returns the sender")
            _close(t.numpy(), base(0), "send/recv")
    # objects
    objs = [None] * n
    dist.all_gather_object(objs, {"rank": r})
    _check(objs == [{"rank": k} for k in R], f"all_gather_object {objs}")
    lst = [r, "x"] if r == 0 else [None, None]
    dist.broadcast_object_list(lst, src=0)
    _check(lst == [0, "x"], f"broadcast_object_list {lst}")
    # float16 and bool travel and come back in their dtype
    t = torch.ones(4, dtype=torch.float16) * (r + 1)
    dist.all_reduce(t)
    _check(t.dtype == torch.float16 and t.tolist() == [sum(R + 1)] * 4, "float16 all_reduce")
    # groups
    sub, subs = dist.new_subgroups(group_size=1)
    _check(dist.get_world_size(sub) == 1 and len(subs) == n, "new_subgroups")
    g = dist.new_group([0])
    if r == 0:
        t = torch.tensor(base(r))
        dist.all_reduce(t, group=g)
        _close(t.numpy(), base(0), "all_reduce on a one-rank group")
    else:
        _check(g == dist.GroupMember.NON_GROUP_MEMBER, "non-members get NON_GROUP_MEMBER")
    # errors name the op, the rank and the world size
    try:
        dist.broadcast(torch.zeros(2), src=n + 3)
        _check(False, "bad root should raise")
    except RuntimeError as e:
        _check("broadcast" in str(e) and f"rank {r} of world size {n}" in str(e), str(e))
    try:
        dist.all_gather([torch.zeros(2)], torch.zeros(2)) if n > 1 else dist.all_gather([], torch.zeros(2))
        _check(False, "bad list should raise")
    except RuntimeError as e:
        _check("all_gather" in str(e) and f"world size {n}" in str(e), str(e))
    try:
        dist.init_process_group("gloo")
        _check(False, "second init should raise")
    except ValueError as e:
        _check("twice" in str(e), str(e))


def check_barriers(torch, dist, r, n):
    dist.barrier()
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=30))
    if n == 1:
        return
    # rank 0 is late: the others' monitored_barrier times out; rank 0's barrier then meets theirs
    if r == 0:
        time.sleep(1.0)
        dist.barrier()
    else:
        t0 = time.monotonic()
        try:
            dist.monitored_barrier(timeout=datetime.timedelta(seconds=0.3))
            _check(False, "monitored_barrier should time out")
        except RuntimeError as e:
            _check("monitored_barrier" in str(e) and f"rank {r} of world size {n}" in str(e), str(e))
        _check(time.monotonic() - t0 < 0.9, "monitored_barrier raised late")
    dist.barrier()


def check_ddp(torch, dist, r, n):
    from mindtorch_v2 import nn
    from mindtorch_v2.distributed.algorithms.ddp_comm_hooks import default_hooks
    from mindtorch_v2.nn.parallel import DistributedDataParallel as DDP

    def make():
        torch.manual_seed(1)
        return nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3)).double()

    rng = np.random.default_rng(0)
    B = 8
    X = torch.from_numpy(rng.standard_normal((30, B, 5)))
    Y = torch.from_numpy(rng.standard_normal((30, B, 3)))
    b = B // n
    sl = slice(r * b, (r + 1) * b)

    def mse(m, x, y):
        return ((m(x) - y) ** 2).mean()

    # 30 SGD steps: DDP over n ranks (each b rows) == one process on the full batch, float64 within 1e-12
    local = make()
    if r != 0:
        with torch.no_grad():
            for p in local.parameters():
                p.add_(1.0)  # construction must broadcast rank 0's weights
    for cap in (None, 0.0001):  # one bucket; a bucket per parameter
        model = DDP(make() if cap else local, bucket_cap_mb=cap)
        single = make()
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        opt1 = torch.optim.SGD(single.parameters(), lr=0.1, momentum=0.9)
        for step in range(30):
            opt.zero_grad()
            opt1.zero_grad()
            mse(model, X[step, sl], Y[step, sl]).backward()
            opt.step()
            mse(single, X[step], Y[step]).backward()
            opt1.step()
        for a, c in zip(model.module.parameters(), single.parameters()):
            _close(a.detach().numpy(), c.detach().numpy(), f"DDP (bucket_cap_mb={cap}) after 30 steps", 1e-12)
    # a forward without backward is fine; a backward that left a parameter without gradient is reported
    model = DDP(make())
    model(X[0, sl])
    model(X[0, sl]).sum().backward()
    _check(model.module[0].weight.grad is not None, "backward after two forwards")
    frozen = make()
    model = DDP(frozen)
    (model(X[0, sl]) * 0).sum().backward()  # every parameter gets a gradient: fine
    with torch.no_grad():
        model(X[0, sl])
    h = model(X[0, sl])
    frozen[0].weight.grad = None
    (h[:, 0] - h[:, 0]).sum().backward()  # tanh-layer weights reached, all reached: still fine
    # no_sync: two local micro-batches, then a synced one == the three averaged together
    model, single = DDP(make()), make()
    with model.no_sync():
        mse(model, X[0, sl], Y[0, sl]).backward()
        mse(model, X[1, sl], Y[1, sl]).backward()
    local_grad = model.module[0].weight.grad.numpy().copy()
    mse(model, X[2, sl], Y[2, sl]).backward()
    for k in range(3):
        mse(single, X[k], Y[k]).backward()
    for a, c in zip(model.module.parameters(), single.parameters()):
        _close(a.grad.numpy(), c.grad.numpy(), "no_sync accumulation", 1e-12)
    if n > 1:
        _check(not np.allclose(local_grad, model.module[0].weight.grad.numpy()), "no_sync must not communicate")
    # comm hooks: the allreduce hook equals the built-in path; fp16 compression within float16 rounding
    for hook, tol in ((default_hooks.allreduce_hook, 1e-12), (default_hooks.fp16_compress_hook, 2e-3)):
        model, single = DDP(make()), make()
        model.register_comm_hook(None, hook)
        mse(model, X[3, sl], Y[3, sl]).backward()
        mse(single, X[3], Y[3]).backward()
        for a, c in zip(model.module.parameters(), single.parameters()):
            _close(a.grad.numpy(), c.grad.numpy(), f"comm hook {hook.__name__}", tol)
    # find_unused_parameters: a branch used only on rank 0 still gets rank 0's averaged gradient
    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(2)
            self.a = nn.Linear(3, 1).double()
            self.b = nn.Linear(3, 1).double()
            self.never = nn.Linear(3, 1).double()

        def forward(self, x, use_b):
            return self.a(x) + (self.b(x) if use_b else 0)

    model = DDP(TwoHeads())
    model(torch.ones(2, 3, dtype=torch.float64), False).sum().backward()  # b and never get no gradient
    try:
        model(torch.ones(2, 3, dtype=torch.float64), False)
        _check(False, "an unfinished reduction must be reported at the next forward")
    except RuntimeError as e:
        _check("Expected to have finished reduction in the prior iteration" in str(e) and
               f"rank {r} of world size {n}" in str(e), str(e))
    model = DDP(TwoHeads(), find_unused_parameters=True, static_graph=False)
    x = torch.ones(2, 3, dtype=torch.float64)
    model(x, r == 0).sum().backward()
    _close(model.module.b.weight.grad.numpy(), np.full((1, 3), 2.0 / n), "find_unused_parameters", 1e-12)
    _close(model.module.a.weight.grad.numpy(), np.full((1, 3), 2.0), "find_unused_parameters (used)", 1e-12)
    _check(model.module.never.weight.grad is None, "a parameter unused on every rank keeps grad None")
    # sampler from the group
    from mindtorch_v2.utils.data import DistributedSampler
    s = DistributedSampler(range(10), shuffle=False)
    padded = list(range(10)) + list(range(10))[:(-10) % n]
    _check((s.rank, s.num_replicas) == (r, n) and list(s) == padded[r::n],
           "DistributedSampler from the process group")


def check_core(r, n):
    from mindtorch_v2 import core
    from mindtorch_v2.core import distributed as cd

    _check(cd.initialize() == (r, n) and (cd.process_index(), cd.process_count()) == (r, n), "core world")
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((n, 2, 4))

    def f(x):
        s = core.psum(x, "i")
        m = core.pmax(x * x, "i") - core.pmin(x, "i") + core.pmean(x, "i")
        g = core.all_gather(x, "i", axis=0, tiled=True)       # (2n, 4)
        sc = core.psum_scatter(core.concatenate([x] * n, axis=0), "i", scatter_dimension=0, tiled=True)
        shift = core.ppermute(x, "i", perm=tuple((k, (k + 1) % n) for k in range(n)))
        a2a = core.all_to_all(core.concatenate([x] * n, axis=1), "i", split_axis=1, concat_axis=1, tiled=True)
        idx = core.axis_index("i")
        loss = core.sum(core.tanh(s) * x) + core.sum(m) + core.sum(g * g) + core.sum(sc) + core.sum(shift * x) \
            + core.sum(a2a) + core.sum(idx * x)
        return loss

    def per_rank(x):
        return f(x), core.grad(f)(x)

    mine = cd.spmd(per_rank, axis_name="i")(core.asarray(xs[r]))
    virtual = core.vmap(per_rank, axis_name="i")(core.asarray(xs))
    _close(np.asarray(mine[0]), np.asarray(virtual[0])[r], "core collectives: spmd value == vmap value", 1e-12)
    _close(np.asarray(mine[1]), np.asarray(virtual[1])[r], "core collectives: spmd grad == vmap grad", 1e-12)


def check_dtensor(torch, dist, r, n):
    """DeviceMesh, DTensor and the functional collectives against NumPy; fully_shard against one process."""
    from mindtorch_v2.distributed import _functional_collectives as fc
    from mindtorch_v2.distributed.device_mesh import DeviceMesh, init_device_mesh
    from mindtorch_v2.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
    from mindtorch_v2.distributed.tensor._utils import compute_local_shape_and_global_offset
    from mindtorch_v2.distributed.tensor.placement_types import _StridedShard

    mesh = init_device_mesh("cpu", (n,), mesh_dim_names=("dp",))
    _check((mesh.shape, mesh.ndim, mesh.size(), mesh.size(0), mesh.get_rank(), mesh.get_local_rank(),
            mesh.get_coordinate(), mesh.mesh.tolist(), mesh.device_type) ==
           ((n,), 1, n, n, r, r, [r], list(range(n)), "cpu"), f"1-d mesh {mesh}")
    _check(mesh["dp"] == mesh and dist.get_process_group_ranks(mesh.get_group("dp")) == list(range(n)), "mesh['dp']")
    try:
        init_device_mesh("cuda", (n,))
        _check(False, "a cuda mesh should raise")
    except AssertionError as e:
        _check("Torch not compiled with CUDA enabled" in str(e), str(e))
    try:
        mesh["tp"]
        _check(False, "an unknown dim name should raise")
    except KeyError:
        pass
    # global x (5 rows: uneven over 2 and 4 ranks), the same on every rank
    x = np.arange(35.0).reshape(5, 7)
    chunks = lambda a, k, d: [a[tuple(slice(None) if j != d else slice(*_bounds(a.shape[d], k, i))  # noqa: E731
                                      for j in range(a.ndim))] for i in range(k)]
    for pl, d in ((Shard(0), 0), (Shard(1), 1), (Shard(-1), 1)):
        dt = distribute_tensor(torch.tensor(x), mesh, [pl])
        _check(isinstance(dt, DTensor) and not isinstance(dt, torch.Tensor) and dt.placements == (Shard(d),),
               "distribute_tensor placements")
        _close(dt.to_local().numpy(), chunks(x, n, d)[r], f"distribute_tensor {pl} local")
        _check(tuple(dt.shape) == (5, 7) and dt.size(1) == 7 and dt.dtype == torch.float64, "DTensor shape/dtype")
        _close(dt.full_tensor().numpy(), x, f"full_tensor of {pl}")
        shape, offset = compute_local_shape_and_global_offset(dt.shape, mesh, dt.placements)
        _check(shape == tuple(dt.to_local().shape), f"local shape {shape}")
        other = dt.redistribute(mesh, [Shard(1 - d)])
        _close(other.to_local().numpy(), chunks(x, n, 1 - d)[r], f"redistribute {pl} -> Shard({1 - d})")
        _close(dt.redistribute(mesh, [Replicate()]).to_local().numpy(), x, f"redistribute {pl} -> Replicate")
    # src_data_rank: rank 0's data is what gets distributed; None: each rank's own
    mine = torch.tensor(x + 100 * r)
    _close(distribute_tensor(mine, mesh, [Replicate()]).to_local().numpy(), x, "distribute from rank 0")
    _close(distribute_tensor(mine, mesh, [Replicate()], src_data_rank=None).to_local().numpy(), x + 100 * r,
           "src_data_rank=None")
    # Partial: from_local of per-rank parts; full_tensor and redistribute reduce them
    part = torch.tensor(x * (r + 1))
    total = x * sum(range(1, n + 1))
    p = DTensor.from_local(part, mesh, [Partial()])
    _check(p.to_local() is part and tuple(p.shape) == (5, 7), "from_local keeps the local tensor")
    _close(p.full_tensor().numpy(), total, "full_tensor of Partial(sum)", 1e-12)
    _close(p.redistribute(mesh, [Shard(0)]).to_local().numpy(), chunks(total, n, 0)[r], "Partial -> Shard", 1e-12)
    _close(DTensor.from_local(part, mesh, [Partial("max")]).full_tensor().numpy(), x * n, "Partial(max)")
    _close(DTensor.from_local(part, mesh, [Partial("avg")]).full_tensor().numpy(), total / n, "Partial(avg)", 1e-12)
    _close(distribute_tensor(torch.tensor(x), mesh, [Partial()]).full_tensor().numpy(), x, "distribute Partial", 1e-12)
    try:
        distribute_tensor(torch.tensor(x), mesh, [Replicate()]).redistribute(mesh, [Partial()])
        _check(False, "redistribute to Partial should raise")
    except RuntimeError as e:
        _check("redistributing to Partial is for internal use only" in str(e), str(e))
    # from_local infers the global shape from even shards; run_check broadcasts replicated data
    ev = DTensor.from_local(torch.tensor(x[:1] + r), mesh, [Shard(0)])
    _check(tuple(ev.shape) == (n, 7) and ev.stride() == (7, 1), f"from_local shape {ev.shape}")
    _close(ev.full_tensor().numpy(), np.concatenate([x[:1] + k for k in range(n)]), "from_local Shard(0)")
    _close(DTensor.from_local(torch.tensor(x + r), mesh, [Replicate()], run_check=True).to_local().numpy(), x,
           "run_check broadcast")
    # no arithmetic: a TypeError naming DTensor
    for bad in (lambda: p + 1, lambda: torch.add(p, 1), lambda: torch.matmul(torch.tensor(x).t(), p)):
        try:
            bad()
            _check(False, "torch ops on a DTensor should raise")
        except TypeError as e:
            _check("DTensor" in str(e), str(e))
    # a 2-d mesh
    if n % 2 == 0:
        m2 = init_device_mesh("cpu", (2, n // 2), mesh_dim_names=("dp", "tp"))
        row, col = divmod(r, n // 2)
        _check(m2.get_coordinate() == [row, col] and m2.get_local_rank("tp") == col, "2-d coordinate")
        _check(dist.get_process_group_ranks(m2.get_group("tp")) == [row * (n // 2) + k for k in range(n // 2)]
               and dist.get_process_group_ranks(m2["dp"].get_group()) == [k * (n // 2) + col for k in range(2)],
               "2-d mesh groups")
        y = np.arange(9.0 * 4).reshape(9, 4)
        for pls in ([Shard(0), Shard(1)], [Shard(0), Shard(0)], [Replicate(), Shard(1)],
                    [Shard(0), _StridedShard(0, split_factor=2)], [_StridedShard(0, split_factor=2), Shard(0)]):
            dt = distribute_tensor(torch.tensor(y), m2, pls)
            shape, offset = compute_local_shape_and_global_offset((9, 4), m2, dt.placements)
            local = dt.to_local().numpy()
            _check(local.shape == shape, f"2-d {pls}: {local.shape} != {shape}")
            if local.size:
                _check(local.flat[0] == y[offset], f"2-d {pls}: offset {offset}")
            if not any(isinstance(q, _StridedShard) for q in pls) and local.size:
                _close(local, y[offset[0]:offset[0] + shape[0], offset[1]:offset[1] + shape[1]], f"2-d {pls}")
            _close(dt.full_tensor().numpy(), y, f"2-d full_tensor {pls}")
            _close(dt.redistribute(m2, [Shard(1), Replicate()]).full_tensor().numpy(), y, f"2-d redistribute {pls}")
        sub = DeviceMesh("cpu", [[k * (n // 2) + c for c in range(n // 2)] for k in range(2)],
                         mesh_dim_names=("a", "b"))
        _check(sub == DeviceMesh("cpu", m2.mesh, mesh_dim_names=("a", "b")) and sub != m2, "DeviceMesh from a tensor")
    # functional collectives: new tensors, the input untouched
    t = torch.tensor(x[:2] * (r + 1))
    _close(fc.all_reduce(t, "sum", mesh).numpy(), x[:2] * sum(range(1, n + 1)), "fc.all_reduce", 1e-12)
    _close(t.numpy(), x[:2] * (r + 1), "fc.all_reduce leaves its input")
    _close(fc.all_gather_tensor(t, 1, (mesh, 0)).numpy(), np.concatenate([x[:2] * (k + 1) for k in range(n)], 1),
           "fc.all_gather_tensor")
    blocks = torch.tensor(np.arange(2.0 * n * 3).reshape(2 * n, 3) + r)
    want = sum(np.arange(2.0 * n * 3).reshape(2 * n, 3) + k for k in range(n))[2 * r:2 * r + 2]
    _close(fc.wait_tensor(fc.reduce_scatter_tensor(blocks, "sum", 0, dist.group.WORLD)).numpy(), want,
           "fc.reduce_scatter_tensor", 1e-12)
    a2a = fc.all_to_all_single(torch.tensor(np.full((n, 2), float(r))), None, None, mesh)
    _close(a2a.numpy(), np.repeat(np.arange(n, dtype=float)[:, None], 2, 1), "fc.all_to_all_single")
    w = torch.tensor(np.arange(n * 2.0).reshape(n, 2) + 10 * r, requires_grad=True)
    out = fc.all_to_all_single_autograd(w, None, None, mesh)
    (out * torch.tensor(np.arange(n * 2.0).reshape(n, 2) + 100 * r)).sum().backward()
    # d/dw: row j of w went to rank j as its row r; rank j weights it by (coefficient row r) + 100 j
    _close(w.grad.numpy(), np.stack([np.arange(2.0) + 2 * r + 100 * j for j in range(n)]), "a2a autograd", 1e-12)
    check_fsdp(torch, dist, r, n, mesh)


def check_fsdp(torch, dist, r, n, mesh):
    from mindtorch_v2 import nn
    from mindtorch_v2.distributed.fsdp import FSDPModule, FullyShardedDataParallel, MixedPrecisionPolicy, fully_shard

    def make():
        torch.manual_seed(3)
        return nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 3)).double()

    rng = np.random.default_rng(1)
    B = 8
    X = torch.from_numpy(rng.standard_normal((5, B, 5)))
    Y = torch.from_numpy(rng.standard_normal((5, B, 3)))
    sl = slice(r * (B // n), (r + 1) * (B // n))
    for wrap in ("fully_shard", "FSDP1"):
        model, single = make(), make()
        if wrap == "fully_shard":
            fully_shard(model[0], mesh=mesh)
            fully_shard(model, mesh=mesh)
            _check(isinstance(model, FSDPModule) and type(model).__name__ == "FSDPSequential", "FSDP class")
            _check(tuple(model[0].weight.shape) == (len(range(7)[slice(*_bounds(7, n, r))]), 5), "a dim-0 shard")
        else:
            model = FullyShardedDataParallel(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        opt1 = torch.optim.SGD(single.parameters(), lr=0.1, momentum=0.9)
        for step in range(5):
            opt.zero_grad()
            opt1.zero_grad()
            ((model(X[step, sl]) - Y[step, sl]) ** 2).mean().backward()
            opt.step()
            ((single(X[step]) - Y[step]) ** 2).mean().backward()
            opt1.step()
        for (name, a), c in zip(model.named_parameters(), single.parameters()):
            d = a.placements[0].dim
            full = np.concatenate(_every_ranks_shard(a, mesh), axis=d)
            _close(full, c.detach().numpy(), f"{wrap} == one process after 5 steps ({name})", 1e-12)
    # mixed precision: forward in float32, shards stay float64
    model = make()
    fully_shard(model, mesh=mesh, mp_policy=MixedPrecisionPolicy(param_dtype=torch.float32))
    out = model(X[0, sl])
    _check(out.dtype == torch.float32 and model[0].weight.dtype == torch.float64, "mp_policy param_dtype")
    out.sum().backward()
    _check(model[0].weight.grad.dtype == torch.float64, "grads in the shard's dtype")


def _every_ranks_shard(shard, mesh):
    """The shards of every rank (uneven and empty ones included), through all_gather_object."""
    import mindtorch_v2.distributed as dist
    pieces = [None] * mesh.size()
    dist.all_gather_object(pieces, shard.detach().numpy())
    return pieces


def _bounds(size, k, i):
    c = -(-size // k)
    return min(size, c * i), min(size, c * (i + 1))


def worker():
    import mindtorch_v2 as torch
    import mindtorch_v2.distributed as dist
    _check(dist.is_available(), "is_available with mpi4py")
    dist.init_process_group("gloo")
    r, n = dist.get_rank(), dist.get_world_size()
    _check((r, n) == (int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])), "RANK / WORLD_SIZE")
    _check(int(os.environ["LOCAL_RANK"]) == r and dist.get_backend() == "gloo", "LOCAL_RANK, backend")
    check_collectives(torch, dist, r, n)
    check_barriers(torch, dist, r, n)
    check_ddp(torch, dist, r, n)
    check_core(r, n)
    check_dtensor(torch, dist, r, n)
    dist.barrier()
    dist.destroy_process_group()
    _check(not dist.is_initialized(), "destroy_process_group")
    print(f"worker rank {r} of {n}: all checks passed", flush=True)


def fail():
    import mindtorch_v2 as torch  # noqa: F401
    import mindtorch_v2.distributed as dist
    dist.init_process_group("mpi")
    if dist.get_rank() == 1:
        1 / 0
    dist.barrier()  # rank 0 would wait here forever without the abort
    time.sleep(60)


if __name__ == "__main__":
    {"worker": worker, "fail": fail}[sys.argv[1]]()
