"""The torch surface is declared once per op (eager/declare.py): the function, the method, the in-place
method and out= all come from one def, and introspection lands on that def."""
import inspect
import re
import sys
import warnings

import numpy as np
import pytest

import mindtorch_v2 as torch


@pytest.mark.parametrize("name", ["add", "mul", "exp", "clamp", "sum", "matmul", "tril", "where"])
def test_function_method_and_inplace_forms_share_one_declaration(name):
    fn = inspect.unwrap(getattr(torch, name))
    # a def, or one line declaring an op a helper builds (`exp = torch_op(_unary(core.exp), name="exp", ...)`)
    module_src = inspect.getsource(sys.modules[fn.__module__])
    assert f"def {name}(" in inspect.getsource(fn) or re.search(rf"^{name}( = \w+)* = torch_op\(", module_src, re.M)
    if name != "where":  # Tensor.where(condition, other) has its own argument order
        assert inspect.unwrap(getattr(torch.Tensor, name)) is fn
    if hasattr(torch.Tensor, name + "_"):
        assert inspect.unwrap(getattr(torch.Tensor, name + "_")) is fn


def test_aliases_are_the_same_op():
    assert torch.Tensor.multiply is torch.Tensor.mul and torch.Tensor.subtract_.__wrapped__ is torch.Tensor.sub
    assert torch.absolute is torch.abs and torch.swapaxes is torch.transpose is torch.swapdims


def test_out_writes_into_the_given_tensor_and_returns_it():
    out = torch.empty(3)
    version = out._version
    res = torch.add(torch.ones(3), torch.arange(3.0), out=out)
    assert res is out and out.tolist() == [1.0, 2.0, 3.0] and out._version > version
    assert torch.sum(torch.ones(2, 3), 1, out=torch.empty(2)).tolist() == [3.0, 3.0]
    cat = torch.empty(0)
    assert torch.cat([torch.ones(2), torch.zeros(1)], out=cat) is cat and cat.tolist() == [1.0, 1.0, 0.0]


def test_out_of_another_shape_is_resized_with_torchs_warning():
    out = torch.empty(2)
    with pytest.warns(UserWarning, match="was resized since it had shape"):
        torch.mul(torch.ones(3), 2.0, out=out)
    assert out.shape == (3,) and out.tolist() == [2.0, 2.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.mul(torch.ones(4), 2.0, out=torch.empty(0))  # an empty out resizes silently


def test_out_errors_follow_torch():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        torch.add(torch.ones(2), torch.ones(2), out=torch.empty(2, dtype=torch.long))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        torch.exp(torch.ones(2, requires_grad=True), out=torch.empty(2))
    with pytest.raises(TypeError, match="argument 'out' must be Tensor"):
        torch.exp(torch.ones(2), out=np.zeros(2))


def test_max_with_dim_writes_the_values_indices_pair():
    values, indices = torch.empty(2), torch.empty(2, dtype=torch.long)
    res = torch.max(torch.tensor([[1.0, 5.0], [7.0, 2.0]]), 1, out=(values, indices))
    assert res.values is values and values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
