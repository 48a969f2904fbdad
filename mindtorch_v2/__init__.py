"""mindtorch_v2: a JAX-like functional core with a PyTorch-style eager front end, on NumPy."""
from . import core  # noqa: F401

__version__ = "0.1.0"
