"""The op families. Importing this package declares every primitive."""
from .. import autodiff as _autodiff
from .. import batching as _batching
from . import _family, elementwise, shape, reduction, creation, indexing, linalg, composite  # noqa: F401
import importlib as _importlib


def extra_modules():
    """Families that live in their own modules (nn kernels, random, einsum), once present."""
    mods = []
    for name in ("nn", "random", "einsum"):
        try:
            mods.append(_importlib.import_module(f"{__name__}.{name}"))
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
    return mods


extra_modules()
from .composite import *  # noqa: F401,F403
from .creation import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .reduction import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403

_autodiff.install_ops(add=elementwise.add, cast=elementwise.cast, asarray=creation.asarray,
                      zeros_like=_family.zeros_like)
_batching.install_ops(transpose=lambda x, perm: shape.transpose_p.bind(x, perm=perm),
                      broadcast_to=shape.broadcast_to, expand_dims=shape.expand_dims, reshape=shape.reshape,
                      asarray=creation.asarray)
