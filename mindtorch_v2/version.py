"""`torch.version`: the PyTorch API level mindtorch_v2 implements, and the package's own version.

mindtorch_v2 follows PyTorch 2.x. `__version__` is the PyTorch version whose API it implements, so
libraries' version gates (`torch.__version__ >= "2.0"`, `importlib.metadata.version("torch")`) pass;
the package's own release is `mindtorch` here and `mindtorch_v2.__mindtorch_version__`.
There is no CUDA, ROCm or XPU build: those fields are None, as in a CPU-only PyTorch.
"""
import re

try:  # torch parses versions with packaging (vendored); use it when present
    from packaging.version import InvalidVersion, Version
except ImportError:  # pragma: no cover - exercised only where packaging is absent
    InvalidVersion = Version = None

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu", "mindtorch", "TorchVersion"]

mindtorch = "0.1.0"  # this package's own release (pyproject.toml's version)
TORCH_API_VERSION = "2.13.0"  # the PyTorch release whose API mindtorch_v2 implements

# PEP 440 subset for the fallback comparator: release, pre-release, post, dev, local
_PEP440 = re.compile(r"v?(?P<release>\d+(?:\.\d+)*)(?:[-_.]?(?P<pre_l>a|b|rc|alpha|beta|c)[-_.]?(?P<pre_n>\d*))?"
                     r"(?:[-_.]?post[-_.]?(?P<post>\d*))?(?:[-_.]?dev[-_.]?(?P<dev>\d*))?(?:\+(?P<local>[a-z0-9.]+))?",
                     re.IGNORECASE)
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2}


class _InvalidVersion(ValueError):
    pass


class _SimpleVersion:
    """A PEP 440 version ordered as packaging orders it, for interpreters without `packaging`."""

    __slots__ = ("key",)

    def __init__(self, text):
        m = _PEP440.fullmatch(text.strip())
        if m is None:
            raise _InvalidVersion(text)
        release = tuple(int(p) for p in m["release"].split("."))
        while len(release) > 1 and release[-1] == 0:  # 2.0 == 2.0.0
            release = release[:-1]
        pre = (_PRE_RANK[m["pre_l"].lower()], int(m["pre_n"] or 0)) if m["pre_l"] else None
        post = int(m["post"] or 0) if m["post"] is not None else None
        dev = int(m["dev"] or 0) if m["dev"] is not None else None
        # a dev release sorts before its pre-releases, which sort before the release itself
        pre_key = (-1, 0) if pre is None and post is None and dev is not None else pre or (3, 0)
        local = tuple((0, int(p)) if p.isdigit() else (-1, p) for p in re.split(r"[._-]", m["local"])) \
            if m["local"] else ()
        self.key = (release, pre_key, -1 if post is None else post, float("inf") if dev is None else dev, local)

    def __lt__(self, other): return self.key < other.key
    def __le__(self, other): return self.key <= other.key
    def __gt__(self, other): return self.key > other.key
    def __ge__(self, other): return self.key >= other.key
    def __eq__(self, other): return self.key == other.key
    def __ne__(self, other): return self.key != other.key
    def __hash__(self): return hash(self.key)


if Version is None:
    Version, InvalidVersion = _SimpleVersion, _InvalidVersion


def _as_version(value):
    """The Version for a Version, a version string, or a tuple like (2, 1); InvalidVersion otherwise."""
    if isinstance(value, Version):
        return value
    if isinstance(value, str):
        return Version(value)
    if isinstance(value, (tuple, list)):
        return Version(".".join(str(item) for item in value))
    raise InvalidVersion(repr(value))


class TorchVersion(str):
    """A str that compares as a version against strings, tuples and Versions, as torch.__version__ does.

    `TorchVersion("2.13.0") >= "2.1"`, `>= (2, 1)` and `== "2.13"` hold; a side that is not a valid
    version (`"parrot"`) falls back to plain string comparison, as in torch.
    """

    __slots__ = ()

    def _compare(self, other, method):
        try:
            return getattr(Version(str(self)), method)(_as_version(other))
        except InvalidVersion:
            return getattr(str, method)(self, other)

    def __lt__(self, other): return self._compare(other, "__lt__")
    def __le__(self, other): return self._compare(other, "__le__")
    def __gt__(self, other): return self._compare(other, "__gt__")
    def __ge__(self, other): return self._compare(other, "__ge__")
    def __eq__(self, other): return self._compare(other, "__eq__")
    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = str.__hash__


__version__ = TorchVersion(TORCH_API_VERSION)
debug = False
cuda = None
hip = None
rocm = None
xpu = None
git_version = "Unknown"  # what a PyTorch built outside a git checkout reports
