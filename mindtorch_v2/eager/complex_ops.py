"""Complex tensors: torch.real/imag/conj/angle/sgn/complex/polar, view_as_real/view_as_complex, and
Tensor.view(dtype) as the bit reinterpretation it is in PyTorch.

Where PyTorch returns a view of another dtype (x.real, x.imag, view_as_real, view_as_complex, and view(dtype)
of part of a storage), these are copies: our views are geometry over one base buffer of one dtype. So that no
write is silently lost, such a copy refuses in-place writes (DetachedPartStorage) with an error that says so.
view(dtype) of a tensor covering its whole storage is a true view (BitcastStorage); `conj()`
computes at once (is_conj() is always False)."""
import builtins

from .. import core
from ..core import dtypes as _dt
from .declare import tensor_method, torch_op
from .storage import BitcastStorage, DetachedPartStorage, Storage
from .tensor import Tensor
from .tensor import as_result as _w

__all__ = ["real", "imag", "conj", "conj_physical", "resolve_conj", "resolve_neg", "angle", "sgn", "complex",
           "polar", "view_as_real", "view_as_complex", "is_complex", "is_conj", "view_as_dtype"]


def _part(value, source_op):
    """A Tensor of `value` (a part PyTorch would return as a view) that refuses in-place writes."""
    t = _w(value)
    t._storage = DetachedPartStorage(t._storage, source_op)
    return t


def _is_complex(t):
    return t.dtype.category == _dt.COMPLEX


@torch_op(method=False)
def real(input):
    return _part(core.real(input), "torch.real / Tensor.real") if _is_complex(input) else input


@torch_op(method=False)
def imag(input):
    if not _is_complex(input):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _part(core.imag(input), "torch.imag / Tensor.imag")


tensor_method(property(real), "real")
tensor_method(property(imag), "imag")


@torch_op
def conj(input):
    return _w(core.conj(input)) if _is_complex(input) else input


@torch_op(inplace=True, out=True)
def conj_physical(input):
    return _w(core.conj(input)) if _is_complex(input) else input.clone()


@torch_op
def resolve_conj(input):
    return input  # conj() is never lazy here


@torch_op
def resolve_neg(input):
    return input


@torch_op(out=True)
def angle(input):
    if input.dtype.category < _dt.FLOAT:
        input = input.to(_dt.default_float)
    return _w(core.angle(input))


@torch_op(inplace=True, out=True)
def sgn(input):
    return _w(core.sgn(input))


_PARTS = (_dt.float16, _dt.float32, _dt.float64)


@torch_op(method=False, out=True)
def complex(real, imag):  # noqa: A001
    if real.dtype not in _PARTS or imag.dtype not in _PARTS:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{real.dtype.scalar_name} and {imag.dtype.scalar_name}")
    if real.dtype is not imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {real.dtype.scalar_name} but got scalar type "
                           f"{imag.dtype.scalar_name} for second argument")
    return _w(core.complex(real, imag))


@torch_op(method=False, out=True)
def polar(abs, angle):  # noqa: A002
    if abs.dtype not in _PARTS or abs.dtype is not angle.dtype:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{abs.dtype.scalar_name} and {angle.dtype.scalar_name}")
    return _w(core.polar(abs, angle))


@torch_op(method=False)
def view_as_real(input):
    if not _is_complex(input):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return _part(core.real_pair(input), "torch.view_as_real")


@torch_op(method=False)
def view_as_complex(input):
    if input.dtype is _dt.float16:
        raise TypeError("view_as_complex: ComplexHalf (complex32) is not supported here")
    if input.dtype not in _PARTS:
        raise RuntimeError("view_as_complex is only supported for float and double tensors, but got a tensor of "
                           f"scalar type: {input.dtype.scalar_name}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return _part(core.from_real_pair(input), "torch.view_as_complex")


@torch_op(method=False)
def is_complex(input):
    return _is_complex(input)


@torch_op(method=False)
def is_conj(input):
    return False


def view_as_dtype(self, dtype):
    """Tensor.view(dtype): the same bits read as `dtype` (torch's rules for the last dimension)."""
    dtype = _dt.canonicalize(dtype)
    old, new = self.dtype.itemsize, dtype.itemsize
    if old != new:
        what = f"view {self.dtype.scalar_name} as {dtype.scalar_name} (different element sizes)"
        if self.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 to {what}")
        if self.ndim and self.stride(-1) != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 to {what}, but got {self.stride(-1)}")
        if new > old and self.shape[-1] % (new // old):
            raise RuntimeError(f"self.size(-1) must be divisible by {new // old} to {what}, but got "
                               f"{self.shape[-1]}")
    if dtype is self.dtype:
        return self.detach()  # torch: the same bits, outside the graph
    st = self._storage
    if self._full and type(st) is Storage and type(st.value) is core.Array:
        # a whole storage: a true view (writes reach self, one version counter); bits carry no gradient
        t = Tensor._from_value(core.bitcast(st.value, dtype))
        t._storage = BitcastStorage(st, dtype)
        return t
    return _part(core.bitcast(self.detach(), dtype), "Tensor.view(dtype)")  # a strided part: a copy


@tensor_method("__complex__")
def _complex_scalar(self):
    return builtins.complex(self.item())
