"""torch.distributed.device_mesh: an n-d array of global ranks, with one process group per mesh dimension.

    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))   # ranks [[0, 1], [2, 3]]
    mesh["tp"]                   # the 1-d sub-mesh of this rank's row
    mesh.get_group("dp")         # the ranks of this rank's column, in mesh order
    mesh.get_coordinate()        # [row, column] of this rank

Construction is collective over the default group (which it initializes when needed, as PyTorch does):
for each mesh dimension one MPI split makes every group of that dimension at once, keyed by the
coordinate along it, so a group's rank order is the mesh order (a rank's group rank on mesh dim d is its
coordinate d). Ranks of the world outside the mesh take part in the splits and get no group.
Only the "cpu" device type is available (the MPI back end holds cpu tensors).
"""
import numpy as np

from . import distributed_c10d as c10d

__all__ = ["DeviceMesh", "init_device_mesh"]


def _check_device_type(device_type):
    kind = str(device_type).split(":")[0]
    if kind == "cuda":
        from ..cuda import current_device
        current_device()  # PyTorch's AssertionError "Torch not compiled with CUDA enabled"
    if kind != "cpu":
        raise RuntimeError(f"DeviceMesh: device type '{device_type}' is not available; the MPI back end holds "
                           "cpu tensors only (use \"cpu\")")
    return kind


def _mesh_array(mesh):
    if hasattr(mesh, "detach") and hasattr(mesh, "numpy"):
        mesh = mesh.detach().numpy()
    arr = np.array(mesh)
    if arr.size and arr.dtype.kind not in "iu":
        raise ValueError(f"DeviceMesh: mesh must hold integer ranks, got {arr.dtype}")
    return arr.astype(np.int64)


class DeviceMesh:
    """An n-d arrangement of global ranks over the default process group (see the module doc)."""

    def __init__(self, device_type, mesh, *, mesh_dim_names=None, _init_backend=True, _dim_groups=None):
        self.device_type = _check_device_type(device_type)
        arr = _mesh_array(mesh)
        if arr.ndim == 0:
            raise ValueError("DeviceMesh: mesh must have at least one dimension")
        if len(np.unique(arr)) != arr.size:
            raise RuntimeError(f"DeviceMesh cannot have duplicate values, but found {arr.tolist()}")
        if mesh_dim_names is not None:
            mesh_dim_names = tuple(mesh_dim_names)
            if len(mesh_dim_names) != arr.ndim:
                raise RuntimeError(f"mesh_dim_names {mesh_dim_names} should have the same length as the mesh's "
                                   f"number of dimensions {arr.ndim}")
            if len(set(mesh_dim_names)) != len(mesh_dim_names):
                raise RuntimeError(f"Each mesh_dim_name must be unique, but found {mesh_dim_names}")
        self._mesh = arr
        self.mesh_dim_names = mesh_dim_names
        if not c10d.is_initialized():
            c10d.init_process_group()
        world = c10d._default()
        if arr.size > world.size() or arr.min() < 0 or arr.max() >= world.size():
            raise RuntimeError(f"Mesh should not be bigger than default world size {world.size()}, but found "
                               f"{arr.size} ranks!")
        self._rank = world.rank()
        where = np.argwhere(arr == self._rank)
        self._coordinate = [int(c) for c in where[0]] if len(where) else None
        self._dim_groups = _dim_groups if _dim_groups is not None else self._make_dim_groups(world)

    def _make_dim_groups(self, world):
        """One split of the world per mesh dimension: this rank's group along each dim (None outside)."""
        groups = []
        arr = self._mesh
        for d in range(arr.ndim):
            lines = np.moveaxis(arr, d, -1).reshape(-1, arr.shape[d])  # every group of dim d, in mesh order
            if self._coordinate is None:
                color, key, ranks = c10d._mpi_undefined(), 0, None
            else:
                color = int(np.nonzero((lines == self._rank).any(axis=1))[0][0])
                ranks = [int(r) for r in lines[color]]
                key = ranks.index(self._rank)
            comm = world._comm.Split(color, key)
            groups.append(None if ranks is None else c10d.ProcessGroup(comm, ranks, world._backend, world._timeout))
        return groups

    # --- shape and place

    @property
    def mesh(self):
        """The ranks, as an int tensor."""
        from ..eager.creation import from_numpy
        return from_numpy(self._mesh.astype(np.int32))  # PyTorch 2.13 keeps mesh ranks as int32

    @property
    def shape(self):
        return tuple(int(s) for s in self._mesh.shape)

    @property
    def ndim(self):
        return self._mesh.ndim

    def size(self, mesh_dim=None):
        """The number of ranks in the mesh, or along one mesh dimension."""
        if mesh_dim is None:
            return int(self._mesh.size)
        return self.shape[self._dim(mesh_dim)]

    def get_rank(self):
        """This process's global rank."""
        return self._rank

    def get_coordinate(self):
        """This rank's index along each mesh dimension (None when it is not in the mesh)."""
        return None if self._coordinate is None else list(self._coordinate)

    def get_local_rank(self, mesh_dim=None):
        """This rank's coordinate along mesh_dim (its rank in that dimension's group)."""
        if mesh_dim is None:
            if self.ndim > 1:
                raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions", "Optional kwarg "
                                   "`mesh_dim` needs to be specified when device_mesh.ndim > 1.")
            mesh_dim = 0
        d = self._dim(mesh_dim)
        if self._coordinate is None:
            raise RuntimeError(f"rank {self._rank} is not part of the DeviceMesh {self}")
        return self._coordinate[d]

    def get_group(self, mesh_dim=None):
        """The process group of this rank along mesh_dim (ranks in mesh order)."""
        if mesh_dim is None:
            if self.ndim > 1:
                raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions", "Optional kwarg "
                                   "`mesh_dim` needs to be specified when device_mesh.ndim > 1.",
                                   "If you want to get the list of all the ProcessGroups in the DeviceMesh,"
                                   "please use `get_all_groups()` instead.")
            mesh_dim = 0
        g = self._dim_groups[self._dim(mesh_dim)]
        return c10d.GroupMember.NON_GROUP_MEMBER if g is None else g

    def get_all_groups(self):
        return [self.get_group(d) for d in range(self.ndim)]

    def _dim(self, mesh_dim):
        if isinstance(mesh_dim, str):
            if self.mesh_dim_names is None or mesh_dim not in self.mesh_dim_names:
                raise KeyError(f"Invalid mesh_dim_names ('{mesh_dim}',) specified. Valid mesh_dim_names are "
                               f"{list(self.mesh_dim_names or [])}.")
            return self.mesh_dim_names.index(mesh_dim)
        if not -self.ndim <= mesh_dim < self.ndim:
            raise IndexError(f"mesh_dim {mesh_dim} is out of range for a DeviceMesh of {self.ndim} dimensions")
        return mesh_dim % self.ndim

    def __getitem__(self, names):
        """The sub-mesh of the named dimensions through this rank (not collective: it reuses the groups)."""
        names = (names,) if isinstance(names, str) else tuple(names)
        if self.mesh_dim_names is None:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names!")
        for n in names:
            if n not in self.mesh_dim_names:
                raise KeyError(f"Invalid mesh_dim_names {names} specified. Valid mesh_dim_names are "
                               f"{list(self.mesh_dim_names)}.")
        dims = [self.mesh_dim_names.index(n) for n in names]
        if names == self.mesh_dim_names:
            return self
        if self._coordinate is None:
            raise RuntimeError(f"rank {self._rank} is not part of the DeviceMesh {self}")
        index = tuple(slice(None) if d in dims else self._coordinate[d] for d in range(self.ndim))
        sub = np.transpose(self._mesh[index], np.argsort(np.argsort(dims))) if len(dims) > 1 else self._mesh[index]
        return DeviceMesh(self.device_type, sub, mesh_dim_names=names,
                          _dim_groups=[self._dim_groups[d] for d in dims])

    def __eq__(self, other):
        return (isinstance(other, DeviceMesh) and self.device_type == other.device_type
                and self._mesh.shape == other._mesh.shape and bool((self._mesh == other._mesh).all())
                and self.mesh_dim_names == other.mesh_dim_names)

    def __hash__(self):
        return hash((self.device_type, self._mesh.shape, tuple(self._mesh.ravel().tolist()), self.mesh_dim_names))

    def __repr__(self):
        if self.mesh_dim_names:
            dims = ", ".join(f"{n}={s}" for n, s in zip(self.mesh_dim_names, self.shape))
        else:
            dims = ", ".join(str(s) for s in self.shape)
        return f"DeviceMesh(({dims}), '{self.device_type}', mesh={self._mesh.tolist()})"


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """A DeviceMesh of the given shape over ranks 0..N-1 of the world, row-major; N must be the world size."""
    _check_device_type(device_type)
    mesh_shape = tuple(int(s) for s in mesh_shape)
    if mesh_dim_names is not None and len(mesh_dim_names) != len(mesh_shape):
        raise RuntimeError("mesh_shape and mesh_dim_names should have same length!",
                           f"Found len(mesh_dim_names): {len(mesh_dim_names)} and len(mesh_shape):{len(mesh_shape)}.")
    if not c10d.is_initialized():
        c10d.init_process_group()
    n = int(np.prod(mesh_shape, dtype=np.int64))
    world = c10d.get_world_size()
    if n != world:
        raise RuntimeError(f"Mesh should not be bigger than default world size {world}, but found {n} ranks!"
                           if n > world else f"init_device_mesh: mesh_shape {mesh_shape} holds {n} ranks, but the "
                           f"world size is {world}")
    return DeviceMesh(device_type, np.arange(n).reshape(mesh_shape), mesh_dim_names=mesh_dim_names)
