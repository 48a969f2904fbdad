"""torch.nn: modules, parameters, functional, init and utils."""
from . import attention, functional, init, modules, utils  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules.module import Module
from .parameter import Buffer, Parameter

__all__ = ["Module", "Parameter", "Buffer", "attention", "functional", "init", "utils"] + sorted(
    n for n, v in vars(modules).items() if isinstance(v, type) and issubclass(v, Module) and n != "Module")
