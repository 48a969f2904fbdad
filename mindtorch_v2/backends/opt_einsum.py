"""torch.backends.opt_einsum: einsum here plans contraction order with NumPy's optimizer (np.einsum(optimize=...),
NumPy's port of opt_einsum), so the feature is available; `strategy` is kept for scripts that set it."""
__all__ = ["is_available", "enabled", "strategy", "get_opt_einsum"]

enabled = True
strategy = "auto"


def is_available():
    return True


def get_opt_einsum():
    """None: the opt_einsum package itself is not used."""
    return None
