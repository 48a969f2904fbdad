"""torch.distributed on MPI (mpi4py): process groups, collectives, point-to-point, object collectives.

    python -m mindtorch_v2.distributed.run --nproc-per-node 4 train.py     # or: mpiexec -n 4 python train.py
    dist.init_process_group("gloo")       # "mpi" or "gloo"; rank and size come from the MPI job
    dist.all_reduce(t)                    # in place, through the eager write point (views and versions follow)

DeviceMesh, DTensor (torch.distributed.tensor: layout and data movement, no arithmetic) and the functional
collectives sit on the same groups.

is_available() is True when mpi4py imports (pip install 'mindtorch_v2[distributed]' brings mpi4py and the
mpich wheel). DistributedDataParallel is nn.parallel.DistributedDataParallel.
"""
from . import distributed_c10d
from .distributed_c10d import (Backend, DistBackendError, DistError, GroupMember, P2POp, ProcessGroup, ReduceOp,
                               Work, all_gather, all_gather_into_tensor, all_gather_object, all_reduce, all_to_all,
                               all_to_all_single, barrier, batch_isend_irecv, broadcast, broadcast_object_list,
                               destroy_process_group, gather, gather_object, get_backend, get_global_rank,
                               get_group_rank, get_process_group_ranks, get_rank, get_world_size, group,
                               init_process_group, irecv, is_available, is_gloo_available, is_initialized,
                               is_mpi_available, is_nccl_available, isend, monitored_barrier, new_group,
                               new_subgroups, recv, reduce, reduce_scatter, reduce_scatter_tensor, scatter,
                               scatter_object_list, send)

from .device_mesh import DeviceMesh, init_device_mesh

__all__ = list(distributed_c10d.__all__) + ["DeviceMesh", "init_device_mesh"]
