"""The IR that jit and torch.compile share (DESIGN.md): a Jaxpr is the trace of binds, a list of equations,
each a primitive, its input atoms (variables or literals), its static params and its output variables
with their avals. `str(jaxpr)` prints it as JAX does:

    { lambda ; a:f32[3]. let
        b:f32[3] = sin a
        c:f32[3] = mul b 2.0:f32[]
      in (c,) }

Also here, the passes over it: `eval_jaxpr` (bind every equation: how a program runs under an outer
transform), `optimize` (constants folded, the identities autodiff leaves behind dropped, common
subexpressions merged, dead code removed, transposed matrix products turned around) and `partition`
(a joint forward+backward program split in two, as AOTAutograd's). staging.py traces into it and runs it.
"""
import collections
import itertools
import math

import numpy as np

from . import dtypes as _dt
from .array import Array, aval as _aval, constant as _constant
from .autodiff import add_any_p
from .devices import meta as _meta
from .ops.elementwise import (add_p, cast_p, div_p, logical_and_p, logical_or_p, maximum_p, minimum_p, mul_p, neg_p,
                              pow_p, reciprocal_p, sub_p, where_p)
from .ops.linalg import matmul_p
from .ops.shape import broadcast_to_p, reshape_p, transpose_p
from .ops.strided import as_strided_p

__all__ = ["Var", "Literal", "Eqn", "Jaxpr", "eval_jaxpr", "optimize", "partition"]


# ---------------------------------------------------------------------------
# the IR


class Var:
    """A value of the program: its aval (a bufferless Array: shape, dtype, device)."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    device = property(lambda self: self.aval.device)


class Literal:
    """A constant of the program: an Array the function closed over or built from no inputs (or a tracer
    of an outer transform it closed over: then the jaxpr is evaluated by binds, never compiled)."""

    __slots__ = ("value", "_fill")

    def __init__(self, value):
        self.value = value
        self._fill = False

    shape = property(lambda self: self.value.shape)
    dtype = property(lambda self: self.value.dtype)
    device = property(lambda self: self.value.device)
    aval = property(lambda self: self.value)

    @property
    def concrete(self):
        return type(self.value) is Array

    def fill(self):
        """The one value every element holds, when the buffer is a broadcast scalar (else None)."""
        if self._fill is False:
            self._fill = None
            buf = self.value._buf if self.concrete else None
            if buf is not None and buf.size and (buf.size == 1 or not any(buf.strides)):
                self._fill = buf.flat[0].item()
        return self._fill


class Eqn:
    __slots__ = ("prim", "invars", "params", "outvars")

    def __init__(self, prim, invars, params, outvars):
        self.prim = prim
        self.invars = invars
        self.params = params
        self.outvars = outvars

    @property
    def effectful(self):
        # collectives talk to the other ranks: never dropped, merged or folded
        return "axis_name" in self.params


class Jaxpr:
    """A traced program: input variables, equations, output atoms. `str()` prints it as JAX does."""

    __slots__ = ("invars", "eqns", "outvars")

    def __init__(self, invars, eqns, outvars):
        self.invars = invars
        self.eqns = eqns
        self.outvars = outvars

    @property
    def literals(self):
        """The constants the equations and outputs read, in order of first use."""
        seen = {}
        for atoms in itertools.chain((e.invars for e in self.eqns), (self.outvars,)):
            for a in atoms:
                if type(a) is Literal:
                    seen.setdefault(id(a), a)
        return list(seen.values())

    def __str__(self):
        names = {}
        counter = itertools.count()

        def name(v):
            if id(v) not in names:
                names[id(v)] = _var_name(next(counter))
            return names[id(v)]

        def decl(v):
            return f"{name(v)}:{_aval_str(v)}"

        def atom(a):
            if type(a) is Literal and a.shape == () and a.concrete:
                return f"{a.value._buf.item()!r}:{_aval_str(a)}" if a.value._buf is not None else decl(a)
            return name(a)

        consts = [c for c in self.literals if not (c.shape == () and c.concrete)]
        head = "{ lambda " + " ".join(decl(c) for c in consts) + "; " + " ".join(decl(v) for v in self.invars) + ". let"
        lines = [head]
        for e in self.eqns:
            params = " ".join(f"{k}={_param_str(v)}" for k, v in e.params.items())
            params = f"[{params}]" if params else ""
            outs = " ".join(decl(v) for v in e.outvars)
            lines.append(f"    {outs} = {e.prim.name}{params} " + " ".join(atom(a) for a in e.invars))
        lines.append("  in (" + ", ".join(atom(a) for a in self.outvars) + ",) }")
        return "\n".join(lines)

    __repr__ = __str__


_SHORT = {"bool_": "bool", "bfloat16": "bf16"}


def _aval_str(v):
    d = v.dtype.name
    short = _SHORT.get(d) or (d[0] + d.lstrip("abcdefghijklmnopqrstuvwxyz") if d[-1].isdigit() else d)
    dev = "" if v.device.type == "cpu" else f"@{v.device}"
    return f"{short}[{','.join(map(str, v.shape))}]{dev}"


def _param_str(v):
    if isinstance(v, _dt.DType):
        return v.name
    return repr(v)


def _var_name(i):
    s = ""
    while True:
        s = chr(ord("a") + i % 26) + s
        i = i // 26 - 1
        if i < 0:
            return s


def eval_jaxpr(jaxpr, args):
    """Run a Jaxpr by binding its equations on args (arrays or tracers of any transform)."""
    env = dict(zip(map(id, jaxpr.invars), args))

    def read(a):
        return a.value if type(a) is Literal else env[id(a)]

    for e in jaxpr.eqns:
        out = e.prim.bind(*[read(a) for a in e.invars], **e.params)
        if e.prim.multiple_results:
            env.update(zip(map(id, e.outvars), out))
        else:
            env[id(e.outvars[0])] = out
    return [read(a) for a in jaxpr.outvars]


# ---------------------------------------------------------------------------
# optimization: constants, identities, common subexpressions, dead code


_FOLD_LIMIT = 1 << 20  # elements: larger constant results are computed per call rather than held


def _same_aval(a, v):
    return a.shape == v.shape and a.dtype is v.dtype and a.device is v.device


def _identity(e, ins):
    """The atom an equation reduces to (x + 0 from autodiff, x * 1, a cast or reshape to what x is), or None."""
    prim, out = e.prim, e.outvars[0]
    if prim is add_any_p or prim is sub_p or prim is mul_p or prim is div_p:
        unit = 1 if prim is mul_p or prim is div_p else 0
        pairs = ((ins[0], ins[1]),) if prim is sub_p or prim is div_p else ((ins[0], ins[1]), (ins[1], ins[0]))
        for x, c in pairs:
            if type(c) is Literal and c.fill() == unit and type(c.fill()) is not bool and _same_aval(x, out):
                return x
    elif prim is logical_and_p or prim is logical_or_p:
        absorbing = prim is logical_or_p  # x and False is False, x or True is True
        for c in ins:
            if type(c) is Literal and c.fill() is absorbing:
                return _filled(absorbing, out)
    elif prim is where_p:
        c, x, y = ins
        if type(c) is Literal and type(c.fill()) is bool:
            kept = x if c.fill() else y
            if _same_aval(kept, out):
                return kept
    elif prim is pow_p:
        x, y = ins
        if type(y) is Literal and y.fill() == 1 and type(y.fill()) is not bool and _same_aval(x, out):
            return x
    elif prim is cast_p or prim is reshape_p or prim is broadcast_to_p:
        if _same_aval(ins[0], out):
            return ins[0]
    elif prim is transpose_p:
        if tuple(e.params["perm"]) == tuple(range(len(out.shape))):
            return ins[0]
    return None


def _filled(value, v):
    """A literal of v's aval holding `value` everywhere (a broadcast scalar: no memory)."""
    if v.device is _meta:
        return Literal(_aval(v.shape, v.dtype, v.device))
    buf = np.broadcast_to(np.asarray(value, dtype=v.dtype.np), v.shape)
    return Literal(_constant(buf, v.shape, v.dtype, v.device))


_BROADCASTING = frozenset([add_p, sub_p, mul_p, div_p, maximum_p, minimum_p, where_p])  # NumPy broadcasting


def _row_major(base, *, shape, strides, offset):
    """Whether an as_strided view of `base` reads all its elements in row-major order: a reshape (how eager
    code reads `view` and `unsqueeze`)."""
    if offset or math.prod(shape) != math.prod(base):
        return False
    step = 1
    for n, st in zip(reversed(shape), reversed(strides)):
        if n != 1 and st != step:
            return False
        step *= n
    return True


def _transposition(base, *, shape, strides, offset):
    """The axes permutation when an as_strided view of `base` (its row-major elements) is a transpose of it (how
    eager code reads `w.t()`: a transpose is a view, cheaper and plainer than a strided one), else None."""
    if offset or len(shape) != len(base) or 0 in base:
        return None
    c_strides = [1] * len(base)
    for i in range(len(base) - 2, -1, -1):
        c_strides[i] = c_strides[i + 1] * base[i + 1]
    perm, free = [], [j for j, n in enumerate(base) if n == 1]
    for n, st in zip(shape, strides):
        if n == 1:  # (any stride: a unit axis of the base takes it)
            if not free:
                return None
            perm.append(free.pop(0))
            continue
        j = next((j for j, (m, c) in enumerate(zip(base, c_strides)) if m == n and c == st and m != 1), None)
        if j is None or j in perm:
            return None
        perm.append(j)
    return tuple(perm)


def _strength_reduced(e, ins, producer):
    """x ** 2 as x * x (numpy's power has no fast path for an array exponent; the product is exact); an
    as_strided view that is a reshape or a transpose as that;
    reciprocal(x) as 1 / x (its lowering's own division, now a ufunc: on scalars in scalar mode, fusable); an
    operand broadcast_to the result's shape, when another operand has that shape already, as the broadcast's
    input (the ufunc or np.where broadcasts it in its loop: one Python call fewer, no strided view); a matmul
    without the layout hint of its operands (`col_major`: it shapes only the expression of a gradient, and a
    program to run is differentiated already; unhinted, the buffer plan may hand the product a buffer)."""
    if e.prim is matmul_p:
        if e.params:
            return Eqn(matmul_p, ins, {}, e.outvars)
    elif e.prim is pow_p:
        x, y = ins
        if type(y) is Literal and y.fill() == 2 and type(y.fill()) is not bool and _same_aval(x, e.outvars[0]):
            return Eqn(mul_p, [x, x], {}, e.outvars)
    elif e.prim is as_strided_p:
        if _row_major(ins[0].shape, **e.params):
            return Eqn(reshape_p, ins, {"shape": e.params["shape"]}, e.outvars)
        perm = _transposition(ins[0].shape, **e.params)
        if perm is not None:
            return Eqn(transpose_p, ins, {"perm": perm}, e.outvars)
    elif e.prim is reciprocal_p:
        out = e.outvars[0]
        one = Literal(_constant(np.ones((), out.dtype.np), (), out.dtype, out.device))
        return Eqn(div_p, [one, ins[0]], {}, e.outvars)
    elif e.prim in _BROADCASTING:
        shape = e.outvars[0].shape
        for i, a in enumerate(ins):
            made = producer.get(id(a)) if type(a) is Var else None
            if made is not None and made.prim is broadcast_to_p and any(
                    b.shape == shape for j, b in enumerate(ins) if j != i):
                ins = list(ins)
                ins[i] = made.invars[0]
                return Eqn(e.prim, ins, e.params, e.outvars)
    return None


def optimize(jaxpr):
    """A smaller, faster equivalent Jaxpr: constants folded, identities dropped, common subexpressions
    merged, dead equations removed, transposed matrix products turned around."""
    jaxpr = _simplify(jaxpr)
    turned = _transposed_matmuls(jaxpr)
    return jaxpr if turned is None else _simplify(turned)


def _simplify(jaxpr):
    env = {}        # id(var) -> the atom that replaces it
    seen = {}       # (prim, input ids, params) -> outvars
    producer = {}   # id(var) -> the equation that made it (for neg(neg(x)))
    eqns = []
    for e in jaxpr.eqns:
        ins = [env.get(id(a), a) for a in e.invars]
        if e.effectful:
            eqns.append(Eqn(e.prim, ins, e.params, e.outvars))
            continue
        if all(type(a) is Literal and a.concrete for a in ins) and ins and \
                all(_size(v) <= _FOLD_LIMIT for v in e.outvars):
            out = e.prim.bind(*[a.value for a in ins], **e.params)
            outs = out if e.prim.multiple_results else (out,)
            for v, o in zip(e.outvars, outs):
                env[id(v)] = Literal(o)
            continue
        if not e.prim.multiple_results:
            reduced = _strength_reduced(e, ins, producer)
            if reduced is not None:
                e, ins = reduced, reduced.invars
            same = _identity(e, ins)
            if same is None and e.prim is neg_p and type(ins[0]) is Var:
                inner = producer.get(id(ins[0]))
                if inner is not None and inner.prim is neg_p:
                    same = inner.invars[0]
            elif same is None and e.prim is transpose_p and type(ins[0]) is Var:
                # a transpose of a transpose: one transpose of the first's input, or that input itself (the
                # gradient of x @ W.t() computed in W's layout is transposed twice on its way to W)
                inner = producer.get(id(ins[0]))
                if inner is not None and inner.prim is transpose_p:
                    perm = tuple(inner.params["perm"][p] for p in e.params["perm"])
                    ins = [inner.invars[0]]
                    if perm == tuple(range(len(perm))):
                        same = ins[0]
                    else:
                        e = Eqn(transpose_p, ins, {"perm": perm}, e.outvars)
            if same is not None:
                env[id(e.outvars[0])] = same
                continue
        try:
            key = (e.prim, tuple(map(id, ins)), tuple(e.params.items()))
            hash(key)
        except TypeError:
            key = None
        if key is not None and key in seen:
            for v, w in zip(e.outvars, seen[key]):
                env[id(v)] = w
            continue
        new = Eqn(e.prim, ins, e.params, e.outvars)
        if key is not None:
            seen[key] = e.outvars
        for v in e.outvars:
            producer[id(v)] = new
        eqns.append(new)
    outvars = [env.get(id(a), a) for a in jaxpr.outvars]
    # dead code: walk back from the outputs
    live = {id(a) for a in outvars}
    kept = []
    for e in reversed(eqns):
        if e.effectful or any(id(v) in live for v in e.outvars):
            kept.append(e)
            live.update(id(a) for a in e.invars)
    kept.reverse()
    return Jaxpr(jaxpr.invars, kept, outvars)


def _transposed_matmuls(jaxpr):
    """(None when there is none) transpose(matmul(a, b)) of 2-D arrays -> matmul(transpose(b), transpose(a)), a transpose of a transpose
    being its input. A weight's gradient is such a transpose (the VJP of `x @ w.T`); computed directly, it
    comes out C-ordered, so the parameter it updates keeps its layout and the next read of `w.T` is a view
    rather than a copy."""
    producer = {}
    uses = collections.Counter()
    for e in jaxpr.eqns:
        for a in e.invars:
            uses[id(a)] += 1
        for v in e.outvars:
            producer[id(v)] = e
    for a in jaxpr.outvars:
        uses[id(a)] += 1
    eqns = []
    changed = False
    for e in jaxpr.eqns:
        m = producer.get(id(e.invars[0])) if e.prim is transpose_p and len(e.outvars[0].shape) == 2 else None
        if m is None or m.prim is not matmul_p or uses[id(e.invars[0])] != 1 or \
                any(len(a.shape) != 2 for a in m.invars):
            eqns.append(e)
            continue
        swapped = []
        for x in (m.invars[1], m.invars[0]):
            inner = producer.get(id(x))
            if inner is not None and inner.prim is transpose_p and len(x.shape) == 2:
                swapped.append(inner.invars[0])
            else:
                t = Var(_aval(x.shape[::-1], x.dtype, x.device))
                eqns.append(Eqn(transpose_p, [x], {"perm": (1, 0)}, [t]))
                swapped.append(t)
        eqns.append(Eqn(matmul_p, swapped, {}, e.outvars))
        changed = True
    return Jaxpr(jaxpr.invars, eqns, jaxpr.outvars) if changed else None


def _size(v):
    return math.prod(v.shape)


def partition(joint, n_in, n_fwd_out):
    """Split a joint program (inputs: primals then cotangents; outputs: forward outputs then grads) into
    fwd(primals) -> forward outputs + residuals and bwd(residuals + cotangents) -> grads. An equation is the
    backward's when it reads a cotangent, directly or through another backward equation."""
    primal_vars, ct_vars = joint.invars[:n_in], joint.invars[n_in:]
    tainted = {id(v) for v in ct_vars}
    fwd_eqns, bwd_eqns = [], []
    for e in joint.eqns:
        if any(id(a) in tainted for a in e.invars):
            bwd_eqns.append(e)
            tainted.update(id(v) for v in e.outvars)
        else:
            fwd_eqns.append(e)
    fwd_defined = {id(v) for v in primal_vars}
    fwd_defined.update(id(v) for e in fwd_eqns for v in e.outvars)
    residuals = {}
    for atoms in list(e.invars for e in bwd_eqns) + [joint.outvars[n_fwd_out:]]:
        for a in atoms:
            if type(a) is Var and id(a) in fwd_defined:
                residuals.setdefault(id(a), a)
    residuals = list(residuals.values())
    fwd = optimize(Jaxpr(primal_vars, fwd_eqns, joint.outvars[:n_fwd_out] + residuals))
    bwd = optimize(Jaxpr(residuals + ct_vars, bwd_eqns, joint.outvars[n_fwd_out:]))
    return fwd, bwd, len(residuals)
