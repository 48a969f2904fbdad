"""torch.utils._pytree: flatten and rebuild nested containers with torch's rules.

torch's rules differ from the core's (jax.tree_util's) in two ways, both kept here: None is a leaf,
and dicts keep insertion order (the TreeSpec context is the key list). User node types share the core's
registry (`core.pytree.register_pytree_node`): a class registered here is a node for `torch.func.vmap`
and `grad` too, and a class registered in the core is a node here. Built-in nodes: tuple, list, dict,
namedtuples (every namedtuple class is a `namedtuple` node whose context is the class), OrderedDict,
defaultdict, deque. Key paths use the core's key classes (SequenceKey, MappingKey, GetAttrKey).

A TreeSpec serializes to PyTorch's JSON (`treespec_dumps`, protocol 1): a spec dumped here loads in
PyTorch and the other way round, for the built-in node types and for types registered on both sides under
the same `serialized_type_name`.
"""
import collections
import dataclasses
import functools
import importlib
import json
import types
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from typing import Any, ClassVar, Generic, NamedTuple, TypeAlias, TypeVar

from ..core import pytree as _core_pytree
from ..core.pytree import GetAttrKey, KeyEntry, KeyPath, MappingKey, SequenceKey, key_get, keystr

__all__ = [
    "PyTree", "Context", "FlattenFn", "UnflattenFn", "DumpableContext", "ToDumpableContextFn",
    "FromDumpableContextFn", "PyTreeSpec", "TreeSpec", "LeafSpec", "keystr", "key_get", "register_pytree_node",
    "tree_is_leaf", "tree_flatten", "tree_flatten_with_path", "tree_unflatten", "tree_iter", "tree_leaves",
    "tree_leaves_with_path", "tree_structure", "tree_map", "tree_map_with_path", "tree_map_", "tree_map_only",
    "tree_map_only_", "tree_all", "tree_any", "tree_all_only", "tree_any_only", "treespec_dumps",
    "treespec_loads", "treespec_pprint", "is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance",
    "is_structseq", "is_structseq_class", "is_structseq_instance",
]

T = TypeVar("T")

DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL = 1
NO_SERIALIZED_TYPE_NAME_FOUND = "NO_SERIALIZED_TYPE_NAME_FOUND"

Context = Any
PyTree = Any
FlattenFn = Callable[[PyTree], tuple[list[Any], Context]]
UnflattenFn = Callable[[Iterable[Any], Context], PyTree]
DumpableContext = Any  # any JSON-dumpable value
ToDumpableContextFn = Callable[[Context], DumpableContext]
FromDumpableContextFn = Callable[[DumpableContext], Context]
FlattenWithKeysFn = Callable[[PyTree], tuple[list[tuple[KeyEntry, Any]], Any]]
FlattenFunc, UnflattenFunc, FlattenWithKeysFunc = FlattenFn, UnflattenFn, FlattenWithKeysFn  # torch's old names


class EnumEncoder(json.JSONEncoder):
    """JSON encoder writing Enum members as {"__enum__": True, "fqn": "module:Class", "name": ...}."""

    def default(self, obj):
        if isinstance(obj, Enum):
            return {"__enum__": True, "fqn": f"{obj.__class__.__module__}:{obj.__class__.__qualname__}",
                    "name": obj.name}
        return super().default(obj)


def enum_object_hook(obj):
    """json.loads object hook turning EnumEncoder's dicts back into Enum members."""
    if "__enum__" in obj:
        modname, _, classname = obj["fqn"].partition(":")
        enum_cls = importlib.import_module(modname)
        for attr in classname.split("."):
            enum_cls = getattr(enum_cls, attr)
        return enum_cls[obj["name"]]
    return obj


class NodeDef(NamedTuple):
    """A node type's functions in torch's argument order: unflatten_fn(children, context)."""
    type: Any
    flatten_fn: Any
    unflatten_fn: Any
    flatten_with_keys_fn: Any


class _SerializeNodeDef(NamedTuple):
    typ: Any
    serialized_type_name: str
    to_dumpable_context: Any
    from_dumpable_context: Any


# ---------------------------------------------------------------------------
# namedtuple and structseq classes


def is_namedtuple(obj):
    """Return whether the object is an instance of namedtuple or a subclass of namedtuple."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_class(cls):
    """Return whether the class is a subclass of namedtuple."""
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(field) is str for field in cls._fields)
            and callable(getattr(cls, "_make", None)) and callable(getattr(cls, "_asdict", None)))


def is_namedtuple_instance(obj):
    """Return whether the object is an instance of namedtuple."""
    return is_namedtuple_class(type(obj))


class structseq(tuple):
    """The type of CPython's PyStructSequence classes (os.stat_result, torch.return_types.*), for annotations."""
    __slots__: ClassVar[tuple] = ()

    def __init_subclass__(cls):
        raise TypeError("type 'structseq' is not an acceptable base type")

    def __new__(cls, sequence, dict=None):  # noqa: A002 (CPython's parameter name)
        raise NotImplementedError


Py_TPFLAGS_BASETYPE = 1 << 10  # the type allows subclassing (CPython's Include/object.h)


def is_structseq(obj):
    """Return whether the object is an instance of PyStructSequence or a class of PyStructSequence."""
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_class(cls):
    """Return whether the class is a class of PyStructSequence."""
    return (isinstance(cls, type) and cls.__bases__ == (tuple,)
            and isinstance(getattr(cls, "n_fields", None), int)
            and isinstance(getattr(cls, "n_sequence_fields", None), int)
            and isinstance(getattr(cls, "n_unnamed_fields", None), int)
            and not bool(cls.__flags__ & Py_TPFLAGS_BASETYPE))


def is_structseq_instance(obj):
    """Return whether the object is an instance of PyStructSequence."""
    return is_structseq_class(type(obj))


# ---------------------------------------------------------------------------
# the built-in node types, with torch's helper names (libraries call _dict_flatten & co. directly)


def _tuple_flatten(d):
    return list(d), None


def _tuple_flatten_with_keys(d):
    values, context = _tuple_flatten(d)
    return [(SequenceKey(i), v) for i, v in enumerate(values)], context


def _tuple_unflatten(values, context):
    return tuple(values)


def _list_flatten(d):
    return d, None


def _list_flatten_with_keys(d):
    values, context = _list_flatten(d)
    return [(SequenceKey(i), v) for i, v in enumerate(values)], context


def _list_unflatten(values, context):
    return list(values)


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_flatten_with_keys(d):
    values, context = _dict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context, values, strict=True)], context


def _dict_unflatten(values, context):
    return dict(zip(context, values, strict=True))


def _namedtuple_flatten(d):
    return list(d), type(d)


def _namedtuple_flatten_with_keys(d):
    values, context = _namedtuple_flatten(d)
    return [(GetAttrKey(field), v) for field, v in zip(context._fields, values, strict=True)], context


def _namedtuple_unflatten(values, context):
    return context(*values)


def _namedtuple_serialize(context):
    if context not in SUPPORTED_SERIALIZED_TYPES:
        raise NotImplementedError(
            f"Can't serialize TreeSpec of namedtuple class {context} because we didn't register a "
            "serializated_type_name. Please register using `_register_namedtuple`.")
    serialized_type_name = SUPPORTED_SERIALIZED_TYPES[context].serialized_type_name
    if serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(
            f"Can't serialize TreeSpec of namedtuple class {context} because we couldn't find a "
            "serializated_type_name. Please register using `_register_namedtuple`.")
    return serialized_type_name


def _namedtuple_deserialize(dumpable_context):
    if dumpable_context not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Can't deserialize TreeSpec of namedtuple class {dumpable_context} because "
                                  "we couldn't find a serializated name.")
    return SERIALIZED_TYPE_TO_PYTHON_TYPE[dumpable_context]


def _ordereddict_flatten(d):
    return list(d.values()), list(d.keys())


def _ordereddict_flatten_with_keys(d):
    values, context = _ordereddict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context, values, strict=True)], context


def _ordereddict_unflatten(values, context):
    return OrderedDict((key, value) for key, value in zip(context, values, strict=True))


_odict_flatten, _odict_unflatten = _ordereddict_flatten, _ordereddict_unflatten


def _defaultdict_flatten(d):
    values, dict_context = _dict_flatten(d)
    return values, [d.default_factory, dict_context]


def _defaultdict_flatten_with_keys(d):
    values, context = _defaultdict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context[1], values, strict=True)], context


def _defaultdict_unflatten(values, context):
    default_factory, dict_context = context
    return defaultdict(default_factory, _dict_unflatten(values, dict_context))


def _defaultdict_serialize(context):
    default_factory, dict_context = context
    return {"default_factory_module": default_factory.__module__,
            "default_factory_name": default_factory.__qualname__, "dict_context": dict_context}


def _defaultdict_deserialize(dumpable_context):
    if not isinstance(dumpable_context, dict):
        raise AssertionError("dumpable_context must be a dict")
    expected_keys = {"default_factory_module", "default_factory_name", "dict_context"}
    if set(dumpable_context) != expected_keys:
        raise AssertionError(f"dumpable_context keys must be {expected_keys}, got {set(dumpable_context)}")
    module_name, name = dumpable_context["default_factory_module"], dumpable_context["default_factory_name"]
    if not isinstance(module_name, str):
        raise AssertionError("default_factory_module must be a string")
    if not isinstance(name, str):
        raise AssertionError("default_factory_name must be a string")
    default_factory = getattr(importlib.import_module(module_name), name)
    return [default_factory, dumpable_context["dict_context"]]


def _deque_flatten(d):
    return list(d), d.maxlen


def _deque_flatten_with_keys(d):
    values, context = _deque_flatten(d)
    return [(SequenceKey(i), v) for i, v in enumerate(values)], context


def _deque_unflatten(values, context):
    return deque(values, maxlen=context)


_BUILTIN_NODES = {
    tuple: NodeDef(tuple, _tuple_flatten, _tuple_unflatten, _tuple_flatten_with_keys),
    list: NodeDef(list, _list_flatten, _list_unflatten, _list_flatten_with_keys),
    dict: NodeDef(dict, _dict_flatten, _dict_unflatten, _dict_flatten_with_keys),
    namedtuple: NodeDef(namedtuple, _namedtuple_flatten, _namedtuple_unflatten, _namedtuple_flatten_with_keys),
    OrderedDict: NodeDef(OrderedDict, _ordereddict_flatten, _ordereddict_unflatten, _ordereddict_flatten_with_keys),
    defaultdict: NodeDef(defaultdict, _defaultdict_flatten, _defaultdict_unflatten, _defaultdict_flatten_with_keys),
    deque: NodeDef(deque, _deque_flatten, _deque_unflatten, _deque_flatten_with_keys),
}
STANDARD_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})
BUILTIN_TYPES = frozenset(_BUILTIN_NODES)


# ---------------------------------------------------------------------------
# the registry: built-in nodes here, every other node type in the core's registry


# type -> (the core's NodeDef it was registered as, the torch-order NodeDef given to register_pytree_node)
_registered_here = {}
# type -> (the core's NodeDef, its torch-order adaptation) for types registered through the core directly
_adapted = {}


def _node_def(t):
    """The torch-order NodeDef of node type `t` (a namedtuple class is the `namedtuple` type), or None."""
    node = _BUILTIN_NODES.get(t)
    if node is not None:
        return node
    core_node = _core_pytree.registered_node(t)
    if core_node is None:
        return None
    mine = _registered_here.get(t) or _adapted.get(t)
    if mine is not None and mine[0] is core_node:
        return mine[1]
    unflatten = core_node.unflatten_fn
    node = NodeDef(t, core_node.flatten_fn, lambda children, context: unflatten(context, children),
                   core_node.flatten_with_keys_fn)
    _adapted[t] = (core_node, node)
    return node


class _SupportedNodes(Mapping):
    """torch's SUPPORTED_NODES (type -> NodeDef): the built-in nodes, then the core registry's types."""

    def __getitem__(self, t):
        node = _node_def(t)
        if node is None:
            raise KeyError(t)
        return node

    def __contains__(self, t):
        return t in _BUILTIN_NODES or _core_pytree.registered_node(t) is not None

    def __iter__(self):
        yield from _BUILTIN_NODES
        yield from _core_pytree.registered_types()

    def __len__(self):
        return len(_BUILTIN_NODES) + len(_core_pytree.registered_types())

    def __delitem__(self, t):
        if t in _BUILTIN_NODES:
            raise KeyError(f"{t} is a built-in pytree node type")
        try:
            _core_pytree.unregister_pytree_node(t)
        except ValueError:
            raise KeyError(t) from None
        _registered_here.pop(t, None)
        _adapted.pop(t, None)

    def __repr__(self):
        return repr(dict(self))


SUPPORTED_NODES = _SupportedNodes()
SUPPORTED_SERIALIZED_TYPES = {}  # type -> _SerializeNodeDef
SERIALIZED_TYPE_TO_PYTHON_TYPE = {}  # serialized_type_name -> type
CONSTANT_NODES = set()


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """Register `cls` as a node: flatten_fn(x) -> (children, context); unflatten_fn(children, context) -> x.

    serialized_type_name names the type in treespec_dumps; to/from_dumpable_context convert its context
    to and from JSON; flatten_with_keys_fn(x) -> ([(key, child), ...], context) gives key paths."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _private_register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                                  to_dumpable_context=None, from_dumpable_context=None, flatten_with_keys_fn=None):
    """Register `cls`, overwriting (with a warning) an earlier registration, as torch's private function."""
    if cls in SUPPORTED_NODES:
        warnings.warn(f"{cls} is already registered as pytree node. Overwriting the previous registration.",
                      stacklevel=2)
        if cls in _BUILTIN_NODES:
            _BUILTIN_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
        else:
            _core_pytree.unregister_pytree_node(cls)
    if cls not in _BUILTIN_NODES:
        _core_pytree.register_pytree_node(cls, flatten_fn, lambda context, children: unflatten_fn(children, context),
                                          flatten_with_keys_fn)
        _registered_here[cls] = (_core_pytree.registered_node(cls),
                                 NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn))
    if (to_dumpable_context is None) ^ (from_dumpable_context is None):
        raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} must be None or registered.")
    if serialized_type_name is None:
        serialized_type_name = NO_SERIALIZED_TYPE_NAME_FOUND
    SUPPORTED_SERIALIZED_TYPES[cls] = _SerializeNodeDef(cls, serialized_type_name, to_dumpable_context,
                                                        from_dumpable_context)
    SERIALIZED_TYPE_TO_PYTHON_TYPE[serialized_type_name] = cls


def _register_pytree_node(cls, flatten_fn, unflatten_fn, to_str_fn=None, maybe_from_str_fn=None, *,
                          serialized_type_name=None, to_dumpable_context=None, from_dumpable_context=None,
                          flatten_with_keys_fn=None):
    """Deprecated spelling of register_pytree_node (overwrites an earlier registration with a warning)."""
    warnings.warn("`torch.utils._pytree._register_pytree_node` is deprecated. "
                  "Please use `torch.utils._pytree.register_pytree_node` instead.", FutureWarning, stacklevel=2)
    if to_str_fn is not None or maybe_from_str_fn is not None:
        warnings.warn("`to_str_fn` and `maybe_from_str_fn` is deprecated. "
                      "Please use `to_dumpable_context` and `from_dumpable_context` instead.",
                      FutureWarning, stacklevel=2)
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
                                  to_dumpable_context=to_dumpable_context,
                                  from_dumpable_context=from_dumpable_context,
                                  flatten_with_keys_fn=flatten_with_keys_fn)


def _deregister_pytree_node(cls):
    """Undo the registration of `cls` (torch's internal helper)."""
    del SUPPORTED_NODES[cls]
    node_def = SUPPORTED_SERIALIZED_TYPES[cls]
    del SERIALIZED_TYPE_TO_PYTHON_TYPE[node_def.serialized_type_name]
    del SUPPORTED_SERIALIZED_TYPES[cls]
    CONSTANT_NODES.discard(cls)


def _register_namedtuple(cls, *, serialized_type_name):
    """Register namedtuple class `cls` under `serialized_type_name`, so specs holding it can be dumped."""
    _private_register_pytree_node(cls, _namedtuple_flatten, _namedtuple_unflatten,
                                  serialized_type_name=serialized_type_name,
                                  to_dumpable_context=_namedtuple_serialize,
                                  from_dumpable_context=_namedtuple_deserialize,
                                  flatten_with_keys_fn=_namedtuple_flatten_with_keys)


def register_dataclass(cls, *, field_names=None, drop_field_names=None, serialized_type_name=None):
    """Register a dataclass (or a class built from keyword fields) as a node whose children are its
    non-None fields; field_names lists the fields (default: the dataclass's init fields)."""
    drop_field_names = drop_field_names or []
    if not dataclasses.is_dataclass(cls):
        if field_names is None:
            raise ValueError("field_names must be specified with a list of all fields used to "
                             f"initialize {cls}, as it is not a dataclass.")
    elif field_names is None:
        field_names = [f.name for f in dataclasses.fields(cls) if f.init]
    else:
        init_fields = {f.name for f in dataclasses.fields(cls) if f.init}
        init_fields.difference_update(drop_field_names)
        if init_fields != set(field_names):
            error_msg = "field_names does not include all dataclass fields.\n"
            if missing := init_fields - set(field_names):
                error_msg += (f"Missing fields in `field_names`: {missing}. If you want to include these fields "
                              "in the pytree, please add them to `field_names`, otherwise please add them to "
                              "`drop_field_names`.\n")
            if unexpected := set(field_names) - init_fields:
                error_msg += (f"Unexpected fields in `field_names`: {unexpected}. "
                              "Please remove these fields, or add them to `drop_field_names`.\n")
            raise ValueError(error_msg)

    def _flatten_fn(obj):
        flattened, flat_names, none_names = [], [], []
        for name in field_names:
            val = getattr(obj, name)
            if val is not None:
                flattened.append(val)
                flat_names.append(name)
            else:
                none_names.append(name)
        return flattened, [flat_names, none_names]

    def _unflatten_fn(values, context):
        flat_names, none_names = context
        return cls(**dict(zip(flat_names, values, strict=True)), **dict.fromkeys(none_names))

    def _flatten_fn_with_keys(obj):
        flattened, (flat_names, _) = _flatten_fn(obj)
        return [(GetAttrKey(k), v) for k, v in zip(flat_names, flattened, strict=True)], flat_names

    _private_register_pytree_node(cls, _flatten_fn, _unflatten_fn, serialized_type_name=serialized_type_name,
                                  flatten_with_keys_fn=_flatten_fn_with_keys)


@dataclasses.dataclass(frozen=True, slots=True)
class ConstantNode(Generic[T]):
    """The context of a node registered with register_constant: the constant itself."""
    value: T


def register_constant(cls):
    """Register `cls` (which must define __eq__ and __hash__) as a node with no leaves: the instance is
    kept whole in the TreeSpec's context, as a ConstantNode."""
    if cls.__eq__ is object.__eq__:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__eq__` implementation.")
    if cls.__hash__ is None:
        raise TypeError("register_constant(cls) expects `cls` to have a non-default `__hash__` implementation.")

    def _flatten(x):
        return [], ConstantNode(x)

    def _unflatten(_, context):
        return context.value

    _private_register_pytree_node(cls, _flatten, _unflatten, flatten_with_keys_fn=_flatten)
    CONSTANT_NODES.add(cls)


def is_constant_class(cls):
    """Return True if `cls` was registered with register_constant."""
    return isinstance(cls, type) and cls in CONSTANT_NODES


def _is_constant_holder(spec):
    return isinstance(spec._context, ConstantNode)


def _retrieve_constant(spec):
    if not _is_constant_holder(spec):
        raise AssertionError("spec does not correspond to a registered constant pytree")
    return tree_unflatten([], spec)


# ---------------------------------------------------------------------------
# TreeSpec


def _get_node_type(tree):
    """The node type torch files `tree` under: `namedtuple` for every namedtuple class, else type(tree)."""
    node_type = type(tree)
    return namedtuple if is_namedtuple_class(node_type) else node_type


def tree_is_leaf(tree, is_leaf=None):
    """Return True if `tree` is a leaf: is_leaf(tree) holds, or its type is no registered node type."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_def(_get_node_type(tree)) is None


def _is_leaf(tree, is_leaf=None):
    warnings.warn("torch.utils._pytree._is_leaf is private and will be removed in a future release. "
                  "Please use torch.utils._pytree.tree_is_leaf instead.", FutureWarning, stacklevel=2)
    return tree_is_leaf(tree, is_leaf=is_leaf)


def _is_namedtuple_instance(tree):
    warnings.warn("torch.utils._pytree._is_namedtuple_instance is private and will be removed in a future "
                  "release. Please use torch.utils._pytree.is_namedtuple_instance instead.",
                  FutureWarning, stacklevel=2)
    return is_namedtuple_instance(tree)


@dataclasses.dataclass(init=False, frozen=True, eq=True, repr=False, slots=True)
class TreeSpec:
    """The structure of a pytree: its root's node type, that node's context, and the children's specs."""
    type: Any
    _context: Context
    _children: list

    num_nodes: int = dataclasses.field(init=False)
    num_leaves: int = dataclasses.field(init=False)
    num_children: int = dataclasses.field(init=False)

    def __init__(self, type, context, children_specs):  # noqa: A002 (torch's parameter name)
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "_context", context)
        object.__setattr__(self, "_children", children_specs)
        self.__post_init__()

    def __post_init__(self):
        if self.type is None:
            if self._context is not None:
                raise AssertionError("leaf node should not have a context")
            if len(self._children) != 0:
                raise AssertionError("leaf node should not have children")
            num_nodes, num_leaves, num_children = 1, 1, 0
        else:
            num_nodes = 1 + sum(c.num_nodes for c in self._children)
            num_leaves = sum(c.num_leaves for c in self._children)
            num_children = len(self._children)
        object.__setattr__(self, "num_nodes", num_nodes)
        object.__setattr__(self, "num_leaves", num_leaves)
        object.__setattr__(self, "num_children", num_children)

    def __repr__(self, indent=0):
        prefix = f"TreeSpec({self.type.__name__}, {self._context}, ["
        body = ""
        if self.num_children > 0:
            indent += 2
            body += self._children[0].__repr__(indent)
            body += "," if self.num_children > 1 else ""
            body += ",".join(["\n" + " " * indent + child.__repr__(indent) for child in self._children[1:]])
        return prefix + body + "])"

    def __eq__(self, other):
        if self is other:
            return True
        if other.__class__ is self.__class__:
            return (str(self.type) == str(other.type) and self._context == other._context
                    and self._children == other._children)
        return NotImplemented

    def __hash__(self):
        node_type = self.type
        if node_type is defaultdict:
            default_factory, dict_context = self._context
            hashable_context = (default_factory, tuple(dict_context))
        elif node_type in (dict, OrderedDict):
            hashable_context = tuple(self._context)
        elif node_type is None or node_type in BUILTIN_TYPES:
            hashable_context = self._context
        elif isinstance(self._context, ConstantNode):
            hashable_context = self._context.value
        else:
            hashable_context = None  # a user type's context may be unhashable: equal specs still hash equal
        return hash((node_type, hashable_context, tuple(self._children)))

    @property
    def context(self):
        return self._context

    @property
    def children_specs(self):
        warnings.warn("`treespec.children_specs` is deprecated. Use `treespec.child(index)` to access a single "
                      "child, or `treespec.children()` to get all children.", FutureWarning, stacklevel=2)
        return self._children

    def is_leaf(self):
        """Return True if the spec is that of a single leaf."""
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self):
        """Return the children's specs (a new list)."""
        return self._children.copy()

    def child(self, index):
        """Return the spec of child `index`."""
        return self._children[index]

    def flatten_up_to(self, tree):
        """Return the subtrees of `tree` at this spec's leaves (tree must have this spec's nodes above them)."""
        subtrees = []
        _flatten_up_to(self, tree, subtrees)
        return subtrees

    def unflatten(self, leaves):
        """Return the pytree of this structure holding `leaves`."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers "
                             f"to a pytree that holds {self.num_leaves} items ({self}).")
        return _unflatten(self, iter(leaves))


PyTreeSpec: TypeAlias = TreeSpec


@dataclasses.dataclass(init=False, frozen=True, eq=False, repr=False, slots=True)
class LeafSpec(TreeSpec):
    """The spec of a single leaf, printed `*` (deprecated: use `treespec_leaf()` and `spec.is_leaf()`)."""

    def __init__(self):
        warnings.warn("`isinstance(treespec, LeafSpec)` is deprecated, use `isinstance(treespec, TreeSpec) and "
                      "treespec.is_leaf()` instead.", FutureWarning, stacklevel=2)
        object.__setattr__(self, "type", None)
        object.__setattr__(self, "_context", None)
        object.__setattr__(self, "_children", [])
        object.__setattr__(self, "num_nodes", 1)
        object.__setattr__(self, "num_leaves", 1)
        object.__setattr__(self, "num_children", 0)

    def __repr__(self, indent=0):
        return "*"


with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    _LEAF_SPEC = LeafSpec()


def treespec_leaf():
    """Return the treespec of a single leaf."""
    return _LEAF_SPEC


def treespec_tuple(iterable=(), /):
    """Return a tuple treespec with the given child treespecs."""
    children = list(iterable)
    if any(not isinstance(child, TreeSpec) for child in children):
        raise ValueError(f"Expected a tuple of TreeSpec values, got: {children!r}.")
    return TreeSpec(tuple, None, children)


def treespec_dict(mapping=(), /, **kwargs):
    """Return a dict treespec with the given child treespecs."""
    dct = dict(mapping, **kwargs)
    if any(not isinstance(child, TreeSpec) for child in dct.values()):
        raise ValueError(f"Expected a dictionary of TreeSpec values, got: {dct!r}.")
    return TreeSpec(dict, list(dct.keys()), list(dct.values()))


def _unflatten(spec, it):
    if spec.type is None:
        return next(it)
    node = _node_def(spec.type)
    return node.unflatten_fn([_unflatten(c, it) for c in spec._children], spec._context)


def _flatten_up_to(spec, node, subtrees):
    if spec.is_leaf():
        subtrees.append(node)
        return
    node_type = _get_node_type(node)
    if spec.type not in BUILTIN_TYPES:
        if node_type != spec.type:  # custom node types must match exactly
            raise ValueError(f"Type mismatch; expected {spec.type!r}, but got {node_type!r}.")
        children, context = _node_def(node_type).flatten_fn(node)
        if len(children) != spec.num_children:
            raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got {len(children)}.")
        if context != spec._context:
            raise ValueError(f"Node context mismatch for custom node type {spec.type!r}.")
    else:
        both_standard_dict = spec.type in STANDARD_DICT_TYPES and node_type in STANDARD_DICT_TYPES
        if not both_standard_dict and node_type != spec.type:
            raise ValueError(f"Node type mismatch; expected {spec.type!r}, but got {node_type!r}.")
        if len(node) != spec.num_children:
            raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got {len(node)}.")
        if both_standard_dict:  # dict types match each other by keys (defaultdict's factory ignored)
            expected_keys = spec._context if spec.type is not defaultdict else spec._context[1]
            got_key_set, expected_key_set = set(node), set(expected_keys)
            if got_key_set != expected_key_set:
                message = ""
                if missing := expected_key_set.difference(got_key_set):
                    message += f"; missing key(s): {missing}"
                if extra := got_key_set.difference(expected_key_set):
                    message += f"; extra key(s): {extra}"
                raise ValueError(f"Node keys mismatch{message}.")
            children = [node[key] for key in expected_keys]
        else:
            children, context = _node_def(node_type).flatten_fn(node)
            if node_type is not deque and context != spec._context:  # a deque's maxlen may differ
                raise ValueError(f"Node context mismatch for node type {spec.type!r}; "
                                 f"expected {spec._context!r}, but got {context!r}.")
    for subtree, subspec in zip(children, spec._children, strict=True):
        _flatten_up_to(subspec, subtree, subtrees)


# ---------------------------------------------------------------------------
# flatten, map, query


def tree_flatten(tree, is_leaf=None):
    """Return (leaves, treespec) of `tree`."""
    leaves = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _flatten(node, leaves, is_leaf):
    if is_leaf is not None and is_leaf(node):
        leaves.append(node)
        return _LEAF_SPEC
    node_type = _get_node_type(node)
    node_def = _node_def(node_type)
    if node_def is None:
        leaves.append(node)
        return _LEAF_SPEC
    children, context = node_def.flatten_fn(node)
    return TreeSpec(node_type, context, [_flatten(c, leaves, is_leaf) for c in children])


def tree_unflatten(leaves, treespec):
    """Return the pytree with structure `treespec` holding `leaves` (the inverse of tree_flatten)."""
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type "
                            f"{type(treespec)}.")
        leaves, treespec = treespec, leaves  # torch accepts the spec first too
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """Return an iterator over the leaves of `tree`, flattening lazily."""
    if is_leaf is not None and is_leaf(tree):
        yield tree
        return
    node_def = _node_def(_get_node_type(tree))
    if node_def is None:
        yield tree
        return
    for child in node_def.flatten_fn(tree)[0]:
        yield from tree_iter(child, is_leaf=is_leaf)


def tree_leaves(tree, is_leaf=None):
    """Return the leaves of `tree`, in flattening order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    """Return the TreeSpec of `tree`."""
    return tree_flatten(tree, is_leaf)[1]


def arg_tree_leaves(*args, **kwargs):
    """Return the leaves of (args, kwargs) as one flat list (tree_leaves((args, kwargs)), faster)."""
    leaves = []
    for a in args:
        leaves.extend(tree_iter(a))
    for a in kwargs.values():
        leaves.extend(tree_iter(a))
    return leaves


def tree_map(func, tree, *rests, is_leaf=None):
    """Return a pytree of tree's structure holding func(leaf, *matching subtrees of rests); each of rests
    must have `tree` as a prefix."""
    leaves, treespec = tree_flatten(tree, is_leaf=is_leaf)
    flat_args = [leaves] + [treespec.flatten_up_to(r) for r in rests]
    return treespec.unflatten(map(func, *flat_args))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Call func(leaf, *matching subtrees of rests) for its side effects; return `tree`."""
    leaves, treespec = tree_flatten(tree, is_leaf=is_leaf)
    flat_args = [leaves] + [treespec.flatten_up_to(r) for r in rests]
    collections.deque(map(func, *flat_args), maxlen=0)
    return tree


def map_only(type_or_types_or_pred, /):
    """Return a decorator making func apply only to values of the given type(s) (or passing the predicate)
    and return other values unchanged."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        def pred(x):
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped
    return wrapper


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """tree_map applying func only to the leaves of the given type(s) (or passing the predicate)."""
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """tree_map_ applying func only to the leaves of the given type(s); return `tree`."""
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    """Return True if pred holds for every leaf (stops at the first that fails)."""
    return all(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    """Return True if pred holds for any leaf (stops at the first that holds)."""
    return any(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None):
    """Return True if pred holds for every leaf of the given type(s)."""
    return all(pred(x) for x in tree_iter(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None):
    """Return True if pred holds for any leaf of the given type(s)."""
    return any(pred(x) for x in tree_iter(tree, is_leaf=is_leaf) if isinstance(x, type_or_types))


def _broadcast_to_and_flatten(tree, treespec, is_leaf=None):
    """Return the leaves of `tree` broadcast to `treespec` (a prefix leaf repeated over its subtree), or None
    if tree is not a prefix of the spec's structure (what vmap's in_dims need)."""
    full_tree = tree_unflatten([0] * treespec.num_leaves, treespec)
    result = []

    def add_leaves(x, subtree):
        result.extend([x] * tree_structure(subtree, is_leaf=is_leaf).num_leaves)
    try:
        tree_map_(add_leaves, tree, full_tree, is_leaf=is_leaf)
    except ValueError:
        return None
    return result


# ---------------------------------------------------------------------------
# key paths (the key classes, keystr and key_get are the core's)


def tree_flatten_with_path(tree, is_leaf=None):
    """Return ([(key path, leaf), ...], treespec) of `tree`."""
    _, treespec = tree_flatten(tree, is_leaf)
    return list(_generate_key_paths((), tree, is_leaf)), treespec


def tree_leaves_with_path(tree, is_leaf=None):
    """Return [(key path, leaf), ...] of `tree`, in flattening order."""
    return list(_generate_key_paths((), tree, is_leaf))


def _generate_key_paths(key_path, tree, is_leaf=None):
    if is_leaf and is_leaf(tree):
        yield key_path, tree
        return
    node_type = _get_node_type(tree)
    handler = _node_def(node_type)
    if not handler:
        yield key_path, tree
        return
    if not handler.flatten_with_keys_fn:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node_type}. "
                         "Please pass a flatten_with_keys_fn argument to register_pytree_node.")
    key_children, _ = handler.flatten_with_keys_fn(tree)
    for k, c in key_children:
        yield from _generate_key_paths((*key_path, k), c, is_leaf)


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """Return a pytree of tree's structure holding func(key path, leaf, *matching subtrees of rests)."""
    keypath_leaves, treespec = tree_flatten_with_path(tree, is_leaf)
    keypath_leaves = list(zip(*keypath_leaves, strict=True))
    all_keypath_leaves = keypath_leaves + [treespec.flatten_up_to(r) for r in rests]
    return treespec.unflatten(func(*xs) for xs in zip(*all_keypath_leaves, strict=True))


# ---------------------------------------------------------------------------
# serialization: PyTorch's JSON protocol 1


@dataclasses.dataclass
class _TreeSpecSchema:
    """One serialized node: type name (None for a leaf), JSON-dumpable context, children's schemas."""
    type: str | None
    context: DumpableContext
    children_spec: list


class _ProtocolFn(NamedTuple):
    treespec_to_json: Callable
    json_to_treespec: Callable


def _treespec_to_json(treespec):
    if treespec.is_leaf():
        return _TreeSpecSchema(None, None, [])
    if treespec.type not in SUPPORTED_SERIALIZED_TYPES:
        raise NotImplementedError(f"Serializing {treespec.type} in pytree is not registered.")
    serialize_node_def = SUPPORTED_SERIALIZED_TYPES[treespec.type]
    serialized_type_name = serialize_node_def.serialized_type_name
    if serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(
            f"No registered serialization name for {treespec.type} found. "
            "Please update your _register_pytree_node call with a `serialized_type_name` kwarg.")
    if serialize_node_def.to_dumpable_context is None:
        try:
            serialized_context = json.dumps(treespec._context, cls=EnumEncoder)
        except TypeError as e:
            raise TypeError("Unable to serialize context. Please make the context json dump-able, or register a "
                            "custom serializer using _register_pytree_node.") from e
    else:
        serialized_context = serialize_node_def.to_dumpable_context(treespec._context)
    child_schemas = [_treespec_to_json(child) for child in treespec._children]
    return _TreeSpecSchema(serialized_type_name, serialized_context, child_schemas)


def _json_to_treespec(json_schema):
    if json_schema["type"] is None and json_schema["context"] is None and len(json_schema["children_spec"]) == 0:
        return _LEAF_SPEC
    if json_schema["type"] not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Deserializing {json_schema['type']} in pytree is not registered.")
    typ = SERIALIZED_TYPE_TO_PYTHON_TYPE[json_schema["type"]]
    serialize_node_def = SUPPORTED_SERIALIZED_TYPES[typ]
    if serialize_node_def.from_dumpable_context is None:
        try:
            context = json.loads(json_schema["context"], object_hook=enum_object_hook)
        except TypeError as ex:
            raise TypeError("Unable to deserialize context. Please make the context json load-able, or register "
                            "a custom serializer using _register_pytree_node.") from ex
    else:
        context = serialize_node_def.from_dumpable_context(json_schema["context"])
    children_specs = [_json_to_treespec(child) for child in json_schema["children_spec"]]
    return TreeSpec(typ, context, children_specs)


_SUPPORTED_PROTOCOLS = {1: _ProtocolFn(_treespec_to_json, _json_to_treespec)}


def treespec_dumps(treespec, protocol=None):
    """Return `treespec` as PyTorch's JSON text: `[protocol, {"type": ..., "context": ..., "children_spec": [...]}]`."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type {type(treespec)}.")
    if protocol is None:
        protocol = DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL
    if protocol not in _SUPPORTED_PROTOCOLS:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: {list(_SUPPORTED_PROTOCOLS.keys())}")
    json_spec = _SUPPORTED_PROTOCOLS[protocol].treespec_to_json(treespec)
    return json.dumps((protocol, dataclasses.asdict(json_spec)), cls=EnumEncoder)


@functools.lru_cache
def treespec_loads(serialized):
    """Return the TreeSpec that treespec_dumps wrote as `serialized`."""
    protocol, json_schema = json.loads(serialized)
    if protocol in _SUPPORTED_PROTOCOLS:
        return _SUPPORTED_PROTOCOLS[protocol].json_to_treespec(json_schema)
    raise ValueError(f"Unknown protocol {protocol}. Available protocols: {list(_SUPPORTED_PROTOCOLS.keys())}")


class _Asterisk(str):
    __slots__ = ()

    def __new__(cls):
        return super().__new__(cls, "*")

    def __repr__(self):
        return "*"  # no quotes


_asterisk = _Asterisk()


def treespec_pprint(treespec):
    """Return the spec printed as the pytree it describes, each leaf a `*`: `{'a': [*, (*, *)]}`."""
    return repr(tree_unflatten([_asterisk] * treespec.num_leaves, treespec))


def pytree_to_str(treespec):
    """Deprecated spelling of treespec_dumps."""
    warnings.warn("`pytree_to_str` is deprecated. Please use `treespec_dumps` instead.", FutureWarning, stacklevel=2)
    return treespec_dumps(treespec)


def str_to_pytree(json):  # noqa: A002 (torch's parameter name)
    """Deprecated spelling of treespec_loads."""
    warnings.warn("`str_to_pytree` is deprecated. Please use `treespec_loads` instead.", FutureWarning, stacklevel=2)
    return treespec_loads(json)


# the built-in node types' serialized names, as torch registers them
for _t, _name, _to, _from in (
        (tuple, "builtins.tuple", None, None), (list, "builtins.list", None, None),
        (dict, "builtins.dict", None, None),
        (namedtuple, "collections.namedtuple", _namedtuple_serialize, _namedtuple_deserialize),
        (OrderedDict, "collections.OrderedDict", None, None),
        (defaultdict, "collections.defaultdict", _defaultdict_serialize, _defaultdict_deserialize),
        (deque, "collections.deque", None, None)):
    SUPPORTED_SERIALIZED_TYPES[_t] = _SerializeNodeDef(_t, _name, _to, _from)
    SERIALIZED_TYPE_TO_PYTHON_TYPE[_name] = _t
del _t, _name, _to, _from
