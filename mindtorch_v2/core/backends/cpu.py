"""The cpu backend: buffers are numpy arrays; lowerings live beside their primitives. Registering it sets glibc's
malloc thresholds (core/_heap.py), so that a step's many short-lived arrays reuse the process's memory."""
import numpy as np

from .._heap import tune_heap
from ..devices import register_backend


class CPUBackend:
    name = "cpu"

    @staticmethod
    def to_buffer(array):
        return np.asarray(array)

    @staticmethod
    def to_numpy(buf):
        return buf


register_backend("cpu", CPUBackend)
tune_heap()
