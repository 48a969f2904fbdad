"""torch.distributed.fsdp: fully_shard (FSDP2) on the MPI process groups, and its policies.

FullyShardedDataParallel (FSDP1) is the wrapper form of the same machinery (FULL_SHARD, no auto-wrap).
"""
from ._fully_shard import (CPUOffload, CPUOffloadPolicy, FSDPModule, FullyShardedDataParallel, MixedPrecision,
                           MixedPrecisionPolicy, OffloadPolicy, ShardingStrategy, fully_shard)

__all__ = ["fully_shard", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy", "CPUOffloadPolicy",
           "FullyShardedDataParallel", "MixedPrecision", "CPUOffload", "ShardingStrategy"]
