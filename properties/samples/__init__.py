"""Sample-input strategies, keyed by primitive name.

Each family module here calls `register(name, strategy, ...)`. A strategy draws a
`Sample`: the primitive's positional inputs as numpy arrays plus its static
params, exactly as `prim.bind(*map(core.asarray, args), **params)` takes them.
The property suite fails for any primitive in `core.primitives()` without one.
"""
import importlib
import pkgutil

import attrs

SAMPLES = {}


@attrs.frozen
class Sample:
    args: tuple             # numpy arrays, one per positional input
    params: dict = attrs.field(factory=dict)
    diff: tuple = ()        # indices of args to check derivatives for (float64 inputs)
    smooth: bool = True     # second-order checks apply (no kinks near the sample)


@attrs.frozen
class Entry:
    strategy: object        # a hypothesis strategy drawing Sample
    linear: bool = False    # informational


def register(name, strategy, **kw):
    if name in SAMPLES:
        raise ValueError(f"samples for '{name}' registered twice")
    SAMPLES[name] = Entry(strategy, **kw)


def load_all():
    """Import every family module in this package; return the registry."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    return SAMPLES
