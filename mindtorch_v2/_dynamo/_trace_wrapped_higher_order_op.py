"""torch._dynamo._trace_wrapped_higher_order_op: the one name libraries import from it.

`TransformGetItemToIndex` is the context PyTorch wraps around mask and score functions run under vmap: in
it, `A[i]` with integer or tensor indices indexes with the indices as int64 tensors (a gather, differentiable
and vmap-able) instead of turning a 0-d tensor index into a python int and a view. mindtorch_v2's
`Tensor.__getitem__` always indexes with a tensor index as a tensor (it never calls `.item()` on it, so it
works on batched indices under vmap); python int indices give views with the same values. Entering the
context therefore changes no result, and it is an ordinary re-entrant context manager.
"""

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex:
    """Context in which tensor indices of `Tensor.__getitem__` index as tensors (mindtorch_v2's rule always)."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        return False
