"""torch.nn.parallel: DataParallel (one CPU device: the module runs on the whole batch, as PyTorch's does
without GPUs) and DistributedDataParallel (needs an initialized default process group)."""
from ..modules.container import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """The functional form of DataParallel: module(*inputs) on the one device there is."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))
