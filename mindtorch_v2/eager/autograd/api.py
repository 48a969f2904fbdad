"""torch.autograd.backward and torch.autograd.grad on top of the engine."""
from ... import core
from ..declare import tensor_method
from ..tensor import Tensor
from . import engine


def _tensors(x):
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def _root_grads(outputs, grad_outputs, create_graph):
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out.dtype.category != core.dtypes.FLOAT:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
            value = core.ones(tuple(out.shape), dtype=out.dtype, device=out.device)
            grads.append(Tensor._from_value(value) if create_graph else value)
            continue
        if not isinstance(g, Tensor):
            g = Tensor._from_value(core.asarray(g, dtype=out.dtype))
        if tuple(g.shape) != tuple(out.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has "
                               f"a shape of {out.shape}.")
        if g.dtype is not out.dtype:  # (torch's engine casts each gradient to its tensor's dtype)
            g = g.to(out.dtype)
        g = engine.conj_boundary(g)  # the user's grad_output is in torch's convention, the tape's is JAX's
        grads.append(g if create_graph else g.detach()._value())
    return grads


def _roots(outputs):
    roots = []
    for i, out in enumerate(outputs):
        if not out._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        roots.append(out._edge())
    return roots


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate gradients of `tensors` into the .grad of the leaves (or of `inputs` only)."""
    outputs = _tensors(tensors)
    if grad_tensors is None:
        grad_tensors = [None] * len(outputs)
    else:
        grad_tensors = _tensors(grad_tensors) if not isinstance(grad_tensors, (list, tuple)) else list(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    roots = _roots(outputs)
    grads = _root_grads(outputs, grad_tensors, create_graph)
    if inputs is None:
        engine.run_backward(roots, grads, retain_graph=retain_graph, create_graph=create_graph)
        return
    inputs = _tensors(inputs)
    for t in inputs:
        if not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    res = engine.run_backward(roots, grads, retain_graph=retain_graph, create_graph=create_graph,
                              inputs=[t._edge() for t in inputs], accumulate=False)
    for t, g in zip(inputs, res):
        if g is not None:
            engine.accumulate_grad(t, g, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of `outputs` with respect to `inputs`, as a tuple (nothing is accumulated)."""
    outputs = _tensors(outputs)

    inputs = _tensors(inputs)
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    else:
        grad_outputs = _tensors(grad_outputs) if isinstance(grad_outputs, Tensor) else list(grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs:
        if not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    roots = _roots(outputs)
    grads = _root_grads(outputs, grad_outputs, create_graph)
    res = engine.run_backward(roots, grads, retain_graph=retain_graph, create_graph=create_graph,
                              inputs=[t._edge() for t in inputs], accumulate=False)
    out = []
    for t, g in zip(inputs, res):
        g = engine.conj_boundary(g)
        if g is None:
            if materialize_grads:
                out.append(Tensor._from_value(core.zeros(tuple(t.shape), dtype=t.dtype, device=t.device)))
                continue
            if not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been used in the graph. "
                                   "Set allow_unused=True if this is the desired behavior.")
            out.append(None)
        elif isinstance(g, Tensor):
            out.append(g if create_graph else g.detach())
        else:
            out.append(Tensor._from_value(g))
    return tuple(out)


@tensor_method("backward")
def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(self)/d(leaf) * gradient into every leaf's .grad."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)
