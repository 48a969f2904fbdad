"""Fused elementwise kernels for jit's programs, where numba is installed and the fused kernel wins.

A jitted program often runs chains of elementwise ufuncs on arrays of one shape (a VJP's `g * (1 - y*y)`,
an optimizer's update). NumPy runs each op as its own pass over memory with a temporary per op; one
numba loop reads each input once and writes each result once. This is an optional extra
(`pip install mindtorch_v2[fast]`): without numba, nothing here runs.

Chosen by measurement, per program: after jit's probe run, each run of consecutive fusable equations
(same output shape and float dtype; inputs of that shape, C-ordered, or 0-d, or broadcast along
the last axis or across it, as a layer norm's weight and mean are) that took at least
`MIN_SECONDS` op by op is compiled, timed on the probe's own buffers, and kept only if faster. Kernels are
cached by their expression, so a program traced again compiles nothing new.

    run: c = mul(y, y); d = sub(1.0, c); e = mul(g, d)     ->  one kernel:
    for j in range(n): t0 = y[j] * y[j]; t1 = s0 - t0; t2 = g[j] * t1; o0[j] = t2
"""
import functools
import timeit

import numpy as np

from . import _numba

__all__ = ["available", "fuse"]

MIN_SECONDS = 8e-6  # op-by-op time under which a kernel cannot win by much (an optimizer step on a bias: 14 ops, ~15 us)

# only the correctly rounded operations: a fused loop then gives NumPy's numbers bit for bit (numba's libm
# tanh/exp/log differ from NumPy's SIMD ones by an ulp in ~40% of float32 elements, so those stay NumPy's)
_BINARY = {np.add: "({} + {})", np.subtract: "({} - {})", np.multiply: "({} * {})", np.true_divide: "({} / {})"}
_UNARY = {np.negative: "(-{})", np.sqrt: "np.sqrt({})", np.square: "({0} * {0})"}
_KERNELS = {}  # source -> compiled kernel
# a lowering that is no ufunc may declare its loop expression as `fused` ({0} its operand, {zero} a zero of
# the run's dtype): it must give the lowering's bits for every input, nan and signed zeros included


@functools.cache
def available():
    """Whether numba is installed (fusion can happen); it is imported only when a kernel is first compiled."""
    return _numba.available()


def fusable(e, lowering, fix):
    """Whether an equation can be one step of a fused loop: a supported ufunc (jit has already unwrapped the
    warning-silencing lowerings to theirs), no params, one float result, inputs of that dtype."""
    if fix or e.params or e.prim.multiple_results or _expression(lowering) is None:
        return False
    out = e.outvars[0]
    if out.dtype.np not in (np.float32, np.float64):
        return False
    return all(a.dtype is out.dtype and _operand_kind(a.shape, out.shape) is not None for a in e.invars)


def _expression(lowering):
    """The loop expression of a lowering ({} for its operands): a ufunc's from the tables, or the `fused`
    expression a lowering declares (relu's); None when a loop cannot compute it."""
    if isinstance(lowering, np.ufunc):
        return _BINARY.get(lowering) or _UNARY.get(lowering)
    return getattr(lowering, "fused", None)


def _operand_kind(shape, out_shape):
    """How a fused loop reads an operand of `shape` for a result of `out_shape`: "full" (element j), "scalar"
    (0-d), "column" (broadcast along the last axis: a layer norm's weight, element j % n), "row" (one value per
    last-axis row: a layer norm's mean, element j // n); None when the loop cannot read it."""
    if shape == out_shape:
        return "full"
    if shape == ():
        return "scalar"
    if not out_shape:
        return None
    if shape[-1:] == out_shape[-1:] and all(s == 1 for s in shape[:-1]) and len(shape) <= len(out_shape):
        return "column"
    if shape == out_shape[:-1] + (1,):
        return "row"
    return None


def fuse(eqns, lowerings, read, used_after):
    """Kernels for runs of `eqns` (all fusable, consecutive, one output shape) that beat NumPy on the probe's
    buffers (`read(atom)` gives one). `used_after(var)` says whether a var is read after the run or is an
    output. Returns (kernel wrapper, input atoms, output vars) or None when NumPy stays."""
    if len(eqns) < 2 or not available():
        return None
    defined = {id(v) for e in eqns for v in e.outvars}
    inputs = []
    for e in eqns:
        for a in e.invars:
            if id(a) not in defined and all(a is not b for b in inputs):
                inputs.append(a)
    outputs = [v for e in eqns for v in e.outvars if used_after(v)]
    bufs = [read(a) for a in inputs]
    if not outputs or any(b.shape and not b.flags.c_contiguous for b in bufs):
        return None
    op_by_op = timed(lambda: _run_numpy(eqns, lowerings, inputs, bufs))
    if op_by_op < MIN_SECONDS:
        return None
    shape, dtype = outputs[0].shape, outputs[0].dtype.np
    kinds = [_operand_kind(a.shape, shape) for a in inputs]
    kernel = _kernel(eqns, lowerings, inputs, outputs, kinds)
    n_out = len(outputs)
    extra = (shape[-1],) if any(k in ("column", "row") for k in kinds) else ()  # the row length
    if extra and not extra[0]:
        return None  # empty rows (and nothing to gain)

    over = {}  # input position -> the kernel that writes its result over that input
    copy_in = [False]  # set once a non-contiguous input has come: then inputs are made C-contiguous first

    def call(k, ins, outs):
        if copy_in[0]:
            ins = [np.ascontiguousarray(b) for b in ins]
            outs = [o if o.flags.c_contiguous else np.empty(shape, dtype) for o in outs]
        try:
            k(*ins, *outs, *extra)
        except _numba.reshape_errors():  # (a non-contiguous array, refused before anything was written)
            if copy_in[0]:
                raise
            copy_in[0] = True
            return call(k, ins, outs)
        return outs

    def run(*ins, out=None):
        # the kernels take the arrays as they are (C-ordered, any rank) and read them flat (a reshape in
        # Python costs ~0.3 us an array, numba's ~nothing: a GPT step runs ~70 fused runs of 3-4 arrays each).
        # out: buffers the jit plan hands over: for a single result, a dead buffer; for several, a tuple with,
        # per result, one of the run's own inputs to write it over or None (a fresh buffer). An input written
        # over (one that dies here: the plan's in-place write, as `w - lr * g` into a donated w) is written by a
        # kernel that reads and writes that one parameter: a separate out parameter aliasing an input makes
        # LLVM take its scalar fallback loop (~3x slower), one parameter does not (0.4M floats: 39 us, NumPy in
        # place 74 us)
        if out is not None and not copy_in[0]:
            targets = out if type(out) is tuple else (out,)
            into = tuple(None if t is None else next((i for i, b in enumerate(ins) if b is t), None)
                         for t in targets)
            if any(i is not None for i in into):
                k = over.get(into)
                if k is None:
                    k = over[into] = _kernel(eqns, lowerings, inputs, outputs, kinds, into=into)
                results = [np.empty(shape, dtype) if i is None else ins[i] for i in into]
                try:
                    k(*ins, *[b for b, i in zip(results, into) if i is None], *extra)
                    return results
                except _numba.reshape_errors():  # (a non-contiguous array: fresh results from now on)
                    copy_in[0] = True
        if type(out) is tuple or (out is not None and any(b is out for b in ins)):
            out = None  # (written over an input only by the kernel above)
        outs = [np.empty(shape, dtype) if out is None or i else out for i in range(n_out)]
        return call(kernel, ins, outs)
    run.fresh_result = True
    run.accepts_out = n_out == 1
    run.writes_inputs = True  # the plan may hand it its own (full-shape, dying) inputs to write results over
    run.n_results = n_out
    got = run(*bufs)
    want = _run_numpy(eqns, lowerings, inputs, bufs)
    want = [want[id(v)] for v in outputs]
    if not all(same_bits(g, w) for g, w in zip(got, want)):
        return None  # not NumPy's numbers bit for bit (a contracted multiply-add, say): keep NumPy
    if timed(lambda: run(*bufs)) >= op_by_op:
        return None
    return run, inputs, outputs


def _run_numpy(eqns, lowerings, inputs, bufs):
    env = dict(zip(map(id, inputs), bufs))
    for e, f in zip(eqns, lowerings):
        env[id(e.outvars[0])] = f(*[env[id(a)] for a in e.invars])
    return env


def same_bits(a, b):
    """Whether two results are the same bit for bit (signed zeros and NaN payloads included)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def timed(fn):
    """Best of a few calls (the candidates run at least MIN_SECONDS: a handful of calls is enough)."""
    return min(timeit.repeat(fn, repeat=5, number=2)) / 2


def _kernel(eqns, lowerings, inputs, outputs, kinds, into=None):
    """The numba loop of a run; `into`: per result, the input position it is written over, or None (its own
    out parameter); None: every result has its own."""
    into = into or (None,) * len(outputs)
    names = {}
    params = []
    pre = []  # each array read flat (C-ordered: a view), a 0-d or one-element operand read once
    read = {"full": "x{0}[j]", "column": "x{0}[c]", "row": "x{0}[r]"}
    for i, (a, kind) in enumerate(zip(inputs, kinds)):
        names[id(a)] = f"s{i}" if kind == "scalar" else read[kind].format(i)
        params.append(f"X{i}")
        pre.append(f"    s{i} = X{i}.reshape(-1)[0]" if kind == "scalar" else f"    x{i} = X{i}.reshape(-1)")
    body = []
    for k, (e, f) in enumerate(zip(eqns, lowerings)):
        args = [names[id(a)] for a in e.invars]
        expr = _expression(f).format(*args, zero="ZERO")
        body.append(f"t{k} = {expr}")
        names[id(e.outvars[0])] = f"t{k}"
    # (every read of element j comes before the writes of element j: a result may go over its own input)
    outs = [f"o{m}" if i is None else f"x{i}" for m, i in enumerate(into)]
    body += [f"{o}[j] = {names[id(v)]}" for o, v in zip(outs, outputs)]
    own = [o for o, i in zip(outs, into) if i is None]
    sig = params + [o.upper() for o in own]
    pre += [f"    {o} = {o.upper()}.reshape(-1)" for o in own]
    if any(k in ("column", "row") for k in kinds):  # rows of n: j = r * n + c
        loop = [f"def kernel({', '.join(sig)}, n):", *pre,
                f"    for r in range({outs[0]}.shape[0] // n):",
                "        for c in range(n):",
                "            j = r * n + c",
                *["            " + b for b in body]]
    else:
        loop = [f"def kernel({', '.join(sig)}):", *pre,
                f"    for j in range({outs[0]}.shape[0]):", *["        " + b for b in body]]
    loop.insert(1, f"    ZERO = np.{outputs[0].dtype.np.name}(0)")  # (a zero of the run's dtype: no widening)
    source = "\n".join(loop)
    kernel = _KERNELS.get(source)
    if kernel is None:
        glob = {"np": np}
        exec(compile(source, "<fused>", "exec"), glob)  # noqa: S102  (our own generated code)
        kernel = _KERNELS[source] = _numba.njit(glob["kernel"], cache=False)  # (generated: no file to cache by)
    return kernel
