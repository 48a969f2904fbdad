"""torch.utils: the data loading utilities and the pytree helpers (torch.utils._pytree)."""
from . import _pytree, data  # noqa: F401
