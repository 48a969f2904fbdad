"""torch.utils: data loading, activation checkpointing and the pytree helpers (torch.utils._pytree)."""
from . import _pytree, checkpoint, data  # noqa: F401
