"""The nn family: convolution (conv.py: the windows / windows_transpose pair, conv, conv_transpose) and
pooling (pool.py: max_pool, avg_pool, max_pool_indices, the pooling geometry), on (N, C, *spatial) layouts."""
from .conv import (conv, conv_p, conv_transpose, conv_transpose_sizes, windows, windows_p, windows_transpose,
                   windows_transpose_p)
from .pool import adaptive_pool_bins, avg_pool, avg_pool_p, max_pool, max_pool_indices, max_pool_p

__all__ = ["windows_p", "windows_transpose_p", "conv_p", "max_pool_p", "avg_pool_p", "windows", "windows_transpose",
           "conv", "conv_transpose", "conv_transpose_sizes", "max_pool", "avg_pool", "max_pool_indices",
           "adaptive_pool_bins"]
