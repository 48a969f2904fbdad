"""torch.nn.utils.rnn: PackedSequence and padding / packing of variable-length sequences.

A PackedSequence holds the time steps of a batch sorted by decreasing length, step after step:
for lengths (3, 2, 1), data = [x0[0], x1[0], x2[0], x0[1], x1[1], x0[2]] and batch_sizes = [3, 2, 1].
"""
import collections

import numpy as np

from ...eager.creation import arange, empty_like, full, tensor
from ...eager.ops import cat, stack
from ...core import float32, float64, int64

from ...eager.tensor import Tensor


class PackedSequence(collections.namedtuple("PackedSequence_",
                                            ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """(data, batch_sizes, sorted_indices, unsorted_indices) as pack_padded_sequence builds it."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence(*packed) with the first two fields given as a tuple
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self.to(dtype=float64)

    def float(self):
        return self.to(dtype=float32)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    """The permutation that undoes `permutation` (None stays None)."""
    if permutation is None:
        return None
    out = empty_like(permutation)
    out[permutation] = arange(permutation.numel(), dtype=permutation.dtype)
    return out


def _lengths_list(lengths):
    if isinstance(lengths, Tensor):
        return [int(v) for v in np.asarray(lengths.detach()).reshape(-1)]
    return [int(v) for v in lengths]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) (or (B, T, *) with batch_first) of sequences of the given lengths."""
    lengths = _lengths_list(lengths)
    batch_dim = 0 if batch_first else 1
    if len(lengths) != input.shape[batch_dim]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} (batch_size="
                           f"{input.shape[batch_dim]})")
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        order = np.argsort(-np.asarray(lengths), kind="stable")
        sorted_indices = tensor(order.astype(np.int64))
        input = input.index_select(batch_dim, sorted_indices)
        lengths = [lengths[i] for i in order]
    if lengths and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if batch_first:
        input = input.transpose(0, 1)
    steps = lengths[0] if lengths else 0
    if steps > input.shape[0]:
        raise RuntimeError(f"Expected sequence length to be smaller than or equal to the total length "
                           f"{input.shape[0]}, but got {steps}")
    batch_sizes = [sum(1 for n in lengths if n > t) for t in range(steps)]
    data = cat([input[t, :b] for t, b in enumerate(batch_sizes)], 0)
    return PackedSequence(data, tensor(batch_sizes, dtype=int64), sorted_indices, None)


def _padded_from_packed(sequence, padding_value, total_length):
    """(T, B, *) padded in the packed (sorted) batch order, and the sorted lengths."""
    data, batch_sizes = sequence.data, _lengths_list(sequence.batch_sizes)
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {steps}")
    else:
        total_length = steps
    batch = batch_sizes[0] if batch_sizes else 0
    tail = tuple(data.shape[1:])
    rows, offset = [], 0
    for b in batch_sizes:
        row = data[offset:offset + b]
        offset += b
        if b < batch:
            row = cat([row, full((batch - b,) + tail, padding_value, dtype=data.dtype)], 0)
        rows.append(row)
    for _ in range(total_length - steps):
        rows.append(full((batch,) + tail, padding_value, dtype=data.dtype))
    padded = stack(rows, 0)
    lengths = [sum(1 for b in batch_sizes if b > i) for i in range(batch)]
    return padded, lengths


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of pack_padded_sequence: (padded batch, lengths as an int64 tensor) in the original order."""
    padded, lengths = _padded_from_packed(sequence, padding_value, total_length)
    lengths = tensor(lengths, dtype=int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices)
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of shape (L_i, *) into (L_max, B, *) (or (B, L_max, *)), padding with padding_value."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        gap = longest - s.shape[0]
        if gap:
            fill = full((gap,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
            s = cat([s, fill] if padding_side == "right" else [fill, s], 0)
        rows.append(s)
    return stack(rows, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences pad_sequence would have stacked."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:n] for seq, n in zip(padded_sequences, _lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """pack_padded_sequence(pad_sequence(sequences), their lengths)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences pack_sequence packed."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
