"""torch.nn.parallel.DistributedDataParallel: wraps a module for data-parallel training over the default
process group. Constructing it needs an initialized default process group; this build has none
(torch.distributed.is_available() is False, as in a PyTorch built without distributed support), so
construction raises PyTorch's ValueError for a missing default group. Scripts can import it and take
their single-process path."""
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
