"""Operator schemas: inferred from a function's type hints (torch.library.infer_schema) or parsed from
a schema string (Library.define), both into one `Schema` of `Arg`s.

    def f(x: Tensor, ys: Sequence[Tensor], n: int = 2, *, out: Tensor) -> Tensor
    infer_schema(f, mutates_args={"out"})
        -> "(Tensor x, Tensor[] ys, SymInt n=2, *, Tensor(a3!) out) -> Tensor"

Types follow PyTorch: Tensor (also `?`, `[]`, `?[]`), int as SymInt, float, bool (each also `?`,
`[]`, `[]?`), str, Scalar (int | float | bool), ScalarType (torch.dtype), Device.
"""
import collections.abc
import inspect
import re
import sys
import types
import typing

from ..core import dtypes as _dt
from ..core.devices import Device
from ..eager.tensor import Tensor

_BASES = {Tensor: "Tensor", int: "SymInt", float: "float", bool: "bool", str: "str", _dt.DType: "ScalarType",
          Device: "Device"}
# which derived forms each base type allows: (optional, list, list of optionals, optional list)
_FORMS = {"Tensor": (True, True, True, False), "SymInt": (True, True, False, True),
          "float": (True, True, False, True), "bool": (True, True, False, True), "str": (True, False, False, False),
          "Scalar": (True, True, False, False), "ScalarType": (True, False, False, False),
          "Device": (True, False, False, False)}
_RETURNS = {"Tensor": "Tensor", "Tensor[]": "Tensor[]", "SymInt": "SymInt", "float": "float", "bool": "bool",
            "Scalar": "Scalar"}
_VALID_PARAMS = ("Tensor, Optional[Tensor], Sequence[Tensor] (or List), Sequence[Optional[Tensor]], int, float, "
                 "bool and their Optional / Sequence forms, str, Optional[str], Union[int, float, bool] (Scalar), "
                 "torch.dtype, torch.device")
_VALID_RETURNS = ("{Tensor: 'Tensor', List[Tensor]: 'Tensor[]', int: 'SymInt', float: 'float', bool: 'bool', "
                  "Union[int, float, bool]: 'Scalar'}")


class Arg:
    """One schema argument: `type` is the base ("Tensor", "SymInt", ...), with its form flags."""

    __slots__ = ("name", "type", "optional", "is_list", "optional_elems", "mutable", "has_default", "default",
                 "kwarg_only", "alias")

    def __init__(self, name, type, *, optional=False, is_list=False, optional_elems=False, mutable=False,
                 has_default=False, default=None, kwarg_only=False, alias=None):
        self.name = name
        self.type = type
        self.optional = optional
        self.is_list = is_list
        self.optional_elems = optional_elems
        self.mutable = mutable
        self.has_default = has_default
        self.default = default
        self.kwarg_only = kwarg_only
        self.alias = alias

    @property
    def is_tensor(self):
        return self.type == "Tensor"

    def type_str(self):
        t = self.type
        if self.mutable:
            t += f"({self.alias}!)"
        if self.is_list:
            return t + ("?[]" if self.optional_elems else "[]") + ("?" if self.optional else "")
        return t + ("?" if self.optional else "")

    def __str__(self):
        s = f"{self.type_str()} {self.name}"
        if self.has_default:
            s += "=" + _default_repr(self.default)
        return s


class Schema:
    """Arguments and return types ("Tensor", "Tensor[]", ...; () for none) of one operator."""

    __slots__ = ("name", "args", "returns", "returns_tuple")

    def __init__(self, name, args, returns, returns_tuple):
        self.name = name
        self.args = args
        self.returns = returns
        self.returns_tuple = returns_tuple  # the return is a tuple (Tuple[Tensor, Tensor], or "(Tensor, Tensor)")

    @property
    def mutated(self):
        return [a for a in self.args if a.mutable]

    def returns_str(self):
        if not self.returns:
            return "()"
        if not self.returns_tuple:
            return self.returns[0]
        inner = ", ".join(self.returns)
        return f"(({inner}))" if len(self.returns) == 1 else f"({inner})"

    def __str__(self):
        parts = []
        kw = False
        for a in self.args:
            if a.kwarg_only and not kw:
                parts.append("*")
                kw = True
            parts.append(str(a))
        return f"{self.name or ''}({', '.join(parts)}) -> {self.returns_str()}"

    __repr__ = __str__


def _default_repr(v):
    if v is None or isinstance(v, (bool, int, float)):
        return str(v)
    if isinstance(v, (str, Device)):
        return f'"{v}"'
    if isinstance(v, _dt.DType):
        return repr(v)[len("torch."):]
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_default_repr(x) for x in v) + "]"
    return repr(v)


# ---------------------------------------------------------------------------
# inference from type hints


def _resolve(annotation, fn, error):
    if isinstance(annotation, str):
        # "Tensor", "torch.Tensor", "Optional[Tensor]" ...: torch.* and typing.* names, then the function's globals
        scope = dict(typing.__dict__)
        scope.update({"torch": sys.modules[__name__.split(".")[0]], "Tensor": Tensor})
        scope.update(getattr(fn, "__globals__", {}))
        try:
            return eval(annotation, scope)  # noqa: S307  (a type annotation of the user's own function)
        except Exception as e:  # noqa: BLE001
            error(f"Unsupported type annotation {annotation}. It is not a type. ({type(e).__name__}: {e})")
    return annotation


def _union_args(t):
    origin = typing.get_origin(t)
    if origin is typing.Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        return typing.get_args(t)
    return None


def _base_name(t):
    if t in _BASES:
        return _BASES[t]
    members = _union_args(t)
    if members is not None and set(members) == {int, float, bool}:
        return "Scalar"
    return None


def _list_elem(t):
    origin = typing.get_origin(t)
    if origin in (list, collections.abc.Sequence):
        args = typing.get_args(t)
        if len(args) == 1:
            return args[0]
    return None


def _strip_optional(t):
    members = _union_args(t)
    if members is not None and type(None) in members and len(members) == 2:
        return next(m for m in members if m is not type(None))
    return None


def classify(t):
    """(base, optional, is_list, optional_elems) for a parameter annotation, or None if unsupported."""
    base = _base_name(t)
    if base is not None:
        return base, False, False, False
    inner = _strip_optional(t)
    if inner is not None:
        base = _base_name(inner)
        if base is not None and _FORMS[base][0]:
            return base, True, False, False
        elem = _list_elem(inner)
        if elem is not None:
            base = _base_name(elem)
            if base is not None and _FORMS[base][3]:
                return base, True, True, False
        return None
    elem = _list_elem(t)
    if elem is not None:
        base = _base_name(elem)
        if base is not None and _FORMS[base][1]:
            return base, False, True, False
        inner = _strip_optional(elem)
        if inner is not None and _base_name(inner) == "Tensor":
            return "Tensor", False, True, True
    return None


def _parse_return(annotation, error):
    if annotation is None or annotation is type(None):
        return [], False
    if annotation is inspect.Parameter.empty:
        error("No return type annotation was provided. Please add one.")
    if typing.get_origin(annotation) is tuple:
        out = []
        for a in typing.get_args(annotation):
            r = _return_name(a)
            if r is None:
                error(f"Return has unsupported type {annotation}. The valid types are: {_VALID_RETURNS}.")
            out.append(r)
        return out, True
    r = _return_name(annotation)
    if r is None:
        error(f"Return has unsupported type {annotation}. The valid types are: {_VALID_RETURNS}.")
    return [r], False


def _return_name(t):
    c = classify(t)
    if c is None:
        return None
    base, optional, is_list, optional_elems = c
    if optional or optional_elems:
        return None
    if is_list:
        return "Tensor[]" if base == "Tensor" else None
    return _RETURNS.get(base)


def check_mutates_args(mutates_args):
    """mutates_args as a tuple of names or "unknown" (the string form is the only string allowed)."""
    if isinstance(mutates_args, str):
        if mutates_args != "unknown":
            raise ValueError("mutates_args must either be a sequence of the names of the arguments that are "
                             "mutated or the string 'unknown'. ")
        return mutates_args
    return tuple(mutates_args)


def infer(fn, mutates_args, op_name=None):
    """The Schema of fn from its type hints (PyTorch's rules and ValueErrors)."""
    sig = inspect.signature(fn)

    def error(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    mutates_args = check_mutates_args(mutates_args)
    args = []
    seen = set()
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            error("We do not support positional-only args, varargs, or varkwargs.")
        if param.annotation is inspect.Parameter.empty:
            error(f"Parameter {name} must have a type annotation.")
        ann = _resolve(param.annotation, fn, error)
        c = classify(ann)
        if c is None:
            if typing.get_origin(ann) is tuple:
                error(f"Parameter {name} has unsupported type {param.annotation}. We do not support Tuple inputs "
                      "in schema. As a workaround, please try to use List instead. For example, list[int].\n\n"
                      f"The valid types are: {_VALID_PARAMS}.")
            error(f"Parameter {name} has unsupported type {param.annotation}. The valid types are: "
                  f"{_VALID_PARAMS}.")
        base, optional, is_list, optional_elems = c
        if mutates_args == "unknown":
            mutable = base == "Tensor"
        else:
            mutable = name in mutates_args
            if mutable and base != "Tensor":
                error(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be "
                      "mutated")
        has_default = param.default is not inspect.Parameter.empty
        default = param.default if has_default else None
        if has_default and not (default is None or isinstance(default, (int, float, bool, str, Device, _dt.DType))):
            error(f"Parameter {name} has an unsupported default value type {type(default)}. Please file an issue "
                  "on GitHub so we can prioritize this.")
        args.append(Arg(name, base, optional=optional, is_list=is_list, optional_elems=optional_elems,
                        mutable=mutable, has_default=has_default, default=default,
                        kwarg_only=param.kind == inspect.Parameter.KEYWORD_ONLY, alias=f"a{idx}"))
        seen.add(name)
    if mutates_args != "unknown":
        missing = set(mutates_args) - seen
        if missing:
            error(f"{missing} in mutates_args were not found in the custom op's signature. mutates_args should "
                  "contain the names of all args that the custom op mutates, or just the string 'unknown' if you "
                  "don't know.")
    ret = _resolve(sig.return_annotation, fn, error) if sig.return_annotation is not inspect.Parameter.empty \
        else inspect.Parameter.empty
    returns, is_tuple = _parse_return(ret, error)
    return Schema(op_name, args, returns, is_tuple)


# ---------------------------------------------------------------------------
# parsing a schema string: "name.overload(Tensor x, int[] n, *, float alpha=1.) -> (Tensor, Tensor)"

_TYPE_NAMES = {"Tensor": "Tensor", "int": "SymInt", "SymInt": "SymInt", "float": "float", "bool": "bool",
               "str": "str", "Scalar": "Scalar", "ScalarType": "ScalarType", "Device": "Device"}
_ARG_RE = re.compile(r"^(?P<base>\w+)(?:\((?P<alias>\w+)(?P<bang>!?)\))?(?P<suffix>(?:\[\d*\]|\?)*)\s+"
                     r"(?P<name>\w+)(?:\s*=\s*(?P<default>.+))?$")
_NAME_RE = re.compile(r"^[A-Za-z_]\w*(\.\w+)?$")


def _split_top(s):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _parse_default(text, base):
    text = text.strip()
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text.startswith('"') or text.startswith("'"):
        return text[1:-1]
    if text.startswith("["):
        return [_parse_default(t, base) for t in _split_top(text[1:-1])]
    if base == "ScalarType":
        return getattr(_dt, text, text)
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse(schema, name=None):
    """The Schema of a schema string; `name` overrides (or supplies) the operator name."""
    schema = schema.strip()
    head, arrow, ret = schema.partition("->")
    head = head.strip()
    if not arrow or not head.endswith(")") or "(" not in head:
        raise RuntimeError(f"expected a schema of the form 'name(args) -> returns', got '{schema}'")
    lparen = head.index("(")
    op_name = head[:lparen].strip() or None
    if op_name is not None and not _NAME_RE.match(op_name):
        raise RuntimeError(f"expected eof but found a bad character in operator name '{op_name}'")
    args = []
    kw = False
    for idx, part in enumerate(_split_top(head[lparen + 1:-1])):
        if part == "*":
            kw = True
            continue
        m = _ARG_RE.match(part)
        if m is None or m.group("base") not in _TYPE_NAMES:
            raise RuntimeError(f"unknown type or bad argument '{part}' in schema '{schema}'")
        suffix = m.group("suffix")
        base = _TYPE_NAMES[m.group("base")]
        is_list = "[" in suffix
        optional_elems = is_list and suffix.startswith("?")
        optional = suffix.endswith("?") and not (is_list and suffix.endswith("]"))
        if not is_list:
            optional = suffix == "?"
        default_text = m.group("default")
        args.append(Arg(m.group("name"), base, optional=optional, is_list=is_list, optional_elems=optional_elems,
                        mutable=bool(m.group("bang")), has_default=default_text is not None,
                        default=_parse_default(default_text, base) if default_text is not None else None,
                        kwarg_only=kw, alias=m.group("alias") or f"a{idx}"))
    ret = ret.strip()
    if ret == "()":
        returns, is_tuple = [], False
    elif ret.startswith("("):
        returns, is_tuple = [_return_type(r) for r in _split_top(ret[1:-1])], True
    else:
        returns, is_tuple = [_return_type(ret)], False
    return Schema(name if name is not None else op_name, args, returns, is_tuple)


def _return_type(text):
    text = re.sub(r"\(\w+!?\)", "", text.strip()).split()[0]  # drop aliases and return names
    base = text.rstrip("[]?")
    if base not in _TYPE_NAMES:
        raise RuntimeError(f"unknown return type '{text}'")
    return _TYPE_NAMES[base] + text[len(base):]
