"""einsum: one variadic primitive over a normalized explicit spec ("ij,jk->ik").

The public `einsum` expands "..." into fresh letters, infers an implicit output
(NumPy's rule: letters used once, in alphabetical order), and broadcasts
size-1 dimensions, so the primitive only ever sees explicit specs whose letters
have one size across operands. Its VJP for operand i is again an einsum (of the
cotangent with the other operands), which is why it nests to any order.
"""
import functools
import string

import numpy as np

from .. import dtypes as dt
from ..primitive import ALL_INPUTS, Primitive, VariadicVJP
from . import _family
from ._family import move_to_front
from .elementwise import add
from .shape import broadcast_to, reshape

__all__ = ["einsum_p", "einsum"]

_LETTERS = string.ascii_letters


@functools.lru_cache(maxsize=1024)
def _parse(spec):
    """Normalized spec -> (tuple of input terms, output term)."""
    lhs, out = spec.split("->")
    return tuple(lhs.split(",")), out


def _einsum_meta(*xs, spec):
    ins, out = _parse(spec)
    if len(ins) != len(xs):
        raise ValueError(f"einsum: spec '{spec}' has {len(ins)} operands, got {len(xs)} arrays")
    d = _family.same_dtype("einsum", *xs)
    if d is dt.bool_:
        raise TypeError("einsum: not supported for bool arrays")
    sizes = {}
    for k, (term, x) in enumerate(zip(ins, xs)):
        if len(term) != x.ndim:
            raise ValueError(f"einsum: operand {k} has shape {x.shape} but subscripts '{term}' name {len(term)} axes")
        for c, s in zip(term, x.shape):
            if sizes.setdefault(c, s) != s:
                raise ValueError(f"einsum: subscript '{c}' has size {sizes[c]} and {s} "
                                 f"(spec '{spec}', shapes {', '.join(str(y.shape) for y in xs)})")
    return tuple(sizes[c] for c in out), d


@functools.lru_cache(maxsize=1024)
def _vjp_plan(spec, i):
    """The spec giving operand i's cotangent and the axes to broadcast it back along.

    Letters only operand i uses (summed away by the forward) are absent from the
    cotangent einsum; the result gets size-1 axes there and is broadcast back.
    """
    ins, out = _parse(spec)
    others = ins[:i] + ins[i + 1:]
    avail = set(out).union(*others)
    term = ins[i]
    target = "".join(c for c in term if c in avail)
    missing = tuple(k for k, c in enumerate(term) if c not in avail)
    return ",".join((out,) + others) + "->" + target, missing


def _bind(spec, *xs):
    ins, out = _parse(spec)
    if len(xs) == 1 and ins[0] == out:
        return xs[0]
    return einsum_p.bind(*xs, spec=spec)


@functools.lru_cache(maxsize=None)
def _operand_vjp(i):
    def vjp(g, out, *xs, spec):
        vspec, missing = _vjp_plan(spec, i)
        gi = _bind(vspec, g, *xs[:i], *xs[i + 1:])
        if missing:
            x = xs[i]
            gi = reshape(gi, tuple(1 if k in missing else s for k, s in enumerate(x.shape)))
            gi = broadcast_to(gi, x.shape)
        return gi
    return vjp


def _einsum_jvp(ts, out, *xs, spec):
    res = None
    for i, t in enumerate(ts):
        if t is None:
            continue
        term = einsum_p.bind(*xs[:i], t, *xs[i + 1:], spec=spec)
        res = term if res is None else add(res, term)
    return res


# operand i's rule reads every other operand, so all of them are saved
einsum_p = Primitive("einsum", _einsum_meta, vjp=VariadicVJP(_operand_vjp), jvp=_einsum_jvp,
                     vjp_reads=ALL_INPUTS)


def _einsum_batch(vals, bdims, *, spec):
    """A fresh letter for the batch axis, put first on every batched operand and on the output."""
    ins, out = _parse(spec)
    letter = next(c for c in _LETTERS if c not in spec)
    terms, args = [], []
    for term, v, d in zip(ins, vals, bdims):
        if d is None:
            terms.append(term)
            args.append(v)
        else:
            terms.append(letter + term)
            args.append(move_to_front(v, d))
    return einsum_p.bind(*args, spec=",".join(terms) + "->" + letter + out), 0


einsum_p.batch = _einsum_batch


@einsum_p.def_impl("cpu")
def _einsum_cpu(*xs, spec):
    # optimize=True lets numpy route pairwise contractions through BLAS (tensordot)
    return np.einsum(spec, *xs, optimize=len(xs) > 1)


# ---------------------------------------------------------------------------
# public function: spec normalization


def _split_term(term, k, spec):
    """A subscript term -> (letters before '...', has ellipsis, letters after)."""
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise ValueError(f"einsum: invalid ellipsis in operand {k} of '{spec}'")
    bad = [c for c in term.replace("...", "") if c not in _LETTERS]
    if bad:
        raise ValueError(f"einsum: invalid subscript {bad[0]!r} in '{spec}' (only letters and '...')")
    if "..." in term:
        a, b = term.split("...")
        return a, True, b
    return term, False, ""


@functools.lru_cache(maxsize=1024)
def normalize_spec(spec, ndims):
    """(user spec, operand ndims) -> explicit spec with '...' replaced by fresh letters."""
    compact = spec.replace(" ", "")
    if compact.count("->") > 1:
        raise ValueError(f"einsum: more than one '->' in '{spec}'")
    lhs, arrow, rhs = compact.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"einsum: '{spec}' names {len(terms)} operands, got {len(ndims)} arrays")
    parts = [_split_term(t, k, spec) for k, t in enumerate(terms)]
    used = set(c for a, _, b in parts for c in a + b)
    n_ell = 0
    for k, ((a, ell, b), nd) in enumerate(zip(parts, ndims)):
        n = nd - len(a) - len(b)
        if n < 0 or (n > 0 and not ell):
            raise ValueError(f"einsum: operand {k} has {nd} dimensions but subscripts '{terms[k]}' name "
                             f"{len(a) + len(b)}")
        n_ell = max(n_ell, n)
    fresh = [c for c in _LETTERS if c not in used and c not in rhs]
    if n_ell > len(fresh):
        raise ValueError(f"einsum: too many dimensions for '{spec}'")
    ell_letters = "".join(fresh[:n_ell])
    ins = []
    for k, ((a, ell, b), nd) in enumerate(zip(parts, ndims)):
        term = a + (ell_letters[n_ell - (nd - len(a) - len(b)):] if ell else "") + b
        for c in set(term):
            if term.count(c) > 1:
                raise ValueError(f"einsum: repeated subscript '{c}' in operand {k} ('{terms[k]}' of '{spec}'); "
                                 f"diagonals are not supported")
        ins.append(term)
    if arrow:
        a, ell, b = _split_term(rhs, "out", spec)
        out = a + (ell_letters if ell else "") + b  # without '...' the broadcast dims are summed (numpy, torch)
        all_in = set("".join(ins))
        for c in out:
            if out.count(c) > 1:
                raise ValueError(f"einsum: repeated subscript '{c}' in the output of '{spec}'")
            if c not in all_in:
                raise ValueError(f"einsum: output subscript '{c}' of '{spec}' appears in no operand")
    else:
        joined = "".join(ins)
        once = sorted((c for c in set(joined) if joined.count(c) == 1 and c not in ell_letters), key=ord)
        out = ell_letters + "".join(once)
    return ",".join(ins) + "->" + out


def einsum(spec, *operands):
    """Einstein summation over `operands` as in numpy.einsum (no repeated subscripts per operand)."""
    if not operands:
        raise ValueError("einsum: expected at least one operand")
    if not isinstance(spec, str):
        raise TypeError(f"einsum: the spec must be a string, got {type(spec).__name__}")
    xs = _family.promote("einsum", *operands)
    norm = normalize_spec(spec, tuple(x.ndim for x in xs))
    ins, out = _parse(norm)
    # size-1 axes broadcast against the other operands' size for the same letter (as numpy does)
    sizes = {}
    for term, x in zip(ins, xs):
        for c, s in zip(term, x.shape):
            if s != 1:
                if sizes.setdefault(c, s) != s:
                    raise ValueError(f"einsum: subscript '{c}' has size {sizes[c]} and {s} "
                                     f"(spec '{spec}', shapes {', '.join(str(y.shape) for y in xs)})")
    for k, (term, x) in enumerate(zip(ins, xs)):
        full = tuple(sizes.get(c, 1) for c in term)
        if full != x.shape:
            xs[k] = broadcast_to(x, full)
    return _bind(norm, *xs)
