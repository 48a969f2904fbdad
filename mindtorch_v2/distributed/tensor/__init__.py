"""torch.distributed.tensor: DTensor (layout and data movement, no arithmetic), placements, meshes.

See _api.py for what a DTensor does and does not do here.
"""
from ..device_mesh import DeviceMesh, init_device_mesh
from . import placement_types
from ._api import DTensor, distribute_tensor
from .placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "DeviceMesh", "distribute_tensor", "init_device_mesh", "Shard", "Replicate", "Partial",
           "Placement", "placement_types"]
