"""The op families, one module per family, each listing its public names in `__all__`.

Import order is the dependency order (each family imports only those above it):
_family (builders, helpers) < elementwise < shape < creation < reduction < indexing < strided
< linalg < einsum < conv < pool < random < composite. `core/__init__.py` imports the public names by name.
"""
from . import (_family, elementwise, shape, creation, reduction, indexing, strided, linalg, einsum, conv, pool,  # noqa: F401
               random, composite)
