"""torch.random: the global CPU generator's seeding and state, and fork_rng."""
import contextlib
import importlib

from .eager.random_ops import (Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed,
                               set_rng_state)

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed",
           "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """Within the block, draw from the global generator freely: its state is restored afterwards. Devices of
    `device_type` given by index are forked too, as in PyTorch: here that asks the device namespace for
    their state, which raises its error (no accelerator in this build)."""
    if not enabled:
        yield
        return
    if devices:
        module = importlib.import_module(f"{__package__}.{device_type}")
        for d in devices:
            module.get_rng_state(d)
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
