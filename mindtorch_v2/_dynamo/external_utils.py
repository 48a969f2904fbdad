"""torch._dynamo.external_utils: `is_compiling`, the check libraries import from here."""
from ..compiler import is_compiling

__all__ = ["is_compiling"]
