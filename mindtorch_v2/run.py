"""Run a PyTorch program unchanged on mindtorch_v2: `python -m mindtorch_v2.run script.py [args]`.

Installs the `import torch` hook (mindtorch_v2.install_as_torch), then runs the script as `__main__`
with `sys.argv = [script.py, args...]` and the script's directory first on sys.path, as `python
script.py` would. `python -m mindtorch_v2.run -m package.module [args]` runs a module as `python -m`.
"""
import os
import runpy
import sys

from ._torch_alias import install_as_torch

USAGE = "usage: python -m mindtorch_v2.run script.py [args ...]\n       python -m mindtorch_v2.run -m module [args ...]"


def main(argv=None):
    """Run the script or module `argv` names (default sys.argv[1:]) with `import torch` meaning mindtorch_v2."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv == ["-m"]:
        print(USAGE, file=sys.stderr if not argv or argv == ["-m"] else sys.stdout)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    install_as_torch()
    if argv[0] == "-m":
        sys.argv = argv[1:]  # run_module replaces argv[0] with the module's file, as `python -m` does
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))  # where `python script.py` looks first
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
