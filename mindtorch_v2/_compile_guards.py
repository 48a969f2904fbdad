"""What a torch.compile'd call reads and the key its program is cached under (mindtorch_v2/_compile.py, step 1
and 2 of a call): the walk that finds the tensors, modules and optimizers a function reaches (`_Found`), the
remembered walk checked by identity on later calls (`_World`), and the guard key."""
import collections
import collections.abc
import dataclasses
import functools
import itertools
import operator
import os
import site
import sys
import types
import weakref

import numpy as np

from . import core
from .eager import autocast_state, grad_mode
from .eager.storage import BitcastStorage, DataStorage, Storage
from .eager.tensor import Tensor


class Wrapper:
    """An object the walk follows through to the function it wraps, `_fn` (a compiled function)."""

    __slots__ = ()


# discovery: the tensors, modules and optimizers a call reads


def _is_module(obj):
    d = getattr(obj, "__dict__", None)
    return d is not None and "_parameters" in d and "_modules" in d and "_buffers" in d


def _is_optimizer(obj):
    d = getattr(obj, "__dict__", None)
    return d is not None and "param_groups" in d and "state" in d and isinstance(d["param_groups"], list)


_SCALARS = (bool, int, float, complex, str, bytes, type(None))


class _Found:
    """What one call reads: tensors in discovery order (unique), modules and optimizers (for their flags and
    state), each leaf's .grad after the leaf. With a `log` (a _World being recorded), each container the walk
    reads is logged with what it read there, and grads are not followed (they change every step).

    `paths` holds, for each tensor the walk found (grads aside), where it was found: the attribute, key, index,
    closure cell or global at each step from the function or the arguments. The program reads its k-th input
    where the trace found the k-th tensor, so the paths are part of the guard key: two walks that find tensors
    of the same kinds in another order (a module attribute deleted and set again moves to the end of its
    __dict__) must not share a program."""

    __slots__ = ("tensors", "paths", "ids", "modules", "optimizers", "seen", "log", "values", "budget", "arrays",
                 "names", "pending", "iterators")

    def __init__(self, log=None):
        self.names = None  # with a set: the names the code reached uses (objects are read for those, `settle`)
        self.pending = []  # objects met, read once every function reached has added its names
        self.tensors = []
        self.paths = []
        self.arrays = []  # NumPy arrays met (values a trace bakes in: guarded by content, _World)
        self.values = None
        self.budget = _MAX_NODES  # objects left to walk; below 0, the walk stopped short (`too_big`)
        self.ids = set()
        self.modules = []
        self.optimizers = []
        self.seen = set()
        self.log = log
        self.iterators = False  # an iterator met (next(it) in the code: its position no guard can read)

    def tensor(self, t, path):
        if id(t) not in self.ids:
            self.paths.append(path)
            self.add((t,))
            a = t._acc
            if a is not None and (a.pre_hooks or a.hooks):  # a leaf's gradient hooks: what they read
                for i, hook in enumerate([*(a.pre_hooks or {}).values(), *(a.hooks or ())]):
                    self.walk(hook, 1, (*path, "hook", i))

    def add(self, ts):
        """Each new tensor of ts, and after a leaf its .grad (unless recording)."""
        ids, tensors, follow = self.ids, self.tensors, self.log is None
        for t in ts:
            if id(t) in ids:
                continue
            ids.add(id(t))
            tensors.append(t)
            if follow and t._rg and t._grad_fn is None:
                g = t._grad
                if g is not None:
                    self.add((g,))

    def walk(self, obj, depth=0, path=()):
        if isinstance(obj, Tensor):
            self.tensor(obj, path)
            return
        if type(obj) in _SCALARS:
            return
        if depth > _MAX_DEPTH:  # (deeper than the guards follow: the call runs eagerly, `too_big`)
            self.budget = -1
            return
        key = id(obj)
        if key in self.seen:
            return
        self.seen.add(key)
        self.budget -= 1
        if self.budget < 0:
            return
        if isinstance(obj, np.ndarray):
            self.arrays.append(obj)
        elif type(obj) in (list, tuple) or isinstance(obj, (list, tuple, collections.deque)):
            if self.log is not None and not isinstance(obj, tuple):  # (a tuple's items are fixed)
                self.log.append((tuple, obj, tuple(obj)))
            for i, v in enumerate(obj):
                self.walk(v, depth + 1, (*path, i))
        elif isinstance(obj, dict):
            if self.log is not None:
                self.log.append((_dict_items, obj, _dict_items(obj)))
            for k, v in obj.items():
                self.walk(v, depth + 1, (*path, _step(k)))
        elif _is_module(obj):
            self.module(obj, path, depth)
        elif _is_optimizer(obj):
            self.optimizer(obj, path)
        elif isinstance(obj, Wrapper):
            self.function(obj._fn, depth + 1, path)
        elif isinstance(obj, collections.abc.Iterator):  # (a list iterator, a generator, a DataLoader's)
            self.iterators = True
        elif _slots_dataclass(obj):  # its fields, as a plain object's attributes (read, not logged: an argument's)
            for f in dataclasses.fields(obj):
                self.walk(getattr(obj, f.name, None), depth + 1, (*path, f.name))
        elif isinstance(obj, (types.FunctionType, types.MethodType, functools.partial)):
            self.function(obj, depth + 1, path)
        elif isinstance(obj, (staticmethod, classmethod)):
            self.function(obj.__func__, depth + 1, path)
        elif _plain_object(obj):  # any other object (a config, a trainer, a holder of tensors)
            if self.names is None:  # an argument: all its attributes
                if self.log is not None:
                    self.log.append((_object_items, obj, _object_items(obj)))
                for k, v in obj.__dict__.items():
                    self.walk(v, depth + 1, (*path, k))
            else:  # reached by the function: the attributes its code names, once all names are in (settle)
                self.pending.append((obj, depth, path))

    def settle(self):
        """Read each object the walk met for the attributes that the code reached names (`trainer.model`,
        `cfg.scale`), as dynamo guards what the code reads: an attribute no code names (a step counter a
        trainer bumps every step) is not guarded, so it does not make every call a new trace. The methods
        the code names on an object (and properties) are walked first, so that their names count; an object
        is read again for names that turn up later, until none do."""
        done = []  # (obj, depth, path, the names read)
        while self.pending or any(len(names) < len(self.names) for *_, names in done):
            if self.pending:
                obj, depth, path = self.pending.pop(0)
                names = frozenset()
            else:
                k = next(i for i, entry in enumerate(done) if len(entry[3]) < len(self.names))
                obj, depth, path, names = done.pop(k)
            for name in [n for n in self.names if n not in names]:  # (the names may grow as methods are walked)
                code = _code_of(_stored(type(obj), name))
                # (not a dunder: `super().__init__()` in a library class names __init__, whose code the call
                # does not run: it would make every attribute __init__ sets, a step counter, a guard)
                if code is not None and not _dunder(name):
                    self.function(code, depth + 1, (*path, name))
            if not names and _users(type(obj)):  # (its class's methods and attributes, once)
                self.user_class(type(obj), depth, (*path, "__class__"))
            new = frozenset(self.names)
            d, cls = obj.__dict__, type(obj)
            present = tuple(sorted(n for n in new - names if (n in d or _stored(cls, n) is not _ABSENT)
                                   and not _dunder(n)))
            read = functools.partial(_object_attributes, names=present)
            if self.log is not None:
                self.log.append((read, obj, read(obj)))
            for name in present:
                self.walk(d[name] if name in d else _stored(cls, name), depth + 1, (*path, name))
            done.append((obj, depth, path, new))

    def module(self, m, path, depth):
        self.modules.append(m)
        if self.names is not None:  # (what its forward and other methods read of the objects it holds)
            self.names.update(_class_names(type(m)))
        if _users(type(m)):  # (what its forward reads besides the module: globals, closure cells, class attributes)
            self.user_class(type(m), depth, (*path, "__class__"))
        d = m.__dict__
        if self.log is not None:
            read = _module_reader(m)
            self.log.append((read, m, read(m)))
        for kind in ("_parameters", "_buffers"):
            for k, t in d[kind].items():
                if t is not None:
                    self.tensor(t, (*path, kind, k))
        for k, v in d.items():  # tensors kept as plain attributes (masks, tables)
            if isinstance(v, Tensor):
                self.tensor(v, (*path, k))
        for k, sub in d["_modules"].items():
            if sub is not None and id(sub) not in self.seen:
                self.seen.add(id(sub))
                self.module(sub, (*path, k), depth)
        # what else it holds: a plain list of layers or masks, a config, hooks (its dicts' items are part of
        # the module's own log entry, _module_reader)
        for k, v in d.items():
            if type(v) in _SCALARS or isinstance(v, Tensor) or k in _MODULE_DICTS:
                continue
            if type(v) in _DICTS:
                for k2, v2 in v.items():
                    self.walk(v2, depth + 1, (*path, k, _step(k2)))
            else:
                self.walk(v, depth + 1, (*path, k))

    def optimizer(self, opt, path):
        self.optimizers.append(opt)
        if self.log is not None:
            self.log.append((_optimizer_items, opt, _optimizer_items(opt)))
        ids, state = self.ids, opt.state
        for i, group in enumerate(opt.param_groups):
            for j, p in enumerate(group["params"]):
                if id(p) not in ids:  # (most were found through the module already)
                    self.tensor(p, (*path, "param_groups", i, j))
            for k, v in group.items():  # a tensor lr (or betas) a scheduler may update in place
                if isinstance(v, Tensor):
                    self.tensor(v, (*path, "param_groups", i, k))
        for i, group in enumerate(opt.param_groups):
            for j, p in enumerate(group["params"]):
                st = state.get(p)
                if st:
                    for k, v in st.items():
                        if isinstance(v, Tensor) and id(v) not in ids:
                            self.tensor(v, (*path, "state", i, j, _step(k)))

    def function(self, fn, depth, path):
        if isinstance(fn, functools.partial):
            self.walk(fn.func, depth, (*path, "func"))
            self.walk(fn.args, depth, (*path, "args"))
            self.walk(fn.keywords, depth, (*path, "keywords"))
            return
        if isinstance(fn, types.MethodType):
            self.walk(fn.__self__, depth, (*path, "__self__"))
            fn = fn.__func__
        if not isinstance(fn, types.FunctionType):
            return
        # a library function (installed, or this package's) is read for its defaults and closure cells (a
        # decorator's wrapper holds the user's function there), not its globals: the library's own state
        user = _users_code(fn.__code__)
        if self.names is not None and user:
            self.names.update(_names(fn.__code__))
        if self.log is not None:
            read = _function_items if user else _closure_items
            self.log.append((read, fn, read(fn)))
        if fn.__defaults__:  # (a tensor default is read as any other tensor the function reaches)
            self.walk(fn.__defaults__, depth, (*path, "__defaults__"))
        if fn.__kwdefaults__:
            self.walk(fn.__kwdefaults__, depth, (*path, "__kwdefaults__"))
        for i, cell in enumerate(fn.__closure__ or ()):
            try:
                self.walk(cell.cell_contents, depth, (*path, "cell", i))
            except ValueError:  # an empty cell
                pass
        if not user:
            return
        g = fn.__globals__
        names = _names(fn.__code__)
        for name in names:
            v = g.get(name)
            if v is None or type(v) in _SCALARS:
                continue
            if isinstance(v, (types.ModuleType, type)):
                if _users(v):  # a config module or class of the user's: the attributes the code names
                    self.namespace(v, names, depth, (*path, "global", name))
                continue
            self.walk(v, depth, (*path, "global", name))

    def user_class(self, cls, depth, path):
        """A class of the user's (a module's, one the code names): the functions defined in it and in its bases
        of the user's are walked (what forward, a static helper or a custom Function's backward reads: globals,
        closure cells, defaults), and the class attributes those functions name that these classes store (a
        class-level default read as `self.scale`)."""
        key = ("class", id(cls))
        if key in self.seen:
            return
        self.seen.add(key)
        own = [c for c in cls.__mro__ if _users(c)]
        names = set()
        if self.log is not None:  # (every class attribute: one set by the code, `type(self).last = t`, shows)
            for c in own:
                self.log.append((_class_items, c, _class_items(c)))
        for c in own:
            for k, v in vars(c).items():
                fn = _code_of(v)
                if fn is not None and _users_code(fn.__code__) and not _dunder(k):  # (not __init__: see settle)
                    names.update(_names(fn.__code__))
                    self.function(fn, depth + 1, (*path, k))
        stored = tuple(sorted(n for n in names if any(n in vars(c) for c in own) and _code_of(_stored(cls, n)) is None))
        if stored:
            read = functools.partial(_attributes, names=stored)
            if self.log is not None:
                self.log.append((read, cls, read(cls)))
            for name, v in zip(stored, read(cls)):
                if not isinstance(v, (types.ModuleType, type)):
                    self.walk(v, depth + 1, (*path, name))

    def namespace(self, obj, names, depth, path):
        """The attributes of a module or class that `names` (a code's names) name: what `cfg.scale` reads."""
        if isinstance(obj, type):
            self.user_class(obj, depth, path)
        if id(obj) in self.seen:
            return
        self.seen.add(id(obj))
        read = functools.partial(_attributes, names=names)
        if self.log is not None:
            self.log.append((read, obj, read(obj)))
        for name, v in zip(names, read(obj)):
            if v is not _ABSENT and not isinstance(v, (types.ModuleType, type)):
                self.walk(v, depth + 1, (*path, name))


@functools.lru_cache(maxsize=4096)
def _names(code):
    """The global and attribute names a code object and the code nested in it (comprehensions, lambdas,
    inner functions) use, and, where it calls getattr, hasattr, setattr, delattr or vars, the strings it holds
    that could be names (`getattr(cfg, "scale", 1.0)`)."""
    names = dict.fromkeys(code.co_names)
    by_string = not _BY_NAME.isdisjoint(code.co_names)  # (strings count where the code reads attributes by name)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names.update(dict.fromkeys(_names(c)))
        elif by_string and type(c) is str and c.isidentifier():
            names[c] = None
    return tuple(names)


_BY_NAME = frozenset(("getattr", "hasattr", "setattr", "delattr", "vars"))  # (not dict keys: batch["step"])


_ABSENT = object()


@functools.lru_cache(maxsize=1024)
def _class_names(cls):
    """The names the methods (and properties) a class and its bases define use."""
    names = {}
    for c in cls.__mro__:
        for v in vars(c).values():
            code = _code_of(v)
            if code is not None:
                names.update(dict.fromkeys(_names(code.__code__)))
    return tuple(names)


def _dunder(name):
    return name.startswith("__") and name.endswith("__")


def _stored(cls, name):
    """A class's attribute as stored in it or a base (no descriptor runs), or _ABSENT."""
    return next((vars(c)[name] for c in cls.__mro__ if name in vars(c)), _ABSENT)


def _code_of(attr):
    """The function behind a method, static or class method, or property getter stored on a class (None for
    anything else)."""
    if isinstance(attr, (staticmethod, classmethod)):
        attr = attr.__func__
    elif isinstance(attr, property):
        attr = attr.fget
    return attr if isinstance(attr, types.FunctionType) else None


def _object_attributes(obj, names):
    """An object's class and attribute names (one set later, or deleted, shows), and for each of `names` its
    instance attribute or else its class attribute as stored."""
    d, cls = obj.__dict__, type(obj)
    return (cls, *d, *[d[n] if n in d else _stored(cls, n) for n in names])


def _attributes(obj, names):
    """obj's attributes of these names as stored (a module's dict, a class's and its bases' dicts): no
    descriptor runs, so a classmethod reads as the same object every call, never a new bound method."""
    if isinstance(obj, types.ModuleType):
        d = vars(obj)
        return tuple([d.get(n, _ABSENT) for n in names])
    return tuple([_stored(obj, n) for n in names])


@functools.lru_cache(maxsize=4096)
def _users_code(code):
    """Whether a function's code is the user's own (defined outside the Python installation, its
    site-packages and this package)."""
    return not code.co_filename.startswith(_LIBRARY_DIRS)


def _users(namespace):
    """Whether a module or class is the user's own: defined in a file outside the Python installation and
    its site-packages, and outside this package (whose modules a walk would otherwise read name by name)."""
    module = namespace if isinstance(namespace, types.ModuleType) else sys.modules.get(namespace.__module__)
    f = getattr(module, "__file__", None)
    return bool(f) and not f.startswith(_LIBRARY_DIRS)


def _step(key):
    """A dict key as a step of a path: itself if a str or int, else its identity (a key compared with == could
    be a Tensor, whose == is elementwise)."""
    return key if type(key) is str or type(key) is int else ("id", _Ref(key))


# What the walk reads of each container, as a tuple compared item by item with `is` (_World.holds).

def _dict_items(d):
    return (*d, *d.values())


def _object_items(obj):
    d = obj.__dict__
    return (type(obj), *d, *d.values())


_DICTS = (dict, collections.OrderedDict)
_MODULE_DICTS = frozenset(("_parameters", "_buffers", "_modules"))  # (walked by Found.module itself)
_MAX_NODES = 20000
_MAX_DEPTH = 32  # containers and functions nested deeper than this: the call runs eagerly (too_big)
_LIBRARY_DIRS = tuple({os.path.dirname(__file__) + os.sep, sys.prefix, sys.base_prefix, sys.exec_prefix,
                       *site.getsitepackages(), site.getusersitepackages()})
_MAX_ARRAY_BYTES = 1 << 20


def _module_reader(m):
    """What the walk reads of a module, as a function of the module: its class, its attributes with their
    names, and the items of those that are dicts (its parameters, buffers, submodules, hooks), where the dicts
    empty now (most hooks) are read together as one truth value. Made once per layout of a module's __dict__, as
    straight-line code: a loop over a Linear's twelve dicts read them in 3 us, this in 1."""
    layout = tuple([(k, not v) for k, v in m.__dict__.items() if type(v) in _DICTS])
    read = _READERS.get(layout)
    if read is None:
        full = [k for k, empty in layout if not empty]
        parts = ["*d", "*d.values()", *[f"*d[{k!r}], *d[{k!r}].values()" for k in full]]
        empty = [f"d[{k!r}]" for k, e in layout if e]
        if empty:
            parts.append(f"bool({' or '.join(empty)})")
        namespace = {}
        exec(f"def read(m):\n    d = m.__dict__\n    return (type(m), {', '.join(parts)},)\n", namespace)  # noqa: S102
        read = _READERS[layout] = namespace["read"]
    return read


_READERS = {}


def _optimizer_items(opt):
    """An optimizer's param_groups and their params lists, its state dict and each parameter's state."""
    groups, state = opt.param_groups, opt.state
    params = [g["params"] for g in groups]
    every = (*_chain(params),)
    states = (*map(state.get, every),)
    return (groups, state, *groups, *params, *every, *states, *_chain(map(dict.values, filter(None, states))))


_chain = itertools.chain.from_iterable
_EMPTY_CELL = object()


def _closure_items(fn):
    """A library function's code, default argument values and closure cells' contents."""
    cells = fn.__closure__ or ()
    try:
        contents = [c.cell_contents for c in cells]
    except ValueError:  # an empty cell
        contents = [_cell(c) for c in cells]
    return (fn.__code__, fn.__defaults__, fn.__kwdefaults__, *contents)


def _function_items(fn):
    """A function's code, its default argument values, its closure cells' contents and the globals its code
    names."""
    return (*_closure_items(fn), *map(fn.__globals__.get, _names(fn.__code__)))


def _cell(c):
    try:
        return c.cell_contents
    except ValueError:
        return _EMPTY_CELL


class _World:
    """What a compiled function reaches by itself (closure cells, the globals its code names, a bound method's
    self): the tensors, modules and optimizers one walk found there, and what it read of each container on the
    way. A walk's result depends on nothing else, so while every container still holds the same objects
    (`holds`, compared with `is`) a new walk would find the same: later calls check that instead of walking
    (the walk of a GPT's 20 modules and AdamW cost ~170 us a step in a training loop). Grads are not part of
    it: they change every step and are read per call.

    `values` is what the walk read besides tensors, for the guard key (_value_key): a trace bakes in the Python
    numbers, strings and objects the function reads (a global scale, a module's `self.k`, `self.act = F.relu`),
    so a program is only reused where they are the same. With args (a call whose arguments hold modules or
    optimizers: walked anew each call), the arguments are walked first, and `paths` holds their part and the
    function's apart."""

    __slots__ = ("tensors", "paths", "modules", "optimizers", "log", "state_key", "values", "too_big", "arrays",
                 "iterators")

    def __init__(self, fn, args=(), kwargs=None):
        self.log = []
        found = _Found(self.log)
        found.walk(args)
        if kwargs:
            found.walk(kwargs, 0, ("kwargs",))
        n_args = len(found.paths)
        found.names = set()
        found.walk(fn, 1)
        found.settle()
        self.tensors, self.modules, self.optimizers = found.tensors, found.modules, found.optimizers
        self.iterators = found.iterators
        self.paths = (tuple(found.paths[:n_args]), tuple(found.paths[n_args:]))
        # NumPy arrays are read by content (a trace bakes them in as constants; one changed in place must not
        # reuse the program): up to _MAX_ARRAY_BYTES in all, more is more than a call should compare
        self.too_big = found.budget < 0 or sum(a.nbytes for a in found.arrays) > _MAX_ARRAY_BYTES
        if self.too_big:  # (the call runs eagerly: nothing to key)
            self.arrays, self.values = [], ()
        else:
            self.arrays = [(a, a.shape, a.dtype, a.tobytes()) for a in found.arrays]
            self.values = (*[_value_key(saved) for _, _, saved in self.log], *[x[1:] for x in self.arrays])
        # the optimizer state's part of the guard key is fixed while the state dicts hold the same objects,
        # if none of them is a mutable non-tensor (a list a step appends to); else it is read per call
        fixed = all(isinstance(v, Tensor) or type(v) in _SCALARS
                    for opt in self.optimizers for st in opt.state.values() for v in st.values())
        self.state_key = _state_key(self.optimizers) if fixed else None

    def holds(self):
        is_ = operator.is_
        try:
            for read, obj, saved in self.log:
                now = read(obj)
                if len(now) != len(saved) or not all(map(is_, now, saved)):
                    return False
        except (KeyError, AttributeError, TypeError):  # a container lost what the walk read there
            return False
        for a, shape, dtype, data in self.arrays:
            if a.shape != shape or a.dtype != dtype or a.tobytes() != data:
                return False
        return True


class _Checkpoint:
    """The Python state a logged walk (_World's log) read, copied so that it can be put back: the items of
    each dict and list, the attributes of each object and module (and the items of a module's dicts), the
    optimizers' param_groups, the defaults, closure cells and named globals of each function, the named
    attributes of each namespace. A trace runs the user's Python code for real: when it changes that state
    (a counter, a list appended to, a scheduler's lr, a lazily created parameter), the call runs eagerly
    instead, and the trace's changes are undone first, so that they happen once."""

    __slots__ = ("_undo",)

    def __init__(self, log):
        self._undo = [_undo_of(read, obj) for read, obj, _ in log]

    def restore(self):
        """Put the state back; whether anything had changed (every attribute and item of what was read, named by
        the code or not: `setattr(stats, "k_" + str(n), t)` shows)."""
        changed = False
        for undo in reversed(self._undo):  # (outer containers last: they put back the inner ones' identities)
            changed |= bool(undo())
        return changed


def _undo_of(read, obj):
    """A function putting back what `read` reads of obj, as it is now."""
    if read is _dict_items:
        return functools.partial(_set_items, obj, dict(obj))
    if read is tuple:  # a list or deque
        return functools.partial(_set_sequence, obj, list(obj))
    if read is _object_items or getattr(read, "func", None) is _object_attributes:
        return functools.partial(_set_items, obj.__dict__, dict(obj.__dict__))
    if read in _READERS.values():  # a module: its attributes, and the items of those that are dicts
        d = obj.__dict__
        inner = [functools.partial(_set_items, v, dict(v)) for v in d.values() if type(v) in _DICTS]
        return functools.partial(_run_all, [functools.partial(_set_items, d, dict(d)), *inner])
    if read is _optimizer_items:
        groups = obj.param_groups
        parts = [functools.partial(_set_sequence, groups, list(groups))]
        parts += [functools.partial(_set_items, g, dict(g)) for g in groups]
        parts += [functools.partial(_set_sequence, g["params"], list(g["params"])) for g in groups
                  if type(g.get("params")) is list]
        return functools.partial(_run_all, parts)
    if read is _function_items or read is _closure_items:
        cells = [(c, _cell(c)) for c in obj.__closure__ or ()]
        named = {n: obj.__globals__.get(n, _ABSENT) for n in _names(obj.__code__)} if read is _function_items else {}
        return functools.partial(_set_function, obj, obj.__defaults__, obj.__kwdefaults__, cells, named)
    if read is _class_items:
        return functools.partial(_set_class, obj, dict(vars(obj)))
    if getattr(read, "func", None) is _attributes:
        names = read.keywords["names"]
        own = vars(obj)
        return functools.partial(_set_attributes, obj, {n: own.get(n, _ABSENT) for n in names})
    raise AssertionError(f"no undo for {read}")  # (every reader of the walk has one)


# Each setter puts back what it saved and says whether anything differed.

def _class_items(cls):
    d = vars(cls)
    return (*d, *d.values())


def _set_class(cls, items):
    d = vars(cls)
    changed = False
    for k in [k for k in d if k not in items]:
        delattr(cls, k)
        changed = True
    for k, v in items.items():
        if d.get(k, _ABSENT) is not v:
            setattr(cls, k, v)
            changed = True
    return changed


def _run_all(parts):
    return any([part() for part in parts])


def _set_items(d, items):
    if len(d) == len(items) and all(k in items and d[k] is items[k] for k in d):
        return False
    d.clear()
    d.update(items)
    return True


def _set_sequence(seq, items):
    if len(seq) == len(items) and all(a is b for a, b in zip(seq, items)):
        return False
    seq.clear()
    seq.extend(items)
    return True


def _set_function(fn, defaults, kwdefaults, cells, named):
    changed = fn.__defaults__ is not defaults or fn.__kwdefaults__ is not kwdefaults
    fn.__defaults__, fn.__kwdefaults__ = defaults, kwdefaults
    for c, v in cells:
        if v is not _EMPTY_CELL and _cell(c) is not v:
            c.cell_contents = v
            changed = True
    g = fn.__globals__
    for n, v in named.items():
        if v is _ABSENT:
            changed |= g.pop(n, _ABSENT) is not _ABSENT
        elif g.get(n, _ABSENT) is not v:
            g[n] = v
            changed = True
    return changed


def _set_attributes(obj, values):
    changed = False
    for n, v in values.items():
        if v is _ABSENT:
            if n in vars(obj):
                delattr(obj, n)
                changed = True
        elif vars(obj).get(n, _ABSENT) is not v:
            setattr(obj, n, v)
            changed = True
    return changed


def _hashable(v):
    try:
        hash(v)
        return v
    except TypeError:
        if isinstance(v, (list, tuple)):
            return tuple(_hashable(x) for x in v)
        if isinstance(v, dict):
            return tuple((k, _hashable(x)) for k, x in v.items())
        return (type(v), _Ref(v))


def _value_key(obj, depth=0):
    """A Python value as the guard key holds it (the call's arguments, what a walk read): scalars with their
    type (1, 1.0 and True differ), lists, tuples and dicts item by item (to the walk's depth), dtypes and
    devices as themselves, NumPy arrays by content, any other object as its type and identity. Tensors stand
    as their type: the key holds each found tensor's geometry and where it was found, and == on two tensors
    is elementwise."""
    t = type(obj)
    if t in _SCALARS:
        return (t, obj)
    if isinstance(obj, Tensor):
        return Tensor
    if depth < 6:
        if isinstance(obj, (list, tuple, collections.deque)):
            return (t, tuple([_value_key(v, depth + 1) for v in obj]))
        if isinstance(obj, dict):
            return (t, tuple([(_step(k), _value_key(v, depth + 1)) for k, v in obj.items()]))
    if isinstance(obj, (core.dtypes.DType, core.Device)):
        return obj
    if t is np.ndarray:  # (its contents: a trace bakes them in)
        return (t, obj.shape, obj.dtype.str, obj.tobytes())
    if depth < 6 and _plain_object(obj):  # (a dataclass batch: a new one each step, the same program)
        return (t, _value_key(obj.__dict__, depth + 1))
    if depth < 6 and _slots_dataclass(obj):
        return (t, tuple([(f.name, _value_key(getattr(obj, f.name, None), depth + 1))
                          for f in dataclasses.fields(obj)]))
    return (t, _Ref(obj))


def _slots_dataclass(obj):
    """A dataclass instance with __slots__ and no __dict__ (dataclass(slots=True)): read by its fields."""
    return dataclasses.is_dataclass(obj) and not isinstance(obj, type) and not hasattr(obj, "__dict__")


def _plain_object(obj):
    """An object whose attributes are what it is (a dataclass, a config, a trainer): one with a __dict__ that
    is no function, Python module, compiled function, nn.Module or optimizer (each of those the walk reads its
    own way; the guard key holds them by identity)."""
    return (type(getattr(obj, "__dict__", None)) is dict and not isinstance(obj, _NOT_PLAIN)
            and not _is_module(obj) and not _is_optimizer(obj))


_NOT_PLAIN = (types.ModuleType, types.FunctionType, types.MethodType, functools.partial, Wrapper)


class _Ref:
    """An object's identity in a guard key. Equal only to a _Ref of the same live object: an id alone can be
    taken by a new object once the old one is freed (a new batch object per step often lands at the last
    one's address), and a key holding only the id would then match it. Holds a weak reference where the
    object takes one, else the object."""

    __slots__ = ("_get", "_id")

    def __init__(self, obj):
        self._id = id(obj)
        try:
            self._get = weakref.ref(obj)
        except TypeError:
            self._get = functools.partial(_itself, obj)

    def __eq__(self, other):
        if type(other) is not _Ref or other._id != self._id:
            return False
        obj = self._get()
        return obj is not None and obj is other._get()

    def __hash__(self):
        return self._id


def _itself(obj):
    return obj


def _storage(t):
    st = t._storage
    while type(st) is DataStorage or type(st) is BitcastStorage:
        st = st.target
    return st


def _state_key(optimizers):
    return tuple(tuple(tuple((k, None if isinstance(v, Tensor) else _hashable(v)) for k, v in opt.state[p].items())
                       if p in opt.state else None
                       for g in opt.param_groups for p in g["params"])
                 for opt in optimizers)


def _guard_key(found, args, kwargs, state=None):
    """The key of this call's program, and the distinct storages (the program's inputs) in order.

    Per tensor: its class (a Parameter or not), its storage's kind, its geometry and requires_grad, whether it
    has a grad_fn, a .grad and a base, whether it is an inference tensor, and a leaf's gradient hooks; per distinct storage its value's type, shape, dtype and device, and
    (when two tensors share one) which storage each tensor reads; then the global modes (_modes), the
    arguments' Python values, the modules' training flags, the optimizers' param_groups and state, where each
    tensor was found (_Found.paths) and the other values the walk read (_World.values). (List comprehensions:
    a GPT step reads 149 tensors, and ~0.2 us a tensor here is a quarter less than a loop building each entry;
    attrgetter maps cost more.)"""
    tensors = found.tensors
    storages = [t._storage for t in tensors]
    kinds = (*map(type, storages),)
    sig = tuple([(type(t), t._shape, t._strides, t._offset, t._rg, t._grad_fn is None, t._grad is None,
                  t._base is None, st.inference) for t, st in zip(tensors, storages)])
    if kinds.count(Storage) != len(kinds):
        storages = [_storage(t) for t in tensors]  # (views' storages: the storage they view)
    distinct = [*dict.fromkeys(storages)]
    shared = None
    if len(distinct) < len(storages):  # views of one storage: which one each tensor reads
        index = {}
        shared = tuple([index.setdefault(id(st), len(index)) for st in storages])
    values = tuple([(type(v), v.shape, v.dtype, v.device) for v in [st.value for st in distinct]])
    flags = tuple([m.training for m in found.modules])
    # a leaf's gradient hooks (Tensor.register_hook: on its AccumulateGrad node) run inside a traced backward
    hooked = [(k, a) for k, t in enumerate(tensors) if (a := t._acc) is not None and (a.pre_hooks or a.hooks)]
    hooks = tuple([(k, *map(id, _chain((a.pre_hooks or {}).values())), None, *map(id, a.hooks or ()))
                   for k, a in hooked]) if hooked else None
    groups = tuple(tuple((k, _hashable(v)) for k, v in g.items() if k != "params")
                   for opt in found.optimizers for g in opt.param_groups)
    if state is None:
        state = _state_key(found.optimizers)
    key = (_modes(), _value_key(args), _value_key(kwargs), (kinds, sig, shared, values, hooks), flags,
           groups, state, found.paths, found.values)
    return key, distinct


def _modes():
    """The global modes a trace bakes in: grad mode, the default dtype and device factory functions use, and
    the cpu autocast region's dtype (None outside one)."""
    table = getattr(autocast_state._state, "table", None)
    cast = table["cpu"][1] if table is not None and table["cpu"][0] else None
    return (grad_mode.tape_enabled(), core.dtypes.default_float, core.Device.get_default(), cast)


def _plain(key):
    """Whether every storage of a guard key holds an Array (else a torch.func transform's tracers)."""
    return all([v[0] is core.Array for v in key[3][3]])


def _what_changed(prev, key):
    names = ("grad mode, the default dtype or device, or autocast", "positional arguments' values",
             "keyword arguments' values", "tensor shapes, dtypes, requires_grad, layout or hooks",
             "module training flags", "optimizer param_groups", "optimizer state",
             "where the tensors are found (attributes, keys, closure cells)", "Python values the function reads "
             "(globals, closure cells, module attributes)")
    for name, a, b in zip(names, prev, key):
        if a != b:
            return name
    return "unknown"
