"""torch.distributed._composable: the composable APIs (fully_shard lives in ..fsdp)."""
