"""Event names of primitives: PyTorch's `aten::<op>` where a primitive is that ATen operator.

A primitive whose name is already the ATen name (add, mul, exp, sum, where, ...) is `aten::<name>`;
RENAMED lists those whose ATen operator has another name (core follows jax.numpy names: arccos -> acos,
concatenate -> cat, broadcast_to -> expand, linalg ops -> linalg_*). Pooling takes its dimension from the
window (max_pool with a 2-d window -> aten::max_pool2d). Primitives with no ATen counterpart (key
splitting, the tape's add_any) are `core::<name>`. One eager op that PyTorch runs as several ATen calls is
one event per primitive it binds here (torch.relu binds `maximum`, so it shows as aten::maximum), and a
torch composite built from several primitives (softmax) shows as its primitives.
"""

RENAMED = {
    "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh", "arctan": "atan",
    "arctan2": "atan2", "arctanh": "atanh", "gammaln": "lgamma", "gammainc": "igamma", "gammaincc": "igammac",
    "concatenate": "cat", "broadcast_to": "expand", "expand_dims": "unsqueeze", "transpose": "permute",
    "pad": "constant_pad_nd", "windows": "unfold", "windows_transpose": "unfold_backward", "copy": "clone",
    "cast": "to", "bitcast": "view", "stop_gradient": "detach", "max": "amax", "min": "amin",
    "argmode": "mode", "cumargmax": "cummax", "cumargmin": "cummin", "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift", "conv": "convolution", "fft": "_fft_c2c",
    "det": "linalg_det", "slogdet": "linalg_slogdet", "cholesky": "linalg_cholesky", "svd": "linalg_svd",
    "qr": "linalg_qr", "eig": "linalg_eig", "eigh": "linalg_eigh", "inv": "linalg_inv", "solve": "linalg_solve",
    "lu": "linalg_lu", "triangular_solve": "linalg_solve_triangular", "expm": "linalg_matrix_exp",
    "random_normal": "normal_", "random_uniform": "uniform_", "random_randint": "random_",
    "random_permutation": "randperm", "random_truncated_normal": "normal_",
    "ndtr": "special_ndtr", "ndtri": "special_ndtri", "log_ndtr": "special_log_ndtr", "erfcx": "special_erfcx",
    "i0e": "special_i0e", "i1": "special_i1", "i1e": "special_i1e", "airy_ai": "special_airy_ai",
    "j0": "special_bessel_j0", "j1": "special_bessel_j1", "y0": "special_bessel_y0", "y1": "special_bessel_y1",
    "k0": "special_modified_bessel_k0", "k1": "special_modified_bessel_k1",
    "k0e": "special_scaled_modified_bessel_k0", "k1e": "special_scaled_modified_bessel_k1",
    "zeta": "special_zeta", "xlog1py": "special_xlog1py",
}

NOT_ATEN = frozenset({"add_any", "random_split", "random_fold_in", "orthogonal_polynomial"})

_POOLS = frozenset({"max_pool", "avg_pool"})

_cache = {}


def event_name(prim, params):
    """The profiler event name of one bind of `prim` with `params`."""
    name = _cache.get(prim)
    if name is not None:
        return name
    base = prim.name
    if base in _POOLS:  # the ATen name carries the dimension: not cached
        return f"aten::{base}{len(params['window'])}d"
    if base in NOT_ATEN:
        name = f"core::{base}"
    else:
        name = f"aten::{RENAMED.get(base, base)}"
    _cache[prim] = name
    return name
