"""torch.distributed.checkpoint.metadata: what a checkpoint holds, per fully-qualified name."""

__all__ = ["ChunkStorageMetadata", "TensorProperties", "TensorStorageMetadata", "Metadata"]


class ChunkStorageMetadata:
    """One stored block of a tensor: where it starts in the global tensor and its sizes."""

    def __init__(self, offsets, sizes):
        self.offsets, self.sizes = tuple(offsets), tuple(sizes)

    def __eq__(self, other):
        return isinstance(other, ChunkStorageMetadata) and (self.offsets, self.sizes) == (other.offsets, other.sizes)

    def __repr__(self):
        return f"ChunkStorageMetadata(offsets={self.offsets}, sizes={self.sizes})"


class TensorProperties:
    def __init__(self, dtype=None, requires_grad=False):
        self.dtype, self.requires_grad = dtype, requires_grad

    def __eq__(self, other):
        return isinstance(other, TensorProperties) and (self.dtype, self.requires_grad) == (other.dtype,
                                                                                             other.requires_grad)

    def __repr__(self):
        return f"TensorProperties(dtype={self.dtype})"


class TensorStorageMetadata:
    """A tensor of the checkpoint: its properties, global size and the chunks it is stored in."""

    def __init__(self, properties, size, chunks):
        self.properties, self.size, self.chunks = properties, tuple(size), list(chunks)

    def __repr__(self):
        return f"TensorStorageMetadata(properties={self.properties}, size={self.size}, chunks={self.chunks})"


class Metadata:
    """state_dict_metadata: fully-qualified name -> TensorStorageMetadata."""

    def __init__(self, state_dict_metadata, planner_data=None, storage_data=None):
        self.state_dict_metadata = state_dict_metadata
        self.planner_data, self.storage_data = planner_data, storage_data

    def __repr__(self):
        return f"Metadata(state_dict_metadata={self.state_dict_metadata})"
