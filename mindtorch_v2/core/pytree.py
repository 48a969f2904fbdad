"""Minimal pytrees: tuples, lists, dicts (sorted keys), None, namedtuples and the node types registered
with `register_pytree_node`; everything else is a leaf.

The registry is shared with the torch face (`torch.utils._pytree`), which walks trees with torch's rules
(None a leaf, dicts in insertion order) but finds user node types here, so a class registered there is a
node for `vmap`/`grad` too, and the other way round.
"""

# node type -> (flatten_fn(x) -> (children, aux), unflatten_fn(aux, children) -> x), as jax.tree_util
_registry = {}


def register_pytree_node(nodetype, flatten_fn, unflatten_fn):
    """Make `nodetype` a pytree node: flatten_fn(x) -> (children, aux); unflatten_fn(aux, children) -> x."""
    if nodetype in _registry or nodetype in (tuple, list, dict, type(None)):
        raise ValueError(f"{nodetype} is already registered as pytree node.")
    _registry[nodetype] = (flatten_fn, unflatten_fn)


def registered_node(nodetype):
    """Return the (flatten_fn, unflatten_fn) pair registered for `nodetype`, or None."""
    return _registry.get(nodetype)


def is_namedtuple_type(t):
    """Return True for a class made by collections.namedtuple (a tuple subclass with _fields)."""
    return issubclass(t, tuple) and hasattr(t, "_fields") and hasattr(t, "_make")


class TreeDef:
    __slots__ = ("kind", "meta", "children")

    def __init__(self, kind, meta, children):
        self.kind = kind          # "leaf", "none", tuple, list, dict, a namedtuple or registered type
        self.meta = meta          # dict keys, or a registered type's aux data
        self.children = children  # child TreeDefs

    def __eq__(self, other):
        return (type(other) is TreeDef and self.kind == other.kind and self.meta == other.meta
                and self.children == other.children)

    def __hash__(self):
        return hash((self.kind, self.meta, tuple(self.children)))

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


def tree_flatten(tree):
    """Return (leaves, treedef)."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(x, leaves):
    t = type(x)
    if t is tuple or t is list:
        return TreeDef(t, None, tuple(_flatten(c, leaves) for c in x))
    if t is dict:
        keys = tuple(sorted(x))
        return TreeDef(dict, keys, tuple(_flatten(x[k], leaves) for k in keys))
    if x is None:
        return _NONE
    node = _registry.get(t)
    if node is not None:
        children, aux = node[0](x)
        return TreeDef(t, aux, tuple(_flatten(c, leaves) for c in children))
    if t is not str and issubclass(t, tuple) and is_namedtuple_type(t):
        return TreeDef(t, None, tuple(_flatten(c, leaves) for c in x))
    leaves.append(x)
    return _LEAF


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
        return list(node[0](x)[0])
    if issubclass(t, tuple) and is_namedtuple_type(t):
        return list(x)
    return None


def tree_unflatten(treedef, leaves):
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
        return node[1](td.meta, kids)
    return td.kind(*kids)  # a namedtuple


def tree_map(fn, tree, *rest):
    leaves, td = tree_flatten(tree)
    others = []
    for r in rest:
        rl, rtd = tree_flatten(r)
        if rtd != td:
            raise ValueError(f"pytree structures differ: {td} and {rtd}")
        others.append(rl)
    return tree_unflatten(td, [fn(*xs) for xs in zip(leaves, *others)])


def tree_leaves(tree):
    return tree_flatten(tree)[0]
