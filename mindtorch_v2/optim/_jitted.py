"""A parameter's update run as one jit'd core program, for the optimizers whose step is pure elementwise math.

Op by op, Adam's update of one parameter is a dozen eager ops and four in-place writes: ~70 us for a 64 x 64
weight, most of it dispatch, and at (512, 784) 850 us, most of it passes over memory. The same math as a jit'd
program (core.jit: straight-line code, buffers reused, and with the `fast` extra one fused loop) took 15 and
230 us. An optimizer writes its update once, in core ops; jit'd or op by op on the Tensors it gives the same numbers
bit for bit (tests/test_optim_jitted.py runs both ways). The program applies where every value is concrete on
cpu in float32 or float64, the written tensors each cover their storage, and nothing records a graph
(differentiable=False) or traces; elsewhere the same update runs on the Tensors op by op (torch.compile then
traces those ops).
"""
import functools

import numpy as np

from .. import core
from .._compile import is_compiling
from ..core.array import make
from ..core.devices import cpu
from ..core.dtypes import float32, float64
from ..eager.tensor import Tensor
from ..eager.writeback import write

__all__ = ["applies", "descent", "run"]

# a program is traced once per parameter shape: a model may have hundreds, and none of them is a retrace to warn of
_SHAPES = 1024


def applies(group, written, read):
    """Whether the jit'd update can stand in for the eager ops: `written` tensors (param and state) each
    covering their storage, `read` ones (the grad) any view, all concrete cpu float32/float64 of one dtype."""
    if group["differentiable"] or is_compiling():
        return False
    dtype = written[0].dtype
    if dtype is not float32 and dtype is not float64:
        return False
    for t in written:
        if not (t._full and t.dtype is dtype and type(t._storage.value) is core.Array and t.device.type == "cpu"):
            return False
    for t in read:
        if t.dtype is not dtype or type(t._storage.value) is not core.Array or t.device.type != "cpu":
            return False
    return True


def run(update, group, written, read, scalars, bumps):
    """update(*written, *read, *scalars) -> the new values of `written`, each written back into its tensor with no
    history and its version bumped by `bumps` (as many as PyTorch's in-place ops write it: `_version` reads the
    same). Where the jit'd program applies (`applies`) it runs on the values, the scalars as 0-d arrays of the
    params' dtype; elsewhere `update` itself runs on the Tensors (a view, float16, a traced step), the same
    core ops op by op."""
    if applies(group, written, read):
        dtype = written[0].dtype
        args = [t._storage.value for t in written] + [t._value() for t in read]
        args += [make(np.array(s, dtype.np), (), dtype, cpu) for s in scalars]
        results = _jit(update)(*args)
    else:
        # (a tensor hyperparameter of another dtype, a float32 lr for float16 weights, is taken in theirs, as
        # PyTorch's in-place ops keep the written tensor's dtype: promoted, the weights came back float32)
        dtype = written[0].dtype
        scalars = [s.to(dtype) if isinstance(s, Tensor) and s.dtype is not dtype else s for s in scalars]
        results = update(*written, *read, *scalars)
    for t, value, bump in zip(written, results, bumps):
        write(t, value, bump_version=False, record=False)
        t._storage.version.value += bump


def descent(p, g, wd, maximize, l2):
    """In core ops (on Arrays in a jit'd update, on Tensors op by op: optimizer._descent_grad), the gradient an
    update follows: negated with maximize, plus wd * p with L2 weight decay."""
    if maximize:
        g = core.neg(g)
    return core.add(g, core.mul(p, wd)) if l2 else g


@functools.cache
def _jit(update):
    """update jit'd for every parameter shape of a model (core.jit keeps _SHAPES signatures, warning only past
    them)."""
    return core.jit(update, cache_size=_SHAPES, warn_after=_SHAPES)
