"""Record PyTorch's answers for the differential tests into tests/goldens/ (needs torch installed).

    python tests/record_goldens.py            # every tests/test_vs_torch_<name>.py module
    python tests/record_goldens.py eager      # only tests/test_vs_torch_eager.py

Each module is run under pytest with MINDTORCH_RECORD_GOLDENS=1: every case then runs on real PyTorch and
its result is stored (tests/_goldens.py explains the format); the mindtorch_v2 side of the comparisons is
skipped while recording, except for tests that check one library's behaviour by itself, which also run on
torch so that their expectations are confirmed on PyTorch. A module's goldens are rewritten as a whole.
Afterwards the modules are run once more normally, against the new goldens, and the outcome is reported.
"""
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODULES = {p.stem[len("test_vs_torch_"):]: p.name for p in HERE.glob("test_vs_torch_*.py")}


def main(argv):
    try:
        import torch
    except ImportError:
        sys.exit("record_goldens: PyTorch is not installed; the goldens can only be recorded where it is")
    names = argv or sorted(MODULES)
    unknown = [n for n in names if n not in MODULES]
    if unknown:
        sys.exit(f"record_goldens: unknown module(s) {unknown}; choose from {sorted(MODULES)}")
    files = [str(HERE / MODULES[n]) for n in names]
    print(f"recording with torch {torch.__version__}: {', '.join(files)}")
    env = dict(os.environ, MINDTORCH_RECORD_GOLDENS="1")
    common = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
              "-p", "no:randomly"]
    rec = subprocess.run(common + files, env=env, cwd=HERE.parent)
    if rec.returncode != 0:
        print("record_goldens: some tests failed while recording; their goldens may be incomplete", file=sys.stderr)
    for f in sorted((HERE / "goldens").glob("*")):
        print(f"  {f.relative_to(HERE.parent)}: {f.stat().st_size / 1024:.0f} KiB")
    env.pop("MINDTORCH_RECORD_GOLDENS")
    check = subprocess.run(common + files, env=env, cwd=HERE.parent)
    return rec.returncode or check.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
