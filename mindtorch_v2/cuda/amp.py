"""torch.cuda.amp: the deprecated spellings of torch.amp.autocast("cuda") and torch.amp.GradScaler("cuda"),
both disabled here with PyTorch's warnings."""
from ..amp import deprecated_spellings

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


autocast, GradScaler = deprecated_spellings("cuda")


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Autocast never runs on cuda here, so the forward is returned as is."""
    if fwd is None:
        return lambda f: f
    return fwd


def custom_bwd(bwd=None):
    return bwd if bwd is not None else (lambda f: f)
