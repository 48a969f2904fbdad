"""torchrun's counterpart on MPI: start N processes of a script with mpiexec.

    python -m mindtorch_v2.distributed.run --nproc-per-node 4 train.py --lr 0.1
    python -m mindtorch_v2.distributed.run --nproc-per-node 4 -m my.module args
    python -m mindtorch_v2.distributed.run --nnodes 2 --nproc-per-node 8 --hostfile hosts train.py

mpiexec is the one of the mpich wheel (pip install 'mindtorch_v2[distributed]'), else the first on PATH
(a cluster's own MPI; mpi4py must be built against the same library). Each process starts here again with
--_rank-entry, which sets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE (and MASTER_ADDR/MASTER_PORT when
unset, for scripts that read them) from the MPI launcher's environment, then runs the script as __main__.
"""
import argparse
import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["find_mpiexec", "main"]


def find_mpiexec():
    """The path of mpiexec: MINDTORCH_MPIEXEC, the mpich wheel's, or the first on PATH."""
    env = os.environ.get("MINDTORCH_MPIEXEC")
    if env:
        return env
    try:
        from importlib import metadata
        for f in metadata.files("mpich") or ():
            if f.name == "mpiexec" and f.parent.name == "bin":
                path = Path(f.locate()).resolve()
                if path.exists():
                    return str(path)
    except Exception:  # noqa: BLE001  (no mpich wheel installed)
        pass
    exe = Path(sys.executable).parent / "mpiexec"
    if exe.exists():
        return str(exe)
    found = shutil.which("mpiexec") or shutil.which("mpirun")
    if found is None:
        raise RuntimeError("mindtorch_v2.distributed.run: no mpiexec found; pip install 'mindtorch_v2[distributed]' "
                           "(the mpich wheel), or put your MPI's mpiexec on PATH, or set MINDTORCH_MPIEXEC")
    return found


def _first_int(*names):
    for n in names:
        v = os.environ.get(n)
        if v not in (None, ""):
            return int(v)
    return None


def _rank_entry(argv):
    """In each started process: torch's environment variables from MPI's, then the script."""
    rank = _first_int("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID")
    size = _first_int("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS")
    local = _first_int("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID")
    local_size = _first_int("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE")
    env = os.environ
    env["RANK"] = str(rank if rank is not None else 0)
    env["WORLD_SIZE"] = str(size if size is not None else 1)
    env["LOCAL_RANK"] = str(local if local is not None else env["RANK"])
    env["LOCAL_WORLD_SIZE"] = str(local_size if local_size is not None else env["WORLD_SIZE"])
    env.setdefault("MASTER_ADDR", "127.0.0.1")
    env.setdefault("MASTER_PORT", "29500")
    if argv and argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path.insert(0, str(Path(argv[0]).resolve().parent))
        runpy.run_path(argv[0], run_name="__main__")


def _parser():
    p = argparse.ArgumentParser(prog="python -m mindtorch_v2.distributed.run",
                                description="Start a training script on N processes (mpiexec underneath).")
    p.add_argument("--nproc-per-node", "--nproc_per_node", default="1",
                   help="processes per machine (an int; 'auto'/'cpu' = the number of cores)")
    p.add_argument("--nnodes", default="1", help="number of machines (with --hostfile)")
    p.add_argument("--hostfile", default=None, help="MPI hostfile naming the machines (one per line)")
    p.add_argument("--standalone", action="store_true", help="accepted for torchrun compatibility")
    p.add_argument("--timeout", type=float, default=None, help="kill the job after this many seconds")
    p.add_argument("--mpiexec-args", default="", help="extra arguments for mpiexec, one string")
    p.add_argument("-m", "--module", action="store_true", help="run the script argument as a module")
    p.add_argument("script", help="the training script (or module with -m)")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    return p


def main(argv=None):
    """Parse the torchrun-style arguments, run mpiexec, return its exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "--_rank-entry":
        _rank_entry(argv[1:])
        return 0
    args = _parser().parse_args(argv)
    if args.nproc_per_node in ("auto", "cpu"):
        nproc = os.cpu_count() or 1
    else:
        nproc = int(args.nproc_per_node)
    nnodes = int(str(args.nnodes).split(":")[-1])
    if nproc < 1 or nnodes < 1:
        raise SystemExit("--nproc-per-node and --nnodes must be positive")
    cmd = [find_mpiexec(), "-n", str(nproc * nnodes)]
    if nnodes > 1 or args.hostfile:
        if not args.hostfile:
            raise SystemExit("--nnodes > 1 needs --hostfile (or start the job with srun/mpiexec directly)")
        cmd += ["-f", args.hostfile, "-ppn", str(nproc)]
    cmd += args.mpiexec_args.split()
    cmd += [sys.executable, "-m", "mindtorch_v2.distributed.run", "--_rank-entry"]
    cmd += (["-m"] if args.module else []) + [args.script] + list(args.script_args)
    try:
        return subprocess.run(cmd, timeout=args.timeout).returncode
    except subprocess.TimeoutExpired:
        sys.stderr.write(f"mindtorch_v2.distributed.run: the job did not finish within {args.timeout} s; killed\n")
        return 124


if __name__ == "__main__":
    sys.exit(main())
