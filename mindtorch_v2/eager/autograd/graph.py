"""Autograd graph nodes: one Node per recorded primitive bind.

A Node keeps the primitive, its params, `next_functions` (the (node, output_nr)
edges of its inputs), and what its VJP rules read, saved with the version of the
tensor it came from. `AccumulateGrad` is the sink for a leaf tensor.
"""
import itertools
import weakref

from ...core import aval as _core_aval
from . import saved_hooks

_seq = itertools.count()


def _camel(name):
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))




class Saved:
    """A value a VJP rule reads, with the tensor's version counter at save time."""

    __slots__ = ("value", "counter", "version", "edge", "requires_grad")

    def __init__(self, value, counter, version, edge, requires_grad):
        self.value = value
        self.counter = counter
        self.version = version
        self.edge = edge
        self.requires_grad = requires_grad

    @property
    def desc(self):
        return f"torch.{self.value.dtype.scalar_name}Tensor {list(self.value.shape)}"


class HookedSaved(Saved):
    """A saved value kept through saved_tensors_hooks: what the pack hook returned, unpacked on each read.
    Not version-checked (counter None), as in PyTorch, since the hook chose what to keep."""

    __slots__ = ("packed", "unpack_hook")

    def __init__(self, packed, unpack_hook, edge, requires_grad):
        self.packed = packed
        self.unpack_hook = unpack_hook
        self.counter = None
        self.version = 0
        self.edge = edge
        self.requires_grad = requires_grad

    @property
    def value(self):
        return saved_hooks.unpack_value(self.unpack_hook, self.packed)


def _aval(spec):
    return None if spec is None else _core_aval(*spec)


class Node:
    """A recorded operation (PyTorch's grad_fn). Made by `new_node` (one per recorded op: a plain function
    filling the slots is cheaper than a class call running __init__)."""

    __slots__ = ("prim", "params", "next_functions", "saved", "in_specs", "out_saved", "out_specs",
                 "seq", "freed", "pre_hooks", "hooks", "torch_name", "__weakref__")

    @property
    def n_outputs(self):
        return len(self.out_specs)

    @property
    def avals(self):
        """Per input: a bufferless Array with its shape/dtype/device (None where the value is saved)."""
        return [_aval(spec) for spec in self.in_specs]

    @property
    def out_avals(self):
        return [_aval(spec) for spec in self.out_specs]

    def name(self):
        return self.torch_name or f"{_camel(self.prim.name)}Backward0"

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) after this node ran; returns a removable handle."""
        if self.hooks is None:
            self.hooks = []
        self.hooks.append(fn)
        return RemovableHandle(self.hooks, fn)

    def add_pre_hook(self, output_nr, fn):
        if self.pre_hooks is None:
            self.pre_hooks = {}
        hooks = self.pre_hooks.setdefault(output_nr, [])
        hooks.append(fn)
        return RemovableHandle(hooks, fn)


_new = object.__new__


def new_node(prim, params, next_functions, saved, in_specs, out_specs):
    """The Node of one recorded bind of `prim`."""
    node = _new(Node)
    node.prim = prim
    node.params = params
    node.next_functions = next_functions
    node.saved = saved          # {arg index: Saved}
    node.in_specs = in_specs    # per unsaved input: (shape, dtype, device), for rules reading avals
    node.out_saved = None       # Saved output(s) when a rule reads "out"
    node.out_specs = out_specs  # per output: (shape, dtype, device)
    node.seq = next(_seq)
    node.freed = False
    node.pre_hooks = None       # {output_nr: [hook]} from Tensor.register_hook
    node.hooks = None
    node.torch_name = None      # the torch op's node name when it is not the primitive's (MeanBackward0)
    return node


class AccumulateGrad:
    """The sink of a leaf tensor: adds incoming gradients into `variable.grad`."""

    __slots__ = ("_variable", "seq", "pre_hooks", "hooks", "next_functions", "__weakref__")
    n_outputs = 1

    def __init__(self, variable):
        # weak: the leaf holds its sink (tensor._acc), so a strong reference back would be a reference
        # cycle keeping every leaf and its graph alive until the cycle collector runs
        self._variable = weakref.ref(variable)
        self.seq = next(_seq)
        self.pre_hooks = None
        self.hooks = None
        self.next_functions = ()

    @property
    def variable(self):
        """The leaf tensor (None once it is gone: there is then no .grad to accumulate into)."""
        return self._variable()

    def name(self):
        return "AccumulateGrad"

    def __repr__(self):
        return f"<AccumulateGrad object at {id(self):#x}>"

    add_pre_hook = Node.add_pre_hook
    register_hook = Node.register_hook


class NotImplementedNode:
    """The grad_fn of an op torch gives no derivative (floor_divide): recorded like any node, it raises
    torch's error when a backward pass reaches it."""

    __slots__ = ("op", "next_functions", "seq", "pre_hooks", "hooks", "n_outputs", "__weakref__")

    def __init__(self, op, next_functions):
        self.op = op
        self.next_functions = next_functions
        self.seq = next(_seq)
        self.pre_hooks = None
        self.hooks = None
        self.n_outputs = 1

    def name(self):
        return "torch::autograd::NotImplemented"

    def __repr__(self):
        return "<NotImplemented object>"

    def apply(self, grads, create_graph):
        raise RuntimeError(f"derivative for aten::{self.op} is not implemented")

    def release_variables(self):
        pass

    add_pre_hook = Node.add_pre_hook
    register_hook = Node.register_hook


class RemovableHandle:
    __slots__ = ("_list", "_fn")

    def __init__(self, lst, fn):
        self._list = lst
        self._fn = fn

    def remove(self):
        try:
            self._list.remove(self._fn)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False
