"""torch._dynamo.config: the settings libraries read and write, at torch's defaults.

They change nothing here (there is no compiler), but they hold what is written; a name torch's config
does not have raises AttributeError, as torch's does, so a typo is not silently accepted.
"""
import sys
import types

suppress_errors = False
cache_size_limit = 8
recompile_limit = 8
accumulated_cache_size_limit = 256
verbose = False
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
optimize_ddp = True
automatic_dynamic_shapes = True
assume_static_by_default = True
force_parameter_static_shapes = True
inline_inbuilt_nn_modules = True
allow_unspec_int_on_nn_module = False
error_on_recompile = False
specialize_int = False
specialize_float = False
dynamic_shapes = True
raise_on_ctx_manager_usage = True
guard_nn_modules = True
skip_nnmodule_hook_guards = True
log_compilation_metrics = True


class _ConfigModule(types.ModuleType):
    """A module that refuses to create settings torch's config does not have."""

    def __setattr__(self, name, value):
        if name not in self.__dict__:
            raise AttributeError(f"{self.__name__}.{name} does not exist")
        super().__setattr__(name, value)

    def __getattr__(self, name):
        raise AttributeError(f"{self.__name__}.{name} does not exist")


sys.modules[__name__].__class__ = _ConfigModule
