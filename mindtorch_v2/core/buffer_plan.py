"""A jit program's buffer plan (core/staging.py's Executable runs it): which equations write with out= into which
dead intermediate or donated input, which intermediates live in the arena kept between calls, and after which
line each intermediate is deleted."""
import collections
import math

import numpy as np

from . import dtypes as _dt
from .jaxpr import Literal, Var

__all__ = ["ARENA_BYTES", "accepts_out", "deaths", "plan"]


def deaths(program, plan):
    """{equation index: the intermediate vars last used there (read, or lent as an out= buffer)}. The generated
    code deletes them after that line, so a value dead midway is not held until the program returns."""
    last = {}
    for k, e in enumerate(program.eqns):
        for v in e.outvars:
            last[id(v)] = (k, v)
        for a in e.invars:
            if type(a) is Var and id(a) in last:
                last[id(a)] = (k, a)
        for t in _targets(plan.get(k)):
            if id(t) in last:
                last[id(t)] = (k, t)
    for a in program.outvars:
        last.pop(id(a), None)
    dies = [[] for _ in program.eqns]
    for k, v in last.values():
        dies[k].append(v)
    return dies


def _targets(target):
    """The vars whose buffers an equation writes into: none, one, or (a run with several results) a tuple with
    None where a result gets a fresh buffer."""
    if target is None:
        return ()
    return [t for t in target if t is not None] if type(target) is tuple else (target,)


def accepts_out(f, e):
    """Whether lowering f takes out= for equation e: its `accepts_out` is a flag, or a test of the avals."""
    accepts = getattr(f, "accepts_out", False)
    return accepts(*e.invars) if callable(accepts) else accepts


ARENA_BYTES = 256 << 20  # at most this much of an Executable's intermediates lives in its arena between calls


def plan(jaxpr, lowerings, fix, donated, c_order):
    """Which equations write into which dead buffer: {equation index: the var whose buffer it reuses (a tuple
    of them, or None, one per result, for a fused run with several)}, and which write into the arena:
    {equation index: (shape, dtype)}.

    The arena: buffers the Executable keeps between calls for intermediates that never reach an output. A
    buffer allocated and freed on every call costs the allocator's page faults once it is large (glibc hands
    big blocks back to the system: a 784-512-512 MLP step spent ~10% of its time faulting pages in).

    Alias classes: a ufunc result is a fresh buffer (its own class); any other lowering may return a view
    of its inputs, so its result joins its inputs' classes. A class is dead after the last equation that
    reads any member; a class holding a jaxpr input (not donated), a literal or an output never dies. A
    ufunc equation whose result has the aval of a dead fresh buffer writes into it with `out=`: first
    one of its own inputs that dies here (in place), else a buffer freed earlier."""
    parent = {}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a, b):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra
            pinned[ra] = pinned[ra] or pinned[rb]
            roots[ra] = roots[ra] + roots[rb]

    donated_ids = {id(v) for i, v in enumerate(jaxpr.invars) if i in donated}
    pinned = {}   # class root -> never dies
    roots = {}    # class root -> the vars whose buffers the plan owns (reusable when the class dies)
    for i, v in enumerate(jaxpr.invars):
        parent[id(v)] = id(v)
        pinned[id(v)] = i not in donated
        roots[id(v)] = [] if i not in donated else [v]
    fresh_eqn = []
    for k, (e, f) in enumerate(zip(jaxpr.eqns, lowerings)):
        # writes: a ufunc the plan may hand a buffer with out=; owns: its result is a new buffer (a ufunc's,
        # or a lowering marked `fresh_result`), which the plan may reuse once its alias class is dead
        writes = ((isinstance(f, np.ufunc) and f.nout == 1 or accepts_out(f, e)) and not e.params
                  and not fix[k] and e.outvars[0].dtype.category >= _dt.FLOAT)
        fresh = writes or (getattr(f, "fresh_result", False) and not fix[k]
                           and all(v.dtype.category >= _dt.FLOAT for v in e.outvars))
        fresh_eqn.append(writes)
        for v in e.outvars:
            parent[id(v)] = id(v)
            pinned[id(v)] = False
            roots[id(v)] = [v] if fresh else []
        if not fresh:
            for a in e.invars:
                if type(a) is Literal:
                    continue
                for v in e.outvars:
                    union(id(a), id(v))
    for a in jaxpr.outvars:
        if type(a) is Var:
            pinned[find(id(a))] = True
    last = {}
    for k, e in enumerate(jaxpr.eqns):
        for a in e.invars:
            if type(a) is Var:
                last[find(id(a))] = k
    dying = collections.defaultdict(list)  # equation index -> classes whose last reader it is
    for r, k in last.items():
        if not pinned[r]:
            dying[k].append(r)
    pool = collections.defaultdict(list)  # (shape, dtype) -> free vars' buffers
    for v in jaxpr.invars:  # a donated input the program never reads (nor returns) is free from the start
        if id(v) in donated_ids and find(id(v)) not in last and not pinned[find(id(v))] and c_order.get(id(v)):
            pool[(v.shape, v.dtype)].append(v)
            roots[find(id(v))] = []
    plan = {}
    arena = {}     # equation index -> (shape, numpy dtype) of the arena buffer it writes into
    in_arena = set()  # ids of the vars whose buffer is an arena buffer

    def over_input(e, v, here, ufunc, taken=()):
        """The dying input of equation e (classes `here`) that its result v may be written over, a donated one
        first (its memory is given up), or None; not one of `taken`, nor an arena buffer where v is kept. (A
        ufunc copies where operands overlap; a fused loop does not, so for it no other input may be a view of
        the buffer it writes over.)"""
        kept = pinned[find(id(v))]
        candidates = [c for r in here for c in roots[r] if (c.shape, c.dtype) == (v.shape, v.dtype)
                      and any(a is c for a in e.invars) and c_order.get(id(c)) and not (kept and id(c) in in_arena)
                      and all(c is not t for t in taken)
                      and (ufunc or all(a is c or type(a) is not Var or find(id(a)) != r for a in e.invars))]
        return min(candidates, key=lambda c: id(c) not in donated_ids) if candidates else None

    arena_bytes = 0
    for k, e in enumerate(jaxpr.eqns):
        out = e.outvars[0]
        here = [r for r in dying.get(k, ()) if find(r) == r]
        # (a ufunc writing into a C buffer from other layouts is a slow strided copy; a GEMM takes any layout)
        if fresh_eqn[k] and (not isinstance(lowerings[k], np.ufunc)
                             or all(c_order.get(id(a), True) for a in e.invars if type(a) is Var)):
            want = (out.shape, out.dtype)
            # a result that is (or becomes part of) an output must not land in the arena: the next call
            # would overwrite what the caller holds
            kept = pinned[find(id(out))]

            def usable(v):
                return not (kept and id(v) in in_arena)
            # in place: a dying input of this very equation; a fused loop takes it through its kernel variant
            # that writes over that input (fusion.fuse)
            ufunc = isinstance(lowerings[k], np.ufunc)
            in_place = ufunc or getattr(lowerings[k], "writes_inputs", False)
            target = over_input(e, out, here, ufunc) if in_place else None
            if target is None:
                free = [v for v in pool[want] if usable(v)]
                if free:
                    target = free[-1]
                    pool[want].remove(target)
            if target is not None:
                plan[k] = target
                if id(target) in in_arena:
                    in_arena.add(id(out))
                for r in here:
                    roots[r] = [v for v in roots[r] if v is not target]
            elif not kept and arena_bytes + out.dtype.np.itemsize * math.prod(out.shape) <= ARENA_BYTES:
                arena[k] = (out.shape, out.dtype.np)
                arena_bytes += out.dtype.np.itemsize * math.prod(out.shape)
                in_arena.add(id(out))
        if getattr(lowerings[k], "n_results", 1) > 1 and getattr(lowerings[k], "writes_inputs", False):
            # a fused run with several results (an optimizer's momentum and weight): each may go over a dying
            # input of the run with its aval, as the single-result case (a fresh buffer otherwise)
            targets = []
            for v in e.outvars:
                target = over_input(e, v, here, False, targets)
                targets.append(target)
                if target is not None and id(target) in in_arena:
                    in_arena.add(id(v))
            if any(t is not None for t in targets):
                plan[k] = tuple(targets)
                for r in here:
                    roots[r] = [c for c in roots[r] if all(c is not t for t in targets)]
        for r in here:
            for v in roots[r]:
                if c_order.get(id(v)):
                    pool[(v.shape, v.dtype)].append(v)
            roots[r] = []
    return plan, arena
