"""torch.backends.mkldnn: oneDNN is not used here (convolutions and matmuls run through NumPy)."""
__all__ = ["is_available", "enabled", "deterministic", "allow_tf32"]

enabled = True
deterministic = False
allow_tf32 = False


def is_available():
    return False
