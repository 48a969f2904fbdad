"""torch.ops: registered operators by namespace, `torch.ops.mylib.numpy_sin(x)` and its `.default`.

Every op defined with torch.library (custom_op, Library.define, define) is found here by name; the
objects are thin handles that look the op up at call time, so redefining an op is seen at once.
"""

__all__ = ["ops", "OpOverloadPacket", "OpOverload"]

_OPS = {}  # "ns::name" -> the op (a torch.library CustomOpDef, which adds itself when defined)


def _registry():
    return _OPS


class OpOverload:
    """One overload of an op (`torch.ops.ns.name.default`): call it like the op."""

    __slots__ = ("_qualname", "_overloadname")

    def __init__(self, qualname, overloadname):
        self._qualname = qualname
        self._overloadname = overloadname

    @property
    def _mt_op(self):
        op = _registry().get(self._qualname)
        if op is None:
            raise RuntimeError(f"operator {self._qualname} was deleted (its Library was destroyed)")
        return op

    @property
    def _schema(self):
        return self._mt_op._schema

    @property
    def _opname(self):
        return self._qualname.split("::")[1]

    @property
    def namespace(self):
        return self._qualname.split("::")[0]

    def name(self):
        return f"{self._qualname}.{self._overloadname}"

    def __call__(self, *args, **kwargs):
        return self._mt_op(*args, **kwargs)

    def __repr__(self):
        ns, name = self._qualname.split("::")
        return f"{ns}.{name}.{self._overloadname}"

    def __eq__(self, other):
        return type(other) is OpOverload and other._qualname == self._qualname \
            and other._overloadname == self._overloadname

    def __hash__(self):
        return hash((self._qualname, self._overloadname))


class OpOverloadPacket:
    """All overloads of an op (`torch.ops.ns.name`): calling it calls the default overload."""

    __slots__ = ("_qualname",)

    def __init__(self, qualname):
        self._qualname = qualname

    @property
    def _mt_op(self):
        return OpOverload(self._qualname, "default")._mt_op

    @property
    def default(self):
        return OpOverload(self._qualname, "default")

    def overloads(self):
        return ["default"]

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        qualname = f"{self._qualname}.{name}"
        if qualname in _registry():
            return OpOverload(qualname, name)
        ns, op = self._qualname.split("::")
        raise AttributeError(f"The underlying op of '{ns}.{op}' has no overload name '{name}'")

    def __call__(self, *args, **kwargs):
        return self._mt_op(*args, **kwargs)

    def __repr__(self):
        return self._qualname.replace("::", ".")


class _OpNamespace:
    """torch.ops.<ns>: the ops of one namespace."""

    def __init__(self, name):
        self.name = name

    def __getattr__(self, op_name):
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        qualname = f"{self.name}::{op_name}"
        if qualname not in _registry():
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'")
        return OpOverloadPacket(qualname)

    def __repr__(self):
        return f"<module 'torch.ops.{self.name}'>"


class _Ops:
    """torch.ops: attribute access gives a namespace (`torch.ops.mylib`)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _OpNamespace(name)

    def load_library(self, path):
        raise NotImplementedError("torch.ops.load_library: mindtorch_v2 cannot load C++ operator libraries")

    def __repr__(self):
        return "<module 'torch.ops'>"


ops = _Ops()
