"""npu (Ascend) support: detected, never faked.

The backend registers only where the Ascend runtime (`acl`) imports and ships
ACLNN lowerings; this build has none, so `device("npu")` exists but any op on it
raises a RuntimeError saying no backend is available.
"""
try:  # pragma: no cover - the runtime is not present on our CI machines
    import acl  # noqa: F401
    RUNTIME_PRESENT = True
except Exception:  # ImportError, or a broken runtime install
    RUNTIME_PRESENT = False


def is_available():
    """True only when the Ascend runtime is present and lowerings are registered."""
    from ..devices import is_available as _registered
    return RUNTIME_PRESENT and _registered("npu")
