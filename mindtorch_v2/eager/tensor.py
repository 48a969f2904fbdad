"""The eager Tensor: a mutable handle on a Storage plus a view geometry.

A Tensor is (storage, shape, strides, offset). Reading it is `as_strided` of the
storage's current value (or the value itself when the geometry covers it all).
Views share the Storage, hence its value and version counter. Autograd state:
`_rg` (requires grad), `_grad_fn`/`_output_nr` (the node that produced it),
`_grad`, and for views `_base` plus the storage version their history matches.
"""
import copy as _copy
import pickle
import weakref
from types import MappingProxyType
from multiprocessing.reduction import ForkingPickler

import numpy as np

from .. import core
from ..core import dtypes as _dt
from ..core import Array as _Array
from ..core import as_strided_p, as_strided_scatter_p
from . import grad_mode
from . import profiler_hooks as _profiler_hooks
from .autograd.graph import AccumulateGrad
from .autograd import saved_hooks as _saved_hooks
from .autograd.graph import HookedSaved, Node, Saved, new_node
from .grad_mode import _state
from .printing import _format
from .storage import DataStorage, Storage


# ---------------------------------------------------------------------------
# the bind hook: how a primitive runs when Tensors are among its arguments
#
# `core.bind` sees a value whose type defines `__mt_bind__` and hands the call here. We unwrap each
# Tensor to its current core value, bind the primitive on the values (which may be tracers inside
# `torch.func` transforms), wrap the outputs as new Tensors, and, when grad mode is on and an input
# requires grad, record one autograd Node holding what the primitive's VJP rules read.


class UnsupportedDTypeError(NotImplementedError, TypeError):
    """A dtype an op does not support: torch raises NotImplementedError (a RuntimeError) there,
    the core a TypeError; this is both, so either `except` clause catches it."""


def tensor_bind(prim, args, params, _timed=False):
    if _profiler_hooks.op is not None and not _timed:  # a profiler records: time this op as an event
        return _profiler_hooks.op(tensor_bind, prim, args, params)
    vals = []
    record = False
    plain = True  # every value a concrete Array: run the primitive directly (no tracer to dispatch on)
    for a in args:
        if isinstance(a, Tensor):
            v = a._storage.value if a._full else a._value()
            if a._rg:
                record = True
        else:
            v = a
        if type(v) is not _Array:
            plain = False
        vals.append(v)
    try:
        out = prim.eval(vals, params) if plain else prim.bind(*vals, **params)
    except (ValueError, ZeroDivisionError, TypeError) as e:
        raise _torch_error(e) from None
    return _outputs(prim, params, args, vals, out, record)


def _outputs(prim, params, args, vals, out, record):
    """The Tensors of a bind's results: recorded on the tape when an input requires grad and grad mode is on
    (outside inference mode, or inside it under enable_grad: then they are inference tensors), else plain."""
    # grad_mode.threads_not_recording == 0: every thread has grad mode on outside inference mode (no
    # thread-local read); else this thread's `recording` says the same for this thread alone
    if record and prim.vjp is not None:
        if grad_mode.threads_not_recording == 0 or _state.recording:
            return _record(prim, params, args, vals, out, False)
        if _state.enabled:
            return _record(prim, params, args, vals, out, True)
    inference = False if grad_mode.threads_not_recording == 0 else _state.inference
    if prim.multiple_results:
        return tuple(_new_tensor(Tensor, o, inference, None, 0) for o in out)
    return _new_tensor(Tensor, out, inference, None, 0)


def bind_unary(prim, x):
    """tensor_bind(prim, (x,), {}) for a Tensor x and a single-result primitive, unrolled: the path of
    torch's elementwise functions."""
    v = x._storage.value if x._full else x._value()
    if type(v) is not _Array or _profiler_hooks.op is not None:  # tracers, profiling: the general path
        return tensor_bind(prim, (x,), {})
    vals = (v,)
    params = {}
    try:
        out = prim.eval(vals, params)
    except (ValueError, ZeroDivisionError, TypeError) as e:
        raise _torch_error(e) from None
    return _outputs(prim, params, (x,), vals, out, x._rg)


def bind_binary(prim, x, y):
    """tensor_bind(prim, (x, y), {}) for a Tensor x, y a Tensor or a core Array (a python number made
    one), and a single-result primitive, unrolled: the path of the binary operators."""
    vx = x._storage.value if x._full else x._value()
    if isinstance(y, Tensor):
        vy = y._storage.value if y._full else y._value()
        record = x._rg or y._rg
    else:
        vy = y
        record = x._rg
    if type(vx) is not _Array or type(vy) is not _Array or _profiler_hooks.op is not None:
        return tensor_bind(prim, (x, y), {})
    vals = (vx, vy)
    params = {}
    try:
        out = prim.eval(vals, params)
    except (ValueError, ZeroDivisionError, TypeError) as e:
        raise _torch_error(e) from None
    return _outputs(prim, params, (x, y), vals, out, record)


def _torch_error(e):
    """The core's error as torch raises it: shape errors and integer division by zero are RuntimeErrors;
    the core's dtype checks (TypeError) are torch's NotImplementedError ("not implemented for 'Bool'")."""
    if isinstance(e, (ValueError, ZeroDivisionError)):
        return RuntimeError(str(e))
    return UnsupportedDTypeError(str(e))


_NO_EDGE = (None, 0)
_NOTHING_SAVED = MappingProxyType({})  # the saved values of every node whose rules read no value (add, sum)
_new = object.__new__


def _new_tensor(cls, value, inference, grad_fn, output_nr):
    """A fresh tensor of class `cls` owning a new Storage of `value` (a core value), with grad_fn (None:
    a leaf not requiring grad). The one constructor of op results: plain slot stores, no __init__ frames."""
    st = _new(Storage)
    st.value = value
    st._version = None
    st.inference = inference
    t = _new(cls)
    t._storage = st
    t._shape = value.shape
    t._strides = None  # contiguous
    t._offset = 0
    t._full = True
    t._base = None
    t._grad_fn = grad_fn
    t._output_nr = output_nr
    t._rg = grad_fn is not None
    t._grad = None
    t._retains_grad = False
    t._acc = None
    t._view_version = 0
    return t


def record_node(prim, params, args, vals, out):
    """Record prim(args) -> out on the tape; return the output Tensors with this node as grad_fn."""
    return _record(prim, params, args, vals, out, False if grad_mode.threads_not_recording == 0 else _state.inference)


def _record(prim, params, args, vals, out, inference):
    edges = []
    partial = False  # some input takes no gradient
    for a in args:
        if isinstance(a, Tensor) and a._rg:
            if a._base is None:  # Tensor._edge, inlined for a non-view: its grad_fn's edge, or its sink's
                fn = a._grad_fn
                if fn is not None:
                    edges.append((fn, a._output_nr))
                    continue
                acc = a._acc
                if acc is not None:
                    edges.append((acc, 0))
                    continue
            e = a._edge()  # a view (whose history may need rebuilding), or a leaf's first edge
            if e[0] is None:
                partial = True
            edges.append(e)
        else:
            partial = True
            edges.append(_NO_EDGE)
    edges = tuple(edges)
    reads = prim.vjp_reads
    by_input = prim.vjp_reads_by_input
    if by_input is not None and partial:  # only what the rules of inputs needing a gradient read
        reads = ()
        for e, r in zip(edges, by_input):
            if e[0] is not None:
                reads = r if not reads else tuple(set(reads).union(r))
    specs = []
    if reads:
        saved = {}
        hooks = _saved_hooks.current() if _saved_hooks.installed else None  # (nothing saved: no hook runs)
        for i, v in enumerate(vals):
            if i in reads:
                a = args[i]
                if not isinstance(a, Tensor):
                    saved[i] = Saved(v, None, 0, _NO_EDGE, False)
                elif a._storage.inference:
                    raise RuntimeError(_INFERENCE_SAVED)
                elif hooks is not None:
                    saved[i] = _hooked(hooks, a, edges[i], a._rg)
                else:
                    counter = a._storage.version
                    saved[i] = Saved(v, counter, counter.value, edges[i], a._rg)
                specs.append(None)
            else:
                specs.append((v.shape, v.dtype, v.device))
    else:
        saved = _NOTHING_SAVED
        hooks = None
        for v in vals:
            specs.append((v.shape, v.dtype, v.device))
    if not prim.multiple_results:
        node = new_node(prim, params, edges, saved, specs, ((out.shape, out.dtype, out.device),))
        if out.dtype.category >= _FLOAT:  # floating and complex outputs carry gradients
            t = _new_tensor(Tensor, out, inference, node, 0)
        else:
            t = _new_tensor(Tensor, out, inference, None, 0)
        if "out" in reads:  # (the edge names no node: node -> out_saved -> node would be a reference cycle)
            node.out_saved = [_hooked(hooks, t, (None, 0), True) if hooks is not None
                              else Saved(out, t._storage.version, 0, (None, 0), True)]
        return t
    node = new_node(prim, params, edges, saved, specs, tuple((o.shape, o.dtype, o.device) for o in out))
    results = []
    for k, o in enumerate(out):
        if o.dtype.category >= _FLOAT:
            results.append(_new_tensor(Tensor, o, inference, node, k))
        else:
            results.append(_new_tensor(Tensor, o, inference, None, 0))
    if "out" in reads:
        node.out_saved = [_hooked(hooks, t, (None, k), True) if hooks is not None
                          else Saved(o, t._storage.version, 0, (None, k), True)
                          for k, (o, t) in enumerate(zip(out, results))]
    return tuple(results)


def _hooked(hooks, tensor, edge, requires_grad):
    """A saved value kept through the active saved_tensors_hooks (packed with grad off, as PyTorch)."""
    with grad_mode.no_grad():
        packed = _saved_hooks.pack(hooks, tensor)
    return HookedSaved(packed, hooks[1], edge, requires_grad)


_FLOAT = _dt.FLOAT


class Size(tuple):
    """torch.Size: a tuple of ints."""

    def __repr__(self):
        return f"torch.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n


def contiguous_strides(shape):
    strides = []
    acc = 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


_DEEPCOPY_NON_LEAF = ("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the "
                      "moment.  If you were attempting to deepcopy a module, this may be because of a "
                      "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")
_CROSS_PROCESS_NON_LEAF = ("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does "
                           "not support crossing process boundaries.  If you just want to transfer the data, call "
                           "detach() on the tensor before serializing (e.g., putting it on the queue).")
_LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
_VIEW_LEAF_INPLACE = "a view of a leaf Variable that requires grad is being used in an in-place operation."
_NO_GRAD_VIEW_INPLACE = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use "
    "case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside "
    "(if you want the inplace to be tracked).")
_INFERENCE_SAVED = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
                    "mode in computation tracked by autograd. To work around this, you can make a clone to get a "
                    "normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
                    "`torch.inference_mode()`.")
_INFERENCE_INPLACE = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to "
                      "get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                      "more details.")



# PyTorch's errors for Python conversions of a tensor that vmap batches (Tensor._concrete)
_VMAP_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on "
              "a Tensor, please try to rewrite what you're doing with other operations.")
_VMAP_CONTROL_FLOW = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We "
                      "don't support that yet: use torch.where (or compute both branches) instead.")
_TRACED_NUMPY = ("numpy() is not available inside a function transform (the value is traced): it would drop the "
                 "derivative or the batch. Use tensor operations, or .item() for a number under torch.func.grad")
_VMAP_TOLIST = ("vmap: tolist() needs the values of a batched tensor (one per batch element), which vmap does not "
                "have; rewrite it with tensor operations.")


class Tensor:
    """A torch-style tensor. Build with torch.tensor / zeros / ..., never directly from data here."""

    __slots__ = ("_storage", "_shape", "_strides", "_offset", "_full", "_base", "_grad_fn", "_output_nr",
                 "_rg", "_grad", "_retains_grad", "_acc", "_view_version", "__dict__", "__weakref__")
    __array_priority__ = 1000
    __mt_bind__ = staticmethod(tensor_bind)
    # a view made under no_grad of a tensor that requires grad: it requires grad as a leaf of its own (no
    # history, none rebuilt from its base), and in-place ops on it with grad mode on are refused, as in torch
    _created_in_no_grad = False

    def __new__(cls, *args, **kwargs):
        if cls is Tensor and args:  # the legacy constructor: Tensor(data), Tensor(*size), Tensor(other)
            if len(args) == 1 and isinstance(args[0], Tensor):  # an alias of `other`, keeping its dtype
                return args[0].view_as(args[0])
            if len(args) == 1 and isinstance(args[0], Size):
                return Tensor._from_value(core.zeros(tuple(args[0]), dtype=_dt.default_float))
            if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)):
                return Tensor._from_value(core.asarray(args[0], dtype=_dt.default_float))
            return Tensor._from_value(core.zeros(tuple(int(a) for a in args), dtype=_dt.default_float))
        return object.__new__(cls)

    # ------------------------------------------------------------------
    # construction

    @classmethod
    def _from_value(cls, value, requires_grad=False):
        """A fresh tensor owning a new Storage holding `value` (a core value)."""
        t = _new_tensor(cls, value, False if grad_mode.threads_not_recording == 0 else _state.inference, None, 0)
        if requires_grad:
            t._rg = True
        return t

    @staticmethod
    def _wrap(x):
        """A core result as Tensor(s): results of binds on Tensors already are; values and tuples of them are
        wrapped."""
        if isinstance(x, Tensor):
            return x
        if isinstance(x, tuple):
            return tuple(Tensor._wrap(v) for v in x)
        return Tensor._from_value(x)

    @classmethod
    def _snapshot(cls, value, edge, requires_grad):
        """A tensor standing for a saved value with the history it had (create_graph backward)."""
        t = cls._from_value(value)
        node, nr = edge
        if node is not None:
            if type(node) is AccumulateGrad:
                leaf = node.variable
                return leaf if leaf is not None and leaf._value() is value else _alias_leaf(node, value)
            t._grad_fn, t._output_nr, t._rg = node, nr, True
        return t

    def _view_of(self, shape, strides, offset, record=None):
        """A view sharing this tensor's storage; `record(self)` replays the op for autograd."""
        v = object.__new__(type(self) if type(self) is Tensor else Tensor)
        st = self._storage
        v._storage = st
        v._shape = tuple(shape)
        v._strides = tuple(strides)
        v._offset = offset
        base_shape = st.value.shape
        v._full = offset == 0 and v._shape == tuple(base_shape) and v._strides == contiguous_strides(base_shape)
        v._base = self._base if self._base is not None else self
        v._grad_fn = None
        v._output_nr = 0
        v._rg = False
        v._grad = None
        v._retains_grad = False
        v._acc = None
        v._view_version = st.version.value
        if self._rg and record is not None:
            if grad_mode.tape_enabled():
                tmp = record(self)
                v._grad_fn, v._output_nr, v._rg = tmp._grad_fn, tmp._output_nr, tmp._rg
            elif v.dtype.category >= _FLOAT:
                v._rg = True
                v._created_in_no_grad = True
        return v

    # ------------------------------------------------------------------
    # value and geometry

    def _value(self):
        """The current core value of this tensor: as_strided of the storage's value."""
        if self._full:
            return self._storage.value
        v = self._storage.value
        params = {"shape": self._shape, "strides": self._strides, "offset": self._offset}
        if type(v) is core.Array:
            # our own view geometry is valid by construction: lower directly, skipping a meta-rule
            # cache that would be keyed by every distinct (shape, strides, offset)
            return as_strided_p.lower(v, params, self._shape, v.dtype)
        return as_strided_p.bind(v, **params)

    def _geometry(self):
        strides = self._strides if self._strides is not None else contiguous_strides(self._shape)
        return self._shape, strides, self._offset

    def _desc(self):
        return f"torch.{self.dtype.scalar_name}Tensor {list(self._shape)}"

    @property
    def shape(self):
        return Size(self._shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._shape)
        return self._shape[_dim(dim, len(self._shape))]

    @property
    def dtype(self):
        return self._storage.value.dtype

    @property
    def device(self):
        return self._storage.value.device

    @property
    def ndim(self):
        return len(self._shape)

    def dim(self):
        return len(self._shape)

    ndimension = dim

    def numel(self):
        n = 1
        for s in self._shape:
            n *= s
        return n

    nelement = numel

    def element_size(self):
        return self.dtype.itemsize

    def stride(self, dim=None):
        strides = self._geometry()[1]
        return strides if dim is None else strides[_dim(dim, len(strides))]

    def storage_offset(self):
        return self._offset

    @property
    def is_meta(self):
        return self.device.type == "meta"

    @property
    def is_cuda(self):
        return False

    @property
    def is_npu(self):
        return self.device.type == "npu"

    def is_floating_point(self):
        return self.dtype.category == _dt.FLOAT

    def is_complex(self):
        return self.dtype.category == _dt.COMPLEX

    def is_conj(self):
        return False  # conj() computes the conjugate at once (no lazy conjugate bit)

    def is_neg(self):
        return False

    @property
    def _version(self):
        return self._storage.version.value

    @property
    def _version_counter(self):
        return self._storage.version

    @property
    def data(self):
        """A tensor sharing this one's data but not its version counter (unlike detach())."""
        t = self._alias(Tensor)
        t._storage = DataStorage(self._storage)
        t._view_version = 0
        return t

    @data.setter
    def data(self, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(other).__name__}")
        self._storage = other._storage
        self._shape, self._strides, self._offset, self._full = other._shape, other._strides, other._offset, other._full

    # ------------------------------------------------------------------
    # conversion

    def numpy(self, force=False):
        if self._rg and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return np.asarray(self._numpy_value())

    def __array__(self, dtype=None, copy=None):
        arr = np.asarray(self._numpy_value())
        return arr.astype(dtype) if dtype is not None else arr

    def _numpy_value(self):
        """The concrete value a NumPy conversion reads: RuntimeError inside a torch.func transform (as
        PyTorch's), for a tensor the transform traces and for one detached from it (whose reads are constants
        under grad, but whose storage is still the transform's)."""
        st = self._storage
        if type(st) is DataStorage:
            st = st.target
        if type(st.value) is not _Array:
            raise RuntimeError(_TRACED_NUMPY)
        return self._value()

    def _concrete(self, what, under_vmap):
        """This tensor's core value for a Python conversion (`what`). Under torch.func.grad, vjp and jvp: the
        concrete primal, a constant (no derivative flows through a Python number, as PyTorch's); under vmap:
        RuntimeError(under_vmap), as PyTorch's; under torch.compile's trace: core's ConcretizationTypeError
        (a graph break naming `what`)."""
        v = self._value()
        if type(v) is _Array:
            return v
        try:
            return v.concrete(what)
        except core.ConcretizationTypeError as exc:
            if exc.transform == "vmap":
                raise RuntimeError(under_vmap) from None
            raise

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return self._concrete("item()", _VMAP_ITEM).item()

    def tolist(self):
        return self._concrete("tolist()", _VMAP_TOLIST).tolist()

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._concrete("the truth value of a tensor (if/while/and/or)", _VMAP_CONTROL_FLOW).item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.dtype.category != _dt.INT or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self.select(0, i) for i in range(self._shape[0]))

    __hash__ = object.__hash__

    def __repr__(self):
        return _format(self)

    __str__ = __repr__

    def __format__(self, spec):
        if self.ndim == 0 and spec:
            return format(self.item(), spec)
        return str(self)

    def __deepcopy__(self, memo):
        """An independent leaf copy (same dtype, geometry, requires_grad, subclass, attributes and a copied .grad).

        Tensors viewing one storage copied under one memo share one new storage, as in torch."""
        if id(self) in memo:
            return memo[id(self)]
        if self._grad_fn is not None:
            raise RuntimeError(_DEEPCOPY_NON_LEAF)
        storage = memo.get(id(self._storage))
        if storage is None:
            storage = Storage(self._storage.value)  # the value is immutable: a new Storage is a copy
            memo[id(self._storage)] = storage
            memo.setdefault(id(memo), []).append(self._storage)  # keep the key's object alive, as copy does
        new = _rebuild_tensor(storage, self._shape, self._geometry()[1], self._offset, False, type(self))
        new._rg = self._rg
        memo[id(self)] = new
        if self._grad is not None:
            new._grad = _copy.deepcopy(self._grad, memo)
        for k, v in self.__dict__.items():
            new.__dict__[k] = _copy.deepcopy(v, memo)
        return new

    def __reduce_ex__(self, protocol):
        """Pickle as (storage, geometry, requires_grad, class, attributes); the grad is not pickled.

        The Storage is pickled as an object of its own, so views of one base pickled together share one
        storage again. A non-leaf requiring grad unpickles as a leaf requiring grad (torch does the same)."""
        state = self.__dict__
        args = (self._storage, self._shape, self._geometry()[1], self._offset, self._rg, type(self))
        return (_rebuild_tensor, args, dict(state)) if state else (_rebuild_tensor, args)

    # ------------------------------------------------------------------
    # autograd

    @property
    def requires_grad(self):
        """Whether autograd tracks this tensor: it requires grad, or (inside torch.func.grad, vjp, jacrev) its
        value is differentiated by a reverse-mode transform, as PyTorch's GradTrackingTensor reads."""
        if self._rg:
            return True
        v = self._storage.value
        return type(v) is not _Array and core.reverse_traced(v)

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    def is_inference(self):
        """Whether this tensor was made inside torch.inference_mode (it then never joins autograd)."""
        return self._storage.inference

    def requires_grad_(self, requires_grad=True):
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use "
                                   "a computed variable in a subgraph that doesn't require differentiation use "
                                   "var_no_grad = var.detach().")
            return self
        if requires_grad and self.dtype.category < _dt.FLOAT:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")  # (torch's words; complex too)
        if requires_grad and _state.transforms:  # (the tape is off there: it would take no gradient)
            raise RuntimeError(
                "You are attempting to call Tensor.requires_grad_() (or perhaps using torch.autograd.functional.* "
                "APIs) inside of a function being transformed by a functorch transform. This is unsupported, "
                "please attempt to use the functorch transforms (e.g. grad, vjp, jacrev, jacfwd, hessian) or call "
                "requires_grad_() outside of a function being transformed instead.")
        if requires_grad and self._storage.inference and not _state.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        self._rg = bool(requires_grad)
        return self

    def _is_view(self):
        """Whether this tensor is a view of another (`_base`); a tensor that is no view may still cover its
        storage in another order than row-major (after t_(), as_strided_(), a channels_last copy)."""
        return self._base is not None

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def grad_fn(self):
        if self._base is not None and self._rg:
            self._refresh_view_history()
        return self._grad_fn

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got {type(value).__name__}")
            if value._shape != self._shape:
                raise RuntimeError(f"assigned grad has data of a different size: {list(value._shape)} "
                                   f"vs {list(self._shape)}")
            if value.dtype is not self.dtype:
                raise RuntimeError(f"assigned grad has data of a different type: {value.dtype} vs {self.dtype}")
        self._grad = value

    @property
    def retains_grad(self):
        return self._retains_grad

    def _refresh_view_history(self):
        """A view whose storage was written since its history was taken reads as_strided of its base."""
        base = self._base
        version = self._storage.version.value
        if self._view_version == version or not base._rg or self._created_in_no_grad:
            return
        shape, strides, offset = self._geometry()
        out = record_node(as_strided_p, {"shape": shape, "strides": strides, "offset": offset},
                          (storage_history(base),), (self._storage.value,), self._value())
        self._grad_fn, self._output_nr, self._rg = out._grad_fn, 0, True
        self._view_version = version

    def _edge(self):
        if self._base is not None:
            self._refresh_view_history()
        if self._grad_fn is not None:
            return (self._grad_fn, self._output_nr)
        if self._created_in_no_grad:  # torch gives such a view no grad accumulator: gradients stop here
            return _NO_EDGE
        if self._acc is None:
            self._acc = AccumulateGrad(self)
        return (self._acc, 0)

    def register_hook(self, hook):
        """hook(grad) runs when this tensor's gradient is computed; it may return a replacement."""
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        node, nr = self._edge()
        handle = node.add_pre_hook(nr, hook)
        hooks = node.pre_hooks[nr]
        if len(hooks) > 1 and getattr(hooks[-2], "retains_grad_hook", False):
            hooks.append(hooks.pop(-2))  # as in torch, retain_grad sees the grad after every other hook
        return handle

    def retain_grad(self):
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None or self._retains_grad:
            return
        if isinstance(self._value(), core.Tracer):  # (torch.compile's trace: the hook would run once, traced)
            raise RuntimeError("retain_grad() on a traced tensor: torch.compile runs this code eagerly")
        ref = weakref.ref(self)

        def keep(g):
            t = ref()
            if t is not None:
                t._grad = g.detach() if t._grad is None else Tensor._from_value(
                    core.add(t._grad._value(), g._value()))
        keep.retains_grad_hook = True
        self.register_hook(keep)
        self._retains_grad = True

    def detach(self):
        """A tensor sharing storage (and version counter) with no history: inside a torch.func transform (the
        value traced) it reads through a DataStorage, whose reads stop the transforms' derivatives."""
        t = self._alias(Tensor)
        if type(self._storage.value) is not _Array:
            t._storage = DataStorage(self._storage, share_version=True)
        return t

    def _alias(self, cls):
        """An instance of `cls` viewing this storage and geometry, with no autograd history."""
        t = object.__new__(cls)
        t._storage = self._storage
        t._shape, t._strides, t._offset, t._full = self._shape, self._strides, self._offset, self._full
        t._base = None
        t._grad_fn = None
        t._output_nr = 0
        t._rg = False
        t._grad = None
        t._retains_grad = False
        t._acc = None
        t._view_version = self._storage.version.value
        return t

    def detach_(self):
        if self._base is not None and self._rg:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._rg = False
        if type(self._storage.value) is not _Array:  # (traced: its reads stop the transforms' derivatives)
            self._storage = DataStorage(self._storage, share_version=True)
        return self

    def zero_grad_(self):
        self._grad = None
        return self

    # in-place machinery lives in inplace.py; views in views.py; the op methods in ops.py

    def _check_inplace(self):
        """PyTorch's leaf and inference-tensor rules, checked before an in-place op changes anything."""
        if self._storage.inference and not _state.inference:
            raise RuntimeError(_INFERENCE_INPLACE)
        if not grad_mode.tape_enabled():
            return
        if self._created_in_no_grad:
            raise RuntimeError(_NO_GRAD_VIEW_INPLACE)
        if self._grad_fn is None and self._rg and self._base is None:
            raise RuntimeError(_LEAF_INPLACE)
        base = self._base
        if base is not None and base._grad_fn is None and base._rg:
            raise RuntimeError(_VIEW_LEAF_INPLACE)




def storage_history(base):
    """A tensor holding base's storage value with base's history (the tensor views' histories are read from).

    A base (a tensor that is no view) usually covers its storage in row-major order (`_full`): then it is
    that tensor itself. After an in-place view op (`x.t_()`, `x.unsqueeze_(0)`, `x.as_strided_(...)`), or a
    layout change (keep_layout), its geometry is any (shape, strides, offset) over the storage: then it is
    base scattered (as_strided_scatter) into the storage's current value held as a constant, so that a
    view's geometry, which is over the storage, applies to it. Storage elements base does not cover have
    no history here (nothing that requires grad ever wrote them through base).
    """
    if base._full:
        return base
    st = base._storage
    shape, strides, offset = base._geometry()
    if not base._rg:
        return _from_value_no_grad(st.value)
    return record_node(as_strided_scatter_p, {"shape": shape, "strides": strides, "offset": offset, "donate": False},
                       (st.value, base), (st.value, base._value()), st.value)


def _from_value_no_grad(value):
    return _new_tensor(Tensor, value, False, None, 0)


def _alias_leaf(node, value):
    t = Tensor._from_value(value)
    t._acc = node
    t._rg = True
    return t


def _rebuild_tensor(storage, shape, strides, offset, requires_grad, cls):
    """The tensor of class `cls` viewing `storage` with this geometry: a leaf with no grad (unpickling)."""
    t = object.__new__(cls)
    t._storage = storage
    t._shape = tuple(shape)
    t._strides = tuple(strides)
    t._offset = offset
    base_shape = tuple(storage.value.shape)
    t._full = offset == 0 and t._shape == base_shape and t._strides == contiguous_strides(base_shape)
    if t._full:
        t._strides = None
    t._base = None
    t._grad_fn = None
    t._output_nr = 0
    t._rg = bool(requires_grad)
    t._grad = None
    t._retains_grad = False
    t._acc = None
    t._view_version = storage.version.value
    return t


def reduce_for_process(tensor):
    """multiprocessing's reduction of a tensor (queues, pipes, DataLoader workers): the pickle one, except
    that a non-leaf requiring grad is refused, since its history cannot cross to another process."""
    if tensor._rg and tensor._grad_fn is not None:
        raise RuntimeError(_CROSS_PROCESS_NON_LEAF)
    return tensor.__reduce_ex__(pickle.HIGHEST_PROTOCOL)


ForkingPickler.register(Tensor, reduce_for_process)


def _dim(d, ndim):
    if d.__class__ is not int:
        d = _index_arg(d, "dim", "must be int")
    n = max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d % n


as_result = Tensor._wrap  # the eager modules' name for it


def _named(out, name, *inputs):
    """out, its grad_fn named as torch names the node of the op that made it ("MeanBackward0" for a mean
    built from sum and div); a node out shares with an input (an op returning its input) keeps its name."""
    node = out._grad_fn if isinstance(out, Tensor) else None
    if type(node) is Node and all(node is not getattr(i, "_grad_fn", None) for i in inputs):
        node.torch_name = name
    return out


def _index_arg(v, what, rule):
    """v as an int where torch's parser wants one (a numpy integer or an integer 0-d tensor passes; a float,
    bool, str or None is the parser's TypeError)."""
    if isinstance(v, (bool, np.bool_)) or not hasattr(type(v), "__index__"):
        raise TypeError(f"argument '{what}' {rule}, not {type(v).__name__}")
    return v.__index__()


def _int_sizes(args, op, what="size", position=1):
    """The sizes from f(2, 3), f((2, 3)) or f([2, 3]) as a tuple of python ints, with the TypeError of torch's
    argument parser for anything else (f(2.5), f('6'), f((2.5,)), f(None))."""
    seq = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    if len(args) == 1 and not isinstance(args[0], (tuple, list)) and (
            isinstance(args[0], (bool, np.bool_)) or not hasattr(type(args[0]), "__index__")):
        raise TypeError(f"{op}(): argument '{what}' (position {position}) must be tuple of ints, not "
                        f"{type(args[0]).__name__}")
    out = []
    for i, s in enumerate(seq):
        if s.__class__ is not int:
            if isinstance(s, (bool, np.bool_)) or not hasattr(type(s), "__index__"):
                raise TypeError(f"{op}(): argument '{what}' (position {position}) must be tuple of ints, but found "
                                f"element of type {type(s).__name__} at pos {i}")
            s = s.__index__()
        out.append(s)
    return tuple(out)
