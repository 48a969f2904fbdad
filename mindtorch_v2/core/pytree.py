"""Pytrees, as jax.tree_util: tuples, lists, dicts (sorted keys), None, namedtuples and the node types
registered with `register_pytree_node` / `register_pytree_with_keys`; everything else is a leaf.

Key paths name where a leaf sits: `tree_flatten_with_path({"a": [1, 2]})` gives
`[((MappingKey('a'), SequenceKey(0)), 1), ((MappingKey('a'), SequenceKey(1)), 2)]`, and
`keystr(path)` prints `['a'][1]`. A registered type names its children with its flatten_with_keys
function; without one its children are `FlattenedIndexKey(i)`, as in JAX.

The registry is shared with the torch face (`torch.utils._pytree`), which walks trees with torch's rules
(None a leaf, dicts in insertion order) but finds user node types here, so a class registered there is a
node for `vmap`/`grad` too, and the other way round. The key classes are torch's (`MappingKey` is what
JAX calls `DictKey`), so both faces print and compare the same paths.
"""
import dataclasses
import types
from typing import Any, NamedTuple, Protocol

__all__ = [
    "register_pytree_node", "register_pytree_with_keys", "unregister_pytree_node", "registered_node",
    "registered_types", "NodeDef", "is_namedtuple_type", "TreeDef", "tree_flatten", "tree_unflatten",
    "tree_leaves", "tree_structure", "tree_map", "node_children", "KeyEntry", "KeyPath", "SequenceKey",
    "MappingKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "tree_flatten_with_path",
    "tree_leaves_with_path", "tree_map_with_path", "keystr", "key_get",
]


# ---------------------------------------------------------------------------
# keys: one step of a path from a root to a leaf


class KeyEntry(Protocol):
    """One step of a key path: hashable, printable, and `get(parent)` returns the child it names."""

    def __hash__(self) -> int: ...

    def __eq__(self, other: object) -> bool: ...

    def __str__(self) -> str: ...

    def get(self, parent: Any) -> Any: ...


KeyPath = tuple[KeyEntry, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    """The child at index `idx` of a tuple, list or other sequence; printed `[0]`."""
    idx: int
    __class_getitem__ = classmethod(types.GenericAlias)

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True, slots=True)
class MappingKey:
    """The value under `key` of a dict or other mapping; printed `['a']`."""
    key: Any
    __class_getitem__ = classmethod(types.GenericAlias)

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


DictKey = MappingKey  # jax.tree_util's name


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """The attribute `name` of an object (a namedtuple field, a dataclass field); printed `.name`."""
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


@dataclasses.dataclass(frozen=True, slots=True)
class FlattenedIndexKey:
    """Child `key` of a registered node that names no keys of its own; printed `[<flat index 0>]`."""
    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"

    def get(self, node):
        flatten_fn = _registry[type(node)].flatten_fn
        return list(flatten_fn(node)[0])[self.key]


def keystr(kp):
    """Return the key path `kp` printed, e.g. `['a'][0].x`."""
    return "".join([str(k) for k in kp])


def key_get(obj, kp):
    """Return the value at key path `kp` inside `obj`."""
    for k in kp:
        obj = k.get(obj)
    return obj


# ---------------------------------------------------------------------------
# the registry


class NodeDef(NamedTuple):
    """A registered node type's functions, in jax.tree_util's argument order."""
    flatten_fn: Any           # x -> (children, aux)
    unflatten_fn: Any         # (aux, children) -> x
    flatten_with_keys_fn: Any  # x -> ([(key, child), ...], aux), or None


_registry = {}


def register_pytree_node(nodetype, flatten_fn, unflatten_fn, flatten_with_keys_fn=None):
    """Make `nodetype` a pytree node: flatten_fn(x) -> (children, aux); unflatten_fn(aux, children) -> x;
    optional flatten_with_keys_fn(x) -> ([(key, child), ...], aux) names the children in key paths."""
    if nodetype in _registry or nodetype in (tuple, list, dict, type(None)):
        raise ValueError(f"{nodetype} is already registered as pytree node.")
    _registry[nodetype] = NodeDef(flatten_fn, unflatten_fn, flatten_with_keys_fn)


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """Register `nodetype` from its flatten_with_keys function (jax.tree_util.register_pytree_with_keys)."""
    if flatten_func is None:
        def flatten_func(x):
            key_children, aux = flatten_with_keys(x)
            return [c for _, c in key_children], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def unregister_pytree_node(nodetype):
    """Make `nodetype` a leaf again; ValueError if it is not a registered node type."""
    if _registry.pop(nodetype, None) is None:
        raise ValueError(f"{nodetype} is not a registered pytree node.")


def registered_node(nodetype):
    """Return the NodeDef registered for `nodetype`, or None."""
    return _registry.get(nodetype)


def registered_types():
    """Return the registered node types, in registration order."""
    return tuple(_registry)


def is_namedtuple_type(t):
    """Return True for a class made by collections.namedtuple (a tuple subclass with _fields)."""
    return issubclass(t, tuple) and hasattr(t, "_fields") and hasattr(t, "_make")


# ---------------------------------------------------------------------------
# flatten / unflatten


class TreeDef:
    __slots__ = ("kind", "meta", "children", "_hash")

    def __init__(self, kind, meta, children):
        self.kind = kind          # "leaf", "none", tuple, list, dict, a namedtuple or registered type
        self.meta = meta          # dict keys, or a registered type's aux data
        self.children = children  # child TreeDefs
        self._hash = None

    def __eq__(self, other):
        return self is other or (type(other) is TreeDef and self.kind == other.kind and self.meta == other.meta
                                 and self.children == other.children)

    def __hash__(self):
        h = self._hash
        if h is None:
            h = self._hash = hash((self.kind, self.meta, tuple(self.children)))
        return h

    @property
    def num_leaves(self):
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def __repr__(self):
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(repr(c) for c in self.children)
        if self.kind not in (tuple, list, dict):
            return f"{self.kind.__name__}({inner})"
        if self.kind is dict:
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.meta, self.children))
            return "{" + inner + "}"
        return ("[%s]" if self.kind is list else "(%s)") % inner


_LEAF = TreeDef("leaf", None, ())
_NONE = TreeDef("none", None, ())


def tree_flatten(tree, is_leaf=None):
    """Return (leaves, treedef); a subtree for which is_leaf(subtree) is true is one leaf."""
    leaves = []
    return leaves, _flatten(tree, leaves, is_leaf)


_INTERNED = {}  # (kind, meta, children) -> the one TreeDef of that structure


def _node(kind, meta, children):
    """The TreeDef of this structure, one object per structure: a cache keyed by a tree (jit's) then finds
    the same object again, compared by identity and hashed once, not walked node by node every call."""
    key = (kind, meta, children)
    try:
        return _INTERNED[key]
    except KeyError:
        if len(_INTERNED) >= 8192:
            _INTERNED.clear()
        node = _INTERNED[key] = TreeDef(kind, meta, children)
        return node
    except TypeError:  # unhashable aux data of a registered type
        return TreeDef(kind, meta, children)


def _flatten(x, leaves, is_leaf):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    t = type(x)
    if t is tuple or t is list:
        return _node(t, None, tuple([_flatten(c, leaves, is_leaf) for c in x]))
    if t is dict:
        keys = tuple(sorted(x))
        return _node(dict, keys, tuple([_flatten(x[k], leaves, is_leaf) for k in keys]))
    if x is None:
        return _NONE
    node = _registry.get(t)
    if node is not None:
        children, aux = node.flatten_fn(x)
        return _node(t, aux, tuple([_flatten(c, leaves, is_leaf) for c in children]))
    if t is not str and issubclass(t, tuple) and is_namedtuple_type(t):
        return _node(t, None, tuple([_flatten(c, leaves, is_leaf) for c in x]))
    leaves.append(x)
    return _LEAF


def _key_children(x):
    """[(key, child), ...] of node x, or None for a leaf (the key-path twin of node_children)."""
    t = type(x)
    if t is tuple or t is list:
        return [(SequenceKey(i), c) for i, c in enumerate(x)]
    if t is dict:
        return [(MappingKey(k), x[k]) for k in sorted(x)]
    if x is None:
        return []
    node = _registry.get(t)
    if node is not None:
        if node.flatten_with_keys_fn is not None:
            return list(node.flatten_with_keys_fn(x)[0])
        return [(FlattenedIndexKey(i), c) for i, c in enumerate(node.flatten_fn(x)[0])]
    if issubclass(t, tuple) and is_namedtuple_type(t):
        return [(GetAttrKey(f), c) for f, c in zip(t._fields, x)]
    return None


def node_children(x):
    """Return the children of pytree node x (dict values in sorted-key order, [] for None), or None for a leaf."""
    t = type(x)
    if t is tuple or t is list:
        return list(x)
    if t is dict:
        return [x[k] for k in sorted(x)]
    if x is None:
        return []
    node = _registry.get(t)
    if node is not None:
        return list(node.flatten_fn(x)[0])
    if issubclass(t, tuple) and is_namedtuple_type(t):
        return list(x)
    return None


def tree_unflatten(treedef, leaves):
    """Return the pytree of structure `treedef` holding `leaves`."""
    it = iter(leaves)
    out = _unflatten(treedef, it)
    return out


def _unflatten(td, it):
    if td.kind == "leaf":
        return next(it)
    if td.kind == "none":
        return None
    kids = [_unflatten(c, it) for c in td.children]
    if td.kind is dict:
        return dict(zip(td.meta, kids))
    if td.kind is tuple or td.kind is list:
        return td.kind(kids)
    node = _registry.get(td.kind)
    if node is not None:
        return node.unflatten_fn(td.meta, kids)
    return td.kind(*kids)  # a namedtuple


def tree_map(fn, tree, *rest, is_leaf=None):
    """Return a tree of tree's structure holding fn(leaf, *matching leaves of rest)."""
    leaves, td = tree_flatten(tree, is_leaf)
    others = []
    for r in rest:
        rl, rtd = tree_flatten(r, is_leaf)
        if rtd != td:
            raise ValueError(f"pytree structures differ: {td} and {rtd}")
        others.append(rl)
    return tree_unflatten(td, [fn(*xs) for xs in zip(leaves, *others)])


def tree_leaves(tree, is_leaf=None):
    """Return the leaves of `tree` in flattening order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    """Return the TreeDef of `tree`."""
    return tree_flatten(tree, is_leaf)[1]


# ---------------------------------------------------------------------------
# key paths


def tree_flatten_with_path(tree, is_leaf=None):
    """Return ([(key path, leaf), ...], treedef), the leaves in tree_flatten's order."""
    return tree_leaves_with_path(tree, is_leaf), tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree, is_leaf=None):
    """Return [(key path, leaf), ...] in tree_flatten's order."""
    out = []
    _with_path((), tree, is_leaf, out)
    return out


def _with_path(path, x, is_leaf, out):
    kids = None if is_leaf is not None and is_leaf(x) else _key_children(x)
    if kids is None:
        out.append((path, x))
        return
    for k, c in kids:
        _with_path((*path, k), c, is_leaf, out)


def tree_map_with_path(fn, tree, *rest, is_leaf=None):
    """Return a tree of tree's structure holding fn(key path, leaf, *matching leaves of rest)."""
    path_leaves, td = tree_flatten_with_path(tree, is_leaf)
    others = []
    for r in rest:
        rl, rtd = tree_flatten(r, is_leaf)
        if rtd != td:
            raise ValueError(f"pytree structures differ: {td} and {rtd}")
        others.append(rl)
    return tree_unflatten(td, [fn(p, x, *xs) for (p, x), *xs in zip(path_leaves, *others)])
