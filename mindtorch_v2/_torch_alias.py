"""`install_as_torch()`: make `import torch` (and every `torch.x.y`) in this process mean mindtorch_v2.

Nothing here runs until a program asks for it. The call puts one finder first on `sys.meta_path`:

  * `torch` resolves to the mindtorch_v2 module object and `torch.<sub>` to `mindtorch_v2.<sub>`; the same
    object is registered in sys.modules under both names, so `torch.nn is mindtorch_v2.nn`. A `torch.<sub>`
    that mindtorch_v2 lacks is not found (`importlib.util.find_spec` gives None, `import` raises
    ModuleNotFoundError "No module named 'torch.<sub>'"), even if a real torch is installed.
  * the installed-package metadata libraries consult answers for a distribution named "torch" at the
    PyTorch API level mindtorch_v2 implements (`importlib.metadata.version("torch") == "2.13.0"`), so
    version gates such as transformers' pass.

It refuses (RuntimeError) when a real torch is already imported: two torches in one process would
mix tensors of both kinds. `python -m mindtorch_v2.run script.py` is the same call, then the script.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import pathlib
import re
import sys
import types

from .version import TORCH_API_VERSION, mindtorch

__all__ = ["install_as_torch"]

_PACKAGE = __package__  # "mindtorch_v2"
_ALIAS = "torch"

_METADATA = f"""\
Metadata-Version: 2.1
Name: torch
Version: {TORCH_API_VERSION}
Summary: mindtorch_v2 {mindtorch} standing in for PyTorch (the PyTorch {TORCH_API_VERSION} API on NumPy)
Requires-Python: >=3.10
"""


def _real_name(alias_name):
    """`torch.nn.functional` -> `mindtorch_v2.nn.functional`."""
    return _PACKAGE + alias_name[len(_ALIAS):]


def _is_alias(name):
    return name == _ALIAS or name.startswith(_ALIAS + ".")


def _is_ours(module):
    name = getattr(module, "__name__", None)
    return isinstance(name, str) and (name == _PACKAGE or name.startswith(_PACKAGE + "."))


def _target_module(alias_name):
    """The mindtorch_v2 module `alias_name` stands for, or None when mindtorch_v2 has no such module.

    A submodule file is imported; failing that, a module bound as an attribute of the parent package
    (`mindtorch_v2.return_types` is `mindtorch_v2.eager.return_types`) stands for it too.
    """
    real = _real_name(alias_name)
    if real in sys.modules:
        return sys.modules[real]
    if importlib.util.find_spec(real) is not None:
        return importlib.import_module(real)
    parent_name, _, child = real.rpartition(".")
    if not parent_name:
        return None
    candidate = getattr(importlib.import_module(parent_name), child, None)
    return candidate if isinstance(candidate, types.ModuleType) and _is_ours(candidate) else None


class _AliasLoader(importlib.abc.Loader):
    """Hands the import system the already imported mindtorch_v2 module instead of executing anything."""

    def __init__(self, module):
        self.module = module
        self.own_spec = module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        # module_from_spec stamped the alias spec on the module; it keeps its own name and spec
        module.__spec__ = self.own_spec


class _TorchDistribution(importlib.metadata.Distribution):
    """The installed-package record for "torch": mindtorch_v2 at the PyTorch API level it implements."""

    _files = {"METADATA": _METADATA, "PKG-INFO": _METADATA, "top_level.txt": f"{_ALIAS}\n",
              "INSTALLER": "mindtorch_v2\n"}

    def read_text(self, filename):
        return self._files.get(filename)

    def locate_file(self, path):
        return pathlib.Path(__file__).resolve().parent.parent / path


class _TorchAliasFinder(importlib.abc.MetaPathFinder):
    """First on sys.meta_path after install_as_torch(): `torch.*` imports and "torch" metadata."""

    def find_spec(self, fullname, path=None, target=None):
        if not _is_alias(fullname):
            return None
        module = _target_module(fullname)
        if module is None:
            return None  # a torch.<sub> mindtorch_v2 lacks; also never the real torch's
        is_package = hasattr(module, "__path__")
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module), is_package=is_package)

    def find_distributions(self, context=importlib.metadata.DistributionFinder.Context()):
        name = context.name
        if name is None or re.sub(r"[-_.]+", "-", name).lower() == _ALIAS:
            yield _TorchDistribution()

    def invalidate_caches(self):
        pass


def _foreign_torch_modules():
    return sorted(name for name, module in list(sys.modules.items())
                  if _is_alias(name) and module is not None and not _is_ours(module))


def _installed_finder():
    return next((f for f in sys.meta_path if isinstance(f, _TorchAliasFinder)), None)


def install_as_torch():
    """Make `import torch` and `import torch.<sub>` resolve to mindtorch_v2 in this process; returns the package.

    Call it once, before any library imports torch. From then on `torch` is the mindtorch_v2 module object
    (`torch.nn is mindtorch_v2.nn`), `importlib.metadata.version("torch")` is the PyTorch API level
    mindtorch_v2 implements, and a `torch.<sub>` mindtorch_v2 lacks raises ModuleNotFoundError. Calling it
    again does nothing. Raises RuntimeError if a real torch is already imported.
    """
    foreign = _foreign_torch_modules()
    if foreign:
        raise RuntimeError(
            f"install_as_torch(): a real PyTorch is already imported ({', '.join(foreign[:3])}"
            f"{', ...' if len(foreign) > 3 else ''}); call mindtorch_v2.install_as_torch() before anything "
            "imports torch, or run the program with `python -m mindtorch_v2.run script.py`")
    package = importlib.import_module(_PACKAGE)
    if _installed_finder() is None:
        sys.meta_path.insert(0, _TorchAliasFinder())
    # the modules already imported are registered under both names now; the finder does the rest lazily
    for name, module in list(sys.modules.items()):
        if module is not None and (name == _PACKAGE or name.startswith(_PACKAGE + ".")):
            sys.modules.setdefault(_ALIAS + name[len(_PACKAGE):], module)
    return package
