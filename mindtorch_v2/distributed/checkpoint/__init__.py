"""torch.distributed.checkpoint: the checkpoint metadata types and the safetensors storage reader
(hf_storage). The save/load engine (dcp.save, dcp.load, planners) is not provided."""
from . import hf_storage, metadata
from .hf_storage import HuggingFaceStorageReader, HuggingFaceStorageWriter
from .metadata import ChunkStorageMetadata, Metadata, TensorProperties, TensorStorageMetadata

__all__ = ["HuggingFaceStorageReader", "HuggingFaceStorageWriter", "Metadata", "TensorStorageMetadata",
           "ChunkStorageMetadata", "TensorProperties", "hf_storage", "metadata"]
