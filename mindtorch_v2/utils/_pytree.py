"""torch.utils._pytree: flatten and rebuild nested containers with torch's rules.

torch's rules differ from the core's (jax.tree_util's) in two ways, both kept here: None is a leaf,
and dicts keep insertion order (the TreeSpec context is the key list). User node types share the core's
registry (`core.pytree.register_pytree_node`): a class registered here is a node for `torch.func.vmap`
and `grad` too. Built-in nodes: tuple, list, dict, namedtuples (torch.return_types included),
OrderedDict, defaultdict, deque.
"""
import collections
import dataclasses

from ..core import pytree as _core_pytree

__all__ = [
    "TreeSpec", "LeafSpec", "register_pytree_node", "tree_flatten", "tree_unflatten", "tree_leaves",
    "tree_structure", "tree_map", "tree_map_", "tree_map_only", "tree_map_only_", "tree_any", "tree_all",
    "tree_any_only", "tree_all_only", "tree_iter", "is_namedtuple", "SUPPORTED_NODES",
    "MappingKey", "SequenceKey", "GetAttrKey", "tree_flatten_with_path", "tree_leaves_with_path", "keystr",
]


def _namedtuple_flatten(x):
    return list(x), type(x)


def _dict_flatten(x):
    return list(x.values()), list(x.keys())


# type -> (flatten_fn(x) -> (children, context), unflatten_fn(children, context)), torch's argument order
_BUILTIN = {
    tuple: (lambda x: (list(x), None), lambda ch, ctx: tuple(ch)),
    list: (lambda x: (list(x), None), lambda ch, ctx: list(ch)),
    dict: (_dict_flatten, lambda ch, ctx: dict(zip(ctx, ch))),
    collections.OrderedDict: (_dict_flatten, lambda ch, ctx: collections.OrderedDict(zip(ctx, ch))),
    collections.defaultdict: (lambda x: (list(x.values()), [x.default_factory, list(x.keys())]),
                              lambda ch, ctx: collections.defaultdict(ctx[0], zip(ctx[1], ch))),
    collections.deque: (lambda x: (list(x), x.maxlen), lambda ch, ctx: collections.deque(ch, maxlen=ctx)),
}
_NAMEDTUPLE = (_namedtuple_flatten, lambda ch, ctx: ctx(*ch))

# the registered types as torch lists them (`SUPPORTED_NODES`); the core holds the functions
SUPPORTED_NODES = {t: None for t in _BUILTIN}


@dataclasses.dataclass(frozen=True, slots=True)
class MappingKey:
    """The key of a child in a mapping node, printed `['key']`."""
    key: object

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    """The index of a child in a sequence node, printed `[0]`."""
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """The attribute name of a child (a namedtuple field), printed `.name`."""
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def _seq_flatten_with_keys(flatten):
    def with_keys(x):
        children, context = flatten(x)
        return [(SequenceKey(i), c) for i, c in enumerate(children)], context
    return with_keys


def _dict_flatten_with_keys(d):
    values, context = _dict_flatten(d)
    return [(MappingKey(k), v) for k, v in zip(context, values)], context


def _defaultdict_flatten_with_keys(d):
    values, context = _BUILTIN[collections.defaultdict][0](d)
    return [(MappingKey(k), v) for k, v in zip(context[1], values)], context


def _namedtuple_flatten_with_keys(x):
    return [(GetAttrKey(f), v) for f, v in zip(type(x)._fields, x)], type(x)


# type -> flatten_with_keys_fn(x) -> ([(key, child), ...], context); user types add theirs when registering
_WITH_KEYS = {
    tuple: _seq_flatten_with_keys(_BUILTIN[tuple][0]), list: _seq_flatten_with_keys(_BUILTIN[list][0]),
    collections.deque: _seq_flatten_with_keys(_BUILTIN[collections.deque][0]),
    dict: _dict_flatten_with_keys, collections.OrderedDict: _dict_flatten_with_keys,
    collections.defaultdict: _defaultdict_flatten_with_keys,
}


def is_namedtuple(obj):
    """Return True if `obj` is a namedtuple instance or class."""
    t = obj if isinstance(obj, type) else type(obj)
    return _core_pytree.is_namedtuple_type(t)


def _node(t):
    """(flatten_fn, unflatten_fn) in torch's order for node type `t`, the name torch prints, or None."""
    fns = _BUILTIN.get(t)
    if fns is not None:
        return fns, t.__name__
    registered = _core_pytree.registered_node(t)
    if registered is not None:
        flatten, unflatten = registered
        return (flatten, lambda ch, ctx: unflatten(ctx, ch)), t.__name__
    if _core_pytree.is_namedtuple_type(t):
        return _NAMEDTUPLE, "namedtuple"
    return None


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """Register `cls` as a node: flatten_fn(x) -> (children, context); unflatten_fn(children, context) -> x."""
    if cls in _BUILTIN:
        raise ValueError(f"{cls} is already registered as pytree node.")
    _core_pytree.register_pytree_node(cls, flatten_fn, lambda ctx, ch: unflatten_fn(ch, ctx))
    SUPPORTED_NODES[cls] = serialized_type_name
    if flatten_with_keys_fn is not None:
        _WITH_KEYS[cls] = flatten_with_keys_fn


class TreeSpec:
    """The structure of a pytree: node type, its context (dict keys, ...) and the children's specs."""

    def __init__(self, type, context, children_specs):  # noqa: A002 (torch's parameter name)
        self.type = type
        self.context = context
        self._children = list(children_specs)
        self.num_leaves = 1 if type is None else sum(c.num_leaves for c in self._children)
        self.num_nodes = 1 + sum(c.num_nodes for c in self._children)
        self.num_children = len(self._children)

    def is_leaf(self):
        """Return True for the spec of a single leaf."""
        return self.type is None

    @property
    def children_specs(self):
        return list(self._children)

    def children(self):
        """Return the children's specs."""
        return list(self._children)

    def child(self, index):
        """Return the spec of child `index`."""
        return self._children[index]

    def unflatten(self, leaves):
        """Rebuild the pytree from `leaves`."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers "
                             f"to a pytree that holds {self.num_leaves} items ({self}).")
        return _unflatten(self, iter(leaves))

    def flatten_up_to(self, tree):
        """Return the subtrees of `tree` at this spec's leaves (tree must have this spec's structure above them)."""
        out = []
        _flatten_up_to(self, tree, out)
        return out

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.type == other.type and self.context == other.context
                and self._children == other._children)

    def __hash__(self):
        return hash((self.type, repr(self.context), tuple(self._children)))

    def __repr__(self, indent=0):
        if self.is_leaf():
            return "*"
        name = _node(self.type)[1] if _node(self.type) else self.type.__name__
        pad = " " * (indent + 2)
        kids = [c.__repr__(indent + 2) for c in self._children]
        body = (",\n" + pad).join(kids)
        return f"TreeSpec({name}, {self.context}, [{body}])"


class LeafSpec(TreeSpec):
    """The spec of a single leaf, printed `*`."""

    def __init__(self):
        super().__init__(None, None, [])


_LEAF = LeafSpec()


def _is_leaf(x, is_leaf):
    return (is_leaf is not None and is_leaf(x)) or _node(type(x)) is None


def _flatten(x, leaves, is_leaf):
    if _is_leaf(x, is_leaf):
        leaves.append(x)
        return _LEAF
    (flatten, _), _ = _node(type(x))
    children, context = flatten(x)
    return TreeSpec(type(x), context, [_flatten(c, leaves, is_leaf) for c in children])


def _unflatten(spec, it):
    if spec.is_leaf():
        return next(it)
    (_, unflatten), _ = _node(spec.type)
    return unflatten([_unflatten(c, it) for c in spec._children], spec.context)


def _flatten_up_to(spec, tree, out):
    if spec.is_leaf():
        out.append(tree)
        return
    if type(tree) is not spec.type:
        raise ValueError(f"Node type mismatch; expected {spec.type}, but got {type(tree)}.")
    (flatten, _), _ = _node(spec.type)
    children, context = flatten(tree)
    if len(children) != spec.num_children:
        raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got {len(children)}.")
    if spec.type in (dict, collections.OrderedDict, collections.defaultdict):
        keys = context if spec.type is not collections.defaultdict else context[1]
        want = spec.context if spec.type is not collections.defaultdict else spec.context[1]
        if set(keys) != set(want):
            raise ValueError(f"Node keys mismatch; expected {want}, but got {keys}.")
        children = [tree[k] for k in want]
    elif context != spec.context:
        raise ValueError(f"Node context mismatch for custom node type {spec.type}.")
    for c, s in zip(children, spec._children):
        _flatten_up_to(s, c, out)


def tree_flatten(tree, is_leaf=None):
    """Return (leaves, treespec) of `tree`."""
    leaves = []
    return leaves, _flatten(tree, leaves, is_leaf)


def tree_unflatten(leaves, treespec):
    """Return the pytree with structure `treespec` holding `leaves`."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of TreeSpec "
                        f"but got item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_leaves(tree, is_leaf=None):
    """Return the leaves of `tree`, in flattening order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_iter(tree, is_leaf=None):
    """Return an iterator over the leaves of `tree`."""
    return iter(tree_leaves(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    """Return the TreeSpec of `tree`."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """Return a pytree of tree's structure with func applied to the leaves (and the matching leaves of rests)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(leaves, *others))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Apply func to the leaves for its side effects; return `tree`."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def _predicate(type_or_types_or_pred):
    if isinstance(type_or_types_or_pred, type) or (isinstance(type_or_types_or_pred, tuple) and all(
            isinstance(t, type) for t in type_or_types_or_pred)) or type(type_or_types_or_pred).__name__ == "UnionType":
        return lambda x: isinstance(x, type_or_types_or_pred)
    if callable(type_or_types_or_pred):
        return type_or_types_or_pred
    raise TypeError("Argument must be a type, a tuple of types, or a callable.")


def _only(pred, func):
    return lambda x: func(x) if pred(x) else x


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """tree_map applying func only to the leaves of the given type(s) (or passing the predicate)."""
    return tree_map(_only(_predicate(type_or_types_or_pred), func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """tree_map_ applying func only to the leaves of the given type(s); return `tree`."""
    return tree_map_(_only(_predicate(type_or_types_or_pred), func), tree, is_leaf=is_leaf)


def tree_any(pred, tree, is_leaf=None):
    """Return True if pred holds for any leaf."""
    return any(pred(x) for x in tree_leaves(tree, is_leaf))


def tree_all(pred, tree, is_leaf=None):
    """Return True if pred holds for every leaf."""
    return all(pred(x) for x in tree_leaves(tree, is_leaf))


def tree_any_only(type_or_types, pred, tree, is_leaf=None):
    """Return True if pred holds for any leaf of the given type(s)."""
    match = _predicate(type_or_types)
    return any(pred(x) for x in tree_leaves(tree, is_leaf) if match(x))


def tree_all_only(type_or_types, pred, tree, is_leaf=None):
    """Return True if pred holds for every leaf of the given type(s)."""
    match = _predicate(type_or_types)
    return all(pred(x) for x in tree_leaves(tree, is_leaf) if match(x))



def _flatten_with_path(x, path, out, is_leaf):
    if _is_leaf(x, is_leaf):
        out.append((path, x))
        return
    t = type(x)
    with_keys = _WITH_KEYS.get(t)
    if with_keys is None and t not in _BUILTIN and _core_pytree.registered_node(t) is None:
        with_keys = _namedtuple_flatten_with_keys  # a namedtuple not registered by hand
    if with_keys is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {t}. Please pass a flatten_with_keys_fn "
                         f"argument to register_pytree_node.")
    keyed, _ = with_keys(x)
    for key, child in keyed:
        _flatten_with_path(child, path + (key,), out, is_leaf)


def tree_flatten_with_path(tree, is_leaf=None):
    """Return ([(key path, leaf), ...], treespec): each leaf with the keys that lead to it from the root."""
    out = []
    _flatten_with_path(tree, (), out, is_leaf)
    return out, tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree, is_leaf=None):
    """Return [(key path, leaf), ...] of `tree`, in flattening order."""
    return tree_flatten_with_path(tree, is_leaf)[0]


def keystr(kp):
    """The key path `kp` printed as a string (`['a'][0].b`)."""
    return "".join(str(k) for k in kp)
