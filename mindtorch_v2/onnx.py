"""torch.onnx: importable, so scripts that reach for it load; exporting is not supported.

mindtorch_v2 has no ONNX exporter: `export` raises RuntimeError saying so, and `is_in_onnx_export()`
answers False, the truth for every call here.
"""

__all__ = ["export", "is_in_onnx_export", "OnnxExporterError"]


class OnnxExporterError(RuntimeError):
    """The error torch.onnx raises when an export fails."""


def export(model, args=(), f=None, **kwargs):
    """Raise RuntimeError: there is no ONNX exporter."""
    raise RuntimeError("torch.onnx.export is not supported by mindtorch_v2 (no ONNX exporter)")


def is_in_onnx_export():
    """Return False: no ONNX export is ever running."""
    return False
