"""vmap of every primitive equals stacking the primitive applied per slice.

For each primitive (strategies from the registry): build a batch of B inputs
from one sample (float inputs scaled per element, which keeps them in their
domain; keys split per element; other inputs repeated), map each input over a
random axis or leave it unbatched, and compare `vmap(prim.bind)` with the
per-element binds stacked on the out axis.
"""
import numpy as np
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

import samples
from mindtorch_v2 import core

REGISTRY = samples.load_all()
PRIMS = samples.sampled()


def test_every_primitive_has_a_batching_rule():
    missing = [n for n, p in core.primitives().items() if p.batch is None]
    assert not missing, f"primitives without a batching rule: {missing}"


def _batched_copies(a, b, is_key):
    if is_key:
        return np.stack([np.asarray(core.random.fold_in(core.asarray(a), k)) for k in range(b)])
    if a.dtype.kind == "f":
        return np.stack([a * (1.0 + 0.125 * k) for k in range(b)])
    return np.stack([a] * b)


@pytest.mark.parametrize("prim", PRIMS, ids=samples.prim_id)
@given(data=st.data())
def test_vmap_matches_stacked_slices(prim, data):
    sample = data.draw(REGISTRY[prim].strategy, label="sample")
    b = data.draw(st.integers(1, 3), label="batch")
    is_random = REGISTRY[prim].key
    in_axes, batched = [], []
    for i, a in enumerate(sample.args):
        mapped = data.draw(st.booleans(), label=f"map arg {i}") or (i == 0 and is_random)
        if not mapped:
            in_axes.append(None)
            batched.append(a)
            continue
        copies = _batched_copies(a, b, is_random and i == 0)
        axis = data.draw(st.integers(0, a.ndim), label=f"in axis {i}")
        in_axes.append(axis)
        batched.append(np.moveaxis(copies, 0, axis))
    if all(ax is None for ax in in_axes):
        in_axes[0] = 0
        copies = _batched_copies(sample.args[0], b, is_random)
        batched[0] = copies
    per = []
    for k in range(b):
        slice_args = [core.asarray(np.take(a, k, axis=ax)) if ax is not None else core.asarray(a)
                      for a, ax in zip(batched, in_axes)]
        per.append(prim.bind(*slice_args, **sample.params))
    first = per[0] if prim.multiple_results else (per[0],)
    out_axis = data.draw(st.integers(0, min(o.ndim for o in first)), label="out axis")
    note(f"in_axes={in_axes} out_axis={out_axis} b={b}")

    args = [core.asarray(a) for a in batched]
    fn = lambda *xs: prim.bind(*xs, **sample.params)  # noqa: E731
    out = core.vmap(fn, in_axes=tuple(in_axes), out_axes=out_axis)(*args)
    outs = out if prim.multiple_results else (out,)
    pers = list(zip(*per)) if prim.multiple_results else [per]
    for o, ps in zip(outs, pers):
        expect = np.stack([np.asarray(p) for p in ps])
        if out_axis and expect.ndim > 1:
            expect = np.moveaxis(expect, 0, out_axis)
        got = np.asarray(o)
        assert got.dtype == expect.dtype
        assert got.shape == expect.shape, (got.shape, expect.shape)
        np.testing.assert_allclose(got, expect, rtol=1e-6, atol=1e-9)
