"""fully_shard (FSDP2 on MPI): each rank keeps one dim-0 chunk of every parameter; forward gathers them.

    for layer in model.layers:
        fully_shard(layer)
    fully_shard(model)                 # the root takes the parameters no inner call took
    opt = torch.optim.AdamW(model.parameters())    # steps on this rank's shards only

After fully_shard, every managed parameter is an nn.Parameter holding this rank's chunk (torch.chunk
rule along Shard(dim), dim 0 unless shard_placement_fn says otherwise; a chunk may be empty), with
`.placements`, `.device_mesh` and `._fsdp_global_shape` describing it. A forward pre-hook replaces each
managed parameter, for the call, by the gathered full tensor made by an autograd Function: its backward
reduce-scatters the full gradient (sum, divided by the gradient divide factor, the mesh size by default),
so the shard's .grad is this rank's chunk of the data-parallel mean gradient. The forward hook (always
called) puts the shards back.

Differences from PyTorch, said plainly: parameters and state_dict() entries are plain tensors holding the
local chunk, not DTensors; the gathered tensors live in the autograd graph until backward (no reshard
after forward, no prefetch); the mesh must be 1-d (no HSDP).
"""
import enum

import numpy as np

from ...autograd.function import Function
from ...eager.creation import from_numpy
from ...eager.grad_mode import no_grad
from ...nn.modules.module import Module
from ...nn.parameter import Parameter
from .. import distributed_c10d as c10d
from ..device_mesh import DeviceMesh, init_device_mesh
from ..tensor.placement_types import Shard

__all__ = ["fully_shard", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy", "CPUOffloadPolicy",
           "FullyShardedDataParallel", "MixedPrecision", "CPUOffload", "ShardingStrategy"]


class MixedPrecisionPolicy:
    """param_dtype: the dtype parameters are gathered in for forward; reduce_dtype: the dtype gradients are
    reduce-scattered in; output_dtype: floating outputs are cast to it; cast_forward_inputs: floating
    inputs are cast to param_dtype."""

    def __init__(self, param_dtype=None, reduce_dtype=None, output_dtype=None, cast_forward_inputs=True):
        self.param_dtype, self.reduce_dtype = param_dtype, reduce_dtype
        self.output_dtype, self.cast_forward_inputs = output_dtype, cast_forward_inputs

    def _key(self):
        return (self.param_dtype, self.reduce_dtype, self.output_dtype, self.cast_forward_inputs)

    def __eq__(self, other):
        return type(other) is MixedPrecisionPolicy and other._key() == self._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"MixedPrecisionPolicy(param_dtype={self.param_dtype}, reduce_dtype={self.reduce_dtype}, "
                f"output_dtype={self.output_dtype}, cast_forward_inputs={self.cast_forward_inputs})")


class OffloadPolicy:
    """No offloading: the shards stay where they are."""

    def __eq__(self, other):
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self):
        return hash((type(self).__name__,) + tuple(sorted(vars(self).items())))

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={v}' for k, v in vars(self).items())})"


class CPUOffloadPolicy(OffloadPolicy):
    """Shards and optimizer state on the CPU: where every tensor of the MPI back end already is."""

    def __init__(self, pin_memory=True):
        self.pin_memory = pin_memory


class _Unshard(Function):
    """shard -> full tensor (all-gather along the shard dim); backward: reduce-scatter of the gradient."""

    @staticmethod
    def forward(ctx, shard, state, dim, global_size):
        pg, n = state.group, state.group.size()
        ctx.state, ctx.dim, ctx.global_size, ctx.local = state, dim, global_size, shard.shape[dim]
        arr = c10d._read(shard)
        width = -(-global_size // n)  # the largest chunk
        pad = [(0, 0)] * arr.ndim
        pad[dim] = (0, width - arr.shape[dim])
        gathered = c10d._world.allgather(pg._comm, np.pad(arr, pad))
        full = np.concatenate(list(gathered), axis=dim)
        return from_numpy(np.ascontiguousarray(np.take(full, np.arange(global_size), axis=dim)))

    @staticmethod
    def backward(ctx, g):
        state, dim = ctx.state, ctx.dim
        pg, n = state.group, state.group.size()
        arr = c10d._read(g)
        out_dtype = arr.dtype
        if state.mp.reduce_dtype is not None:
            arr = c10d._read(g.to(state.mp.reduce_dtype))
        width = -(-ctx.global_size // n)
        pad = [(0, 0)] * arr.ndim
        pad[dim] = (0, width * n - arr.shape[dim])
        blocks = np.stack(np.split(np.pad(arr, pad), n, axis=dim))
        if state.sync:
            mine = c10d._world.reduce_scatter(pg._comm, np.ascontiguousarray(blocks), "sum")
            mine = mine / state.divide_factor
        else:  # set_requires_gradient_sync(False): this rank's own gradient, uncommunicated
            mine = blocks[pg.rank()]
        mine = np.take(mine, np.arange(ctx.local), axis=dim).astype(out_dtype)
        return from_numpy(np.ascontiguousarray(mine)), None, None, None


class _State:
    def __init__(self, group, mp):
        self.group, self.mp, self.mesh = group, mp, None
        self.divide_factor = float(self.group.size())
        self.sync = True
        self.managed = []  # (owning module, name, shard parameter, shard dim, global size on that dim)


def _cast_floating(obj, dtype):
    from ...eager.tensor import Tensor
    if isinstance(obj, Tensor):
        return obj.to(dtype) if obj.is_floating_point() and obj.dtype != dtype else obj
    if isinstance(obj, (list, tuple)):
        return type(obj)(_cast_floating(o, dtype) for o in obj)
    if isinstance(obj, dict):
        return {k: _cast_floating(v, dtype) for k, v in obj.items()}
    return obj


class FSDPModule:
    """Mixed into the class of a module given to fully_shard (as PyTorch does): FSDP<Name>."""

    def set_requires_gradient_sync(self, requires_gradient_sync, *, recurse=True):
        """False: backward leaves each shard its own rank's gradient chunk (no reduce-scatter)."""
        for m in (self.modules() if recurse else [self]):
            if isinstance(m, FSDPModule):
                m._fsdp_state.sync = bool(requires_gradient_sync)

    def set_gradient_divide_factor(self, factor):
        """Divide the reduce-scattered gradient sum by `factor` instead of the mesh size."""
        self._fsdp_state.divide_factor = float(factor)

    def set_reshard_after_forward(self, reshard_after_forward, recurse=True):
        """Accepted for compatibility: gathered parameters are always released after backward here."""
        for m in (self.modules() if recurse else [self]):
            if isinstance(m, FSDPModule):
                m._fsdp_state.reshard_after_forward = reshard_after_forward


def _pre_forward(module, args, kwargs):
    state = module._fsdp_state
    for owner, name, shard, dim, size in state.managed:
        full = _Unshard.apply(shard, state, dim, size)
        if state.mp.param_dtype is not None:
            full = full.to(state.mp.param_dtype)
        owner._parameters[name] = full  # for this call only; the forward hook puts the shard back
    if state.mp.param_dtype is not None and state.mp.cast_forward_inputs:
        return _cast_floating(args, state.mp.param_dtype), _cast_floating(kwargs, state.mp.param_dtype)
    return None


def _post_forward(module, args, output):
    state = module._fsdp_state
    for owner, name, shard, _, _ in state.managed:
        owner._parameters[name] = shard
    if state.mp.output_dtype is not None:
        return _cast_floating(output, state.mp.output_dtype)
    return None


def fully_shard(module, *, mesh=None, reshard_after_forward=None, shard_placement_fn=None,
                mp_policy=MixedPrecisionPolicy(), offload_policy=OffloadPolicy(), ignored_params=None,
                dp_mesh_dims=None):
    """Shard the parameters of `module` not yet managed by an inner fully_shard over the 1-d mesh (see the
    module doc); returns the module, whose class becomes FSDP<Class>. Collective over the mesh."""
    if isinstance(module, (list, tuple)):
        return [fully_shard(m, mesh=mesh, reshard_after_forward=reshard_after_forward,
                            shard_placement_fn=shard_placement_fn, mp_policy=mp_policy,
                            offload_policy=offload_policy, ignored_params=ignored_params) for m in module]
    if not isinstance(module, Module):
        raise ValueError(f"fully_shard does not support containers that do not implement forward: {module}")
    if isinstance(module, FSDPModule):
        raise ValueError(f"fully_shard was already applied to {type(module).__name__}")
    if mesh is None:
        mesh = init_device_mesh("cpu", (c10d.get_world_size(),))
    if not isinstance(mesh, DeviceMesh):
        raise ValueError(f"fully_shard expects a DeviceMesh but got {mesh}")
    if mesh.ndim != 1:
        raise NotImplementedError(f"fully_shard: only a 1-d mesh is supported here (no HSDP), got a "
                                  f"{mesh.ndim}-d mesh")
    state = _State(c10d._group(mesh.get_group(0)), mp_policy)
    state.mesh = mesh
    state.reshard_after_forward = reshard_after_forward
    _shard_parameters(module, state, ignored_params, shard_placement_fn)
    _install(module, state)
    cls = type(module)
    module.__class__ = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {})
    return module


def _shard_parameters(module, state, ignored_params=None, shard_placement_fn=None):
    """Replace each parameter of `module` no inner FSDP took by its chunk on this rank (collective-free:
    every rank holds the same full parameter and keeps its own chunk)."""
    ignored = set(id(p) for p in (ignored_params or ()))
    n, r = state.group.size(), state.group.rank()
    for owner in module.modules():
        for name, p in list(owner._parameters.items()):
            if p is None or id(p) in ignored or getattr(p, "_fsdp_global_shape", None) is not None:
                continue
            if p.dim() == 0:
                raise ValueError(f"fully_shard: parameter '{name}' is a scalar; it cannot be sharded")
            placement = shard_placement_fn(p) if shard_placement_fn is not None else None
            placement = Shard(0) if placement is None else placement
            dim = placement.dim % p.dim()
            chunk = Shard(dim)._split(c10d._read(p), n)[r]
            shard = Parameter(from_numpy(np.ascontiguousarray(chunk)), requires_grad=p.requires_grad)
            shard._fsdp_global_shape = tuple(p.shape)
            shard.placements = (Shard(dim),)
            shard.device_mesh = state.mesh
            owner._parameters[name] = shard
            state.managed.append((owner, name, shard, dim, p.shape[dim]))


def _install(module, state):
    module._fsdp_state = state
    module._is_fsdp_managed_module = True
    module.register_forward_pre_hook(_pre_forward, with_kwargs=True)
    module.register_forward_hook(_post_forward, always_call=True)


# ---------------------------------------------------------------------------
# FSDP1: the wrapper module, on the same machinery


class ShardingStrategy(enum.Enum):
    FULL_SHARD = 1
    SHARD_GRAD_OP = 2
    NO_SHARD = 3
    HYBRID_SHARD = 4
    _HYBRID_SHARD_ZERO2 = 5


class MixedPrecision:
    """FSDP1's mixed precision: param_dtype and reduce_dtype as MixedPrecisionPolicy's."""

    def __init__(self, param_dtype=None, reduce_dtype=None, buffer_dtype=None, keep_low_precision_grads=False,
                 cast_forward_inputs=False, cast_root_forward_inputs=True, _module_classes_to_ignore=()):
        self.param_dtype, self.reduce_dtype, self.buffer_dtype = param_dtype, reduce_dtype, buffer_dtype
        self.cast_forward_inputs = cast_forward_inputs or cast_root_forward_inputs


class CPUOffload:
    """FSDP1's offload flag: every tensor of the MPI back end is on the CPU already."""

    def __init__(self, offload_params=False):
        self.offload_params = offload_params


class FullyShardedDataParallel(Module):
    """FSDP1: wraps `module` and shards all its parameters over process_group (default: the world) as
    fully_shard does (see the module doc). Only FULL_SHARD without an auto-wrap policy is provided;
    sync_module_states broadcasts rank 0's parameters and buffers first."""

    def __init__(self, module, process_group=None, sharding_strategy=None, cpu_offload=None, auto_wrap_policy=None,
                 backward_prefetch=None, mixed_precision=None, ignored_modules=None, param_init_fn=None,
                 device_id=None, sync_module_states=False, forward_prefetch=False, limit_all_gathers=True,
                 use_orig_params=False, ignored_states=None, device_mesh=None):
        super().__init__()
        if sharding_strategy not in (None, ShardingStrategy.FULL_SHARD):
            raise NotImplementedError(f"FullyShardedDataParallel: only ShardingStrategy.FULL_SHARD is provided "
                                      f"here, got {sharding_strategy}")
        if auto_wrap_policy is not None:
            raise NotImplementedError("FullyShardedDataParallel: auto_wrap_policy is not provided here; wrap the "
                                      "submodules yourself, or call fully_shard on them")
        group = c10d._group(device_mesh.get_group(0) if device_mesh is not None else process_group)
        if sync_module_states:
            with no_grad():
                for t in list(module.parameters()) + list(module.buffers()):
                    c10d.broadcast(t, src=group._ranks[0], group=group)
        mp = mixed_precision or MixedPrecision()
        state = _State(group, MixedPrecisionPolicy(mp.param_dtype, mp.reduce_dtype, None,
                                                   mp.cast_forward_inputs))
        state.mesh = device_mesh
        ignored = [p for m in (ignored_modules or ()) for p in m.parameters()] + list(ignored_states or ())
        _shard_parameters(module, state, ignored)
        self.module = module
        _install(self, state)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)
