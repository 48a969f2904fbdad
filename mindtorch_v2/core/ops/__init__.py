"""The op families, one module per family, each listing its public names in `__all__`.

Import order is the dependency order (each family imports only those before it):
_family (builders, helpers) < elementwise < shape < complex < creation < reduction < indexing < scan
< statistics < search < layout < strided < decompositions < linalg < einsum < conv < pool < random < softmax < nll
< composite
< elementary < special < fft < rnn. `core/__init__.py` imports the public names by name (tools/wire_names.py writes
that block); linalg, fft, special and random are namespaces of their own (core.linalg, ...); rnn (the fused
recurrent layers nn.LSTM / GRU / RNN run on) is reached as core.ops.rnn.
"""
from . import (_family, elementwise, shape, complex, creation, reduction, indexing, scan, statistics,  # noqa: F401
               search, layout, strided, decompositions, linalg, einsum, conv, pool, random, softmax, nll, composite,
               elementary,
               special, fft, rnn)
