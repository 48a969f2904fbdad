"""DDP's built-in communication hooks: hook(process_group, bucket) -> Future of the reduced bucket buffer."""
from ....core.dtypes import bfloat16, float16
from ... import distributed_c10d as dist

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook"]


def _allreduce_fut(process_group, tensor):
    group = process_group if process_group is not None else dist.group.WORLD
    tensor.div_(group.size())
    return dist.all_reduce(tensor, group=group, async_op=True).get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """The bucket's gradients averaged over the group (what DDP does without a hook)."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    group = process_group if process_group is not None else dist.group.WORLD
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(group.size())
    fut = dist.all_reduce(compressed, group=group, async_op=True).get_future()

    def decompress(fut):
        buffer.copy_(fut.value()[0])
        return buffer
    return fut.then(decompress)


def fp16_compress_hook(process_group, bucket):
    """Average the bucket in float16 (half the bytes on the wire), then copy back into its dtype."""
    return _compress_hook(float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """Average the bucket in bfloat16, then copy back into its dtype."""
    return _compress_hook(bfloat16, process_group, bucket)
