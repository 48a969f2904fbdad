"""The surface modules libraries touch (torch.utils._pytree, compiler, _dynamo, jit, onnx, testing, the
legacy tensor types, range indexing, `in`), each checked against PyTorch's answers recorded in
tests/goldens/vs_torch_surface.* (`python tests/record_goldens.py surface` where torch is installed), so CI
checks them without torch."""
import collections
import warnings

import pytest

import typing

import mindtorch_v2 as mt
import mindtorch_v2._dynamo as dynamo
import mindtorch_v2.compiler as compiler
import mindtorch_v2.jit as jit
import mindtorch_v2.onnx as onnx
import mindtorch_v2.testing as testing
from mindtorch_v2.core import pytree as core_pytree
from mindtorch_v2.utils import _pytree as pytree

from _goldens import Goldens, golden_fixtures, torch_lib

GOLDEN = Goldens("vs_torch_surface")
_golden_file, _golden_case = golden_fixtures(GOLDEN)


def torch_pytree():
    """Real torch.utils._pytree (recording only)."""
    return torch_lib().utils._pytree


def recorded(thunk):
    """PyTorch's answer (thunk() run on real torch when recording); None while recording."""
    value = GOLDEN(thunk)
    return None if GOLDEN.recording else value


# ---------------------------------------------------------------------------
# torch.utils._pytree

TREES = [
    {"b": 1, "a": (2, None, [3])},
    [1, (2, 3), {"x": 4}],
    collections.OrderedDict(b=1, a=2),
    collections.namedtuple("NT", "x y")(1, [2, 3]),
    collections.defaultdict(int, {"k": 5}),
    collections.deque([1, 2]),
    None,
    7,
    (),
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_pytree_flatten_matches_torch_leaves_and_spec_text(tree):
    leaves, spec = pytree.tree_flatten(tree)

    def torch_view():
        t_leaves, t_spec = torch_pytree().tree_flatten(tree)
        return [repr(t_leaves), repr(t_spec), t_spec.num_leaves, t_spec.num_nodes]
    want = recorded(torch_view)
    if want is None:
        return
    assert [repr(leaves), repr(spec), spec.num_leaves, spec.num_nodes] == want
    rebuilt = pytree.tree_unflatten(leaves, spec)
    assert rebuilt == tree and type(rebuilt) is type(tree)


def test_pytree_none_is_a_leaf_and_dicts_keep_insertion_order():
    assert pytree.tree_leaves(None) == [None]
    assert pytree.tree_leaves({"b": 1, "a": 2}) == [1, 2]
    assert pytree.tree_structure(3) == pytree.treespec_leaf() and pytree.treespec_leaf().is_leaf()
    assert isinstance(pytree.treespec_leaf(), pytree.TreeSpec)


def test_pytree_map_helpers_match_torch():
    tree = [1, 2.5, "s", {"a": 3}]
    for name, args in [("tree_map", (lambda x: x * 2, tree)),
                       ("tree_map_only", (int, lambda x: x + 1, tree)),
                       ("tree_map_only", ((int, float), lambda x: x * 2, tree)),
                       ("tree_any", (lambda x: x == 3, tree)),
                       ("tree_all", (lambda x: x == 3, tree))]:
        want = recorded(lambda: repr(getattr(torch_pytree(), name)(*args)))
        assert want is None or repr(getattr(pytree, name)(*args)) == want
    # several trees: dicts matched by key, as torch does
    assert pytree.tree_map(lambda a, b: a + b, {"a": 1, "b": 2}, {"b": 3, "a": 4}) == {"a": 5, "b": 5}
    with pytest.raises(ValueError, match="arity mismatch; expected 2, but got 1"):
        pytree.tree_map(lambda a, b: a, [1, 2], [1])
    assert pytree.tree_leaves([1, [2]], is_leaf=lambda x: isinstance(x, list) and len(x) == 1) == [1, [2]]


def test_pytree_flatten_with_path_gives_torch_key_paths():
    # expected key paths as PyTorch 2.13 prints them (keystr)
    tree = {"a": [1, (2,)], "b": collections.namedtuple("NT", "x y")(3, collections.deque([4])),
            "c": collections.defaultdict(int, {"k": 5})}
    pairs, spec = pytree.tree_flatten_with_path(tree)
    assert [(pytree.keystr(kp), leaf) for kp, leaf in pairs] == [
        ("['a'][0]", 1), ("['a'][1][0]", 2), ("['b'].x", 3), ("['b'].y[0]", 4), ("['c']['k']", 5)]
    assert spec == pytree.tree_structure(tree)
    assert pairs[0][0] == (pytree.MappingKey("a"), pytree.SequenceKey(0))
    assert pairs[2][0][1] == pytree.GetAttrKey("x") and pairs[2][0][1].get(tree["b"]) == 3
    assert pytree.tree_leaves_with_path(None) == [((), None)]


def test_pytree_registered_node_flattens_with_path_only_with_its_keys_function():
    class Box:
        def __init__(self, v):
            self.v = v

    class KeyedBox(Box):
        pass

    pytree.register_pytree_node(Box, lambda b: ([b.v], None), lambda ch, ctx: Box(ch[0]))
    pytree.register_pytree_node(KeyedBox, lambda b: ([b.v], None), lambda ch, ctx: KeyedBox(ch[0]),
                                flatten_with_keys_fn=lambda b: ([(pytree.GetAttrKey("v"), b.v)], None))
    assert [pytree.keystr(kp) for kp, _ in pytree.tree_flatten_with_path([KeyedBox(1)])[0]] == ["[0].v"]
    with pytest.raises(ValueError, match="Did not find a flatten_with_keys_fn for type"):
        pytree.tree_flatten_with_path(Box(1))
    # the dict helper libraries pass as flatten_with_keys_fn
    assert pytree._dict_flatten_with_keys({"a": 1}) == ([(pytree.MappingKey("a"), 1)], ["a"])


def test_pytree_unflatten_with_wrong_leaf_count_raises_as_torch():
    _, spec = pytree.tree_flatten([1, 2])
    with pytest.raises(ValueError, match="`leaves` has length 1 but the spec refers to a pytree that holds 2 items"):
        pytree.tree_unflatten([1], spec)


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


pytree.register_pytree_node(Point, lambda p: ([p.x, p.y], "ctx"), lambda children, ctx: Point(*children),
                            serialized_type_name="test.Point")


def test_registered_node_is_shared_with_the_core_and_func_transforms():
    leaves, spec = pytree.tree_flatten({"p": Point(1, 2)})
    assert leaves == [1, 2] and spec.child(0).type is Point and spec.child(0).context == "ctx"
    p = pytree.tree_unflatten([5, 6], spec)["p"]
    assert (p.x, p.y) == (5, 6)
    assert core_pytree.tree_leaves(Point(3, 4)) == [3, 4]  # the core sees the same registration
    out = mt.func.vmap(lambda p: p.x * p.y)(Point(mt.arange(3.0), mt.ones(3) * 2))
    assert out.tolist() == [0.0, 2.0, 4.0]
    with pytest.raises(ValueError, match="already registered as pytree node"):
        pytree.register_pytree_node(Point, lambda p: ([], None), lambda c, x: None)


def test_return_types_are_nodes():
    assert len(pytree.tree_leaves(mt.ones(2, 3).max(dim=1))) == 2


# ---------------------------------------------------------------------------
# compiler, _dynamo, jit, onnx


def test_compiler_and_dynamo_answer_false_outside_a_trace_and_decorators_keep_the_function():
    def f(x):
        return x + 1
    assert compiler.is_compiling() is False and compiler.is_exporting() is False
    # disable wraps f (a call inside compiled code is a graph break); outside a trace it is f
    for d in (compiler.disable(f), compiler.disable()(f), compiler.disable(recursive=False)(f), dynamo.disable(f)):
        assert d.__wrapped__ is f and d(1) == 2
    assert compiler.allow_in_graph(f) is f and compiler.assume_constant_result(f) is f
    assert compiler.reset() is None
    assert dynamo.is_compiling() is False and dynamo.external_utils.is_compiling() is False
    assert dynamo.allow_in_graph(f) is f
    x = mt.ones(2)
    assert dynamo.mark_dynamic(x, 0) is None and dynamo.mark_static(x) is None
    assert dynamo.maybe_mark_dynamic(x, 0) is None


def test_transform_getitem_to_index_lets_vmapped_mask_functions_index_with_scalar_tensors():
    from mindtorch_v2._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex
    pad = mt.tensor([[True, True, False], [False, True, True]])

    def mask(b, q, k):  # causal and not padding, read by scalar tensor indices (transformers' mask functions)
        return (k <= q) & pad[b][k]

    inner = mt.vmap(mask, in_dims=(None, None, 0))
    with TransformGetItemToIndex() as mode:
        got = mt.vmap(mt.vmap(inner, in_dims=(None, 0, None)), in_dims=(0, None, None))(
            mt.arange(2), mt.arange(3), mt.arange(3))
    assert isinstance(mode, TransformGetItemToIndex)
    p = pad.numpy()
    want = [[[k <= q and p[b, k] for k in range(3)] for q in range(3)] for b in range(2)]
    assert got.dtype == mt.bool and got.tolist() == want


def test_dynamo_config_holds_torchs_defaults_and_refuses_unknown_names():
    names = ["suppress_errors", "cache_size_limit", "recompile_limit", "accumulated_cache_size_limit", "verbose",
             "capture_scalar_outputs", "optimize_ddp", "automatic_dynamic_shapes", "assume_static_by_default"]
    for name in names:
        want = recorded(lambda: repr(getattr(torch_lib()._dynamo.config, name)))
        assert want is None or repr(getattr(dynamo.config, name)) == want, name
    old = dynamo.config.suppress_errors
    dynamo.config.suppress_errors = True
    assert dynamo.config.suppress_errors is True
    dynamo.config.suppress_errors = old
    with pytest.raises(AttributeError, match="does not exist"):
        dynamo.config.no_such_setting = 1
    with pytest.raises(AttributeError, match="does not exist"):
        dynamo.config.no_such_setting  # noqa: B018


def test_jit_is_eager_pass_through():
    assert jit.is_scripting() is False and jit.is_tracing() is False
    lin = mt.nn.Linear(2, 2)
    assert jit.script(lin) is lin
    calls = []

    def f(x):
        calls.append(x)
        return x * 2
    assert jit.trace(f, (mt.ones(2),)) is f and len(calls) == 1  # run once on the example
    assert jit.trace(f, mt.ones(2)) is f and len(calls) == 2
    with pytest.raises(RuntimeError, match="can not both be None"):
        jit.trace(f)
    assert jit.ignore(f) is f and jit.ignore(drop=True)(f) is f and jit.unused(f) is f and jit.export(f) is f
    assert jit.Final is typing.Final
    assert recorded(lambda: torch_lib().jit.Final is typing.Final) in (None, True)
    assert issubclass(jit.ScriptModule, mt.nn.Module) and not isinstance(lin, jit.ScriptModule)
    assert jit.isinstance([1], list) and jit.annotations.List is not None
    with pytest.raises(RuntimeError, match="not supported"):
        jit.save(lin, "x.pt")


def test_onnx_export_raises_clearly():
    assert onnx.is_in_onnx_export() is False
    with pytest.raises(RuntimeError, match=r"torch.onnx.export is not supported by mindtorch_v2 \(no ONNX exporter\)"):
        onnx.export(mt.nn.Linear(2, 2), (mt.ones(1, 2),), "m.onnx")


# ---------------------------------------------------------------------------
# torch.testing

CLOSE_CASES = [
    lambda m: (m.tensor([1., 2., 3.]), m.tensor([1., 2.5, 3.1]), {}),
    lambda m: (m.tensor([1, 2, 3]), m.tensor([1, 2, 4]), {}),
    lambda m: (m.tensor([1., 2.]), m.tensor([1., 2.], dtype=m.float64), {}),
    lambda m: (m.tensor([1., 2.]), m.tensor([1., 2., 3]), {}),
    lambda m: (m.tensor(1.), m.tensor(2.), {}),
    lambda m: (1.0, 1.1, {}),
    lambda m: (1, 1.0, {}),
    lambda m: ([m.tensor(1.)], [m.tensor(2.)], {}),
    lambda m: ({"a": m.tensor(1.)}, {"a": m.tensor(2.)}, {}),
    lambda m: ([1, 2], [1], {}),
    lambda m: ({"a": 1}, {"b": 1}, {}),
    lambda m: (m.tensor([float("nan")]), m.tensor([float("nan")]), {}),
    lambda m: (m.tensor([float("nan")]), m.tensor([float("nan")]), dict(equal_nan=True)),
    lambda m: (m.tensor([1.]), m.tensor([2.]), dict(msg="custom")),
    lambda m: (m.ones(2), m.zeros(2), dict(msg=lambda s: "X" + s[:5])),
    lambda m: (m.tensor([1.]), m.tensor([1.]), dict(rtol=1)),
    lambda m: (m.tensor([True]), m.tensor([False]), {}),
    lambda m: (m.tensor([[1., 2.], [3, 4]]), m.tensor([[1., 2.], [3, 5]]), {}),
    lambda m: (m.ones(2), m.ones(2, dtype=m.float64), dict(check_dtype=False)),
    lambda m: (m.ones(2, dtype=m.float16), m.ones(2, dtype=m.float16) * 1.01, {}),
    lambda m: (m.ones(2, dtype=m.bfloat16), m.ones(2, dtype=m.bfloat16) * 1.1, {}),
    lambda m: (m.tensor([1., float("inf")]), m.tensor([1., -float("inf")]), {}),
    lambda m: (m.tensor([1 + 1j]), m.tensor([1 + 2j]), {}),
    lambda m: (m.tensor([1.]), [1.], {}),
    lambda m: (m.ones(2, 3).t(), m.ones(3, 2), dict(check_stride=True)),
    lambda m: (m.tensor([1., 2.]), m.tensor([1., 2.0001]), dict(rtol=0, atol=1e-3)),
    lambda m: (m.ones(2), m.ones(2, device="meta"), {}),
]


def _outcome(assert_close, case, lib):
    actual, expected, kwargs = case(lib)
    try:
        assert_close(actual, expected, **kwargs)
        return "ok"
    except Exception as e:  # noqa: BLE001 - the exception type and text are what is compared
        return type(e).__name__, str(e).replace("torch.Tensor", "T").replace("mindtorch_v2.eager.tensor.Tensor", "T")


@pytest.mark.parametrize("case", range(len(CLOSE_CASES)))
def test_assert_close_raises_what_torch_raises(case):
    ours = _outcome(testing.assert_close, CLOSE_CASES[case], mt)
    theirs = recorded(lambda: repr(_outcome(torch_lib().testing.assert_close, CLOSE_CASES[case], torch_lib())))
    assert theirs is None or repr(ours) == theirs


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64", "int64", "int8", "uint8", "bool"])
def test_make_tensor_shape_dtype_range_and_flags(dtype):
    dt = getattr(mt, dtype)
    x = testing.make_tensor(3, 4, dtype=dt, device="cpu", noncontiguous=True, exclude_zero=True)
    assert x.shape == (3, 4) and x.dtype is dt and not x.is_contiguous()
    assert not (x == 0).any().item()
    if dtype not in ("bool", "complex64"):
        assert x.min().item() >= (0 if dtype == "uint8" else -9) and x.max().item() < 10
    assert testing.make_tensor((2,), dtype=dt, device="cpu").shape == (2,)


def test_make_tensor_checks_as_torch():
    x = testing.make_tensor(5, dtype=mt.float32, device="cpu", low=0, high=1, requires_grad=True)
    assert x.requires_grad and 0 <= x.min().item() and x.max().item() < 1
    with pytest.raises(ValueError, match="not supported for boolean and integral dtypes"):
        testing.make_tensor(2, dtype=mt.int64, device="cpu", requires_grad=True)
    with pytest.raises(ValueError, match="`low` must be less than `high`, but got 3 >= 2"):
        testing.make_tensor(2, dtype=mt.int64, device="cpu", low=3, high=2)
    assert testing.make_tensor(2, 2, dtype=mt.float32, device="meta").device.type == "meta"


# ---------------------------------------------------------------------------
# legacy tensor types, Tensor.type, range indexing, `in`

LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor",
          "IntTensor", "LongTensor", "BoolTensor"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_types_build_tensors_and_answer_isinstance_as_torch(name):
    ours = getattr(mt, name)
    data = [1, 0, 2] if name != "BoolTensor" else [True, False]
    want = recorded(lambda: [repr(getattr(torch_lib(), name)), str(getattr(torch_lib(), name).dtype),
                             getattr(torch_lib(), name)(data).tolist()])
    if want is not None:
        assert [repr(ours), str(ours.dtype), ours(data).tolist()] == want
    assert not issubclass(ours, mt.Tensor)
    assert ours(2, 3).shape == (2, 3) and ours(mt.Size([4])).shape == (4,) and ours().shape == (0,)
    x = mt.zeros(2, dtype=ours.dtype)
    assert isinstance(x, ours) and isinstance(ours(x), ours)
    assert not isinstance(mt.zeros(2, dtype=ours.dtype, device="meta"), ours)
    other = mt.DoubleTensor if name != "DoubleTensor" else mt.FloatTensor
    assert not isinstance(x, other)
    with pytest.raises(TypeError):
        other(x)


def test_legacy_constructor_errors():
    want = recorded(lambda: torch_lib().LongTensor([1.7, 2]).tolist())
    assert want is None or mt.LongTensor([1.7, 2]).tolist() == want
    assert mt.FloatTensor((2, 3)).tolist() == [2.0, 3.0]  # a tuple is data, a Size is a shape
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        mt.FloatTensor([1], 2)
    with pytest.raises(TypeError):
        mt.FloatTensor(2, dtype=mt.float64)
    with pytest.raises(RuntimeError, match="legacy constructor expects device type: cpu"):
        mt.FloatTensor(2, device="meta")
    assert isinstance(mt.nn.Parameter(mt.ones(1)), mt.FloatTensor)


def test_tensor_type_names_match_torch():
    for dtype in ["float32", "float64", "int64", "bool", "bfloat16", "complex64"]:
        want = recorded(lambda: torch_lib().ones(1, dtype=getattr(torch_lib(), dtype)).type())
        assert want is None or mt.ones(1, dtype=getattr(mt, dtype)).type() == want


RANGE_KEYS = [
    lambda: range(2), lambda: [range(2), range(2)], lambda: (range(2), range(1, 3)),
    lambda: (slice(None), range(0, 4, 2)), lambda: range(0), lambda: (range(3), 1),
]


@pytest.mark.parametrize("key", range(len(RANGE_KEYS)))
def test_range_indexing_matches_torch(key):
    ours = mt.arange(12).reshape(3, 4)[RANGE_KEYS[key]()]

    def torch_view():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # torch's "non-tuple sequence" deprecation
            theirs = torch_lib().arange(12).reshape(3, 4)[RANGE_KEYS[key]()]
        return [list(theirs.shape), theirs.tolist()]
    want = recorded(torch_view)
    assert want is None or [list(ours.shape), ours.tolist()] == want


def test_range_index_assignment():
    x = mt.arange(12).reshape(3, 4)
    x[range(2)] = 0

    def torch_view():
        y = torch_lib().arange(12).reshape(3, 4)
        y[range(2)] = 0
        return y.tolist()
    want = recorded(torch_view)
    assert want is None or x.tolist() == want


def test_contains_as_torch():
    x = mt.arange(5.0)
    assert 3 in x and 3.0 in x and 7 not in x and mt.tensor(2) in x and True in x
    with pytest.raises(RuntimeError, match="only supports Tensor or scalar, but you passed in a <class 'str'>"):
        "a" in x  # noqa: B015
