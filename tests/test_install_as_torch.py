"""`install_as_torch()` and `python -m mindtorch_v2.run`: `import torch` in third-party code means mindtorch_v2.

Every scenario runs in a fresh interpreter: this test process may already hold a real torch, and the hook
changes process-wide state (sys.modules, sys.meta_path) that must not leak into other tests.
"""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import mindtorch_v2
from mindtorch_v2.version import TorchVersion, _SimpleVersion

REPO = Path(__file__).resolve().parents[1]
INSTALL = "from mindtorch_v2._torch_alias import install_as_torch\ninstall_as_torch()\n"


def installed(code):
    """`code` run after install_as_torch()."""
    return INSTALL + textwrap.dedent(code)


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def run_python(code, *args, cwd=None):
    """Run `code` (or `python -m ...` when code is None) in a fresh interpreter; its stdout, or the failure."""
    command = [sys.executable, *(("-c", textwrap.dedent(code)) if code is not None else ()), *args]
    done = subprocess.run(command, capture_output=True, text=True, cwd=cwd or REPO, env=_env(), timeout=300)
    assert done.returncode == 0, f"exit {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    return done.stdout


def last_json(stdout):
    return json.loads(stdout.strip().splitlines()[-1])


def test_import_torch_is_mindtorch_and_submodules_are_the_same_objects():
    out = run_python(installed("""
        import json, sys
        import mindtorch_v2
        import torch
        import torch.nn.functional as F
        from torch.utils.data import DataLoader, TensorDataset
        from torch import nn
        import torch.version
        x = torch.ones(3)
        print(json.dumps({
            "torch": torch is mindtorch_v2, "nn": torch.nn is mindtorch_v2.nn and nn is mindtorch_v2.nn,
            "F": F is mindtorch_v2.nn.functional, "F_registered": sys.modules["torch.nn.functional"] is F,
            "loader": DataLoader.__module__, "tensor": type(x).__module__, "sum": float(x.sum()),
            "version_module": torch.version is mindtorch_v2.version,
            "own_spec": [mindtorch_v2.__spec__.name, mindtorch_v2.nn.functional.__spec__.name],
            "batch": [list(b[0].shape) for b in DataLoader(TensorDataset(torch.arange(4.0)), batch_size=2)],
        }))
    """))
    assert last_json(out) == {
        "torch": True, "nn": True, "F": True, "F_registered": True,
        "loader": "mindtorch_v2.utils.data.dataloader", "tensor": "mindtorch_v2.eager.tensor", "sum": 3.0,
        "version_module": True, "own_spec": ["mindtorch_v2", "mindtorch_v2.nn.functional"],
        "batch": [[2], [2]]}


def test_submodule_imported_first_as_torch_then_as_mindtorch_is_one_module():
    out = run_python(installed("""
        import sys
        import torch.fft
        import mindtorch_v2.fft
        print(torch.fft is mindtorch_v2.fft is sys.modules["torch.fft"] is sys.modules["mindtorch_v2.fft"])
    """))
    assert out.split() == ["True"]


def test_missing_submodule_raises_module_not_found_naming_it():
    out = run_python(installed("""
        import importlib.util
        try:
            import torch.no_such_submodule.inner
        except ModuleNotFoundError as e:
            print(e.name, "|", e)
        print(importlib.util.find_spec("torch.no_such_submodule"))
    """))
    assert out.splitlines() == ["torch.no_such_submodule | No module named 'torch.no_such_submodule'", "None"]


def test_install_is_idempotent_and_returns_the_package():
    out = run_python("""
        import sys
        import mindtorch_v2
        from mindtorch_v2._torch_alias import install_as_torch, _TorchAliasFinder
        first, second = install_as_torch(), install_as_torch()
        import torch
        print(first is second is torch is mindtorch_v2, sum(isinstance(f, _TorchAliasFinder) for f in sys.meta_path))
    """)
    assert out.split() == ["True", "1"]


def test_refuses_when_a_foreign_torch_module_is_already_imported():
    out = run_python("""
        import sys, types
        sys.modules["torch"] = types.ModuleType("torch")
        from mindtorch_v2._torch_alias import install_as_torch
        try:
            install_as_torch()
        except RuntimeError as e:
            print("refused:", e)
        print(sys.modules["torch"].__name__, any(type(f).__name__ == "_TorchAliasFinder" for f in sys.meta_path))
    """)
    first, second = out.strip().splitlines()
    assert first.startswith("refused: install_as_torch(): a real PyTorch is already imported (torch)")
    assert second == "torch False"


def test_refuses_when_a_torch_package_from_disk_was_imported_first(tmp_path):
    # a PyTorch installation stands in as a package on sys.path: the import system loads it as it would the
    # real one, so the refusal is checked without needing PyTorch installed
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("_C = object()\n")
    out = run_python(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import torch
        from mindtorch_v2._torch_alias import install_as_torch
        try:
            install_as_torch()
        except RuntimeError as e:
            print("refused:", e)
        import torch as again
        print(again.__name__, hasattr(again, "_C"))
    """)
    first, second = out.strip().splitlines()
    assert first.startswith("refused: install_as_torch(): a real PyTorch is already imported")
    assert second == "torch True"


def test_installed_package_metadata_answers_for_torch():
    out = run_python(installed("""
        import importlib.metadata, importlib.util, json
        spec = importlib.util.find_spec("torch")
        dist = importlib.metadata.distribution("torch")
        print(json.dumps({
            "version": importlib.metadata.version("torch"), "Torch": importlib.metadata.version("Torch"),
            "spec": spec is not None, "name": dist.metadata["Name"], "dist_version": dist.version,
            "packages": "torch" in importlib.metadata.packages_distributions().get("torch", []),
            "listed": any(d.metadata["Name"] == "torch" and d.version == "2.13.0"
                          for d in importlib.metadata.distributions()),
        }))
    """))
    assert last_json(out) == {"version": "2.13.0", "Torch": "2.13.0", "spec": True, "name": "torch",
                              "dist_version": "2.13.0", "packages": True, "listed": True}


def test_find_spec_finds_torch_before_it_is_imported():
    out = run_python(installed("""
        import importlib.util, sys
        del sys.modules["torch"]  # as if nothing had imported it yet
        spec = importlib.util.find_spec("torch")
        import torch, mindtorch_v2
        print(spec.name, spec.submodule_search_locations is not None, torch is mindtorch_v2)
    """))
    assert out.split() == ["torch", "True", "True"]


def test_a_process_that_did_not_ask_is_unchanged():
    out = run_python("""
        import sys
        import mindtorch_v2, mindtorch_v2.run, mindtorch_v2._torch_alias, mindtorch_v2.version
        print("torch" in sys.modules, any(type(f).__name__ == "_TorchAliasFinder" for f in sys.meta_path))
    """)
    assert out.split() == ["False", "False"]


def test_torch_version_module_reports_the_api_level():
    out = run_python(installed("""
        import json
        import torch.version as v
        print(json.dumps([str(v.__version__), v.cuda, v.hip, v.debug, v.git_version, v.mindtorch,
                          v.__version__ >= "2.0", v.__version__ >= (2, 1), v.__version__ < (3,)]))
    """))
    assert last_json(out) == ["2.13.0", None, None, False, "Unknown", mindtorch_v2.version.mindtorch,
                              True, True, True]


def test_torch_dunder_version_is_the_api_level_and_own_version_is_kept():
    out = run_python(installed("""
        import json, torch
        print(json.dumps([type(torch.__version__).__name__, torch.__version__ >= "2.0",
                          torch.__version__ >= (2, 1), torch.__version__.split("+")[0], torch.__mindtorch_version__]))
    """))
    assert last_json(out) == ["TorchVersion", True, True, "2.13.0", mindtorch_v2.version.mindtorch]


@pytest.mark.parametrize("comparator", ["packaging", "fallback"])
def test_torch_version_compares_like_torch(comparator, monkeypatch):
    if comparator == "fallback":
        monkeypatch.setattr(mindtorch_v2.version, "Version", _SimpleVersion)
        monkeypatch.setattr(mindtorch_v2.version, "InvalidVersion", mindtorch_v2.version._InvalidVersion)
    v = TorchVersion("2.13.0")
    assert isinstance(v, str) and v == "2.13.0" and v == "2.13" and hash(v) == hash("2.13.0")
    assert v >= "2.0" and v > "2.9" and v >= (2, 1) and v > (2, 12, 9) and v < (2, 14) and v <= "2.13.0"
    assert v > "2.13.0rc1" and v > "2.13.0.dev20250101" and v < "2.13.1" and not v < "2.2"
    assert v != "2.12" and not v != (2, 13, 0)
    assert TorchVersion("2.13.0+cpu") > "2.13.0" and TorchVersion("2.13.0.dev1") < "2.13.0a1"
    assert (v < "parrot") == ("2.13.0" < "parrot")  # not a version: string comparison, as torch does
    with pytest.raises(TypeError):
        v < 3  # noqa: B015


def test_run_script_sees_argv_main_and_its_directory(tmp_path):
    (tmp_path / "helper_module_for_run.py").write_text("VALUE = 7\n")
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import json, sys
        import torch
        import torch.nn as nn
        import mindtorch_v2
        import helper_module_for_run
        print(json.dumps({"argv": sys.argv, "name": __name__, "ours": torch is mindtorch_v2,
                          "nn": nn is mindtorch_v2.nn, "helper": helper_module_for_run.VALUE}))
    """))
    out = run_python(None, "-m", "mindtorch_v2.run", str(script), "a", "--b", "c")
    assert last_json(out) == {"argv": [str(script), "a", "--b", "c"], "name": "__main__", "ours": True,
                              "nn": True, "helper": 7}


def test_run_dash_m_runs_a_module_as_main(tmp_path):
    package = tmp_path / "runpkg_for_test"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "entry.py").write_text(textwrap.dedent("""
        import json, sys
        import torch, mindtorch_v2
        print(json.dumps({"argv": sys.argv[1:], "argv0": sys.argv[0].endswith("entry.py"), "name": __name__,
                          "ours": torch is mindtorch_v2}))
    """))
    out = run_python(None, "-m", "mindtorch_v2.run", "-m", "runpkg_for_test.entry", "x", "y", cwd=tmp_path)
    assert last_json(out) == {"argv": ["x", "y"], "argv0": True, "name": "__main__", "ours": True}


def test_run_without_arguments_prints_usage_and_fails():
    done = subprocess.run([sys.executable, "-m", "mindtorch_v2.run"], capture_output=True, text=True,
                          cwd=REPO, env=_env(), timeout=300)
    assert done.returncode == 2 and "usage: python -m mindtorch_v2.run script.py" in done.stderr
