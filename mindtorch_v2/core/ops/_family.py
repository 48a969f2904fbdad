"""Builders shared by the op families: argument normalisation, broadcasting
meta rules, summing cotangents back to an input's shape, and the
unary/binary elementwise declarations (one call = meta + lowering + VJP + JVP).
"""
import math

import numpy as np

from .. import array as _array
from .. import dtypes as dt
from ..array import Array
from ..devices import cpu as _cpu
from ..autodiff import add_any_p
from ..primitive import Primitive, Tracer, zeros_like

# ---------------------------------------------------------------------------
# argument handling

ONE = "one"        # partial derivative sentinels: d/dx = 1, d/dx = -1
NEG_ONE = "neg_one"


_SCALARS = {}


def specialized(rule):
    """Decorator for a cpu lowering: jit asks `rule(eqn)` for a call of the arrays alone, this equation's params
    and avals bound (a C method in place of NumPy's Python-level helper: np.expand_dims or np.sum's dispatch
    cost ~3 us each, ~10 us with the caches cold after a GEMM), or None where it has none."""
    def attach(lowering):
        def specialize(e):
            fn = rule(e)
            if fn is not None and not isinstance(fn, np.ufunc):  # (a ufunc itself takes no params)
                fn.binds_params = True
            return fn
        lowering.specialize = specialize
        return lowering
    return attach


def scalar_array(value, dtype, device):
    """A 0-d constant on `device` (meta: no buffer); cached, since arrays are immutable."""
    key = (type(value), value, dtype, device)
    if not value and type(value) is float:  # 0.0 == -0.0 as keys, but x * -0.0 must keep its sign
        key = (float, str(value), dtype, device)
    try:
        return _SCALARS[key]
    except (KeyError, TypeError):
        pass
    if device.type == "meta":
        out = _array.make(None, (), dtype, device)
    else:
        try:
            buf = np.asarray(value, dtype.np)
        except OverflowError:
            # a python int outside the dtype's range wraps, as in PyTorch: uint8 + (-1) == uint8 - 1
            buf = np.asarray(value).astype(dtype.np)
        out = _array.make(buf, (), dtype, device)
    if len(_SCALARS) > 4096:
        _SCALARS.clear()
    _SCALARS[key] = out
    return out


def is_arraylike(x):
    return isinstance(x, (Array, Tracer)) or hasattr(type(x), "__mt_bind__")


def as_operand(x):
    """Arrays and tracers pass through; numpy arrays become Arrays; scalars stay python scalars."""
    if is_arraylike(x):
        return x
    if isinstance(x, (bool, int, float, complex, np.bool_, np.integer, np.inexact)):
        return x
    if isinstance(x, np.ndarray):
        return asarray(x)
    raise TypeError(f"expected an array or a number, got {type(x).__name__}")


def promote(name, *xs, to_float=False, device=None):
    """Operands of a same-dtype primitive: promote by the standard's rules (dt.result_type: arrays strong,
    Python scalars weak), scalars become 0-d arrays (on the first array's device, else on `device`, else
    on cpu)."""
    xs = [as_operand(x) for x in xs]
    dtype = dt.result_type(*xs)
    if to_float and dtype.category < dt.FLOAT:
        dtype = dt.default_float
    for x in xs:
        if is_arraylike(x):
            device = x.device
            break
    if device is None:
        device = _cpu
    out = []
    for x in xs:
        if is_arraylike(x):
            if x.dtype is not dtype:
                x = cast(x, dtype)
        else:
            x = scalar_array(x, dtype, device)
        out.append(x)
    return out


# Core ops the builders' rules are written with. The families below this module provide them when
# they are imported (elementwise: cast mul neg add; shape: reshape broadcast_to expand_dims transpose_p;
# reduction: sum_p; creation: asarray): a rule runs only after every family has loaded, and this
# late binding is what lets the families import each other in one direction only.
cast = mul = neg = add = sum_p = reshape = broadcast_to = expand_dims = transpose_p = asarray = None
_PROVIDED = ("cast", "mul", "neg", "add", "sum_p", "reshape", "broadcast_to", "expand_dims", "transpose_p",
             "asarray")


def provide(**ops):
    for name, op in ops.items():
        if name not in _PROVIDED:
            raise ValueError(f"provide: '{name}' is not an op the builders use")
        globals()[name] = op


def as_float(x):
    """x as a floating (or complex) array: integer and bool arrays become the default float dtype, numbers
    a 0-d array of theirs, as PyTorch's float functions take them."""
    x = as_operand(x)
    if not is_arraylike(x):
        return scalar_array(x, dt.result_type(x, 0.0), _cpu)
    if x.dtype.category < dt.FLOAT:
        return cast(x, dt.default_float)
    return x


def float_unary(prim, name=None, doc=None):
    """The function of a float unary primitive: integer inputs are promoted to the default float dtype."""
    def fn(x):
        if type(x) is not Array or x.dtype.category < dt.FLOAT:
            x = as_float(x)
        return prim.bind(x)
    fn.__name__ = name or prim.name
    fn.__doc__ = doc or f"Elementwise {fn.__name__}; integer inputs are promoted to the default float dtype."
    return fn


def prod(shape):
    """The number of elements of a shape (math.prod, for tuples of ints)."""
    return math.prod(shape)


def normalize_axis(axis, ndim, name):
    """One axis, possibly negative -> non-negative int, or IndexError naming the op."""
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{name}: axis must be an int, got {axis!r}")
    if not -max(ndim, 1) <= axis < max(ndim, 1):
        raise IndexError(f"{name}: axis {axis} is out of range for an array of {ndim} dimensions")
    return int(axis) % max(ndim, 1)


def normalize_axes(axis, ndim, name):
    """None -> all axes; int or sequence -> sorted tuple of unique non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    axes = tuple(sorted(normalize_axis(a, ndim, name) for a in axis))
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: repeated axis in {tuple(axis)}")
    if ndim == 0:
        return ()
    return axes


def check_unique_axes(name, axis):
    if len(set(axis)) != len(axis):
        raise ValueError(f"{name}: repeated axis in {tuple(axis)}")


def broadcast_shapes(name, *shapes):
    """NumPy broadcasting of shapes, or ValueError naming the op and the shapes."""
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(-ndim, 0):
        size = 1
        for s in shapes:
            if len(s) >= -i:
                d = s[i]
                if d != 1:
                    if size != 1 and size != d:
                        raise ValueError(f"{name}: shapes {' and '.join(str(tuple(x)) for x in shapes)} cannot broadcast")
                    size = d
        out.append(size)
    return tuple(out)


def same_dtype(name, *xs):
    d = xs[0].dtype
    for x in xs[1:]:
        if x.dtype is not d:
            raise TypeError(f"{name}: operands must have the same dtype, got {d.name} and {x.dtype.name}")
    return d


def require_float(name, x, complex_ok=False):
    c = x.dtype.category
    if c != dt.FLOAT and not (complex_ok and c == dt.COMPLEX):
        kind = "a floating-point or complex" if complex_ok else "a floating-point"
        raise TypeError(f"{name}: expected {kind} dtype, got {x.dtype.name}")


# ---------------------------------------------------------------------------
# cotangent helpers (core ops only)


def sum_to_shape(g, shape):
    """Sum a broadcast cotangent back down to `shape`."""
    if g.shape == shape:
        return g
    lead = len(g.shape) - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and g.shape[i + lead] != 1)
    if axes:
        g = sum_p.bind(g, axis=axes, keepdims=False)
    if g.shape != shape:
        g = reshape(g, shape)
    return g


def broadcast_to_shape(t, shape):
    if t.shape == shape:
        return t
    return broadcast_to(t, shape)


# ---------------------------------------------------------------------------
# batching-rule helpers (the batching interpreter is core/batching.py)


def move_to_front(x, bdim):
    """x with its batch axis first (a no-op when it already is)."""
    if bdim is None or bdim == 0:
        return x
    perm = (bdim,) + tuple(i for i in range(len(x.shape)) if i != bdim)
    return transpose_p.bind(x, perm=perm)


def bdim_size(vals, bdims):
    for v, d in zip(vals, bdims):
        if d is not None:
            return v.shape[d]
    raise ValueError("no batched argument")


def broadcast_batch(x, bdim, size):
    """x with a leading batch axis of `size` (broadcast when x is unbatched)."""
    if bdim is None:
        return broadcast_to(expand_dims(x, 0), (size,) + tuple(x.shape))
    return move_to_front(x, bdim)


def all_front(vals, bdims):
    """Every argument with a leading batch axis (unbatched ones broadcast)."""
    n = bdim_size(vals, bdims)
    return [broadcast_batch(v, d, n) for v, d in zip(vals, bdims)], n


def elementwise_rule(prim):
    """Batching for broadcasting elementwise primitives: batch axes first, logical ranks aligned."""
    def rule(vals, bdims, **params):
        ranks = [len(v.shape) - (0 if d is None else 1) for v, d in zip(vals, bdims)]
        rank = max(ranks)
        args = []
        for v, d, r in zip(vals, bdims, ranks):
            if d is None:
                args.append(v)
                continue
            v = move_to_front(v, d)
            if r < rank:
                v = reshape(v, (v.shape[0],) + (1,) * (rank - r) + tuple(v.shape[1:]))
            args.append(v)
        return prim.bind(*args, **params), 0
    return rule


def unary_rule(prim):
    def rule(vals, bdims, **params):
        return prim.bind(vals[0], **params), bdims[0]
    return rule


def shift_axes(axes, by=1):
    return tuple(a + by for a in axes)




add_any_p.batch = elementwise_rule(add_any_p)  # autodiff's cotangent sum batches like add


# ---------------------------------------------------------------------------
# elementwise declarations

def _unary_meta(name, kind):
    def meta(x):
        if kind in ("float", "real"):
            require_float(name, x, complex_ok=kind == "float")
            return x.shape, x.dtype
        if kind == "bool":
            return x.shape, dt.bool_
        if kind in ("numeric", "real_numeric") and x.dtype is dt.bool_:
            raise TypeError(f"{name}: not supported for bool arrays")
        if kind == "real_numeric" and x.dtype.category == dt.COMPLEX:
            raise TypeError(f"{name}: not supported for complex arrays")
        if kind == "integer" and x.dtype.category >= dt.FLOAT:
            raise TypeError(f"{name}: expected integer or bool arrays, got {x.dtype.name}")
        return x.shape, x.dtype
    return meta


def unary(name, np_fn, *, kind="float", d_x=None, d_out=None, linear=None, zero=False):
    """Declare an elementwise unary primitive.

    kind: "float" (float or complex in, same dtype out: functions holomorphic where complex), "real" (real
    floating only: erf, atan2), "real_numeric" (numeric but not complex: floor, sign), "numeric" (any non-bool dtype kept),
    "integer" (integer or bool kept), "any" (every dtype kept), "bool" (bool out, no derivative).
    d_x(x) / d_out(out): the local derivative, written with core ops; linear(t):
    the op itself for linear ops (neg). zero=True: a derivative that is zero (floor, sign: piecewise
    constant), recorded like any other so that, as in PyTorch, the output is part of the graph and
    its gradient is zeros. None of these: not differentiable.
    """
    vjp = jvp = None
    reads = ()
    if zero:
        vjp = (lambda g, out, x: zeros_like(x),)
        jvp = lambda ts, out, x: zeros_like(out)
    elif linear is not None:
        vjp = (lambda g, out, x: linear(g),)
        jvp = lambda ts, out, x: linear(ts[0])
    elif d_x is not None:
        vjp = (lambda g, out, x: mul(g, d_x(x)),)
        jvp = lambda ts, out, x: mul(ts[0], d_x(x))
        reads = (0,)
    elif d_out is not None:
        vjp = (lambda g, out, x: mul(g, d_out(out)),)
        jvp = lambda ts, out, x: mul(ts[0], d_out(out))
        reads = ("out",)
    prim = Primitive(name, _unary_meta(name, kind), vjp=vjp, vjp_reads=reads, jvp=jvp,
                     linear=linear is not None)
    prim.batch = unary_rule(prim)
    prim.def_impl("cpu")(np_fn)
    return prim


def _binary_meta(name, kind):
    def meta(x, y):
        d = same_dtype(name, x, y)
        shape = x.shape if x.shape == y.shape else broadcast_shapes(name, x.shape, y.shape)
        if kind in ("float", "real"):
            require_float(name, x, complex_ok=kind == "float")
        elif kind in ("ordered", "ordered_compare", "real_numeric") and d.category == dt.COMPLEX:
            raise TypeError(f"{name}: not supported for complex arrays (they have no order)")
        if kind in ("numeric", "real_numeric") and d is dt.bool_:
            raise TypeError(f"{name}: not supported for bool arrays")
        elif kind == "integer" and d.category >= dt.FLOAT:
            raise TypeError(f"{name}: expected integer or bool arrays, got {d.name}")
        if kind in ("compare", "logical", "ordered_compare"):
            return shape, dt.bool_
        return shape, d
    return meta


def _partial_term(d, g, x, y, out):
    if d == ONE:
        return g
    if d == NEG_ONE:
        return neg(g)
    return mul(g, d(x, y, out))


def binary(name, np_fn, *, kind="any", d_x=None, d_y=None, reads=(), zero=False):
    """Declare an elementwise binary primitive on same-dtype operands with broadcasting.

    d_x(x, y, out) / d_y(...) are the local partials (core ops), or ONE / NEG_ONE, or
    None for no derivative. `reads` lists what the partials read (0, 1, "out").
    zero=True: both partials are zero (floor_divide), recorded as in `unary`.
    kind: "any", "numeric" (no bool), "real_numeric" (neither bool nor complex), "ordered" (no complex),
    "float" (float or complex), "real" (real floating), "integer", "ordered_compare" (bool out, no complex), "compare"/"logical" (bool out).
    """
    vjp = jvp = None
    if zero:
        vjp = (lambda g, out, x, y: zeros_like(x), lambda g, out, x, y: zeros_like(y))
        jvp = lambda ts, out, x, y: zeros_like(out)
    elif d_x is not None or d_y is not None:
        def vjp_x(g, out, x, y):
            return sum_to_shape(_partial_term(d_x, g, x, y, out), x.shape)

        def vjp_y(g, out, x, y):
            return sum_to_shape(_partial_term(d_y, g, x, y, out), y.shape)

        def jvp(ts, out, x, y):
            tx, ty = ts
            res = None
            if tx is not None and d_x is not None:
                res = _partial_term(d_x, tx, x, y, out)
            if ty is not None and d_y is not None:
                term = _partial_term(d_y, ty, x, y, out)
                res = term if res is None else add(res, term)
            return None if res is None else broadcast_to_shape(res, out.shape)

        vjp = (vjp_x if d_x is not None else None, vjp_y if d_y is not None else None)
    prim = Primitive(name, _binary_meta(name, kind), vjp=vjp, vjp_reads=reads, jvp=jvp)
    prim.batch = elementwise_rule(prim)
    prim.def_impl("cpu")(np_fn)
    return prim
