"""layer_norm as a primitive pair (core/ops/layer_norm.py): nn.functional.layer_norm on it gives PyTorch's values
and gradients (recorded from PyTorch 2.13 below), the composite's forward bits, and its errors."""
import numpy as np
import pytest

import mindtorch_v2 as torch
from mindtorch_v2 import core
from mindtorch_v2.core.ops.layer_norm import _backward_composite, _normalized

F = torch.nn.functional
X = [[0.5, -1.25, 2.0, 0.0], [3.0, 3.0, 3.0, 3.5]]
W, B = [1.5, -0.5, 2.0, 1.0], [0.1, 0.2, -0.3, 0.0]
G = [[1.0, -2.0, 0.5, 0.25], [0.0, 1.0, -1.0, 2.0]]


def test_layer_norm_gives_pytorchs_values_and_gradients():
    x, w, b = (torch.tensor(v, requires_grad=True) for v in (X, W, B))
    y = F.layer_norm(x, (4,), w, b, eps=1e-5)
    y.backward(torch.tensor(G))
    assert y.grad_fn.name() == "NativeLayerNormBackward0"
    # PyTorch 2.13's answers for the same call
    np.testing.assert_allclose(y.detach().numpy(), [[0.341571778, 0.871032715, 2.598861456, -0.268413097],
                                                    [-0.765933037, 0.488644361, -1.454577446, 1.731866121]], rtol=2e-6)
    np.testing.assert_allclose(x.grad.numpy(), [[0.473397136, 0.13490212, -0.034034491, -0.574264884],
                                                [3.84790039, 1.538742065, -5.38872528, 0.002098083]], rtol=2e-4,
                               atol=2e-5)  # (the second row is nearly constant: its gradient is ill-conditioned)
    np.testing.assert_allclose(w.grad.numpy(), [0.161047846, 2.106841803, 1.302004457, 3.396627903], rtol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), [1.0, -1.0, -0.5, 2.25])


def test_half_precision_is_normalized_in_float32_as_pytorch():
    h = F.layer_norm(torch.tensor([[0.5, -1.25, 2.0, 0.0]], dtype=torch.float16), (4,))
    assert h.dtype is torch.float16
    assert h.tolist() == [[0.1610107421875, -1.341796875, 1.44921875, -0.268310546875]]  # PyTorch's


def test_double_backward_matches_pytorch():
    x = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    (gx,) = torch.autograd.grad((F.layer_norm(x, (2, 4)) * torch.tensor(G, dtype=torch.float64)).sum(), x,
                                create_graph=True)
    (ggx,) = torch.autograd.grad((gx ** 2).sum(), x)
    np.testing.assert_allclose(ggx.numpy(), [[-0.006577426, 1.131705396, -0.126999034, 0.288811956],
                                             [-0.160871225, -0.439324512, 0.117582063, -0.804327217]], rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_the_primitives_give_the_composites_bits_forward_and_its_gradient(dtype, k):
    rng = np.random.default_rng(k)
    x = core.asarray(rng.standard_normal((3, 4, 5)).astype(dtype))
    g = core.asarray(rng.standard_normal((3, 4, 5)).astype(dtype))
    got = np.asarray(core.layer_norm_p.bind(x, k=k, eps=1e-5))
    assert got.tobytes() == np.asarray(_normalized(x, k, 1e-5)[0]).tobytes()
    np.testing.assert_allclose(np.asarray(core.layer_norm_backward_p.bind(g, x, k=k, eps=1e-5)),
                               np.asarray(_backward_composite(g, x, k=k, eps=1e-5)), rtol=1e-4 if dtype is np.float32
                               else 1e-12, atol=1e-5 if dtype is np.float32 else 1e-12)


def test_errors():
    with pytest.raises(NotImplementedError, match="\"LayerNormKernelImpl\" not implemented for 'Long'"):
        F.layer_norm(torch.ones(2, 3, dtype=torch.long), (3,))
    x = core.asarray(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"k \(the number of normalized trailing axes\) must be an int in \[1, 2\]"):
        core.layer_norm_p.bind(x, k=3, eps=1e-5)
    with pytest.raises(TypeError, match="eps must be a float"):
        core.layer_norm_p.bind(x, k=1, eps=1)
    with pytest.raises(ValueError, match="must have x's shape and dtype"):
        core.layer_norm_backward_p.bind(core.asarray(np.ones((2, 2), np.float32)), x, k=1, eps=1e-5)
