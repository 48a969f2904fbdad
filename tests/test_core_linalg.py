"""matmul with NumPy semantics: vectors, matrices, broadcast batches; errors; gradients."""
import math

import numpy as np
import pytest

from mindtorch_v2 import core

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("sa, sb", [
    ((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
    ((3,), (5, 3, 4)), ((5, 2, 3), (3,)), ((2, 1, 2, 3), (4, 3, 2)), ((1, 2, 3), (6, 3, 1)),
])
def test_matmul_matches_numpy(sa, sb):
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    out = core.matmul(core.asarray(a), core.asarray(b))
    expected = np.matmul(a, b)
    assert out.shape == expected.shape
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-12)


@pytest.mark.parametrize("sa, sb, message", [
    ((2, 3), (4, 5), r"matmul: shapes \(2, 3\) and \(4, 5\) are not aligned"),
    ((3,), (4,), r"matmul: shapes \(3,\) and \(4,\) are not aligned"),
    ((3,), (4, 5), r"matmul: shapes \(3,\) and \(4, 5\) are not aligned"),
    ((2, 3), (4,), r"matmul: shapes \(2, 3\) and \(4,\) are not aligned"),
    ((2, 2, 3), (3, 3, 4), r"matmul: shapes \(2, 2, 3\) and \(3, 3, 4\) cannot broadcast"),
    ((), (3,), "at least 1-D"),
])
def test_matmul_shape_errors_name_the_shapes(sa, sb, message):
    with pytest.raises(ValueError, match=message):
        core.matmul(core.zeros(sa), core.zeros(sb))


def test_matmul_operator_dtypes_and_helpers():
    assert (core.asarray([1.0, 2.0]) @ core.asarray([3.0, 4.0])).item() == 11.0
    out = core.matmul(core.asarray([[1, 2]]), core.asarray([[3], [4]]))
    assert out.dtype is core.int64 and out.tolist() == [[11]]
    assert core.matmul(core.asarray([[1, 2]]), core.asarray([[3.0], [4.0]])).dtype is core.float32
    assert (np.array([[1.0, 0.0], [0.0, 1.0]]) @ core.asarray([1.0, 2.0])).tolist() == [1.0, 2.0]
    np.testing.assert_array_equal(np.asarray(core.outer(core.asarray([1.0, 2.0]), core.asarray([3.0, 4.0, 5.0]))),
                                  np.outer([1.0, 2.0], [3.0, 4.0, 5.0]))
    assert core.dot(core.asarray([1.0, 2.0]), core.asarray([3.0, 4.0])).item() == 11.0


@pytest.mark.parametrize("sa, sb", [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 1, 2, 3), (4, 3, 2))])
def test_matmul_gradients_match_hand_derivation(sa, sb):
    a, b = RNG.standard_normal(sa), RNG.standard_normal(sb)
    w = RNG.standard_normal(np.matmul(a, b).shape)
    ga, gb = core.grad(lambda x, y: core.sum(core.matmul(x, y) * core.asarray(w)), argnums=(0, 1))(
        core.asarray(a), core.asarray(b))
    # d/da sum(w * (a @ b)), computed with numpy on promoted 2-D operands then summed over broadcasting
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    w2 = np.asarray(w).reshape(np.matmul(a2, b2).shape)
    ga_full = np.matmul(w2, np.swapaxes(b2, -1, -2))
    gb_full = np.matmul(np.swapaxes(a2, -1, -2), w2)

    def reduce_to(g, shape):
        while g.ndim > len(shape):
            g = g.sum(0)
        return g.sum(axis=tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1), keepdims=True)

    np.testing.assert_allclose(np.asarray(ga), reduce_to(ga_full, a2.shape).reshape(sa), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gb), reduce_to(gb_full, b2.shape).reshape(sb), rtol=1e-12)


@pytest.mark.parametrize("sa, sb", [((4, 3), (3, 5)), ((2, 4, 3), (3, 5)), ((2, 4, 3), (2, 3, 5)),
                                    ((1, 4, 3), (2, 3, 5))])
def test_matmul_col_major_hint_changes_each_gradients_layout_not_its_value(sa, sb):
    # the hint (what eager sets for x @ W.t()) computes an operand's gradient as the transpose of the product
    # in the other orientation: the same numbers, laid out as that operand (PyTorch's mm backward)
    a, b = core.asarray(RNG.standard_normal(sa)), core.asarray(RNG.standard_normal(sb))
    g = core.asarray(RNG.standard_normal(np.matmul(np.asarray(a), np.asarray(b)).shape))
    _, pull = core.vjp(lambda x, y: core.matmul(x, y), a, b)
    want = pull(g)
    for hint in ((True, False), (False, True), (True, True)):
        _, pull = core.vjp(lambda x, y: core.matmul_p.bind(x, y, col_major=hint), a, b)
        got = pull(g)
        for k in (0, 1):
            np.testing.assert_allclose(np.asarray(got[k]), np.asarray(want[k]), rtol=1e-12, atol=1e-12)
            two_d = got[k].ndim == 2 or (k == 1 and len(sb) == 2)  # (a batch summed to its shape: any layout)
            if hint[k] and two_d:
                assert np.asarray(got[k]).flags.f_contiguous and not np.asarray(got[k]).flags.c_contiguous
    with pytest.raises(TypeError, match="col_major must be a tuple of two bools"):
        core.matmul_p.bind(a, b, col_major=True)


def test_matmul_jvp_is_product_rule():
    a = core.asarray([[1.0, 2.0], [3.0, 4.0]])
    b = core.asarray([[0.5, 0.0], [1.0, -1.0]])
    ta = core.asarray([[1.0, 0.0], [0.0, 0.0]])
    tb = core.asarray([[0.0, 1.0], [0.0, 0.0]])
    out, t = core.jvp(lambda x, y: x @ y, (a, b), (ta, tb))
    np.testing.assert_allclose(np.asarray(t), np.asarray(ta) @ np.asarray(b) + np.asarray(a) @ np.asarray(tb))


def test_linalg_diagonal_and_trace_ignore_non_finite_off_diagonal_entries():
    x = core.asarray([[1.0, math.inf], [math.nan, 2.0]])
    assert float(core.linalg.trace(x)) == 3.0
    np.testing.assert_array_equal(np.asarray(core.linalg.diagonal(x)), [1.0, 2.0])
    b = core.asarray(np.arange(24.0).reshape(2, 3, 4))
    np.testing.assert_array_equal(np.asarray(core.linalg.diagonal(b, offset=1)),
                                  np.diagonal(np.arange(24.0).reshape(2, 3, 4), 1, -2, -1))
    with pytest.raises(TypeError):
        core.linalg.diagonal(b, 1)  # offset is keyword-only (the Array API signature)


def test_det_jvp_at_a_singular_matrix_is_the_cofactor_contraction():
    a = core.asarray([[1.0, 2.0], [2.0, 4.0]], dtype=core.float64)
    _, t = core.jvp(core.linalg.det, (a,), (core.ones((2, 2), dtype=core.float64),))
    assert float(t) == pytest.approx(1.0)  # sum of the cofactors [[4, -2], [-2, 1]]
