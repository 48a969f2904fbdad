"""Pytrees: the core's key paths (jax.tree_util-like) and torch.utils._pytree's full surface (key paths,
dataclass and constant nodes, the JSON treespec protocol, namedtuple/structseq predicates).

Expected strings (dumped JSON, keystr output, spec reprs, error messages) were produced by PyTorch 2.13's
torch.utils._pytree on the same inputs, so a spec dumped here loads in PyTorch and the other way round.
"""
import collections
import dataclasses
import enum
import os
import time

import pytest

import mindtorch_v2 as mt
from mindtorch_v2.core import pytree as cp
from mindtorch_v2.utils import _pytree as pytree

NT = collections.namedtuple("NT", "x y")


# ---------------------------------------------------------------------------
# core: key paths over the core's rules (None a node with no children, dicts in sorted-key order)


def test_core_flatten_with_path_names_every_leaf_in_flatten_order():
    tree = {"b": [1, NT(2, 3)], "a": (None, 4)}
    paths, treedef = cp.tree_flatten_with_path(tree)
    assert [v for _, v in paths] == cp.tree_leaves(tree) == [4, 1, 2, 3]
    assert treedef == cp.tree_structure(tree)
    assert [cp.keystr(k) for k, _ in paths] == ["['a'][1]", "['b'][0]", "['b'][1].x", "['b'][1].y"]
    assert paths[2][0] == (cp.MappingKey("b"), cp.SequenceKey(1), cp.GetAttrKey("x"))
    assert all(cp.key_get(tree, k) == v for k, v in paths)
    assert cp.DictKey is cp.MappingKey


def test_core_map_with_path_and_is_leaf():
    out = cp.tree_map_with_path(lambda k, x, y: (cp.keystr(k), x + y), {"a": [1, 2]}, {"a": [10, 20]})
    assert out == {"a": [("['a'][0]", 11), ("['a'][1]", 22)]}
    assert cp.tree_leaves_with_path([[1, 2], 3], is_leaf=lambda x: x == [1, 2]) == [
        ((cp.SequenceKey(0),), [1, 2]), ((cp.SequenceKey(1),), 3)]
    assert cp.tree_leaves([[1, 2], 3], is_leaf=lambda x: x == [1, 2]) == [[1, 2], 3]
    with pytest.raises(ValueError, match="pytree structures differ"):
        cp.tree_map_with_path(lambda k, x, y: x, [1, 2], [1])


class CoreBox:
    def __init__(self, a, b):
        self.a, self.b = a, b


class CorePair:
    def __init__(self, a, b):
        self.a, self.b = a, b


cp.register_pytree_with_keys(CoreBox, lambda o: ([(cp.GetAttrKey("a"), o.a), (cp.GetAttrKey("b"), o.b)], None),
                             lambda aux, ch: CoreBox(*ch))
cp.register_pytree_node(CorePair, lambda o: ((o.a, o.b), "aux"), lambda aux, ch: CorePair(*ch))


def test_core_registered_nodes_name_children_by_their_keys_or_flat_index():
    paths = cp.tree_leaves_with_path([CoreBox(1, CorePair(2, 3))])
    assert [(cp.keystr(k), v) for k, v in paths] == [("[0].a", 1), ("[0].b[<flat index 0>]", 2),
                                                      ("[0].b[<flat index 1>]", 3)]
    tree = [CoreBox(1, CorePair(2, 3))]
    assert [cp.key_get(tree, k) for k, _ in paths] == [1, 2, 3]
    assert cp.tree_leaves(CoreBox(5, 6)) == [5, 6]  # flatten_func derived from flatten_with_keys
    rebuilt = cp.tree_unflatten(cp.tree_structure(CoreBox(5, 6)), [7, 8])
    assert (rebuilt.a, rebuilt.b) == (7, 8)


def test_core_unregister_makes_a_type_a_leaf_again():
    class Tmp:
        pass
    cp.register_pytree_node(Tmp, lambda o: ([1], None), lambda aux, ch: Tmp())
    assert cp.tree_leaves(Tmp()) == [1] and Tmp in cp.registered_types()
    cp.unregister_pytree_node(Tmp)
    t = Tmp()
    assert cp.tree_leaves(t) == [t] and cp.registered_node(Tmp) is None
    with pytest.raises(ValueError, match="is not a registered pytree node"):
        cp.unregister_pytree_node(Tmp)


# ---------------------------------------------------------------------------
# torch: key paths


def test_key_path_flatten_matches_torch():
    tree = {"a": [1, NT(2, 3)], "b": collections.OrderedDict(c=4), "d": collections.deque([5])}
    paths, spec = pytree.tree_flatten_with_path(tree)
    assert [(pytree.keystr(k), v) for k, v in paths] == [
        ("['a'][0]", 1), ("['a'][1].x", 2), ("['a'][1].y", 3), ("['b']['c']", 4), ("['d'][0]", 5)]
    assert repr(paths[1][0]) == "(MappingKey(key='a'), SequenceKey(idx=1), GetAttrKey(name='x'))"
    assert spec == pytree.tree_structure(tree) and (spec.num_nodes, spec.num_leaves, spec.num_children) == (10, 5, 3)
    assert pytree.tree_leaves_with_path(tree) == paths
    assert [pytree.key_get(tree, k) for k, _ in paths] == [1, 2, 3, 4, 5]
    # torch's rules: None is a leaf, dicts keep insertion order, int keys print unquoted
    assert [(pytree.keystr(k), v) for k, v in pytree.tree_leaves_with_path({"b": 1, "a": (2, None, [3])})] == [
        ("['b']", 1), ("['a'][0]", 2), ("['a'][1]", None), ("['a'][2][0]", 3)]
    assert [(pytree.keystr(k), v) for k, v in pytree.tree_leaves_with_path({1: "x", "2": [3.5]})] == [
        ("[1]", "x"), ("['2'][0]", 3.5)]
    assert pytree.tree_leaves_with_path(7) == [((), 7)] and pytree.keystr(()) == ""
    assert str(pytree.GetAttrKey("x")) == ".x" and str(pytree.MappingKey("a")) == "['a']"
    assert str(pytree.SequenceKey(0)) == "[0]" and repr(pytree.MappingKey(1)) == "MappingKey(key=1)"
    assert pytree.SequenceKey is cp.SequenceKey and pytree.keystr is cp.keystr  # one set of key classes


def test_tree_map_with_path_takes_the_path_first_and_rests_by_prefix():
    out = pytree.tree_map_with_path(lambda k, x, y: (pytree.keystr(k), x + y), {"a": 1, "b": [2]},
                                    {"b": [20], "a": 10})
    assert out == {"a": ("['a']", 11), "b": [("['b'][0]", 22)]}


class NoKeys:
    def __init__(self, v):
        self.v = v


pytree.register_pytree_node(NoKeys, lambda o: ([o.v], None), lambda ch, ctx: NoKeys(*ch))


def test_key_paths_need_flatten_with_keys_fn_as_torch():
    with pytest.raises(ValueError, match=r"Did not find a flatten_with_keys_fn for type: <class '.*NoKeys'>\. "
                                         "Please pass a flatten_with_keys_fn argument to register_pytree_node."):
        pytree.tree_leaves_with_path([NoKeys(1)])
    # a prefix is_leaf stops the walk before the node
    assert pytree.tree_leaves_with_path([NoKeys(1)], is_leaf=lambda x: isinstance(x, NoKeys))[0][0] == (
        pytree.SequenceKey(0),)


# ---------------------------------------------------------------------------
# torch: serialization (PyTorch's JSON, protocol 1)

LEAF = '{"type": null, "context": null, "children_spec": []}'
DUMPS = [
    ({"b": 1, "a": (2, None, [3])},
     '[1, {"type": "builtins.dict", "context": "[\\"b\\", \\"a\\"]", "children_spec": [' + LEAF +
     ', {"type": "builtins.tuple", "context": "null", "children_spec": [' + LEAF + ', ' + LEAF +
     ', {"type": "builtins.list", "context": "null", "children_spec": [' + LEAF + ']}]}]}]',
     "{'b': *, 'a': (*, *, [*])}"),
    (collections.OrderedDict(b=1, a=[2]),
     '[1, {"type": "collections.OrderedDict", "context": "[\\"b\\", \\"a\\"]", "children_spec": [' + LEAF +
     ', {"type": "builtins.list", "context": "null", "children_spec": [' + LEAF + ']}]}]',
     "OrderedDict([('b', *), ('a', [*])])"),
    (collections.defaultdict(list, {"k": 5}),
     '[1, {"type": "collections.defaultdict", "context": {"default_factory_module": "builtins", '
     '"default_factory_name": "list", "dict_context": ["k"]}, "children_spec": [' + LEAF + ']}]',
     "defaultdict(<class 'list'>, {'k': *})"),
    (collections.deque([1, 2], maxlen=4),
     '[1, {"type": "collections.deque", "context": "4", "children_spec": [' + LEAF + ', ' + LEAF + ']}]',
     "deque([*, *], maxlen=4)"),
    (7, '[1, ' + LEAF + ']', "*"),
    (None, '[1, ' + LEAF + ']', "*"),
    (((), [], {}),
     '[1, {"type": "builtins.tuple", "context": "null", "children_spec": [{"type": "builtins.tuple", "context": '
     '"null", "children_spec": []}, {"type": "builtins.list", "context": "null", "children_spec": []}, {"type": '
     '"builtins.dict", "context": "[]", "children_spec": []}]}]',
     "((), [], {})"),
    ({1: "x", "2": [3.5]},
     '[1, {"type": "builtins.dict", "context": "[1, \\"2\\"]", "children_spec": [' + LEAF +
     ', {"type": "builtins.list", "context": "null", "children_spec": [' + LEAF + ']}]}]',
     "{1: *, '2': [*]}"),
]


@pytest.mark.parametrize("tree,dumped,pprinted", DUMPS, ids=range(len(DUMPS)))
def test_treespec_dumps_writes_torchs_json_and_loads_it_back(tree, dumped, pprinted):
    spec = pytree.tree_structure(tree)
    assert pytree.treespec_dumps(spec) == dumped
    loaded = pytree.treespec_loads(dumped)  # the same text PyTorch writes
    assert loaded == spec and hash(loaded) == hash(spec)
    assert pytree.treespec_pprint(spec) == pprinted
    assert pytree.tree_unflatten(pytree.tree_leaves(tree), loaded) == tree


def test_treespec_dumps_errors_match_torch():
    spec = pytree.tree_structure([1])
    with pytest.raises(ValueError, match=r"Unknown protocol 2\. Available protocols: \[1\]"):
        pytree.treespec_dumps(spec, 2)
    with pytest.raises(ValueError, match=r"Unknown protocol 3\. Available protocols: \[1\]"):
        pytree.treespec_loads('[3, {}]')
    with pytest.raises(NotImplementedError, match="Deserializing foo.Bar in pytree is not registered."):
        pytree.treespec_loads('[1, {"type": "foo.Bar", "context": null, "children_spec": []}]')
    with pytest.raises(NotImplementedError, match=r"No registered serialization name for <class '.*NoKeys'> found\. "
                                                  "Please update your _register_pytree_node call"):
        pytree.treespec_dumps(pytree.tree_structure(NoKeys(1)))
    with pytest.raises(NotImplementedError, match="Serializing <class '.*CorePair'> in pytree is not registered."):
        pytree.treespec_dumps(pytree.tree_structure(CorePair(1, 2)))  # registered in the core only
    with pytest.raises(NotImplementedError, match=r"Can't serialize TreeSpec of namedtuple class <class '.*NT'> "
                                                  "because we didn't register a serializated_type_name"):
        pytree.treespec_dumps(pytree.tree_structure(NT(1, 2)))
    with pytest.raises(TypeError, match="Unable to serialize context"):
        pytree.treespec_dumps(pytree.TreeSpec(dict, [object()], [pytree.treespec_leaf()]))
    assert (pytree.DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL, pytree.NO_SERIALIZED_TYPE_NAME_FOUND) == (
        1, "NO_SERIALIZED_TYPE_NAME_FOUND")


NT2 = collections.namedtuple("NT2", "a b")
pytree._register_namedtuple(NT2, serialized_type_name="x.NT2")


def test_registered_namedtuple_serializes_by_its_name():
    spec = pytree.tree_structure([NT2(1, {"q": 2})])
    dumped = ('[1, {"type": "builtins.list", "context": "null", "children_spec": [{"type": "collections.namedtuple", '
              '"context": "x.NT2", "children_spec": [' + LEAF + ', {"type": "builtins.dict", "context": "[\\"q\\"]", '
              '"children_spec": [' + LEAF + ']}]}]}]')
    assert pytree.treespec_dumps(spec) == dumped and pytree.treespec_loads(dumped) == spec
    assert pytree.SERIALIZED_TYPE_TO_PYTHON_TYPE["x.NT2"] is NT2
    assert pytree.SUPPORTED_SERIALIZED_TYPES[NT2].serialized_type_name == "x.NT2"
    assert pytree.SUPPORTED_SERIALIZED_TYPES[collections.namedtuple].serialized_type_name == "collections.namedtuple"
    assert spec.child(0).type is collections.namedtuple and spec.child(0).context is NT2


class Color(enum.Enum):
    RED = 1


def test_enum_contexts_round_trip_as_torch_writes_them():
    spec = pytree.TreeSpec(dict, [Color.RED], [pytree.treespec_leaf()])
    dumped = pytree.treespec_dumps(spec)
    assert dumped == ('[1, {"type": "builtins.dict", "context": "[{\\"__enum__\\": true, \\"fqn\\": '
                      f'\\"{__name__}:Color\\", \\"name\\": \\"RED\\"}}]", "children_spec": [' + LEAF + ']}]')
    assert pytree.treespec_loads(dumped).context == [Color.RED]


class Custom:
    def __init__(self, a, b):
        self.a, self.b = a, b


pytree.register_pytree_node(
    Custom, lambda o: ([o.a, o.b], {"tag": 1}), lambda ch, ctx: Custom(*ch), serialized_type_name="tests.Custom",
    to_dumpable_context=lambda ctx: ["dumped", ctx["tag"]], from_dumpable_context=lambda d: {"tag": d[1]},
    flatten_with_keys_fn=lambda o: ([(pytree.GetAttrKey("a"), o.a), (pytree.GetAttrKey("b"), o.b)], {"tag": 1}))


def test_register_pytree_node_serialization_and_keys_hooks():
    spec = pytree.tree_structure(Custom(1, [2]))
    dumped = pytree.treespec_dumps(spec)
    assert dumped == ('[1, {"type": "tests.Custom", "context": ["dumped", 1], "children_spec": [' + LEAF +
                      ', {"type": "builtins.list", "context": "null", "children_spec": [' + LEAF + ']}]}]')
    assert pytree.treespec_loads(dumped) == spec
    assert [pytree.keystr(k) for k, _ in pytree.tree_leaves_with_path(Custom(1, [2]))] == [".a", ".b[0]"]
    # the core sees the registration, keys included
    assert [cp.keystr(k) for k, _ in cp.tree_leaves_with_path(Custom(1, [2]))] == [".a", ".b[0]"]
    with pytest.raises(ValueError, match="Both to_dumpable_context and from_dumpable_context for .* must be None"):
        class Half:
            pass
        pytree.register_pytree_node(Half, lambda o: ([], None), lambda ch, ctx: Half(), to_dumpable_context=str)


# ---------------------------------------------------------------------------
# torch: dataclass and constant nodes


@dataclasses.dataclass
class Point:
    x: object
    y: object = None
    z: object = 3


pytree.register_dataclass(Point, serialized_type_name="t.Point")


def test_register_dataclass_flattens_non_none_fields_as_torch():
    p = Point(1, None, [4])
    leaves, spec = pytree.tree_flatten(p)
    assert leaves == [1, 4]
    assert repr(spec) == "TreeSpec(Point, [['x', 'z'], ['y']], [*,\n  TreeSpec(list, None, [*])])"
    assert pytree.treespec_dumps(spec) == (
        '[1, {"type": "t.Point", "context": "[[\\"x\\", \\"z\\"], [\\"y\\"]]", "children_spec": [' + LEAF +
        ', {"type": "builtins.list", "context": "null", "children_spec": [' + LEAF + ']}]}]')
    assert [pytree.keystr(k) for k, _ in pytree.tree_leaves_with_path(p)] == [".x", ".z[0]"]
    assert pytree.tree_unflatten([5, 6], spec) == Point(5, None, [6])
    assert spec == pytree.tree_structure(Point(5, None, [6])) and hash(spec) == hash(pytree.tree_structure(Point(7, None, [8])))
    assert mt.func.vmap(lambda q: q.x * q.z)(Point(mt.arange(3.0), None, mt.ones(3) * 2)).tolist() == [0.0, 2.0, 4.0]


def test_register_dataclass_errors_match_torch():
    with pytest.raises(ValueError, match="field_names must be specified with a list of all fields used to initialize "
                                         "<class 'int'>, as it is not a dataclass."):
        pytree.register_dataclass(int)

    @dataclasses.dataclass
    class Q:
        x: int
        y: int

    with pytest.raises(ValueError) as err:
        pytree.register_dataclass(Q, field_names=["x", "q"])
    assert str(err.value) == (
        "field_names does not include all dataclass fields.\nMissing fields in `field_names`: {'y'}. If you want to "
        "include these fields in the pytree, please add them to `field_names`, otherwise please add them to "
        "`drop_field_names`.\nUnexpected fields in `field_names`: {'q'}. Please remove these fields, or add them to "
        "`drop_field_names`.\n")
    pytree.register_dataclass(Q, field_names=["x"], drop_field_names=["y"])
    assert pytree.tree_flatten(Q(1, 2))[0] == [1]


@dataclasses.dataclass(frozen=True)
class Config:
    norm: str


pytree.register_constant(Config)


def test_register_constant_keeps_the_instance_in_the_spec():
    leaves, spec = pytree.tree_flatten({"c": Config("l2"), "v": [1]})
    assert leaves == [1]
    assert repr(spec) == ("TreeSpec(dict, ['c', 'v'], [TreeSpec(Config, ConstantNode(value=Config(norm='l2')), []),\n"
                          "  TreeSpec(list, None, [*])])")
    assert pytree.tree_unflatten([2], spec) == {"c": Config("l2"), "v": [2]}
    assert pytree.is_constant_class(Config) and not pytree.is_constant_class(Config("l2"))
    assert pytree._is_constant_holder(spec.child(0)) and pytree._retrieve_constant(spec.child(0)) == Config("l2")
    assert spec.child(0).num_leaves == 0 and pytree.tree_leaves_with_path(Config("x")) == []
    assert hash(spec) == hash(pytree.tree_structure({"c": Config("l2"), "v": [9]}))
    assert spec != pytree.tree_structure({"c": Config("l1"), "v": [1]})


def test_register_constant_requires_eq_and_hash():
    class Plain:
        pass

    class EqOnly:
        def __eq__(self, other):
            return True
    with pytest.raises(TypeError, match=r"register_constant\(cls\) expects `cls` to have a non-default `__eq__`"):
        pytree.register_constant(Plain)
    with pytest.raises(TypeError, match=r"register_constant\(cls\) expects `cls` to have a non-default `__hash__`"):
        pytree.register_constant(EqOnly)


# ---------------------------------------------------------------------------
# torch: TreeSpec, constructors, predicates, helpers


def test_treespec_repr_counts_and_children_as_torch():
    spec = pytree.tree_structure({"a": [1, NT(2, 3)], "b": collections.OrderedDict(c=4), "d": collections.deque([5])})
    assert repr(spec) == (f"TreeSpec(dict, ['a', 'b', 'd'], [TreeSpec(list, None, [*,\n"
                          f"    TreeSpec(namedtuple, {NT!r}, [*,\n      *])]),\n"
                          f"  TreeSpec(OrderedDict, ['c'], [*]),\n  TreeSpec(deque, None, [*])])")
    assert spec.children() == [spec.child(0), spec.child(1), spec.child(2)] and spec.children() is not spec._children
    with pytest.warns(FutureWarning, match=r"`treespec.children_specs` is deprecated\. Use `treespec.child\(index\)`"):
        assert spec.children_specs == spec.children()
    with pytest.warns(FutureWarning, match=r"`isinstance\(treespec, LeafSpec\)` is deprecated"):
        leaf = pytree.LeafSpec()
    assert leaf == pytree.treespec_leaf() and pytree.tree_structure(1) is pytree.treespec_leaf()
    assert pytree.TreeSpec(None, None, []).is_leaf() and pytree.TreeSpec(None, None, []) != leaf  # class differs
    assert pytree.PyTreeSpec is pytree.TreeSpec
    with pytest.raises(AssertionError, match="leaf node should not have a context"):
        pytree.TreeSpec(None, 1, [])
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.type = list


def test_treespec_constructors():
    leaf = pytree.treespec_leaf()
    assert repr(pytree.treespec_tuple([leaf, leaf])) == "TreeSpec(tuple, None, [*,\n  *])"
    assert pytree.treespec_tuple([leaf, leaf]) == pytree.tree_structure((1, 2))
    assert repr(pytree.treespec_dict(a=leaf)) == "TreeSpec(dict, ['a'], [*])"
    assert pytree.treespec_dict({"b": leaf}, a=leaf) == pytree.tree_structure({"b": 1, "a": 2})
    assert pytree.treespec_tuple() == pytree.tree_structure(())
    with pytest.raises(ValueError, match=r"Expected a tuple of TreeSpec values, got: \[1\]\."):
        pytree.treespec_tuple([1])
    with pytest.raises(ValueError, match=r"Expected a dictionary of TreeSpec values, got: \{'a': 1\}\."):
        pytree.treespec_dict(a=1)


def test_flatten_up_to_errors_match_torch():
    spec = pytree.tree_structure([NT2(1, {"q": 2})])
    cases = [([1, 2], "Node arity mismatch; expected 1, but got 2."),
             ((1, 2), "Node type mismatch; expected <class 'list'>, but got <class 'tuple'>."),
             ([NT2(1, 2)], "Node type mismatch; expected <class 'dict'>, but got <class 'int'>."),
             ([NT(1, {"q": 2})], f"Node context mismatch for node type {collections.namedtuple!r}; "
                                 f"expected {NT2!r}, but got {NT!r}.")]
    for tree, message in cases:
        with pytest.raises(ValueError) as err:
            spec.flatten_up_to(tree)
        assert str(err.value) == message
    dict_spec = pytree.tree_structure({"a": 1, "b": 2})
    with pytest.raises(ValueError, match=r"^Node keys mismatch; missing key\(s\): \{'b'\}; extra key\(s\): \{'c'\}\.$"):
        dict_spec.flatten_up_to({"a": 1, "c": 2})
    # dict kinds match each other by keys; a deque's maxlen may differ
    assert dict_spec.flatten_up_to(collections.OrderedDict(b=1, a=2)) == [2, 1]
    assert dict_spec.flatten_up_to(collections.defaultdict(int, a=1, b=2)) == [1, 2]
    assert pytree.tree_structure(collections.deque([1], maxlen=2)).flatten_up_to(collections.deque([5], maxlen=3)) == [5]
    with pytest.raises(ValueError, match=r"^Type mismatch; expected <class '.*Custom'>, but got <class 'list'>\.$"):
        pytree.tree_structure(Custom(1, 2)).flatten_up_to([1, 2])
    assert pytree.tree_map(lambda x, y: (x, y), [1, 2], [[7, 8], {"a": 9}]) == [(1, [7, 8]), (2, {"a": 9})]


def test_tree_unflatten_accepts_the_spec_first_and_rejects_non_specs():
    spec = pytree.tree_structure([1, 2])
    assert pytree.tree_unflatten(spec, [5, 6]) == [5, 6]
    with pytest.raises(TypeError, match="Expected `treespec` to be an instance of PyTreeSpec but got item of type "
                                        "<class 'list'>."):
        pytree.tree_unflatten([1], [2])


def test_leaf_predicates_and_flat_helpers():
    assert pytree.tree_is_leaf(None) and pytree.tree_is_leaf(1) and not pytree.tree_is_leaf([1])
    assert not pytree.tree_is_leaf(NT(1, 2)) and not pytree.tree_is_leaf({"a": None})
    assert pytree.tree_is_leaf((1, 2), is_leaf=lambda x: isinstance(x, tuple))
    assert pytree.arg_tree_leaves(1, [2, 3], k={"a": 4}, j=(None,)) == [1, 2, 3, 4, None]
    inc = pytree.map_only(int)(lambda x: x + 1)
    assert (inc(1), inc("a"), inc.__name__) == (2, "a", "<lambda>")
    assert pytree.map_only(lambda x: x == "a")(str.upper)("a") == "A"
    assert pytree.map_only(int | str)(lambda x: 0)("s") == 0
    with pytest.raises(TypeError, match="Argument must be a type, a tuple of types, or a callable."):
        pytree.map_only(3)
    assert pytree.tree_all_only(int, lambda x: x > 0, [1, "a", 2.0]) is True
    assert pytree.tree_any_only((int, float), lambda x: x > 1.5, [1, "a", 2.0]) is True
    with pytest.raises(TypeError, match="isinstance"):  # torch takes types only here
        pytree.tree_all_only(lambda x: True, lambda x: x, [1])
    seen = []
    assert pytree.tree_any(lambda x: seen.append(x) or x == 2, [1, [2, 3], 4]) and seen == [1, 2]  # lazy, as torch
    assert pytree._broadcast_to_and_flatten(0, pytree.tree_structure([1, (2, 3)])) == [0, 0, 0]
    assert pytree._broadcast_to_and_flatten([0, 1], pytree.tree_structure([1, (2, 3)])) == [0, 1, 1]
    assert pytree._broadcast_to_and_flatten([0], pytree.tree_structure([1, 2])) is None


def test_namedtuple_and_structseq_predicates_as_torch():
    st = time.gmtime(0)
    assert pytree.is_structseq(st) and pytree.is_structseq(os.stat_result) and pytree.is_structseq_instance(st)
    assert pytree.is_structseq_class(type(st)) and not pytree.is_structseq_class(st)
    assert not pytree.is_namedtuple(st) and pytree.tree_is_leaf(st)  # structseqs are leaves unless registered
    assert pytree.is_namedtuple(NT) and pytree.is_namedtuple(NT(1, 2)) and pytree.is_namedtuple_class(NT)
    assert pytree.is_namedtuple_instance(NT(1, 2)) and not pytree.is_namedtuple_instance(NT)
    assert not pytree.is_structseq(NT(1, 2)) and not pytree.is_namedtuple((1, 2)) and not pytree.is_structseq((1,))

    class FieldsOnly(tuple):
        _fields = ("a",)
    assert not pytree.is_namedtuple_class(FieldsOnly)  # needs _make and _asdict too
    with pytest.raises(TypeError, match="type 'structseq' is not an acceptable base type"):
        class Sub(pytree.structseq):
            pass


def test_registry_is_shared_with_the_core_both_ways():
    assert CorePair in pytree.SUPPORTED_NODES and Custom in pytree.SUPPORTED_NODES
    assert cp.registered_node(Custom) is not None
    node = pytree.SUPPORTED_NODES[CorePair]  # a core registration, in torch's argument order
    assert node.type is CorePair and node.flatten_with_keys_fn is None
    rebuilt = node.unflatten_fn([1, 2], "aux")
    assert (rebuilt.a, rebuilt.b) == (1, 2)
    assert pytree.SUPPORTED_NODES[dict].flatten_fn is pytree._dict_flatten
    assert collections.namedtuple in pytree.SUPPORTED_NODES and NT not in pytree.SUPPORTED_NODES
    assert pytree.BUILTIN_TYPES == {tuple, list, dict, collections.namedtuple, collections.OrderedDict,
                                    collections.defaultdict, collections.deque}
    with pytest.raises(ValueError, match="is already registered as pytree node"):
        pytree.register_pytree_node(CorePair, lambda o: ([], None), lambda ch, ctx: None)
    with pytest.raises(ValueError, match="is already registered as pytree node"):
        pytree.register_pytree_node(dict, lambda o: ([], None), lambda ch, ctx: None)


def test_deprecated_register_warns_and_deregister_undoes_it():
    class Legacy:
        def __init__(self, v):
            self.v = v
    with pytest.warns(FutureWarning, match=r"`torch.utils._pytree._register_pytree_node` is deprecated\. "
                                           r"Please use `torch.utils._pytree.register_pytree_node` instead\."):
        pytree._register_pytree_node(Legacy, lambda o: ([o.v], None), lambda ch, ctx: Legacy(*ch),
                                     serialized_type_name="t.Legacy")
    assert pytree.tree_leaves([Legacy(3)]) == [3] and cp.tree_leaves(Legacy(3)) == [3]
    with pytest.warns(UserWarning, match="is already registered as pytree node. Overwriting the previous"):
        pytree._private_register_pytree_node(Legacy, lambda o: ([o.v, o.v], None), lambda ch, ctx: Legacy(ch[0]),
                                             serialized_type_name="t.Legacy")
    assert pytree.tree_leaves(Legacy(3)) == [3, 3]
    pytree._deregister_pytree_node(Legacy)
    obj = Legacy(3)
    assert pytree.tree_leaves(obj) == [obj] and cp.tree_leaves(obj) == [obj]
    assert Legacy not in pytree.SUPPORTED_NODES and "t.Legacy" not in pytree.SERIALIZED_TYPE_TO_PYTHON_TYPE


def test_public_names_are_torchs():
    torch_all = ["PyTree", "Context", "FlattenFn", "UnflattenFn", "DumpableContext", "ToDumpableContextFn",
                 "FromDumpableContextFn", "PyTreeSpec", "TreeSpec", "LeafSpec", "keystr", "key_get",
                 "register_pytree_node", "tree_is_leaf", "tree_flatten", "tree_flatten_with_path", "tree_unflatten",
                 "tree_iter", "tree_leaves", "tree_leaves_with_path", "tree_structure", "tree_map",
                 "tree_map_with_path", "tree_map_", "tree_map_only", "tree_map_only_", "tree_all", "tree_any",
                 "tree_all_only", "tree_any_only", "treespec_dumps", "treespec_loads", "treespec_pprint",
                 "is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance", "is_structseq",
                 "is_structseq_class", "is_structseq_instance"]
    assert pytree.__all__ == torch_all
    assert pytree.KeyPath == tuple[pytree.KeyEntry, ...] and pytree.KeyEntry is cp.KeyEntry


def test_return_types_flatten_as_pytorchs_structseqs():
    """torch.return_types.* are tuples with field properties; pytree flattens them by position (checked on
    PyTorch 2.13: TreeSpec(max, None, [*, *]), keys SequenceKey(0), SequenceKey(1))."""
    import pickle
    import mindtorch_v2 as mt
    from mindtorch_v2.utils import _pytree as tp
    r = mt.ones(2, 3).max(1)
    T = type(r)
    assert T.__mro__[1:] == (tuple, object) and (T.n_fields, T.n_sequence_fields, T.n_unnamed_fields) == (2, 2, 0)
    assert not tp.is_namedtuple(r) and r.values is r[0] and r.indices is r[1]
    leaves, spec = tp.tree_flatten(r)
    assert str(spec) == "TreeSpec(max, None, [*,\n  *])" and len(leaves) == 2
    assert [str(k) for (k,), _ in tp.tree_flatten_with_path(r)[0]] == ["[0]", "[1]"]
    assert type(tp.tree_unflatten(leaves, spec)) is T
    assert T([mt.ones(1), mt.zeros(1)]).values.tolist() == [1.0]
    assert pickle.loads(pickle.dumps(r)).indices.tolist() == [0, 0]
    with pytest.raises(TypeError, match="takes a dict as second arg"):
        mt.return_types.linalg_svd([mt.ones(1)] * 3, 5)
    with pytest.raises(TypeError, match="takes a 2-sequence"):
        T([mt.ones(1)])
