"""nn.Module machinery (registration, iteration, modes, state_dict, hooks, repr), containers, layers against
NumPy references built from each module's own weights (BatchNorm running stats, MultiheadAttention,
TransformerEncoderLayer, ...), nn.utils, and an end-to-end training run."""
import collections
import copy

import numpy as np
import pytest

import mindtorch_v2 as torch
import mindtorch_v2.nn as nn
import mindtorch_v2.nn.functional as F

RNG = np.random.default_rng(7)


def T(a, requires_grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def N(t):
    return np.asarray(t.detach())


def randn(*shape):
    return RNG.standard_normal(shape)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.block = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
        self.scale = nn.Parameter(torch.ones(4))
        self.register_buffer("steps", torch.zeros(()))
        self.register_buffer("scratch", torch.zeros(2), persistent=False)

    def forward(self, x):
        return self.block(self.act(self.fc1(x))) * self.scale


# ---------------------------------------------------------------------------
# Parameter


def test_parameter_is_a_leaf_tensor_sharing_the_source_storage():
    src = torch.zeros(3)
    p = nn.Parameter(src)
    assert isinstance(p, torch.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    with torch.no_grad():
        src.add_(2.0)
    assert N(p).tolist() == [2.0, 2.0, 2.0]
    assert not nn.Parameter(torch.zeros(2), requires_grad=False).requires_grad
    assert repr(nn.Parameter(torch.tensor([1.0, 2.0]))) == \
        "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    y = p * 2  # ops on a Parameter give plain tensors
    assert type(y) is torch.Tensor and y.grad_fn is not None
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q.requires_grad and N(q).tolist() == N(p).tolist()
    with torch.no_grad():
        q.zero_()
    assert N(p).tolist() == [2.0, 2.0, 2.0]


# ---------------------------------------------------------------------------
# registration and iteration


def test_named_parameters_buffers_children_and_modules():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "fc1.weight", "fc1.bias", "block.0.weight", "block.0.bias", "block.1.weight",
                     "block.1.bias"]
    assert len(list(net.parameters())) == 7
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in net.named_parameters(prefix="model")][1] == "model.fc1.weight"
    assert [n for n, _ in net.named_buffers()] == ["steps", "scratch", "block.1.running_mean",
                                                   "block.1.running_var", "block.1.num_batches_tracked"]
    assert [n for n, _ in net.named_children()] == ["fc1", "act", "block"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "act", "block", "block.0", "block.1"]
    assert list(net.children())[0] is net.fc1
    assert net.get_submodule("block.0") is net.block[0]
    assert net.get_parameter("block.0.bias") is net.block[0].bias


def test_shared_parameters_and_modules_are_listed_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    assert len(list(seq.modules())) == 3
    tied = nn.Module()
    tied.a = nn.Linear(2, 2)
    tied.b = nn.Linear(2, 2)
    tied.b.weight = tied.a.weight
    assert [n for n, _ in tied.named_parameters()] == ["a.weight", "a.bias", "b.bias"]


def test_setattr_rules_and_errors():
    m = nn.Module()
    m.w = nn.Parameter(torch.zeros(2))
    assert "w" in m._parameters
    with pytest.raises(TypeError, match=r"cannot assign 'torch.FloatTensor' as parameter 'w' \(torch.nn.Parameter "
                                        r"or None expected\)"):
        m.w = torch.zeros(2)
    m.w = None
    assert m.w is None and "w" in m._parameters
    m.register_buffer("b", torch.zeros(1))
    m.b = torch.ones(1)  # assigning a tensor to a buffer name replaces the buffer
    assert N(m._buffers["b"]).tolist() == [1.0]
    with pytest.raises(TypeError, match="cannot assign 'int' as buffer 'b'"):
        m.b = 3
    with pytest.raises(KeyError, match="attribute 'w' already exists"):
        m.register_buffer("w", torch.zeros(1))
    with pytest.raises(KeyError, match="buffer name can"):
        m.register_buffer("a.b", torch.zeros(1))
    with pytest.raises(TypeError, match="cannot assign 'list' object to buffer 'c'"):
        m.register_buffer("c", [1])
    with pytest.raises(TypeError, match="cannot assign 'torch.FloatTensor' object to parameter 'q'"):
        m.register_parameter("q", torch.zeros(1))
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'missing'"):
        m.missing
    m.child = nn.Linear(1, 1)
    del m.child
    assert "child" not in m._modules
    m.buf2 = nn.Buffer(torch.ones(2), persistent=False)
    assert "buf2" in m._buffers and "buf2" not in m.state_dict()

    class Early(nn.Module):
        def __init__(self):
            self.p = nn.Parameter(torch.zeros(1))
    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        Early()


def test_train_eval_requires_grad_zero_grad_and_apply():
    net = Net()
    net.eval()
    assert not net.training and not net.block[1].training
    assert net.train() is net and net.block[0].training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    net.requires_grad_()
    net(torch.randn(5, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and float(p.grad.abs().sum()) == 0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "ReLU", "Linear", "BatchNorm1d", "Sequential", "Net"]


def test_to_dtype_casts_floating_state_only():
    net = Net()
    w = net.fc1.weight
    net.to(torch.float64)
    assert net.fc1.weight is w and w.dtype is torch.float64  # parameters are converted in place
    assert net.block[1].running_mean.dtype is torch.float64
    assert net.block[1].num_batches_tracked.dtype is torch.int64
    assert net(torch.randn(2, 3, dtype=torch.float64)).dtype is torch.float64
    net.float()
    assert all(p.dtype is torch.float32 for p in net.parameters())
    assert net.double().fc1.bias.dtype is torch.float64
    assert net.to("cpu") is net
    meta = nn.Linear(3, 2).to("meta")
    assert meta.weight.device.type == "meta" and meta.weight.requires_grad


def test_linear_on_the_meta_device_builds_shapes_only():
    lin = nn.Linear(1000, 2000, device="meta")
    assert lin.weight.device.type == "meta" and tuple(lin.weight.shape) == (2000, 1000)
    out = lin(torch.empty(8, 1000, device="meta"))
    assert tuple(out.shape) == (8, 2000) and out.device.type == "meta"


# ---------------------------------------------------------------------------
# state dict


def test_state_dict_holds_detached_parameters_and_persistent_buffers():
    net = Net()
    sd = net.state_dict()
    assert isinstance(sd, collections.OrderedDict)
    assert list(sd) == ["scale", "steps", "fc1.weight", "fc1.bias", "block.0.weight", "block.0.bias",
                        "block.1.weight", "block.1.bias", "block.1.running_mean", "block.1.running_var",
                        "block.1.num_batches_tracked"]
    assert not sd["fc1.weight"].requires_grad and type(sd["fc1.weight"]) is torch.Tensor
    assert net.state_dict(keep_vars=True)["fc1.weight"] is net.fc1.weight
    assert list(net.state_dict(prefix="m.").keys())[0] == "m.scale"


def test_state_dict_round_trip_reproduces_outputs():
    torch.manual_seed(0)
    a, b = Net(), Net()
    a.train()
    a(torch.randn(8, 3))  # move BatchNorm running stats away from their init
    a.eval()
    b.eval()
    x = torch.randn(4, 3)
    assert not np.allclose(N(a(x)), N(b(x)))
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    np.testing.assert_array_equal(N(a(x)), N(b(x)))
    assert int(b.block[1].num_batches_tracked) == 1
    assert b.fc1.weight.requires_grad and b.fc1.weight.is_leaf


def test_load_state_dict_reports_missing_unexpected_and_size_mismatch():
    net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    sd = net.state_dict()
    del sd["2.bias"]
    sd["2.extra"] = torch.zeros(1)
    sd["9.weight"] = torch.zeros(1)
    with pytest.raises(RuntimeError) as e:
        net.load_state_dict(sd)
    msg = str(e.value)
    assert msg.startswith("Error(s) in loading state_dict for Sequential:")
    assert 'Missing key(s) in state_dict: "2.bias".' in msg
    # torch's order: the root flags keys of unknown children first, then each child its own
    assert 'Unexpected key(s) in state_dict: "9.weight", "2.extra".' in msg
    res = net.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["2.bias"] and res.unexpected_keys == ["9.weight", "2.extra"]
    bad = net.state_dict()
    bad["0.weight"] = torch.zeros(4, 2)
    with pytest.raises(RuntimeError, match=r"size mismatch for 0.weight: copying a param with shape "
                                           r"torch.Size\(\[4, 2\]\) from checkpoint, the shape in current model "
                                           r"is torch.Size\(\[3, 2\]\)"):
        net.load_state_dict(bad, strict=False)


def test_load_state_dict_copies_values_into_the_existing_parameters():
    lin = nn.Linear(2, 2)
    w = lin.weight
    lin.load_state_dict({"weight": torch.ones(2, 2), "bias": torch.zeros(2)})
    assert lin.weight is w and N(w).tolist() == [[1.0, 1.0], [1.0, 1.0]]


# ---------------------------------------------------------------------------
# hooks and repr


def test_forward_pre_hook_and_forward_hook():
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda m, args, out: calls.append(out.shape) or out + 1)
    out = lin(torch.ones(3, 2))
    np.testing.assert_allclose(N(out), np.broadcast_to(N(lin.bias) + 1, (3, 2)), rtol=1e-6)
    assert calls == [torch.Size([3, 2])]
    h1.remove()
    h2.remove()
    np.testing.assert_allclose(N(lin(torch.ones(1, 2))), N(torch.ones(1, 2) @ lin.weight.t() + lin.bias))
    with lin.register_forward_hook(lambda m, a, kw, out: out * 0, with_kwargs=True):
        assert float(lin(torch.ones(1, 2)).abs().sum()) == 0
    assert float(lin(torch.ones(1, 2)).abs().sum()) != 0


def test_nested_repr_like_torch():
    net = nn.Sequential(collections.OrderedDict([
        ("conv", nn.Conv2d(1, 4, 3, stride=2, padding=1, bias=False)),
        ("bn", nn.BatchNorm2d(4)),
        ("act", nn.LeakyReLU(0.1)),
        ("inner", nn.Sequential(nn.Flatten(), nn.Linear(16, 2))),
    ]))
    assert repr(net) == (
        "Sequential(\n"
        "  (conv): Conv2d(1, 4, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False)\n"
        "  (bn): BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)\n"
        "  (act): LeakyReLU(negative_slope=0.1)\n"
        "  (inner): Sequential(\n"
        "    (0): Flatten(start_dim=1, end_dim=-1)\n"
        "    (1): Linear(in_features=16, out_features=2, bias=True)\n"
        "  )\n"
        ")")
    reprs = {
        nn.ReLU(): "ReLU()", nn.ReLU(inplace=True): "ReLU(inplace=True)", nn.GELU(): "GELU(approximate='none')",
        nn.GELU("tanh"): "GELU(approximate='tanh')", nn.Softplus(): "Softplus(beta=1.0, threshold=20.0)",
        nn.Dropout(): "Dropout(p=0.5, inplace=False)", nn.Softmax(dim=1): "Softmax(dim=1)",
        nn.LogSoftmax(-1): "LogSoftmax(dim=-1)", nn.ELU(): "ELU(alpha=1.0)", nn.ReLU6(): "ReLU6()",
        nn.Hardtanh(): "Hardtanh(min_val=-1.0, max_val=1.0)", nn.PReLU(3): "PReLU(num_parameters=3)",
        nn.Identity(): "Identity()", nn.MaxPool2d(2): "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, "
                                                      "ceil_mode=False)",
        nn.AvgPool2d(3, 1): "AvgPool2d(kernel_size=3, stride=1, padding=0)",
        nn.AdaptiveAvgPool2d((1, 1)): "AdaptiveAvgPool2d(output_size=(1, 1))",
        nn.LayerNorm(8): "LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)",
        nn.GroupNorm(2, 4): "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)",
        nn.Embedding(10, 3, padding_idx=0): "Embedding(10, 3, padding_idx=0)",
        nn.Conv1d(2, 3, 5, padding="same"): "Conv1d(2, 3, kernel_size=(5,), stride=(1,), padding=same)",
        nn.Bilinear(2, 3, 4): "Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)",
        nn.Unflatten(1, (2, 3)): "Unflatten(dim=1, unflattened_size=(2, 3))", nn.SiLU(): "SiLU()",
        nn.Mish(): "Mish()", nn.Sigmoid(): "Sigmoid()", nn.Tanh(): "Tanh()",
    }
    for mod, text in reprs.items():
        assert repr(mod) == text
    lst = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU()])
    assert repr(lst) == ("ModuleList(\n  (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)\n"
                         "  (3): ReLU()\n)")
    mha = nn.MultiheadAttention(4, 2)
    assert repr(mha) == ("MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=4, "
                         "out_features=4, bias=True)\n)")


def test_forward_must_be_defined():
    with pytest.raises(NotImplementedError, match='Module \\[Module\\] is missing the required "forward" function'):
        nn.Module()(1)


# ---------------------------------------------------------------------------
# containers


def test_sequential_indexing_slicing_append_and_delete():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    seq = nn.Sequential(a, b)
    assert len(seq) == 2 and seq[0] is a and seq[-1] is b
    assert seq.append(c) is seq and seq[2] is c and len(seq) == 3
    sub = seq[1:]
    assert isinstance(sub, nn.Sequential) and list(sub) == [b, c]
    assert list(iter(seq)) == [a, b, c]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        seq[3]
    x = torch.randn(4, 2)
    np.testing.assert_allclose(N(seq(x)), N(c(b(a(x)))))
    del seq[1]
    assert list(seq._modules) == ["0", "1"] and seq[1] is c
    seq[0] = nn.Linear(2, 3)
    assert seq[0] is not a
    named = nn.Sequential(collections.OrderedDict([("first", a), ("second", b)]))
    assert named.first is a and [n for n, _ in named.named_children()] == ["first", "second"]
    assert len(nn.Sequential(a) + nn.Sequential(b, c)) == 3
    seq.insert(0, nn.Identity())
    assert isinstance(seq[0], nn.Identity) and len(seq) == 3


def test_module_list_and_module_dict():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(layers) == 3 and len(list(layers.parameters())) == 6
    layers.append(nn.ReLU())
    layers.extend([nn.Tanh()])
    assert isinstance(layers[-1], nn.Tanh) and isinstance(layers[1:3], nn.ModuleList)
    layers.insert(1, nn.Identity())
    assert isinstance(layers[1], nn.Identity) and len(layers) == 6
    del layers[1]
    assert len(layers) == 5 and [n for n, _ in layers.named_children()] == ["0", "1", "2", "3", "4"]
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable"):
        layers.extend(nn.ReLU())
    d = nn.ModuleDict({"enc": nn.Linear(2, 3), "act": nn.ReLU()})
    d["dec"] = nn.Linear(3, 2)
    assert list(d.keys()) == ["enc", "act", "dec"] and "act" in d and len(d) == 3
    assert [n for n, _ in d.named_parameters()] == ["enc.weight", "enc.bias", "dec.weight", "dec.bias"]
    assert isinstance(d.pop("act"), nn.ReLU) and "act" not in d
    plist = nn.ParameterList([nn.Parameter(torch.zeros(2)), torch.ones(3)])
    assert len(plist) == 2 and isinstance(plist[1], nn.Parameter)
    assert [n for n, _ in plist.named_parameters()] == ["0", "1"]
    pdict = nn.ParameterDict({"a": nn.Parameter(torch.zeros(1))})
    assert [n for n, _ in pdict.named_parameters()] == ["a"]


def test_identity_flatten_unflatten():
    x = torch.randn(2, 3, 4, 5)
    assert nn.Identity(54, unused=1)(x) is x
    assert tuple(nn.Flatten()(x).shape) == (2, 60)
    assert tuple(nn.Flatten(0, 2)(x).shape) == (24, 5)
    assert tuple(nn.Unflatten(1, (3, 20))(nn.Flatten()(x)).shape) == (2, 3, 20)


# ---------------------------------------------------------------------------
# layers


def test_linear_and_bilinear_default_init_bounds_and_forward():
    torch.manual_seed(3)
    lin = nn.Linear(400, 300)
    w, b = N(lin.weight), N(lin.bias)
    bound = 1 / np.sqrt(400)  # kaiming_uniform(a=sqrt(5)) gives exactly 1/sqrt(fan_in)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert np.abs(b).max() <= bound and abs(w.std() - bound / np.sqrt(3)) < 0.01 * bound
    x = randn(5, 400).astype(np.float32)
    np.testing.assert_allclose(N(lin(torch.tensor(x))), x @ w.T + b, rtol=1e-4, atol=1e-5)
    assert lin.weight.dtype is torch.float32
    nb = nn.Linear(3, 2, bias=False)
    assert nb.bias is None and [n for n, _ in nb.named_parameters()] == ["weight"]
    bil = nn.Bilinear(3, 4, 2)
    assert np.abs(N(bil.weight)).max() <= 1 / np.sqrt(3)
    x1, x2 = randn(5, 3), randn(5, 4)
    np.testing.assert_allclose(N(bil.double()(T(x1), T(x2))),
                               np.einsum("ni,kij,nj->nk", x1, N(bil.weight), x2) + N(bil.bias))


def test_conv2d_module_matches_functional_and_padding_modes():
    conv = nn.Conv2d(2, 4, (3, 2), stride=(2, 1), padding=1, dilation=(1, 2), groups=2).double()
    assert tuple(conv.weight.shape) == (4, 1, 3, 2)
    fan_in = 1 * 3 * 2
    assert np.abs(N(conv.weight)).max() <= 1 / np.sqrt(fan_in) and np.abs(N(conv.bias)).max() <= 1 / np.sqrt(fan_in)
    x = T(randn(2, 2, 7, 6))
    np.testing.assert_allclose(N(conv(x)), N(F.conv2d(x, conv.weight, conv.bias, (2, 1), 1, (1, 2), 2)))
    same = nn.Conv2d(2, 3, 4, padding="same").double()
    assert tuple(same(x).shape) == (2, 3, 7, 6)
    refl = nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect").double()
    np.testing.assert_allclose(N(refl(x)), N(F.conv2d(F.pad(x, (1, 1, 1, 1), mode="reflect"), refl.weight,
                                                      refl.bias)))
    circ = nn.Conv1d(2, 2, 3, padding=2, padding_mode="circular").double()
    x1 = T(randn(1, 2, 5))
    np.testing.assert_allclose(N(circ(x1)), N(F.conv1d(F.pad(x1, (2, 2), mode="circular"), circ.weight, circ.bias)))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        nn.Conv2d(3, 4, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="Invalid padding string 'full'"):
        nn.Conv2d(3, 4, 3, padding="full")
    out = nn.Conv2d(2, 4, 3)(torch.randn(3, 2, 5, 5))
    out.sum().backward()


def test_pooling_modules():
    x = torch.randn(2, 3, 8, 8)
    np.testing.assert_array_equal(N(nn.MaxPool2d(2)(x)), N(F.max_pool2d(x, 2)))
    np.testing.assert_array_equal(N(nn.AvgPool2d(3, stride=2, padding=1)(x)), N(F.avg_pool2d(x, 3, 2, 1)))
    np.testing.assert_allclose(N(nn.AdaptiveAvgPool2d(1)(x)), N(x).mean(axis=(2, 3), keepdims=True), rtol=1e-5)
    assert tuple(nn.AdaptiveAvgPool2d((3, None))(x).shape) == (2, 3, 3, 8)
    assert tuple(nn.MaxPool1d(2)(torch.randn(2, 3, 9)).shape) == (2, 3, 4)
    out, idx = nn.MaxPool2d(2, return_indices=True)(x)
    assert idx.shape == out.shape


def test_batchnorm2d_running_stats_after_two_steps_and_eval():
    bn = nn.BatchNorm2d(3, momentum=0.1).double()
    xs = [randn(4, 3, 2, 5) * 2 + 1, randn(4, 3, 2, 5) - 3]
    rm, rv = np.zeros(3), np.ones(3)
    for x in xs:
        out = bn(T(x))
        mu, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
        ref = (x - mu[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5)
        np.testing.assert_allclose(N(out), ref, rtol=1e-9, atol=1e-12)
        rm = 0.9 * rm + 0.1 * mu
        rv = 0.9 * rv + 0.1 * x.var(axis=(0, 2, 3), ddof=1)
    np.testing.assert_allclose(N(bn.running_mean), rm, rtol=1e-12)
    np.testing.assert_allclose(N(bn.running_var), rv, rtol=1e-12)
    assert int(bn.num_batches_tracked) == 2 and bn.num_batches_tracked.dtype is torch.int64
    bn.eval()
    x = randn(2, 3, 2, 2)
    np.testing.assert_allclose(N(bn(T(x))), (x - rm[None, :, None, None]) / np.sqrt(rv[None, :, None, None] + 1e-5),
                               rtol=1e-10)
    assert int(bn.num_batches_tracked) == 2


def test_batchnorm_cumulative_average_affine_and_gradients():
    bn = nn.BatchNorm1d(2, momentum=None).double()
    xs = [randn(5, 2), randn(5, 2), randn(5, 2)]
    for x in xs:
        bn(T(x))
    np.testing.assert_allclose(N(bn.running_mean), np.mean([x.mean(0) for x in xs], 0), rtol=1e-12)
    bn = nn.BatchNorm1d(3).double()
    with torch.no_grad():
        bn.weight.copy_(T([1.0, 2.0, 3.0]))
        bn.bias.copy_(T([0.0, 1.0, -1.0]))
    x = randn(6, 3, 4)
    out = bn(T(x))
    mu, var = x.mean(axis=(0, 2)), x.var(axis=(0, 2))
    ref = (x - mu[None, :, None]) / np.sqrt(var[None, :, None] + 1e-5) * np.array([1, 2, 3])[None, :, None] \
        + np.array([0, 1, -1])[None, :, None]
    np.testing.assert_allclose(N(out), ref, rtol=1e-10)
    (out * T(randn(6, 3, 4))).sum().backward()
    assert bn.weight.grad is not None and tuple(bn.weight.grad.shape) == (3,)
    assert bn.running_mean.grad_fn is None and not bn.running_mean.requires_grad
    no_track = nn.BatchNorm1d(3, track_running_stats=False)
    assert no_track.running_mean is None and "running_mean" not in no_track.state_dict()
    no_track.eval()
    assert tuple(no_track(torch.randn(4, 3)).shape) == (4, 3)  # batch statistics even in eval mode
    with pytest.raises(ValueError, match=r"expected 4D input \(got 2D input\)"):
        nn.BatchNorm2d(3)(torch.randn(4, 3))


def test_layernorm_groupnorm_modules():
    ln = nn.LayerNorm((3, 4)).double()
    assert N(ln.weight).tolist() == [[1.0] * 4] * 3 and float(ln.bias.abs().sum()) == 0
    x = randn(2, 3, 4)
    mu, var = x.mean(axis=(1, 2), keepdims=True), x.var(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(N(ln(T(x))), (x - mu) / np.sqrt(var + 1e-5), rtol=1e-10)
    assert nn.LayerNorm(4, elementwise_affine=False).weight is None
    gn = nn.GroupNorm(2, 4).double()
    x = randn(3, 4, 5)
    g = x.reshape(3, 2, -1)
    ref = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    np.testing.assert_allclose(N(gn(T(x))), ref, rtol=1e-10)
    with pytest.raises(ValueError, match=r"num_channels \(4\) must be divisible by num_groups \(3\)"):
        nn.GroupNorm(3, 4)


def test_dropout_module_respects_training_mode():
    drop = nn.Dropout(0.5)
    x = torch.ones(100, 100)
    y = drop(x)
    assert 0.4 < float((y == 0).float().mean()) < 0.6
    drop.eval()
    assert drop(x) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.Dropout(-0.1)


def test_embedding_module_padding_idx():
    torch.manual_seed(0)
    emb = nn.Embedding(10, 4, padding_idx=2)
    assert float(emb.weight[2].abs().sum()) == 0 and float(emb.weight[3].abs().sum()) > 0
    out = emb(torch.tensor([[2, 3], [2, 2]]))
    assert tuple(out.shape) == (2, 2, 4)
    out.sum().backward()
    assert N(emb.weight.grad)[2].tolist() == [0.0] * 4 and N(emb.weight.grad)[3].tolist() == [1.0] * 4
    assert nn.Embedding(5, 2, padding_idx=-1).padding_idx == 4
    pre = nn.Embedding.from_pretrained(torch.ones(3, 2))
    assert not pre.weight.requires_grad and N(pre(torch.tensor([1]))).tolist() == [[1.0, 1.0]]


def test_activation_modules_match_functional():
    x = torch.randn(3, 4)
    pairs = [(nn.ReLU(), F.relu(x)), (nn.ReLU6(), F.relu6(x)), (nn.LeakyReLU(0.3), F.leaky_relu(x, 0.3)),
             (nn.ELU(0.5), F.elu(x, 0.5)), (nn.GELU("tanh"), F.gelu(x, approximate="tanh")), (nn.SiLU(), F.silu(x)),
             (nn.Mish(), F.mish(x)), (nn.Sigmoid(), torch.sigmoid(x)), (nn.Tanh(), torch.tanh(x)),
             (nn.Softplus(2.0, 5.0), F.softplus(x, 2.0, 5.0)), (nn.Hardtanh(-0.5, 0.5), F.hardtanh(x, -0.5, 0.5)),
             (nn.Softmax(dim=1), F.softmax(x, 1)), (nn.LogSoftmax(dim=0), F.log_softmax(x, 0)),
             (nn.LogSigmoid(), F.logsigmoid(x)), (nn.Hardswish(), F.hardswish(x))]
    for mod, ref in pairs:
        np.testing.assert_array_equal(N(mod(x)), N(ref))
    prelu = nn.PReLU(4)
    assert N(prelu.weight).tolist() == [0.25] * 4
    np.testing.assert_allclose(N(prelu(x)), np.where(N(x) > 0, N(x), 0.25 * N(x)), rtol=1e-6)
    y = x.clone()
    nn.ReLU(inplace=True)(y)
    np.testing.assert_array_equal(N(y), np.maximum(N(x), 0))


# ---------------------------------------------------------------------------
# attention


def np_softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def mha_ref(q, k, v, mha, key_padding_mask=None, attn_mask=None):
    """torch's multi-head attention from the module's weights; q, k, v are (L, N, E)."""
    E, H = mha.embed_dim, mha.num_heads
    hd = E // H
    W, b = N(mha.in_proj_weight), N(mha.in_proj_bias)
    Q, K, V = q @ W[:E].T + b[:E], k @ W[E:2 * E].T + b[E:2 * E], v @ W[2 * E:].T + b[2 * E:]

    def heads(x):  # (L, N, E) -> (N, H, L, hd)
        return x.reshape(x.shape[0], x.shape[1], H, hd).transpose(1, 2, 0, 3)
    s = heads(Q) @ heads(K).swapaxes(-1, -2) / np.sqrt(hd)
    if attn_mask is not None:
        s = np.where(attn_mask, -np.inf, s)
    if key_padding_mask is not None:
        s = np.where(key_padding_mask[:, None, None, :], -np.inf, s)
    a = np_softmax(s)
    o = (a @ heads(V)).transpose(2, 0, 1, 3).reshape(q.shape[0], q.shape[1], E)
    return o @ N(mha.out_proj.weight).T + N(mha.out_proj.bias), a


def test_multihead_attention_matches_numpy():
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2).double()
    with torch.no_grad():  # non-zero biases, so the test sees them
        mha.in_proj_bias.copy_(T(randn(24) * 0.1))
        mha.out_proj.bias.copy_(T(randn(8) * 0.1))
    q, k = randn(4, 3, 8), randn(6, 3, 8)
    out, w = mha(T(q), T(k), T(k))
    ref, a = mha_ref(q, k, k, mha)
    np.testing.assert_allclose(N(out), ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(N(w), a.mean(1), rtol=1e-10)
    kpm = np.zeros((3, 6), bool)
    kpm[0, 4:] = True
    am = np.triu(np.ones((4, 6), bool), 3)
    out, w = mha(T(q), T(k), T(k), key_padding_mask=torch.tensor(kpm), attn_mask=torch.tensor(am),
                 average_attn_weights=False)
    ref, a = mha_ref(q, k, k, mha, kpm, am)
    np.testing.assert_allclose(N(out), ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(N(w), a, rtol=1e-10, atol=1e-15)
    out, w = mha(T(q), T(q), T(q), need_weights=False)
    assert w is None
    np.testing.assert_allclose(N(out), mha_ref(q, q, q, mha)[0], rtol=1e-10, atol=1e-12)
    out, w = mha(T(q[:, 0]), T(q[:, 0]), T(q[:, 0]))  # unbatched (L, E)
    np.testing.assert_allclose(N(out), mha_ref(q[:, :1], q[:, :1], q[:, :1], mha)[0][:, 0], rtol=1e-10, atol=1e-12)
    assert tuple(w.shape) == (4, 4)


def test_multihead_attention_batch_first_init_and_gradients():
    mha = nn.MultiheadAttention(6, 3, batch_first=True).double()
    assert float(mha.in_proj_bias.abs().sum()) == 0 and float(mha.out_proj.bias.abs().sum()) == 0
    bound = np.sqrt(6 / (18 + 6))  # xavier_uniform on (3E, E)
    assert np.abs(N(mha.in_proj_weight)).max() <= bound
    assert [n for n, _ in mha.named_parameters()] == ["in_proj_weight", "in_proj_bias", "out_proj.weight",
                                                      "out_proj.bias"]
    x = randn(2, 5, 6)
    out, w = mha(T(x), T(x), T(x))
    ref, a = mha_ref(x.transpose(1, 0, 2), x.transpose(1, 0, 2), x.transpose(1, 0, 2), mha)
    np.testing.assert_allclose(N(out), ref.transpose(1, 0, 2), rtol=1e-10, atol=1e-12)
    out.sum().backward()
    assert all(p.grad is not None for p in mha.parameters())
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(5, 2)
    kv = nn.MultiheadAttention(4, 2, kdim=3, vdim=5)
    o, _ = kv(torch.randn(2, 1, 4), torch.randn(3, 1, 3), torch.randn(3, 1, 5))
    assert tuple(o.shape) == (2, 1, 4) and kv.in_proj_weight is None


def layer_norm_np(x, w, b, eps=1e-5):
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def encoder_layer_ref(x, layer, activation):
    """TransformerEncoderLayer in eval mode from its weights; x is (L, N, E)."""
    def sa(h):
        return mha_ref(h, h, h, layer.self_attn)[0]

    def ff(h):
        hidden = activation(h @ N(layer.linear1.weight).T + N(layer.linear1.bias))
        return hidden @ N(layer.linear2.weight).T + N(layer.linear2.bias)

    def n1(h):
        return layer_norm_np(h, N(layer.norm1.weight), N(layer.norm1.bias))

    def n2(h):
        return layer_norm_np(h, N(layer.norm2.weight), N(layer.norm2.bias))
    if layer.norm_first:
        x = x + sa(n1(x))
        return x + ff(n2(x))
    x = n1(x + sa(x))
    return n2(x + ff(x))


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_transformer_encoder_layer_matches_numpy(norm_first, activation):
    torch.manual_seed(1)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.1, activation=activation,
                                       norm_first=norm_first, batch_first=True).double()
    with torch.no_grad():
        layer.norm1.weight.copy_(T(1 + 0.1 * randn(8)))
        layer.norm2.bias.copy_(T(0.1 * randn(8)))
    layer.eval()
    x = randn(3, 5, 8)
    act = (lambda h: np.maximum(h, 0)) if activation == "relu" else \
        (lambda h: 0.5 * h * (1 + np.vectorize(__import__("math").erf)(h / np.sqrt(2))))
    ref = encoder_layer_ref(x.transpose(1, 0, 2), layer, act).transpose(1, 0, 2)
    np.testing.assert_allclose(N(layer(T(x))), ref, rtol=1e-9, atol=1e-11)


def test_transformer_encoder_trains_and_clones_layers():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=True)
    enc = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(8))
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    np.testing.assert_array_equal(N(enc.layers[0].linear1.weight), N(enc.layers[1].linear1.weight))
    x = torch.randn(2, 5, 8)
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    assert N(mask)[0, 1] == -np.inf and N(mask)[1, 0] == 0
    out = enc(x, mask=mask, src_key_padding_mask=torch.tensor([[False] * 4 + [True]] * 2))
    assert tuple(out.shape) == (2, 5, 8)
    out.pow(2).mean().backward()
    assert all(p.grad is not None for p in enc.parameters())
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


# ---------------------------------------------------------------------------
# nn.utils


def test_clip_grad_norm_and_value():
    p1, p2 = nn.Parameter(torch.zeros(3)), nn.Parameter(torch.zeros(2, 2))
    p1.grad = torch.tensor([3.0, 0.0, 0.0])
    p2.grad = torch.tensor([[0.0, 4.0], [0.0, 0.0]])
    total = nn.utils.clip_grad_norm_([p1, p2], max_norm=1.0)
    assert abs(float(total) - 5.0) < 1e-6
    np.testing.assert_allclose(N(p1.grad), [3 / (5 + 1e-6), 0, 0], rtol=1e-6)
    np.testing.assert_allclose(N(p2.grad)[0, 1], 4 / (5 + 1e-6), rtol=1e-6)
    before = N(p1.grad).copy()
    assert abs(float(nn.utils.clip_grad_norm_([p1, p2], 10.0)) - 1.0) < 1e-5
    np.testing.assert_allclose(N(p1.grad), before, rtol=1e-6)  # below max_norm: unchanged
    p1.grad = torch.tensor([1.0, -7.0, 2.0])
    assert float(nn.utils.clip_grad_norm_(p1, 1.0, norm_type="inf")) == 7.0
    p1.grad = torch.tensor([float("nan"), 1.0, 0.0])
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is "
                                           "non-finite"):
        nn.utils.clip_grad_norm_([p1], 1.0, error_if_nonfinite=True)
    p1.grad = torch.tensor([-3.0, 0.5, 2.0])
    nn.utils.clip_grad_value_([p1, nn.Parameter(torch.zeros(1))], 1.0)
    assert N(p1.grad).tolist() == [-1.0, 0.5, 1.0]
    assert float(nn.utils.clip_grad_norm_([nn.Parameter(torch.zeros(1))], 1.0)) == 0.0


def test_parameters_to_vector_and_back():
    net = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    vec = nn.utils.parameters_to_vector(net.parameters())
    assert tuple(vec.shape) == (13,)
    np.testing.assert_array_equal(N(vec[:6]), N(net[0].weight).ravel())
    nn.utils.vector_to_parameters(torch.arange(13.0), net.parameters())
    assert N(net[0].bias).tolist() == [6.0, 7.0, 8.0]
    assert N(net[1].weight).tolist() == [[9.0, 10.0, 11.0]]
    assert net[1].bias.requires_grad
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1.0], net.parameters())


# ---------------------------------------------------------------------------
# end to end


def test_mlp_trains_to_low_loss_with_hand_written_sgd():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    # two interleaved half-moons-like clusters: not linearly separable
    n = 200
    t = rng.uniform(0, np.pi, n)
    xa = np.stack([np.cos(t), np.sin(t)], 1)
    xb = np.stack([1 - np.cos(t), 0.5 - np.sin(t)], 1)
    x = torch.tensor(np.concatenate([xa, xb]).astype(np.float32))
    y = torch.tensor(np.array([0] * n + [1] * n))
    model = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 2))
    loss_fn = nn.CrossEntropyLoss()
    first = None
    for step in range(300):
        loss = loss_fn(model(x), y)
        if first is None:
            first = float(loss)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= 0.5 * p.grad
    assert float(loss) < 0.05 < first
    model.eval()
    acc = float((model(x).argmax(1) == y).float().mean())
    assert acc > 0.99


def test_small_cnn_forward_backward_step():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(4, 8, 3), nn.GELU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2),
                          nn.Linear(8, 3))
    x, y = torch.randn(6, 1, 8, 8), torch.tensor([0, 1, 2, 0, 1, 2])
    losses = []
    for _ in range(15):
        loss = F.cross_entropy(model(x), y)
        losses.append(float(loss))
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p.add_(p.grad, alpha=-0.1)
    assert losses[-1] < losses[0]
    assert all(np.isfinite(losses))


def test_per_sample_gradients_with_torch_func_match_a_loop():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.GELU(), nn.LayerNorm(4), nn.Linear(4, 2)).double()
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = T(randn(5, 3)), torch.tensor([0, 1, 1, 0, 1])

    def loss_one(p, xi, yi):
        out = torch.func.functional_call(model, p, (xi.unsqueeze(0),))
        return F.cross_entropy(out, yi.unsqueeze(0), label_smoothing=0.1)
    grads = torch.func.vmap(torch.func.grad(loss_one), in_dims=(None, 0, 0))(params, x, y)
    for i in range(5):
        model.zero_grad()
        F.cross_entropy(model(x[i:i + 1]), y[i:i + 1], label_smoothing=0.1).backward()
        for name, p in model.named_parameters():
            np.testing.assert_allclose(N(grads[name][i]), N(p.grad), rtol=1e-10, atol=1e-12)
