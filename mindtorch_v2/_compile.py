"""torch.compile's machinery: eager code (Tensors, in-place ops, modules, autograd, optimizers) traced into the
staging IR (core/staging.py) and run as an Executable, with guards deciding reuse.

How one call runs (`CompiledFunction.__call__`):

  1. discover the state the code reads: the call's tensor arguments, then what is reachable from the
     arguments, the function's closure cells and default argument values, the globals its code (and the
     code nested in it) names, the attributes it names of the user's own modules and classes, and `self`
     of a bound method, through lists, tuples, deques, dicts, modules (parameters, buffers, any other
     attribute, hooks), optimizers (params, `opt.state[p]`) and any other object's attributes that the code
     reached names (its functions', methods' and modules' methods' names, as dynamo guards what code reads:
     a step counter no code reads is not guarded): its tensors and each leaf's `.grad`.
     Each tensor's storage is an input of the program, by position in this order. What the function
     reaches by itself is remembered (_World) with what each container held, and later calls check those
     containers by identity instead of walking again (steps 1 and 2: _compile_guards.py). A function that
     reaches more than 20000 objects, nests them deeper than 32 levels, or reaches more than 1 MiB of NumPy
     arrays, runs eagerly with a warning. The functions it reaches are followed through their closure cells,
     default values and (the user's own functions: not installed ones, nor this package's) the globals
     their code names;
  2. the guard key: per tensor its geometry, dtype, device, requires_grad, leafness and gradient hooks, the
     storage it shares and where it was found; the arguments' Python values (a dataclass by its fields), the
     other values the walk met (numbers, strings, NumPy arrays by content, functions and other objects by
     identity, held weakly so a freed object's id reused by a new one never matches), the optimizers'
     param_groups numbers, the modules' training flags, grad mode, the default dtype and device and the
     cpu autocast dtype. A known key runs its entry; a new one traces;
  3. tracing lifts every discovered storage (its `value` becomes a JitTracer, restored afterwards even on
     error), runs the function once with `is_compiling()` True and reads off, after it returns:
       - the returned tensors' values;
       - each lifted storage whose value changed (in-place ops, optimizer updates, grad accumulation):
         an output written back into that storage on every call, its version bumped as eager did;
       - each leaf whose `.grad` was replaced (`loss.backward()` on fresh grads, `zero_grad()`): the new
         grad is an output set on the leaf on every call (or None);
     a returned tensor that is an input, or views one's storage (`return x`, `x[0]`, `x.t()`), is that
     tensor or a view of it on every call (on the autograd path, an input itself only), as eager's; so is
     a returned new .grad that grad, and a result returned twice, or viewed by another, the same tensor or
     a view of it (_compile_results._aliases);
     and, when grad mode is on, an output requires grad and the code did not run backward itself, calls
     `autograd.grad` on the traced outputs with traced cotangents inside the same trace (so the eager
     tape's own rules, `detach`, `no_grad` regions and custom Functions all count) and splits the joint
     program AOTAutograd-style into a forward (outputs + residuals) and a backward (residuals +
     cotangents -> input grads). The outputs then carry one grad_fn whose backward runs the backward
     program;
  4. graph breaks run the call eagerly with a warning (once per cause), or raise Unsupported under
     fullgraph=True: a concrete value needed (`.item()`, `bool()`, `int()`, numpy(), data-dependent
     shapes), a draw from an explicit torch.Generator, or a seed or state set on one (counted, so a state
     put back as fork_rng does still shows; every generator's state is put back, and eager then draws the
     same numbers; likewise Python's `random` and NumPy's global generator), draws together with reads or
     sets of the default generator's state (fork_rng, a checkpoint's preserve_rng_state), `print`, a
     `torch.compiler.disable`d function, and any other error of the trace when the eager run succeeds. A
     call that first creates optimizer state runs eagerly, once; the next traces.

Random ops: draws from the default generator (dropout, rand, randn, bernoulli_) split a key that is an input
of the program, a fresh one from the default generator on every call (random_ops.traced_randomness): a
compiled step with dropout draws anew each call, reproducibly after manual_seed, its backward using the
forward's draw. As PyTorch's compiled random ops, the numbers are not eager's stream;
torch._inductor.config.fallback_random = True runs such code eagerly instead, with eager's numbers.

Python-side effects: the trace runs the code's Python for real. Where it changes Python state the walk
reads (an attribute set, a list appended to, a dict item, a global, param_groups: a counter, a loss history,
a scheduler stepped inside, a parameter created on the first call), the changes are undone
(_compile_guards._Checkpoint) and the call runs eagerly, so they happen once; a trace that breaks off for
another reason is undone the same way. Each such trace counts toward the recompile limit.

An iterator the code reaches (next(it)) is a graph break before the trace runs; so is a returned tensor
that requires grad made inside (a leaf: its .grad needs eager's graph).

Known limits: Python state the walk does not read (a set, an object reached only through a library's
module) is not undone, so a graph break's eager run repeats changes made there; what
the code reads through a route the walk does not follow (an object with __slots__ and no __dict__, a set,
a C extension's container) is baked in as a constant, and an in-place write to such a tensor happens once,
at trace time; the attributes of installed modules and classes, the globals of installed functions (the
standard library, site-packages, this package) and Python attributes set on tensors are read at trace time
only (the user's own modules and classes are read for the names the code uses: `cfg.scale`); double
backward through a compiled region raises; the version counters of grads that eager bumps in place are not
replayed. (Code that runs backward itself and returns a result whose graph is still alive, with
retain_graph=True or apart from that backward, and `retain_grad()` on a traced tensor, are graph breaks.)
"""
import builtins
import collections
import copy
import functools
import logging
import math
import random
import sys
import warnings
import weakref

import numpy as np

from . import core
from .core import _hugepages
from .core.array import aval as _aval
from .core.array import make as _make
from .core.primitive import new_main
from .core.jaxpr import Jaxpr, Var, optimize, partition
from .core.staging import ConcretizationTypeError, Executable, JitTrace, JitTracer
from .eager import grad_mode
from .eager.autograd.api import grad as _autograd_grad
from .eager.autograd.engine import FREED_MSG, _check_saved, backward_runs
from .eager.autograd.function import Function
from .eager.autograd.graph import Saved
from .eager.random_ops import default_generator, generator_states, restore_generators, rng_events, traced_randomness
from .eager.tensor import Tensor
from ._compile_results import (_Leaf, _aliased, _aliases, _flatten, _graph_alive, _holds_tensors, _land,
                               _released, _unflatten)
from ._compile_guards import (_MAX_ARRAY_BYTES, _MAX_DEPTH, _MAX_NODES, _SCALARS, Wrapper, _Checkpoint, _Found,
                              _World, _guard_key, _plain, _storage, _what_changed)

__all__ = ["CompiledFunction", "GraphBreak", "is_compiling", "reset", "compile_callable", "counters"]

_log = logging.getLogger("mindtorch_v2.compile")
_KEY = core.random.key(0)  # (the aval of a random key: what a program that draws takes per call)

_tracing = [0]  # depth of compile traces in progress (is_compiling)
_warned = set()  # (function name, cause) pairs already warned about
_all_compiled = weakref.WeakSet()  # for reset(); a compiled function nobody holds goes, with its programs

counters = collections.Counter()  # "traces", "compiled_calls", "eager_calls", "graph_breaks" (torch._dynamo.utils.counters' role)


def is_compiling():
    """True while torch.compile traces code."""
    return _tracing[0] > 0


class GraphBreak(Exception):
    """Raised inside a trace where it cannot proceed (a torch.compiler.disable'd function, print)."""


class _NewState(Exception):
    """The traced call created optimizer state: run it eagerly, trace again next call."""


def reset():
    """Forget every compiled program (torch._dynamo.reset)."""
    for fn in _all_compiled:
        fn._cache.clear()
        fn._last = None
        fn._world, fn._rewalks, fn._too_big = None, 0, False
        fn._n_traces = 0
    _warned.clear()
    counters.clear()


# ---------------------------------------------------------------------------
# tracing


class _Snapshot:
    """What a trace may change and must give back: storage values and versions, each tensor's autograd
    fields, the optimizers' state dicts and param_groups, every torch.Generator's state."""

    def __init__(self, found, storages):
        self.values = [st.value for st in storages]
        self.versions = [st.version.value for st in storages]
        self.fields = [(t, t._grad_fn, t._output_nr, t._rg, t._grad, t._view_version, t._base)
                       for t in found.tensors]
        self.geometry = [(t._storage, t._shape, t._strides, t._offset, t._full) for t in found.tensors]
        self.opt_state = [(opt, {k: dict(v) for k, v in opt.state.items()}) for opt in found.optimizers]
        self.groups = [[{k: v for k, v in g.items()} for g in opt.param_groups] for opt in found.optimizers]
        self.rng = generator_states()
        self.rng_events = rng_events()
        self.host_rng = (random.getstate(), np.random.get_state())

    def host_rng_changed(self):
        """Whether the code drew from Python's `random` or NumPy's global generator."""
        py, (_, key, pos, gauss, cached) = random.getstate(), np.random.get_state()
        before = self.host_rng[1]
        return (py != self.host_rng[0] or pos != before[2] or gauss != before[3] or cached != before[4]
                or not np.array_equal(key, before[1]))

    def rng_changed(self):
        """Whether any Generator drew, was seeded or had its state set (even one put back as it was, as
        torch.random.fork_rng does)."""
        return rng_events() != self.rng_events

    def state_changed(self):
        for opt, saved in self.opt_state:
            if len(opt.state) != len(saved):
                return True
            for k, v in opt.state.items():
                old = saved.get(k)
                if old is None or old.keys() != v.keys() or any(old[n] is not v[n] for n in v):
                    return True
        return False

    def groups_changed(self, found):
        return any(len(opt.param_groups) != len(saved) or any(
            g.keys() != s.keys() or any(g[k] is not s[k] and g[k] != s[k] for k in g)
            for g, s in zip(opt.param_groups, saved)) for opt, saved in zip(found.optimizers, self.groups))

    def restore(self, storages):
        for st, v, n in zip(storages, self.values, self.versions):
            st.value = v
            st.version.value = n
        for t, fn, nr, rg, g, vv, base in self.fields:
            t._grad_fn, t._output_nr, t._rg, t._grad, t._view_version, t._base = fn, nr, rg, g, vv, base
        for (t, *_), (st, shape, strides, offset, full) in zip(self.fields, self.geometry):
            t._storage, t._shape, t._strides, t._offset, t._full = st, shape, strides, offset, full
        for opt, saved in self.opt_state:
            for k in [k for k in opt.state if k not in saved]:
                del opt.state[k]
            for k, v in saved.items():
                d = opt.state[k]
                d.clear()
                d.update(v)
        restore_generators(self.rng)

    def tensors_changed(self):
        """What the code changed of a tensor it reads besides its values and grad (None if nothing): its
        storage or geometry (`.data =`, set_, an out= resize, t_, unsqueeze_, as_strided_), or requires_grad.
        A program replays values only: these run eagerly."""
        for (t, _, _, rg, *_), (st, shape, strides, offset, _) in zip(self.fields, self.geometry):
            if t._storage is not st or t._shape != shape or t._strides != strides or t._offset != offset:
                return ("the code changes the storage or shape of a tensor it reads in place (.data =, set_, "
                        "an out= resize, t_, unsqueeze_, as_strided_)")
            if t._rg != rg and t._grad_fn is None:
                return "the code changes requires_grad of a tensor it reads (requires_grad_)"
        return None


def _no_print(*args, **kwargs):
    raise GraphBreak("print() inside compiled code")


class _Entry:
    """One compiled signature: the program(s) and how their outputs land.

    outputs of `fwd` (in order): the returned tensors' values, the new values of mutated storages, the new
    grads; then (autograd path) the residuals. `bwd` maps residuals + cotangents of the differentiable
    outputs to the grads of the differentiable inputs."""

    __slots__ = ("fwd", "bwd", "template", "n_ret", "ret_rg", "mutated", "bumps", "grads", "diff_in",
                 "diff_out", "n_res", "bwd_has", "donating", "released", "saved_inputs", "aliases", "to_huge_pages",
                 "spent", "random")

    def __init__(self):
        self.aliases = None
        self.spent = False
        self.bwd = None
        self.donating = None
        self.released = ()
        self.to_huge_pages = ()


class _Boundary:
    """What a non-leaf input that requires grad has as its grad_fn while a trace runs: the end of the traced
    backward (the gradient that reaches it is captured there, and goes no further), named as the node it
    stands for, so the traced code sees the tensor as eager code does (is_leaf False, a grad_fn)."""

    __slots__ = ("_node", "n_outputs")
    seq = -1  # (the engine runs it last: nothing flows out of it)
    next_functions = ()
    pre_hooks = hooks = None

    def __init__(self, node, output_nr):
        self._node = node
        self.n_outputs = output_nr + 1

    def name(self):
        return self._node.name()

    def apply(self, grads, create_graph):
        return []

    def release_variables(self):
        pass


def _trace(fn, args, kwargs, found, storages):
    """The _Entry of fn on this call's state (raises GraphBreak, _NewState or the trace's own error)."""
    snap = _Snapshot(found, storages)
    # the Python state the call reaches (attributes, list and dict items, globals), to see whether the code
    # changes it and to undo that (_Checkpoint)
    state = _World(fn, args, kwargs)
    if state.iterators:  # (before the code runs: a trace's next() would take an item the eager run then lacks)
        raise GraphBreak("the code reads an iterator (next(it)): its position is Python state a compiled program "
                         "would not replay")
    checkpoint = _Checkpoint(state.log)
    python_changed = False
    runs_before = backward_runs()
    # differentiable inputs: leaves and non-leaves requiring grad are made leaves for the trace, so the
    # traced backward stops at the compiled region's boundary
    grad_on = grad_mode.tape_enabled()
    diff_in = [t for t in found.tensors if t._rg] if grad_on else []
    with new_main(JitTrace) as main:
        trace = main.trace
        invars = [Var(_aval(v.shape, v.dtype, v.device)) for v in snap.values]
        tracers = [JitTracer(main, v) for v in invars]
        saved_print = builtins.print
        _tracing[0] += 1
        try:
            for st, tr in zip(storages, tracers):
                st.value = tr
            for t in diff_in:
                if t._grad_fn is not None:  # (a non-leaf still reads as one: is_leaf, grad_fn)
                    t._grad_fn = _Boundary(t._grad_fn, t._output_nr)
                t._base = None
            builtins.print = _no_print
            key_var = Var(_aval(_KEY.shape, _KEY.dtype, _KEY.device))
            if _fallback_random():  # (draws advance the generator: a graph break, eager's stream)
                result, rng = fn(*args, **kwargs), (None, False, False)
            else:
                with traced_randomness(JitTracer(main, key_var)) as rng:  # (default-generator draws: a key input)
                    result = fn(*args, **kwargs)
            builtins.print = saved_print
            key_vars = [key_var] if rng[1] else []
            if rng[1] and rng[2]:
                raise GraphBreak("the code draws random numbers and reads or sets the generator's state (fork_rng, "
                                 "a checkpoint's preserve_rng_state): it needs eager's random stream")
            if snap.rng_changed():
                raise GraphBreak("a random op draws from an explicit generator, or the code seeds or sets one "
                                 "(the compiled program would replay one draw)")
            if snap.host_rng_changed():
                raise GraphBreak("the code draws from Python's `random` or NumPy's global random generator (the "
                                 "compiled program would replay one draw)")
            if snap.state_changed():
                raise _NewState()
            if snap.groups_changed(found):
                raise GraphBreak("the code changes optimizer param_groups (a Python-side effect)")
            changed = snap.tensors_changed()
            if changed is not None:
                raise GraphBreak(changed)
            returned = []
            template = _flatten(result, returned)
            for leaf in template[1]:  # (a dataclass, a dict subclass: the trace's object would be returned as is)
                if leaf is not _Leaf and type(leaf) not in _SCALARS and _holds_tensors(leaf):
                    raise GraphBreak(f"the code returns a {type(leaf).__name__} holding tensors, a container the "
                                     "compiled program cannot rebuild (register it with "
                                     "torch.utils._pytree.register_pytree_node)")
            ret_vals = [t._value() for t in returned]
            ret_rg = [t._rg for t in returned]
            inside = [t for t, rg in zip(returned, ret_rg)
                      if rg and t._grad_fn is None and t._base is None and id(t) not in {id(u) for u in found.tensors}]
            if inside:  # (a program output is no leaf: its .grad after a backward outside would stay None)
                raise GraphBreak("the code returns a tensor that requires grad made inside (a leaf, as "
                                 "torch.zeros_like(x, requires_grad=True)): its gradient needs eager's graph")
            if not grad_on and any(ret_rg):
                raise GraphBreak("the code enables grad mode inside: its results require grad, called where "
                                 "grad mode is off")
            mutated = [k for k, (st, tr) in enumerate(zip(storages, tracers)) if st.value is not tr]
            mut_vals = [storages[k].value for k in mutated]
            bumps = [storages[k].version.value - snap.versions[k] for k in mutated]
            grads = []
            for t, f in zip(found.tensors, snap.fields):
                if f[1] is None and t._grad is not f[4]:  # a leaf whose .grad was replaced (or let go)
                    grads.append(t)
            grad_vals = [None if t._grad is None else t._grad._value() for t in grads]
            replaced = {id(t) for t in grads}  # (a returned new grad is that grad on every call: _aliases)
            new_grads = {id(t._grad): (k, t._grad) for k, t in enumerate(found.tensors)
                         if id(t) in replaced and t._grad is not None}
            grad_storages = {id(_storage(f[4])) for f in snap.fields if f[4] is not None}
            backward_ran = (bool(grads) or any(id(storages[k]) in grad_storages for k in mutated)
                            or backward_runs() != runs_before)  # (zero_grad after step: grads None again)
            if backward_ran and any(rg and _graph_alive(t._grad_fn) for t, rg in zip(returned, ret_rg)):
                raise GraphBreak("the code runs backward itself and returns a result whose graph is still alive "
                                 "(retain_graph=True, or apart from that backward): a later backward through it "
                                 "needs eager's graph")
            diff_out = [i for i, (t, rg) in enumerate(zip(returned, ret_rg)) if rg and t.dtype.category >= core.dtypes.FLOAT]
            autograd_path = grad_on and diff_out and diff_in and not backward_ran
            ct_vars, in_grads = [], []
            if autograd_path:
                if any(storages[k] is _storage(t) for t in diff_in for k in mutated):
                    raise GraphBreak("an in-place update of a tensor that requires grad, with autograd across "
                                     "the compiled boundary")
                ct_vars = [Var(_aval(ret_vals[i].shape, ret_vals[i].dtype, ret_vals[i].device)) for i in diff_out]
                cts = [Tensor._from_value(JitTracer(main, v)) for v in ct_vars]
                saved_inputs = _saved_inputs(returned, storages, snap.versions)  # (before backward frees them)
                # a leaf's gradient hooks stay out of the program: the eager engine runs them when it
                # accumulates the region's gradient into the leaf (traced too, they would run twice)
                hooked = [(a, a.pre_hooks) for t in diff_in if (a := t._acc) is not None and a.pre_hooks]
                try:
                    for a, _ in hooked:
                        a.pre_hooks = None
                    with grad_mode.enable_grad():
                        gs = _autograd_grad([returned[i] for i in diff_out], diff_in, grad_outputs=cts,
                                            allow_unused=True)
                finally:
                    for a, hooks in hooked:
                        a.pre_hooks = hooks
                in_grads = [(k, g._value()) for k, g in enumerate(gs) if g is not None]

            def atom(x):
                if type(x) is JitTracer and x._main is main:
                    return x.var
                if isinstance(x, core.Tracer):
                    raise GraphBreak("the code closes over a value traced by an outer transform")
                return trace.literal(x)

            outvars = [atom(v) for v in ret_vals + mut_vals] + [atom(v) for v in grad_vals if v is not None]
            joint = Jaxpr(invars + key_vars + ct_vars, trace.eqns, outvars + [atom(g) for _, g in in_grads])
        finally:
            builtins.print = saved_print
            _tracing[0] -= 1
            snap.restore(storages)
            # (also when the trace broke off: the eager run then makes the changes once)
            python_changed = checkpoint.restore() or not state.holds()
    if python_changed:
        raise GraphBreak("the code changes Python state it reads (an attribute, a list or dict item, a global, "
                         "optimizer param_groups): a compiled program would not replay that")
    counters["traces"] += 1
    e = _Entry()
    e.template, e.n_ret, e.ret_rg = template, len(ret_vals), ret_rg
    e.random = bool(key_vars)
    e.mutated, e.bumps = mutated, bumps
    e.spent = backward_ran and not autograd_path and any(ret_rg)
    ids = {id(t): k for k, t in enumerate(found.tensors)}
    e.grads = [(ids[id(t)], v is not None) for t, v in zip(grads, grad_vals)]
    e.aliases = _aliases(returned, found, storages, new_grads, autograd_path)
    if not autograd_path:
        e.fwd = _program(joint)
        e.released = _released(e, found, storages, snap)
        # the storages it overwrites (parameters, optimizer state, accumulated grads) may lend their buffers
        # to the program's results, as an in-place update would; used per call when no one else holds them.
        # So do the old grads it replaces unread: the new grads are written into them
        lent = sorted(set(mutated) | {pos for _, _, pos in e.released})
        e.donating = _program(joint, lent) if lent else None
        # (an old grad lent is overwritten unread: its value need not move)
        e.to_huge_pages = [[k, k in mutated, _MOVES] for k in lent
                           if _hugepages.worth(invars[k].dtype.np.itemsize * math.prod(invars[k].shape))]
        return e
    e.diff_in = [ids[id(t)] for t in diff_in]
    e.diff_out = diff_out
    e.saved_inputs = saved_inputs
    e.bwd_has = [k for k, _ in in_grads]
    fwd, bwd, n_res = partition(optimize(joint), len(invars) + len(key_vars), len(outvars))
    e.fwd, e.bwd, e.n_res = _program(fwd), _program(bwd), n_res
    return e


def _saved_inputs(returned, storages, versions):
    """(position, version offset) of each input storage that a node of the traced forward saved for its
    backward, with its version then less its version when the call began: a run checks, before its
    backward, that no in-place write has bumped it since, as eager's saved-tensor check does."""
    where = {id(st._version): k for k, st in enumerate(storages) if st._version is not None}
    out = {}
    seen = set()
    stack = [t._grad_fn for t in returned if t._grad_fn is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for saved in (getattr(node, "saved", None) or {}).values():
            k = where.get(id(saved.counter))
            if k is not None:
                out[k] = saved.version - versions[k]
        stack.extend(n for n, _ in getattr(node, "next_functions", ()) if n is not None)
    return tuple(out.items())


def _program(jaxpr, donated=()):
    """The Executable of a traced program, optimized."""
    return Executable(optimize(jaxpr), donated)


def _donatable(a, in_storage=True):
    """Whether a storage's value is ours alone to donate: the Array held by the caller's list and its storage
    (in_storage) only, not shared with a clone, a saved tensor or the user; its buffer held by it alone and
    writable. (getrefcount also counts `a` and its own argument; for the buffer, `buf` and the argument.)"""
    buf = a._buf
    return (type(buf) is np.ndarray and buf.flags.writeable and _hugepages.owned(buf)
            and sys.getrefcount(a) <= 3 + in_storage and sys.getrefcount(buf) <= 3)


def _to_huge_pages(e, ins):
    """Move the big buffers lent to the program onto huge pages (core/_hugepages.py), normally once: the program
    then writes each step's weights and grads in place there. e.to_huge_pages: [input position, whether the program
    reads its value, moves left] for the lent inputs big enough (_hugepages.worth). Returns the buffers moved."""
    moved = []
    for entry in e.to_huge_pages:
        k, read, left = entry
        a = ins[k]
        if left and not _hugepages.on_huge_pages(a._buf):
            buf = _hugepages.empty(a._buf.shape, a._buf.dtype)
            if buf is None:  # (huge pages switched off since the trace: NumPy's memory stays)
                continue
            if read:
                np.copyto(buf, a._buf)
            ins[k] = _make(buf, a.shape, a.dtype, a.device)
            entry[2] = left - 1
            moved.append((k, buf))
    return moved


def _kept_in_place(e, moved, outs):
    """Stop moving the inputs whose moved buffer the program did not write its result into (its result went
    to another buffer: each call would move it again)."""
    written = {id(v._buf) for v in outs}
    dropped = {k for k, buf in moved if id(buf) not in written}
    if dropped:
        e.to_huge_pages = [m for m in e.to_huge_pages if m[0] not in dropped]


# a lent buffer moved this often has been replaced by other code between calls each time (an eager clamp_ of a
# weight after every step): from then on it stays where it is
_MOVES = 3


# ---------------------------------------------------------------------------
# running an entry


def _inputs(e, storages):
    """A run's inputs: the storages' values, and a fresh key from the default generator where the code draws."""
    ins = [st.value for st in storages]
    if e.random:
        ins.append(default_generator.next_key())
    return ins


def _run(e, found, storages):
    ins = _inputs(e, storages)
    if e.released:  # the old grads the program replaces unread: let go of them first (see _released)
        tensors = found.tensors
        for k, j, pos in e.released:
            tensors[k]._grad = None
            tensors[j] = storages[pos] = None
            # lent only if now held by `ins` alone: else a grad the user kept would be overwritten; then a new
            # buffer stands in for it
            if not _donatable(ins[pos], False):  # (positional: a keyword call would hold one more reference)
                old = ins[pos]
                ins[pos] = _make(np.empty(old._buf.shape, old._buf.dtype), old.shape, old.dtype, old.device)
    if e.donating is not None and all(_donatable(ins[k]) for k in e.mutated):
        moved = _to_huge_pages(e, ins) if e.to_huge_pages else None
        outs = e.donating(ins, owned=True)  # (each lent buffer checked just now: mutated ones here, old grads above)
        if moved:
            _kept_in_place(e, moved, outs)
    else:
        outs = e.fwd(ins)
    values = _land(e, found, storages, outs)
    rets = [Tensor._from_value(v) for v in values] if e.aliases is None else _aliased(e, found, values)
    if e.spent:  # the code ran backward itself: what required grad still does, its graph spent, as eager's
        for t, rg in zip(rets, e.ret_rg):
            if rg and t._grad_fn is None and t._base is None:
                t._rg, t._grad_fn = True, _SPENT
    return _unflatten(e.template, iter(rets))


class _Region(Function):
    """The autograd node of a compiled region: forward runs the forward program, backward the backward one."""

    @staticmethod
    def forward(ctx, e, found, storages, *diff_tensors):
        ctx.saved_inputs = [Saved(storages[k].value, storages[k].version, storages[k].version.value + offset,
                                  _NO_EDGE, False) for k, offset in e.saved_inputs]
        outs = e.fwd(_inputs(e, storages))
        n_fwd = len(outs) - e.n_res
        ctx.residuals = outs[n_fwd:]
        ctx.entry = e
        rets = [Tensor._from_value(v) for v in _land(e, found, storages, outs[:n_fwd])]
        ctx.mark_non_differentiable(*[t for i, t in enumerate(rets) if i not in set(e.diff_out)])
        return tuple(rets)

    @staticmethod
    def backward(ctx, *gs):
        if grad_mode.tape_enabled():
            raise RuntimeError("torch.compile: double backward (create_graph=True) through a compiled region is "
                               "not supported; call the function uncompiled for higher-order gradients")
        e = ctx.entry
        res = ctx.residuals
        if res is None or ctx._mt_freed:  # (a backward without retain_graph released it, as eager's nodes)
            raise RuntimeError("Trying to backward through the graph a second time (or directly access saved "
                               "tensors after they have already been freed). Specify retain_graph=True if you "
                               "need to backward through the graph a second time.")
        for saved in ctx.saved_inputs:
            _check_saved(_SPENT, saved)  # (the check names the node: a region's backward)
        cts = [gs[i]._value() for i in e.diff_out]
        outs = e.bwd(list(res) + cts)
        grads = [None] * len(e.diff_in)
        for k, g in zip(e.bwd_has, outs):
            grads[k] = Tensor._from_value(g)
        return (None, None, None, *grads)


class _Spent(_Boundary):
    """The grad_fn of a result whose graph the compiled code's own backward used up (a training step's loss):
    it requires grad, as eager's does, and a second backward raises eager's error."""

    seq = 0

    def __init__(self):
        self.n_outputs = 1

    def name(self):
        return "CompiledFunctionBackward"

    def apply(self, grads, create_graph):
        raise RuntimeError(FREED_MSG)


_SPENT = _Spent()


_NO_EDGE = (None, 0)


def _run_autograd(e, found, storages):
    diff = [found.tensors[k] for k in e.diff_in]
    rets = _Region.apply(e, found, storages, *diff)
    if e.aliases is not None:  # a returned input is that input (its own autograd history, as eager's)
        rets = [r if a is None else found.tensors[a[1]] for r, a in zip(rets, e.aliases)]
    return _unflatten(e.template, iter(rets))


# ---------------------------------------------------------------------------
# the compiled callable


_EAGER = "eager"  # a cache entry: this signature runs eagerly (its cause was warned about)

_BREAKS = (ConcretizationTypeError, GraphBreak, IndexError, RuntimeError)


def _cause(exc):
    if isinstance(exc, ConcretizationTypeError):
        return f"a traced tensor's concrete value is needed ({str(exc).split(' needs', 1)[0]})"
    if isinstance(exc, GraphBreak):
        return str(exc)
    msg = str(exc)
    if msg.startswith("retain_grad() on a traced tensor"):
        return "retain_grad() on a traced tensor (its hook would run once, at trace time)"
    if "boolean mask" in msg or "concrete" in msg:
        return "a data-dependent shape (boolean mask, nonzero)"
    if "numpy()" in msg or "traced" in msg:
        return "a traced tensor converted to numpy or Python"
    return None


class CompiledFunction(Wrapper):
    """What torch.compile returns for a function: calls trace, cache per guard key and run compiled."""

    def __init__(self, fn, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None):
        self._fn = fn
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.backend = backend
        self.mode = mode
        self.options = options
        self._cache = collections.OrderedDict()
        self._last = None
        self._world = None  # what the function reaches by itself (_World); False: walked on every call
        self._too_big = False  # it reaches more than the walk takes: it runs eagerly
        self._rewalks = 0
        self._n_traces = 0
        self._limit_warned = False
        functools.update_wrapper(self, fn, updated=())  # its name, doc and __wrapped__
        _all_compiled.add(self)

    def __repr__(self):
        return f"<compiled {getattr(self._fn, '__qualname__', self._fn)!r}>"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def _options(self):
        return dict(fullgraph=self.fullgraph, dynamic=self.dynamic, backend=self.backend, mode=self.mode,
                    options=self.options)

    def __deepcopy__(self, memo):  # a copied module gets its own compiled forward, traced afresh
        return CompiledFunction(copy.deepcopy(self._fn, memo), **self._options())

    def __reduce__(self):
        return (_rebuild, (self._fn, self._options()))

    def _name(self):
        return getattr(self._fn, "__qualname__", repr(self._fn))

    def _break(self, cause, exc=None):
        """A graph break: raise under fullgraph, else warn once per cause."""
        counters["graph_breaks"] += 1
        if self.fullgraph:
            from ._dynamo.exc import Unsupported  # noqa: PLC0415  (the exception type torch users catch)
            raise Unsupported(f"torch.compile(fullgraph=True): graph break in {self._name()}: {cause}") from exc
        if (self._name(), cause) not in _warned:
            _warned.add((self._name(), cause))
            warnings.warn(f"torch.compile: {self._name()} runs eagerly: {cause}", UserWarning, stacklevel=4)

    def _eager(self, args, kwargs):
        counters["eager_calls"] += 1
        return self._fn(*args, **kwargs)

    def _new_world(self):
        """A new _World; after a few in a row (a container the function reaches changes every call), the
        function is walked on every call instead."""
        if self._world is not None:
            self._rewalks += 1
        if self._rewalks > 3:
            self._world = False
            return _World(self._fn)
        self._world = _World(self._fn)
        return self._world

    def _discover(self, args, kwargs):
        """What this call reads (a _Found) and the optimizer state's part of the guard key if known. Its paths
        are the arguments' and the function's apart, so that a remembered walk and a new one give one key."""
        found = _Found()
        found.walk(args)
        if kwargs:
            found.walk(kwargs, 0, ("kwargs",))
        if found.modules or found.optimizers or self._world is False:
            world = _World(self._fn, args, kwargs)  # (modules passed as arguments: walked with the function)
            found = _Found()
            paths = world.paths
        else:
            world = self._world
            if world is None or not world.holds():
                world = self._new_world()
            elif self._rewalks:
                self._rewalks = 0
            paths = (tuple(found.paths), world.paths[1])
        if world.too_big:
            self._world = False
            return None, None
        found.add(world.tensors)
        found.modules, found.optimizers, found.paths, found.values = (world.modules, world.optimizers, paths,
                                                                      world.values)
        return found, world.state_key

    def __call__(self, *args, **kwargs):
        if _tracing[0]:
            return self._fn(*args, **kwargs)  # inside another compiled function's trace: inline
        if self._too_big:
            return self._eager(args, kwargs)
        found, state = self._discover(args, kwargs)
        if found is not None:
            key, storages = _guard_key(found, args, kwargs, state)
            last = self._last  # the signature of the last call, compared without hashing the whole key
            entry = last[1] if last is not None and last[0] == key else self._cache.get(key)
            if entry is None and isinstance(self._world, _World):
                # a new signature starts from a fresh walk: what the remembered one cannot see has changed may
                # have (a gradient hook registered since: the walk reads its closure)
                self._world = _World(self._fn)
                found, state = self._discover(args, kwargs)
        if found is None:
            self._too_big = True
            self._break(f"it reaches more than {_MAX_NODES} objects (closure cells, globals, attributes), nests "
                        f"them deeper than {_MAX_DEPTH} levels, or reaches more than {_MAX_ARRAY_BYTES >> 20} MiB "
                        "of NumPy arrays, more than the guards can watch; pass what it needs as arguments")
            return self._eager(args, kwargs)
        if entry is None:
            key, storages = _guard_key(found, args, kwargs, state)
            entry = self._cache.get(key)
        if entry is None:
            if not _plain(key):  # (a cached key's storages held Arrays when it was traced)
                return self._fn(*args, **kwargs)  # under a torch.func transform: run as plain code
            if self._n_traces >= _recompile_limit():
                if not self._limit_warned:
                    self._limit_warned = True
                    warnings.warn(f"torch.compile: {self._name()} hit the recompile limit ({_recompile_limit()}, "
                                  "torch._dynamo.config.recompile_limit); new signatures run eagerly. Last change: "
                                  f"{_what_changed(next(reversed(self._cache)), key) if self._cache else '?'}",
                                  UserWarning, stacklevel=2)
                return self._eager(args, kwargs)
            self._n_traces += 1  # (a trace that breaks counts too: a counter the code bumps breaks every call)
            try:
                entry = _trace(self._fn, args, kwargs, found, storages)
            except _NewState:
                self._n_traces -= 1
                return self._eager(args, kwargs)  # the first step creates optimizer state: eager, then trace
            except _BREAKS as exc:
                cause = _cause(exc)
                if cause is None:  # an error of the code itself, or a trace limit: eager decides
                    out = self._eager(args, kwargs)
                    cause = f"the trace failed ({type(exc).__name__}: {exc})"
                    self._break(cause, exc)
                    self._cache[key] = _EAGER
                    return out
                self._break(cause, exc)
                self._cache[key] = _EAGER
                return self._eager(args, kwargs)
            except Exception as exc:  # noqa: BLE001  (a genuine error is raised again by the eager run)
                out = self._eager(args, kwargs)
                self._break(f"the trace failed ({type(exc).__name__}: {exc})", exc)
                self._cache[key] = _EAGER
                return out
            self._cache[key] = entry
            _log.info("torch.compile: traced %s (%d)", self._name(), self._n_traces)
        elif entry is _EAGER:
            return self._eager(args, kwargs)
        self._last = (key, entry)
        counters["compiled_calls"] += 1
        if entry.bwd is not None:
            return _run_autograd(entry, found, storages)
        return _run(entry, found, storages)


def _rebuild(fn, options):
    return CompiledFunction(fn, **options)


def _fallback_random():
    from ._inductor import config  # noqa: PLC0415  (read per trace: users set it at any time)
    return config.fallback_random


def _recompile_limit():
    from ._dynamo import config  # noqa: PLC0415  (read per trace: users set it at any time)
    return config.recompile_limit


def compile_callable(fn, **options):
    """The compiled form of a callable (a function, a bound method)."""
    return CompiledFunction(fn, **options)
