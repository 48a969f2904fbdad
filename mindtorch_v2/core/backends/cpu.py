"""The cpu backend: buffers are numpy arrays; lowerings live beside their primitives."""
import numpy as np

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
