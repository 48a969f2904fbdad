"""torch._inductor.config: the code-generation settings torch.compile (mindtorch_v2/_compile.py) reads.

fallback_random: False (PyTorch's default): a compiled program's random ops draw from a key the default
generator gives each call, not from eager's stream, as PyTorch's compiled random ops do; True: code that
draws runs eagerly, so its numbers are eager's bit for bit. A name torch's config does not have here raises
AttributeError (the module refuses unknown names, as torch's does).
"""
import sys

from .._dynamo.config import _ConfigModule

fallback_random = False

sys.modules[__name__].__class__ = _ConfigModule
