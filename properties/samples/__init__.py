"""Sample-input strategies, keyed by the Primitive object.

Each family module here calls `register(core.exp_p, strategy, ...)` with the Primitive as core
exports it. A strategy draws a `Sample`: the primitive's positional inputs as numpy arrays plus
its static params, exactly as `prim.bind(*map(core.asarray, args), **params)` takes them. The
property suite fails for any primitive in `core.primitives()` without one.
"""
import importlib
import pkgutil

import attrs

from mindtorch_v2 import core

SAMPLES = {}  # Primitive -> Entry


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
    key: bool = False       # the first input is a PRNG key (vmap splits it per batch element)


def register(prim, strategy, **kw):
    if not isinstance(prim, core.Primitive):
        raise TypeError(f"samples are registered for a Primitive object, not {prim!r}")
    if prim in SAMPLES:
        raise ValueError(f"samples for '{prim.name}' registered twice")
    SAMPLES[prim] = Entry(strategy, **kw)


def load_all():
    """Import every family module in this package; return the registry {Primitive: Entry}."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    return SAMPLES


def sampled(predicate=None):
    """The primitives with samples (those `predicate` accepts), in name order: what tests parametrize over."""
    return sorted((p for p in load_all() if predicate is None or predicate(p)), key=lambda p: p.name)


def prim_id(prim):
    """A test id: the primitive's name."""
    return prim.name
