"""torch.save / torch.load in PyTorch's own checkpoint formats (torch.serialization).

`save` writes PyTorch's zip format (writing.py): `<archive>/data.pkl` (pickle protocol 2, tensors as
torch._utils._rebuild_tensor_v2/_v3 over persistent storage ids, Parameters via _rebuild_parameter),
one 64-byte-aligned stored record `<archive>/data/<key>` per storage (views share one), and the
`version`, `byteorder`, `.format_version`, `.storage_alignment` and `.data/serialization_id` records;
with `_use_new_zipfile_serialization=False`, PyTorch's legacy pickle stream. Real PyTorch loads both.

`load` (reading.py) reads both formats with a restricted unpickler by default (weights_only=True).

The zip+npy+JSON format earlier mindtorch_v2 versions wrote (mindtorch_format.py) is still READ: users
have files in it and reading it needs no pickle at all, so keeping the decoder costs nothing in safety.
It is detected by its `mindtorch_checkpoint/data.json` member and never written any more.
"""
from .reading import add_safe_globals, clear_safe_globals, get_safe_globals, load, safe_globals  # noqa: F401
from .writing import save  # noqa: F401
