"""torch.distributed.checkpoint.hf_storage: checkpoints as Hugging Face safetensors files.

HuggingFaceStorageReader.read_metadata() is real: it reads the headers of every *.safetensors file of the
directory (never the tensor bytes) and reports each tensor's dtype, global size and stored chunks; files a
distributed save wrote per rank carry their chunk offsets in the "DCP_SHARDING_INFO" metadata entry, as
PyTorch writes it. What is not here is torch.distributed.checkpoint's save/load engine (planners,
read_data/write_data): those raise NotImplementedError, and dcp.save / dcp.load do not exist.
"""
import json
import os
import struct
from pathlib import Path

from ...core import dtypes
from .metadata import ChunkStorageMetadata, Metadata, TensorProperties, TensorStorageMetadata

__all__ = ["HuggingFaceStorageReader", "HuggingFaceStorageWriter"]

_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16", "I64": "int64",
           "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8", "U16": "uint16", "U32": "uint32",
           "U64": "uint64", "BOOL": "bool", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2",
           "C64": "complex64", "C128": "complex128"}
_SHARDING_INFO = "DCP_SHARDING_INFO"


def _read_header(path):
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise ValueError(f"{path}: not a safetensors file (shorter than its 8-byte header length)")
        (n,) = struct.unpack("<Q", raw)
        header = json.loads(f.read(n))
    return header


class HuggingFaceStorageReader:
    """Reads the safetensors files of a checkpoint directory (see the module doc)."""

    def __init__(self, path, thread_count=1):
        self.path = os.fspath(path)
        self.thread_count = thread_count

    def read_metadata(self):
        """A Metadata with one TensorStorageMetadata per tensor name, merged over all the files."""
        files = sorted(Path(self.path).glob("*.safetensors"))
        if not files:
            raise FileNotFoundError(f"No safetensors files found in {self.path}")
        found = {}
        storage = {}
        for file in files:
            header = _read_header(file)
            extra = header.pop("__metadata__", None) or {}
            sharding = json.loads(extra[_SHARDING_INFO]) if _SHARDING_INFO in extra else {}
            for name, info in header.items():
                shape = tuple(info["shape"])
                dtype = getattr(dtypes, _DTYPES.get(info["dtype"], ""), None)
                if dtype is None:
                    raise ValueError(f"{file}: tensor '{name}' has safetensors dtype {info['dtype']}, which has no "
                                     "torch dtype here")
                shard = sharding.get(name)
                offsets = tuple(shard["saved_offsets"]) if shard else (0,) * len(shape)
                size = tuple(shard["shape"]) if shard and "shape" in shard else shape
                meta = found.get(name)
                if meta is None:
                    meta = found[name] = TensorStorageMetadata(TensorProperties(dtype), size, [])
                meta.chunks.append(ChunkStorageMetadata(offsets, shape))
                storage[(name, offsets)] = file.name
        return Metadata(found, storage_data=storage)

    def read_data(self, plan, planner):
        raise NotImplementedError("HuggingFaceStorageReader.read_data: torch.distributed.checkpoint's load engine "
                                  "is not provided here; load safetensors files with safetensors or "
                                  "from_pretrained")


class HuggingFaceStorageWriter:
    """Where a checkpoint would be written as safetensors; the save engine itself is not provided."""

    def __init__(self, path, fqn_to_index_mapping=None, thread_count=1, save_distributed=False,
                 enable_consolidation=False, thread_count_consolidation=1):
        self.path = os.fspath(path)
        self.fqn_to_index_mapping = fqn_to_index_mapping
        self.thread_count = thread_count
        self.save_distributed = save_distributed
        self.enable_consolidation = enable_consolidation
        self.thread_count_consolidation = thread_count_consolidation

    @property
    def metadata_path(self):
        return "model.safetensors.index.json"

    def write_data(self, plan, planner):
        raise NotImplementedError("HuggingFaceStorageWriter.write_data: torch.distributed.checkpoint's save engine "
                                  "is not provided here; save with save_pretrained or safetensors")
