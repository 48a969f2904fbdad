"""Staging out: jit and make_jaxpr trace a function once per input signature into a typed IR, optimize it, plan its
buffers and run it as generated straight-line code.

The IR (jaxpr.py, shared with torch.compile) is the trace of binds. `make_jaxpr(f)(x)` prints it as JAX does:

    make_jaxpr(lambda x: core.sin(x) * 2.0)(core.ones(3))
    { lambda ; a:f32[3]. let
        b:f32[3] = sin a
        c:f32[3] = mul b 2.0:f32[]
      in (c,) }

`jit(f)(x)`, per input signature (pytree structure, shapes, dtypes, devices, static arguments):
  1. traces f with JitTracers (JitTrace records each bind as an equation; meta rules give the avals);
  2. optimizes: folds constants, drops the identities autodiff leaves behind (`add_any` of zeros,
     `mul` by ones, casts and reshapes to what the value already is), merges common subexpressions,
     removes dead code (collectives are effects and stay);
  3. runs the lowerings once as an interpreter, learning which results need numpy's scalar/dtype
     fix-up, then generates a Python function with one line per equation and no dispatch:
        v3 = F1(v1, v2)          # the primitive's cpu lowering, called directly
        v4 = F2(v3, out=v3)      # a ufunc writing into a buffer the plan owns and no one reads again
  The buffer planner is the second write point DESIGN.md allows: it writes with `out=` only into
  buffers the plan allocated (ufunc results whose alias class is dead) and donated inputs.

Under an outer transform (jit called on tracers: grad, vjp, jvp, vmap or an enclosing jit), the call is
transparent: the cached jaxpr is evaluated by binding its equations on those tracers, so the outer
transform sees ordinary primitives and every rule applies. Inside jit, grad/vmap run while tracing,
so `jit(grad(f))` compiles the backward pass too.
"""
import collections
import functools
import itertools
import logging
import sys
import threading
import warnings

import numpy as np

from . import _choice, _hugepages
from . import buffer_plan as _buffer_plan
from . import fusion as _fusion
from .array import Array, ArrayBase, aval as _aval, make as _make
from .devices import meta as _meta
from .jaxpr import Eqn, Jaxpr, Literal, Var, eval_jaxpr, optimize, partition
from .ops.elementwise import cast_p
from .ops.creation import asarray
from .primitive import ConcretizationTypeError, Trace, Tracer, new_main
from .pytree import tree_flatten, tree_unflatten

__all__ = ["jit", "make_jaxpr", "ConcretizationTypeError", "RecompileWarning", "trace_flat", "Executable",
           "vjp_jaxprs"]

_log = logging.getLogger("mindtorch_v2.jit")


class RecompileWarning(UserWarning):
    """A jitted function keeps being traced again for new input signatures."""

# ---------------------------------------------------------------------------
# tracing


class JitTracer(Tracer):
    __slots__ = ("var",)

    def __init__(self, main, var):
        self._main = main
        self.var = var

    shape = property(lambda self: self.var.aval.shape)
    dtype = property(lambda self: self.var.aval.dtype)
    device = property(lambda self: self.var.aval.device)


class JitTrace(Trace):
    __slots__ = ("eqns", "literals")
    transform = "jit"
    concrete_hint = ", or mark the argument static with static_argnums"

    def __init__(self, main):
        Trace.__init__(self, main)
        self.eqns = []
        self.literals = {}  # id(value) -> Literal (the Literal keeps the value alive)

    def literal(self, value):
        lit = self.literals.get(id(value))
        if lit is None:
            lit = self.literals[id(value)] = Literal(value)
        return lit

    def process(self, prim, args, params):
        main = self.main
        invars = [a.var if type(a) is JitTracer and a._main is main else self.literal(a) for a in args]
        out, _, device = prim._entry([v.aval for v in invars], params)  # (the meta rule's checks, staged or not)
        if prim.staged is not None:
            staged = prim.staged(*args, **params)
            if staged is not None:
                return staged
        if prim.multiple_results:
            outvars = [Var(_aval(s, d, device)) for s, d in out]
        else:
            outvars = [Var(_aval(out[0], out[1], device))]
        self.eqns.append(Eqn(prim, invars, params, outvars))
        if prim.multiple_results:
            return tuple(JitTracer(main, v) for v in outvars)
        return JitTracer(main, outvars[0])


def trace_flat(f, avals):
    """The Jaxpr of f (a list of arrays -> a list of arrays) on inputs of these avals."""
    with new_main(JitTrace) as main:
        trace = main.trace
        invars = [Var(_aval(a.shape, a.dtype, a.device)) for a in avals]
        outs = f([JitTracer(main, v) for v in invars])
        outvars = []
        for o in outs:
            if type(o) is JitTracer and o._main is main:
                outvars.append(o.var)
            else:
                outvars.append(trace.literal(o if isinstance(o, ArrayBase) else asarray(o)))
    return Jaxpr(invars, trace.eqns, outvars)


# ---------------------------------------------------------------------------
# execution: a probe run, then generated straight-line code with a buffer plan


class _Deleted:
    """The buffer of an Array donated to a jit call: any use says so."""

    __slots__ = ()

    def __getattr__(self, name):
        raise RuntimeError("this Array was donated to a jitted function (donate_argnums) and its buffer was "
                           "reused; it has been deleted. Use the function's result instead.")


_DELETED = _Deleted()


class Executable:
    """One compiled signature of a jitted function: its optimized Jaxpr and the code that runs it."""

    __slots__ = ("jaxpr", "donated", "source", "fused", "_run", "_eqns", "_lowerings", "_fix", "_c_order", "_quiet",
                 "_meta", "_warned", "_arena_spec", "_arenas", "_out_avals", "_first")

    def __init__(self, jaxpr, donated):
        self.jaxpr = jaxpr
        self.donated = frozenset(donated)  # positions among the flat inputs whose buffers the plan may reuse
        self.source = None      # the generated code, once the probe run has happened
        self._run = None
        self._warned = False
        self._meta = all(v.device is _meta for v in itertools.chain(jaxpr.invars, jaxpr.outvars))
        self._lowerings = None
        self._fix = None
        self._c_order = None
        self._quiet = False      # whether a lowering silences numpy's warnings (then the program does, once)
        self._eqns = jaxpr.eqns  # what runs: the jaxpr's equations, with fused kernels in place of some runs
        self._out_avals = [(v.shape, v.dtype, v.device) for v in jaxpr.outvars]
        self._arena_spec = ()    # (shape, dtype) of each arena buffer (see buffer_plan.plan)
        self._arenas = []        # idle arenas, one per call that has run at once
        self.fused = 0           # how many fused kernels the program runs
        self._first = threading.Lock()  # the first call's probe and code generation run once, in one thread

    def __call__(self, arrays, owned=False):
        """The outputs for these input Arrays. owned: the caller has checked that each donated Array's buffer
        is its own to give (torch.compile's storages, checked before it picks this program), so they are
        taken as they are, and the Arrays, about to be replaced, are left to the caller."""
        jaxpr = self.jaxpr
        if self._meta:
            return [_out_array(a, None) for a in jaxpr.outvars]
        bufs = self._take_donations(arrays) if self.donated and not owned else [a._buf for a in arrays]
        run = self._run
        if run is None:  # the probe only reads; the plan's first run then gives this call's results
            with self._first:  # (a second thread calling at once waits for the program, then runs it)
                run = self._run
                if run is None:
                    self._probe(bufs)
                    run = self._run = self._generate()
        if self._arena_spec:
            # each running call takes an arena of its own (a second thread makes a second one)
            arenas = self._arenas
            arena = arenas.pop() if arenas else _hugepages.empty_many(self._arena_spec)
            try:
                outs = run(*bufs, arena)
            finally:
                arenas.append(arena)
        else:
            outs = run(*bufs)
        return [_make(b, *a) for b, a in zip(outs, self._out_avals)]

    def _take_donations(self, arrays):
        """The input buffers, with each donated one checked first: it is reused (and its Array deleted)
        only if it is ours alone: writable, not a view, held by this one Array alone (getrefcount sees
        that reference and its own argument) and passed once. Otherwise the plan gets a copy."""
        bufs = [a._buf for a in arrays]
        once = len(set(map(id, arrays))) == len(arrays)
        counts = None if once else collections.Counter(map(id, arrays))
        for i in self.donated:
            a = arrays[i]
            buf = bufs[i]
            # (getrefcount counts the Array's reference, `bufs`, `buf` and its own argument)
            if (sys.getrefcount(buf) <= 4 and type(buf) is np.ndarray and _hugepages.owned(buf)
                    and buf.flags.writeable and (once or counts[id(a)] == 1)):
                _set_buf(a, _DELETED)
                continue
            if not self._warned:
                self._warned = True
                warnings.warn("jit: a donated buffer was not usable (it is shared with another array or "
                              "with numpy); it was copied instead", UserWarning, stacklevel=4)
            bufs[i] = buf.copy()
        return bufs

    def _probe(self, bufs):
        """Interpret once on real buffers, learning which results need a numpy fix-up (a scalar for a
        0-d result, a wider dtype)."""
        env = dict(zip(map(id, self.jaxpr.invars), bufs))
        fix = []
        # the lowering each equation runs (chosen by the avals: narrow dtypes get their float32 wrapper)
        # (a wrapper that only silences numpy's floating-point warnings gives way to its ufunc: the whole
        # program runs under one errstate, and a ufunc can write into the plan's buffers)
        chosen = [None if e.outvars[0].device is _meta else e.prim._entry([a.aval for a in e.invars], e.params)[1]
                  for e in self.jaxpr.eqns]
        self._quiet = any(getattr(f, "ufunc", None) is not None for f in chosen)
        self._lowerings = [_unwrapped(f) for f in chosen]

        def read(a):
            return _literal_buf(a) if type(a) is Literal else env[id(a)]

        for k, (e, f) in enumerate(zip(self.jaxpr.eqns, self._lowerings)):
            if f is None:
                out = [None] * len(e.outvars)
                fix.append(False)
            else:
                args = [read(a) for a in e.invars]
                special = f.specialize(e) if getattr(f, "specialize", None) is not None else None
                if special is not None:  # the lowering for these avals and params, as one cheap call
                    f = self._lowerings[k] = special
                with np.errstate(all="ignore"):
                    res = f(*args) if special is not None else f(*args, **e.params)
                    if getattr(f, "variants", None) is not None:  # (the quickest with the same bits)
                        f, res = _choice.fastest(f, f.variants(*args, **e.params), res, args, e.params)
                        self._lowerings[k] = f
                res = res if e.prim.multiple_results else (res,)
                needs = any(type(r) is not np.ndarray or r.dtype != v.dtype.np for r, v in zip(res, e.outvars))
                fix.append(needs)
                out = [_fixed(r, v) for r, v in zip(res, e.outvars)] if needs else res
            env.update(zip(map(id, e.outvars), out))
        self._fix = fix
        # the layouts seen: the plan writes with out= only where inputs and target are C-ordered, as a ufunc's
        # own result would be (out= into a C buffer from an F-ordered input is a slow strided copy)
        self._c_order = {k: type(b) is np.ndarray and b.flags.c_contiguous for k, b in env.items()}
        if _fusion.available():
            with np.errstate(all="ignore"):  # (the candidates run on the probe's values: 1/0 is inf silently)
                self._fuse(env)
        return [read(a) for a in self.jaxpr.outvars]

    def _fuse(self, env):
        """Replace runs of consecutive fusable equations by fused kernels where they measure faster."""
        eqns, lowerings, fix = self.jaxpr.eqns, self._lowerings, self._fix
        last_use = {}
        for k, e in enumerate(eqns):
            for a in e.invars:
                last_use[id(a)] = k
        for a in self.jaxpr.outvars:
            last_use[id(a)] = len(eqns)
        new_eqns, new_lowerings, new_fix = [], [], []
        k = 0
        while k < len(eqns):
            end = k
            if _fusion.fusable(eqns[k], lowerings[k], fix[k]):
                aval = (eqns[k].outvars[0].shape, eqns[k].outvars[0].dtype)
                while end + 1 < len(eqns) and _fusion.fusable(eqns[end + 1], lowerings[end + 1], fix[end + 1]) \
                        and (eqns[end + 1].outvars[0].shape, eqns[end + 1].outvars[0].dtype) == aval:
                    end += 1
            fused = None
            if end > k:
                fused = _fusion.fuse(eqns[k:end + 1], lowerings[k:end + 1],
                                     lambda a: _literal_buf(a) if type(a) is Literal else env[id(a)],
                                     lambda v, end=end: last_use.get(id(v), -1) > end)
            if fused is None:  # NumPy keeps the whole run (its suffixes are not tried again)
                new_eqns.extend(eqns[k:end + 1])
                new_lowerings.extend(lowerings[k:end + 1])
                new_fix.extend(fix[k:end + 1])
                k = end + 1
                continue
            run, inputs, outputs = fused
            new_eqns.append(Eqn(_FUSED, inputs, {}, outputs))
            new_lowerings.append(run)
            new_fix.append(False)
            for v in outputs:
                self._c_order[id(v)] = True
            self.fused += 1
            k = end + 1
        self._eqns, self._lowerings, self._fix = new_eqns, new_lowerings, new_fix

    def _generate(self):
        jaxpr = self.jaxpr
        names = {}
        glob = {"FIX": _fixed}
        for i, v in enumerate(jaxpr.invars):
            names[id(v)] = f"i{i}"
        for k, lit in enumerate(jaxpr.literals):
            names[id(lit)] = f"K{k}"
            glob[f"K{k}"] = _literal_buf(lit)
        self._eqns, self._lowerings, self._fix = _written_last_read_first(jaxpr, self._eqns, self._lowerings, self._fix)
        program = Jaxpr(jaxpr.invars, self._eqns, jaxpr.outvars)
        plan, arena = _buffer_plan.plan(program, self._lowerings, self._fix, set(self.donated), self._c_order)
        slots = {k: f"S{j}" for j, k in enumerate(arena)}
        self._arena_spec = tuple(arena.values())
        lines = [f"def run({''.join(names[id(v)] + ', ' for v in jaxpr.invars)}S=()):"]
        if slots:
            lines.append(f"    {''.join(n + ', ' for n in slots.values())}= S")
        counter = itertools.count()
        dies = _buffer_plan.deaths(program, plan)
        # 0-d float arithmetic runs on numpy scalars (an optimizer's step scalars: ~0.1 us an operation, not the
        # ~1.5 us of a ufunc call on 0-d arrays and its fix-up); IEEE arithmetic gives the ufunc's bits. A scalar
        # value read by any other equation, or returned, gets a 0-d array twin (name + "_a")
        scalar = {k: x for k, (e, f) in enumerate(zip(self._eqns, self._lowerings))
                  if f is not None and (x := _scalar_expr(e, f)) is not None}
        scalar_vars = {id(self._eqns[k].outvars[0]) for k in scalar}
        twins = {id(a) for k, e in enumerate(self._eqns) if k not in scalar for a in e.invars if id(a) in scalar_vars}
        twins |= {id(a) for a in jaxpr.outvars if id(a) in scalar_vars}
        if scalar:  # (they warn where the ufunc would: the program's errstate covers the quiet ones, as ever)
            glob.update(ARR=np.asarray, TO_F32=np.float32, TO_F64=np.float64)
            glob.update({f"UFUNC_{f.__name__}": f for f in self._lowerings if isinstance(f, np.ufunc)})

        def ref(a, as_scalar=False):
            n = names[id(a)]
            if id(a) in scalar_vars:
                return n if as_scalar else n + "_a"
            if not as_scalar:
                return n
            if type(a) is Literal:
                glob[n + "s"] = _literal_buf(a)[()]
                return n + "s"
            return n + "[()]"

        for k, (e, f) in enumerate(zip(self._eqns, self._lowerings)):
            outs = []
            for v in e.outvars:
                names[id(v)] = f"v{next(counter)}"
                outs.append(names[id(v)])
            if f is None:
                lines.append(f"    {', '.join(outs)}{',' if len(outs) == 1 else ''} = {(None,) * len(outs)!r}")
                continue
            if k in scalar:
                lines.append(f"    {outs[0]} = {scalar[k].format(*[ref(a, True) for a in e.invars])}")
                if id(e.outvars[0]) in twins:
                    lines.append(f"    {outs[0]}_a = ARR({outs[0]})")
            else:
                glob[f"F{k}"] = f
                args = [ref(a) for a in e.invars]
                if e.params and not getattr(f, "binds_params", False):
                    glob[f"P{k}"] = e.params
                    args.append(f"**P{k}")
                target = plan.get(k)
                if type(target) is tuple:  # (a fused run's results: each over one of its inputs, or fresh)
                    args.append(f"out=({''.join((names[id(t)] if t is not None else 'None') + ', ' for t in target)})")
                elif target is not None:
                    args.append(f"out={names[id(target)]}")
                elif k in slots:
                    args.append(f"out={slots[k]}")
                call = f"F{k}({', '.join(args)})"
                if e.prim.multiple_results:
                    lines.append(f"    {', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}")
                    if self._fix[k]:
                        for o, v in zip(outs, e.outvars):
                            glob[f"A{o}"] = v
                            lines.append(f"    {o} = FIX({o}, A{o})")
                elif self._fix[k]:
                    glob[f"A{k}"] = e.outvars[0]
                    lines.append(f"    {outs[0]} = FIX({call}, A{k})")
                else:
                    lines.append(f"    {outs[0]} = {call}")
            if dies[k]:  # its memory goes back to the allocator now, reused hot by what follows
                gone = [n for v in dies[k] for n in (names[id(v)], names[id(v)] + "_a")[:1 + (id(v) in twins)]]
                lines.append(f"    del {', '.join(gone)}")
        lines.append("    return (" + "".join(f"{ref(a)}, " for a in jaxpr.outvars) + ")")
        if self._quiet:  # one errstate for the whole program (~1 us): log(0) is -inf and 1/0 inf silently
            lines = [lines[0], "  with ERRSTATE(all='ignore'):"] + ["  " + line for line in lines[1:]]
            glob["ERRSTATE"] = np.errstate
        self.source = "\n".join(lines)
        exec(compile(self.source, "<jit>", "exec"), glob)  # noqa: S102  (our own generated code)
        return glob["run"]


_set_buf = Array._buf.__set__

_SCALAR_EXPR = {np.add: "{} + {}", np.subtract: "{} - {}", np.multiply: "{} * {}", np.true_divide: "{} / {}",
                np.negative: "-{}"}


_SCALAR_CASTS = {np.dtype(np.float32): "TO_F32({})", np.dtype(np.float64): "TO_F64({})"}  # (one rounding, as astype)


def _written_last_read_first(jaxpr, eqns, lowerings, fix):
    """The equations reordered so that the chains that work on results and compute only results (an
    optimizer's update of a weight from its grad: nothing else reads them) run last, the one that reads the input
    the program reads first at the very end. A training step called again reads its first layer's weight first:
    updated last, it is still in cache (a 784-512-512 MLP step: ~1% faster at batch 128, ~4% at 16). A chain
    moves whole, and only where that keeps nothing alive longer than it lives anyway: what it reads from outside
    is an input, a result or 0-d. Only arithmetic moves (ufuncs, fused runs of them: they cannot raise), so an
    equation that raises on its data (an index check, nll_loss) still does so before the writes that follow it
    in place into donated buffers; collectives keep their place."""
    inputs = {id(v) for v in jaxpr.invars}
    results = {id(v) for v in jaxpr.outvars}
    producer = {id(v): k for k, e in enumerate(eqns) for v in e.outvars}
    readers = collections.defaultdict(set)
    first_read = {}
    for k, e in enumerate(eqns):
        for a in e.invars:
            readers[id(a)].add(k)
            first_read.setdefault(id(a), k)

    def outside(a):  # an operand that lives anyway
        return type(a) is Literal or id(a) in inputs or id(a) in results or a.shape == ()

    tail = {k for k, (e, f) in enumerate(zip(eqns, lowerings))
            if not e.effectful and (isinstance(f, np.ufunc) or e.prim is _FUSED)}
    changed = True
    while changed:  # (drop what is read outside the tail, reads a temporary made outside it, or does not work
        changed = False  # on a result: computing from inputs alone is the program itself, not its epilogue)
        for k in sorted(tail):
            e = eqns[k]
            if any(not readers[id(v)] <= tail for v in e.outvars) or any(
                    not outside(a) and producer.get(id(a)) not in tail for a in e.invars) or not any(
                    id(a) in results or producer.get(id(a)) in tail for a in e.invars):
                tail.discard(k)
                changed = True
    if not tail:
        return eqns, lowerings, fix
    chain = {k: k for k in tail}  # union-find: the chains (linked by what one computes for another)

    def find(k):
        while chain[k] != k:
            k = chain[k]
        return k
    for k in sorted(tail):
        for a in eqns[k].invars:
            j = producer.get(id(a))
            if j in tail:
                chain[find(k)] = find(j)
    chains = collections.defaultdict(list)
    for k in sorted(tail):
        chains[find(k)].append(k)
    # (a chain reading no input goes first; ties keep their order)
    order = sorted(chains.values(), key=lambda ks: -min(
        (first_read[id(a)] for k in ks for a in eqns[k].invars if id(a) in inputs), default=len(eqns)))
    order = [k for k in range(len(eqns)) if k not in tail] + [k for ks in order for k in ks]
    return [eqns[k] for k in order], [lowerings[k] for k in order], [fix[k] for k in order]


def _scalar_expr(e, f):
    """The Python expression (operands as {}) of equation e (lowering f) when it is 0-d float arithmetic that may
    run on numpy scalars, else None. Not pow: numpy's SIMD power and its scalar (libm) power differ in the last
    place for ~5% of operands."""
    out = e.outvars[0]
    if out.shape != () or out.dtype.np not in _SCALAR_CASTS or any(a.shape != () for a in e.invars):
        return None
    if e.prim is cast_p:  # from a float, an integer or a bool: the scalar conversion is astype's C cast
        return _SCALAR_CASTS[out.dtype.np] if e.invars[0].dtype.np.kind in "fiub" else None
    if isinstance(f, np.ufunc) and f.nout == 1 and not e.params and all(a.dtype is out.dtype for a in e.invars):
        # + - * / as Python operators on the scalars; any other ufunc called on them (the same loop as on
        # 0-d arrays, so the same bits: numpy's SIMD pow, not libm's), its scalar result kept as it is
        return _SCALAR_EXPR.get(f) or f"UFUNC_{f.__name__}({', '.join(['{}'] * f.nin)})"
    return None


def _unwrapped(lowering):
    """The ufunc inside a lowering that only wraps it in np.errstate (`.ufunc`), else the lowering."""
    u = getattr(lowering, "ufunc", None)
    return lowering if u is None else u


class _FusedKernel:
    """The primitive slot of a fused equation (it exists only in an Executable's program)."""
    name = "fused"
    multiple_results = True


_FUSED = _FusedKernel()


def _out_array(v, buf):
    if type(v) is Literal:
        return v.value
    return _make(buf, v.shape, v.dtype, v.device)


def _literal_buf(lit):
    return lit.value._buf


def _fixed(r, v):
    if type(r) is not np.ndarray:
        r = np.asarray(r)
    if r.dtype != v.dtype.np:
        r = r.astype(v.dtype.np)
    return r


# ---------------------------------------------------------------------------
# the public transforms


_SCALARS = (bool, int, float, complex)
_NOT_FAST = object()  # in a fast-path key: an argument that is not an Array (never a stored key)
_LEAF_TREE = tree_flatten(0)[1]


class _Jitted:
    """The function `jit` returns: call it like f; `.lower(*args)` gives the Executable for that signature."""

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums, cache_size, warn_after):
        self.fun = fun
        self.static_argnums = tuple(sorted(static_argnums))
        self.static_argnames = tuple(static_argnames)
        self.donate_argnums = frozenset(donate_argnums)
        self.cache_size = cache_size
        self.warn_after = warn_after
        self._cache = collections.OrderedDict()
        self._fast = {}  # avals of positional Arrays -> (executable, output tree, whether it is one leaf)
        self._compiles = 0
        self._hits = 0
        self._last_key = None
        functools.update_wrapper(self, fun, updated=())  # its name, doc and __wrapped__

    def __repr__(self):
        return f"<jit of {getattr(self.fun, '__qualname__', self.fun)!r}>"

    def __get__(self, obj, objtype=None):  # a jitted method binds like a function
        if obj is None:
            return self
        return functools.partial(self, obj)

    def _split(self, args, kwargs):
        n = len(args)
        static = []
        for i in self.static_argnums:
            j = i if i >= 0 else n + i
            if not 0 <= j < n:
                raise ValueError(f"jit: static_argnums {i} is out of range for a call with {n} positional arguments")
            static.append((j, args[j]))
        dyn_args = [a for j, a in enumerate(args) if j not in {s for s, _ in static}]
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        static_kw = tuple(sorted((k, v) for k, v in kwargs.items() if k in self.static_argnames))
        leaves, tree = tree_flatten((dyn_args, dyn_kwargs))
        return static, static_kw, leaves, tree

    def _signature(self, args, kwargs):
        static, static_kw, leaves, tree = self._split(args, kwargs)
        sig = []
        dynamic = []
        has_tracer = False
        for x in leaves:
            if isinstance(x, Tracer):
                has_tracer = True
                dynamic.append(x)
                sig.append((x.shape, x.dtype, x.device))
            elif isinstance(x, ArrayBase):
                dynamic.append(x)
                sig.append((x.shape, x.dtype, x.device))
            elif isinstance(x, (np.ndarray, np.generic)):
                x = asarray(x)
                dynamic.append(x)
                sig.append((x.shape, x.dtype, x.device))
            elif type(x) in _SCALARS:
                sig.append((type(x), x))  # a Python number stays weak: traced as the constant it is
            else:
                raise TypeError(f"jit: an argument of type {type(x).__name__} is not an array, a number or a "
                                "pytree of them; pass it through static_argnums / static_argnames")
        key = (tree, tuple(sig), tuple(static), static_kw)
        try:
            hash(key)
        except TypeError:
            raise ValueError("jit: static arguments must be hashable (use tuples, not lists or arrays): "
                             f"{[v for _, v in static] + [v for _, v in static_kw]}") from None
        return key, static, static_kw, leaves, tree, dynamic, has_tracer

    def _flat_fun(self, static, static_kw, leaves, tree, out_tree):
        fun = self.fun

        def flat(tracers):
            it = iter(tracers)
            filled = [x if type(x) in _SCALARS else next(it) for x in leaves]
            dyn_args, dyn_kwargs = tree_unflatten(tree, filled)
            args = list(dyn_args)
            for j, v in static:
                args.insert(j, v)
            out = fun(*args, **dyn_kwargs, **dict(static_kw))
            out_flat, t = tree_flatten(out)
            out_tree.append(t)
            return out_flat
        return flat

    def _executable(self, args, kwargs):
        key, static, static_kw, leaves, tree, dynamic, has_tracer = self._signature(args, kwargs)
        entry = self._cache.get(key)
        if entry is not None:
            self._hits += 1
            self._cache.move_to_end(key)
            return entry, dynamic, has_tracer
        out_tree = []
        jaxpr = trace_flat(self._flat_fun(static, static_kw, leaves, tree, out_tree), dynamic)
        closes_over_tracers = any(not lit.concrete for lit in jaxpr.literals)
        if not closes_over_tracers:
            jaxpr = optimize(jaxpr)
        donated = self._donated_positions(args, static, leaves) if self.donate_argnums else ()
        entry = (Executable(jaxpr, donated), out_tree[0], closes_over_tracers)
        if not closes_over_tracers:  # a jaxpr holding an outer transform's tracer is good for this call only
            self._record_compile(key)
            self._cache[key] = entry
            if len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
                self._fast.clear()
        return entry, dynamic, has_tracer

    def _donated_positions(self, args, static, leaves):
        """Positions among the dynamic leaves of the donated positional arguments."""
        static_pos = {j for j, _ in static}
        pos = []
        k = 0
        for j, a in enumerate(args):
            if j in static_pos:
                continue
            n = sum(1 for x in tree_flatten(a)[0] if type(x) not in _SCALARS)
            if j in self.donate_argnums:
                pos.extend(range(k, k + n))
            k += n
        return tuple(pos)

    def _record_compile(self, key):
        self._compiles += 1
        name = getattr(self.fun, "__qualname__", repr(self.fun))
        _log.info("jit: tracing %s for signature %s", name, key[1])
        if self._compiles > self.warn_after and self._compiles - 1 == self.warn_after:
            prev = self._last_key
            changed = "the input signature" if prev is None else _what_changed(prev, key)
            warnings.warn(f"jit: {name} has been traced {self._compiles} times (last change: {changed}). Each "
                          "new shape, dtype, static argument or Python number value traces again; pass varying "
                          "numbers as arrays.", RecompileWarning, stacklevel=4)
        self._last_key = key

    def __call__(self, *args, **kwargs):
        if not kwargs and not self.static_argnums:
            # the fast path: positional Arrays only, looked up by their avals without flattening
            hit = self._fast.get(tuple([(a.shape, a.dtype, a.device) if type(a) is Array else _NOT_FAST
                                        for a in args]))
            if hit is not None:
                exe, out_tree, single = hit
                self._hits += 1
                outs = exe(args)
                return outs[0] if single else tree_unflatten(out_tree, outs)
            # pytrees of Arrays (a model's parameters): looked up by their structure (one interned TreeDef
            # object per structure) and avals
            leaves, tree = tree_flatten(args)
            tree_key = (tree, tuple([(a.shape, a.dtype, a.device) if type(a) is Array else _NOT_FAST
                                     for a in leaves]))
            try:
                hit = self._fast.get(tree_key)
            except TypeError:  # a registered node's unhashable aux data
                hit = tree_key = None
            if hit is not None:
                self._hits += 1
                return tree_unflatten(hit[1], hit[0](leaves))
        (exe, out_tree, closes_over_tracers), dynamic, has_tracer = self._executable(args, kwargs)
        if not (kwargs or self.static_argnums or has_tracer or closes_over_tracers):
            if all(type(a) is Array for a in args) and len(dynamic) == len(args):
                self._fast[tuple((a.shape, a.dtype, a.device) for a in args)] = (
                    exe, out_tree, out_tree == _LEAF_TREE)
            elif tree_key is not None and _NOT_FAST not in tree_key[1]:
                self._fast[tree_key] = (exe, out_tree)
        if has_tracer or closes_over_tracers:
            outs = eval_jaxpr(exe.jaxpr, dynamic)
        else:
            outs = exe(dynamic)
        return tree_unflatten(out_tree, outs)

    def lower(self, *args, **kwargs):
        """The Executable for this call's signature (its `.jaxpr` is the optimized program; `.source` the
        generated code, once it has run)."""
        return self._executable(args, kwargs)[0][0]

    def cache_info(self):
        """(hits, misses, currsize, maxsize) of the trace cache."""
        return _CacheInfo(self._hits, self._compiles, len(self._cache), self.cache_size)

    def clear_cache(self):
        self._cache.clear()
        self._fast.clear()


_CacheInfo = collections.namedtuple("CacheInfo", "hits misses currsize maxsize")


def _what_changed(prev, key):
    tree0, sig0, st0, kw0 = prev
    tree1, sig1, st1, kw1 = key
    if tree0 != tree1:
        return "the pytree structure of the arguments"
    for i, (a, b) in enumerate(zip(sig0, sig1)):
        if a != b:
            return f"argument leaf {i}: {_sig_str(a)} -> {_sig_str(b)}"
    if st0 != st1 or kw0 != kw1:
        return "a static argument's value"
    return "unknown"


def _sig_str(s):
    if len(s) == 3:
        return f"{s[1].name}{list(s[0])}"
    return f"{s[0].__name__} {s[1]!r}"


def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=(), cache_size=64, warn_after=16):
    """f, traced once per input signature and run as an optimized, generated program (see the module
    docstring). static_argnums/static_argnames: arguments that are Python values the trace depends on
    (hashable; each value traces again). donate_argnums: arguments whose buffers the program may reuse
    for its results (the donated Arrays are deleted). cache_size bounds the signatures kept; after
    `warn_after` traces a RecompileWarning says what keeps changing."""
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    if isinstance(donate_argnums, int):
        donate_argnums = (donate_argnums,)
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames,
                             donate_argnums=donate_argnums, cache_size=cache_size, warn_after=warn_after)
    if not callable(fun):
        raise TypeError(f"jit: expected a function, got {type(fun).__name__}")
    if set(donate_argnums) & set(static_argnums):
        raise ValueError("jit: an argument cannot be both static and donated")
    return _Jitted(fun, static_argnums, static_argnames, donate_argnums, cache_size, warn_after)


def make_jaxpr(fun, static_argnums=()):
    """A function returning the Jaxpr (as traced, before optimization) of fun on given arguments."""
    jitted = jit(fun, static_argnums=static_argnums)

    def make(*args, **kwargs):
        key, static, static_kw, leaves, tree, dynamic, _ = jitted._signature(args, kwargs)
        return trace_flat(jitted._flat_fun(static, static_kw, leaves, tree, []), dynamic)
    return make


# ---------------------------------------------------------------------------
# reverse mode staged out: one joint trace split into a forward and a backward program


def vjp_jaxprs(f, avals):
    """The reverse mode of f (a list of arrays -> a list of arrays) as two programs, as AOTAutograd's
    partition: `fwd(*primals) -> outputs + residuals` and `bwd(*residuals, *cotangents) -> one cotangent per
    primal` (zeros where there is no path). Returns (fwd, bwd, n_outputs).

    One trace holds f, its VJP and both sets of inputs; optimizing it whole merges what the two passes
    share. Equations that depend on a cotangent are the backward's; everything else is the forward's,
    and the forward values the backward reads are the residuals (computed once, never recomputed)."""
    from .autodiff import vjp_flat  # noqa: PLC0415  (autodiff imports nothing of staging; kept local for clarity)
    from .primitive import zeros_like  # noqa: PLC0415

    with new_main(JitTrace) as main:
        trace = main.trace
        primal_vars = [Var(_aval(a.shape, a.dtype, a.device)) for a in avals]
        primals = [JitTracer(main, v) for v in primal_vars]
        outs, pullback = vjp_flat(f, primals)
        outs = [o if isinstance(o, ArrayBase) else asarray(o) for o in outs]
        ct_vars = [Var(_aval(o.shape, o.dtype, o.device)) for o in outs]
        grads = pullback([JitTracer(main, v) for v in ct_vars])
        grads = [zeros_like(p) if g is None else g for g, p in zip(grads, primals)]

        def atom(x):
            return x.var if type(x) is JitTracer and x._main is main else trace.literal(x)
        joint = Jaxpr(primal_vars + ct_vars, trace.eqns, [atom(o) for o in outs] + [atom(g) for g in grads])
    if any(not lit.concrete for lit in joint.literals):
        raise TypeError("vjp_jaxprs: f closes over a tracer of an outer transform; pass that value as an input")
    fwd, bwd, _ = partition(optimize(joint), len(primal_vars), len(outs))
    n_out = len(outs)
    return fwd, bwd, n_out
