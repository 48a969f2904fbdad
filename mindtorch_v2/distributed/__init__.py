"""torch.distributed as in a PyTorch built without distributed support (USE_DISTRIBUTED=0).

`is_available()` answers False, which is what libraries consult before touching process groups; PyTorch
then defines nothing else here but a placeholder ProcessGroup class, and so does this module.
"""
__all__ = ["is_available"]


def is_available():
    """Whether the distributed package is built in: False (no process groups, no collectives)."""
    return False


class ProcessGroup:
    """The name PyTorch keeps for ProcessGroup when distributed is not built (a class with no behaviour)."""
