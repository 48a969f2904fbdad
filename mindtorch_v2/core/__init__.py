"""mindtorch_v2.core: immutable arrays, primitives and composable transforms.

    from mindtorch_v2 import core
    f = lambda x: core.sum(core.tanh(x) ** 2)
    core.grad(f)(core.asarray([0.5, 1.0]))

Every public name is imported here by name from the module that defines it: the machinery
(array, dtypes, devices, primitive, pytree), the transforms (api.py), and the op families
(ops/<family>.py, each listing its names in `__all__`). `core.random` is a namespace of its
own (core.random.split is not an array split), as jax.random is.
"""
from . import dtypes, pytree
from . import array_methods as _array_methods  # noqa: F401  (the Python operators on arrays)
from . import backends as _backends  # noqa: F401  (registers cpu and, where present, npu)
from .api import grad, hessian, jacfwd, jacrev, jvp, value_and_grad, vjp, vmap
from .array import Array, ArrayBase, aval
from .devices import Device, cpu, device, meta, register_backend
from .dtypes import (DType, bool_, float16, float32, float64, int8, int16, int32, int64, promote_types,
                     result_type, uint8)
from .ops import random
from .primitive import ALL_INPUTS, Primitive, Tracer, UnexpectedTracerError, VariadicVJP, bind, primitives
from .ops.elementwise import (abs, abs_p, absolute, add, add_p, bitwise_and, bitwise_and_p, bitwise_not, bitwise_not_p,
    bitwise_or, bitwise_or_p, bitwise_xor, bitwise_xor_p, cast, cast_p, ceil, ceil_p, copy, copy_p, cos,
    cos_p, div, div_p, divide, eq, eq_p, equal, erf, erf_p, exp, exp_p, expm1, expm1_p, floor,
    floor_divide, floor_divide_p, floor_p, ge, ge_p, greater, greater_equal, gt, gt_p, le, le_p, less,
    less_equal, log, log1p, log1p_p, log_p, logical_and, logical_and_p, logical_not, logical_not_p,
    logical_or, logical_or_p, logical_xor, logical_xor_p, lt, lt_p, maximum, maximum_p, minimum,
    minimum_p, mul, mul_p, multiply, ne, ne_p, neg, neg_p, negative, not_equal, pow, pow_p, power,
    reciprocal, reciprocal_p, remainder, remainder_p, round, round_p, rsqrt, rsqrt_p, sigmoid,
    sigmoid_p, sign, sign_p, sin, sin_p, sqrt, sqrt_p, stop_gradient, stop_gradient_p, sub, sub_p,
    subtract, tan, tan_p, tanh, tanh_p, true_divide, where, where_p)
from .ops.shape import (broadcast_arrays, broadcast_shapes, broadcast_to, broadcast_to_p, concatenate, concatenate_p,
    expand_dims, expand_dims_p, flip, flip_p, moveaxis, pad, pad_p, permute_dims, ravel, reshape,
    reshape_p, slice_axis, slice_p, slice_scatter_p, squeeze, squeeze_p, stack, static_slice, swapaxes,
    transpose, transpose_p)
from .ops.creation import (arange, array, asarray, empty, empty_like, eye, full, full_like, linspace, ones, ones_like,
    scalar_array, to_device, zeros, zeros_like)
from .ops.reduction import (sum_to_shape, all, all_p, amax, amin, any, any_p, argmax, argmax_p, argmin, argmin_p, cumsum, cumsum_p, max,
    max_p, min, min_p, prod, prod_p, sum, sum_p)
from .ops.indexing import (argsort, gather, gather_p, getitem, index_add, index_add_p, scatter, scatter_add, scatter_add_p,
    scatter_p, sort, sort_p, take, take_along_axis, take_p, topk)
from .ops.strided import (as_strided, as_strided_p, as_strided_scatter, as_strided_scatter_p)
from .ops.linalg import (dot, matmul, matmul_p, outer)
from .ops.einsum import (einsum, einsum_p)
from .ops.composite import (clamp, clip, diag, fmod, isfinite, log10, log2, log_softmax, logsumexp, mean, norm, relu,
    roll, softmax, square, std, tile, tril, triu, trunc, trunc_divide, var)
from .ops.conv import (conv, conv_p, conv_transpose, conv_transpose_sizes, windows, windows_p, windows_transpose,
    windows_transpose_p)
from .ops.pool import adaptive_pool_bins, avg_pool, avg_pool_p, max_pool, max_pool_indices, max_pool_p
