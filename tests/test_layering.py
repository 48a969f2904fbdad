"""The package's layering, read from the import statements of every module (parsed with `ast`, never imported).

Two checks over the graph of imports between mindtorch_v2 modules:
  * no import cycle, counting function-local imports too (a cycle closed only inside a
    function still ties the two layers together);
  * no forbidden arrow, per the RULES table below (one line per rule).

An import is an arrow to a module: `import a.b` -> a.b; `from a import b` -> a.b when a/b is a
module or package, else -> a; relative imports are resolved against the importing module.
Rules marked `attributes` also see attribute chains through a name bound to a module
(`core.ops._family.x`, `core.array.make`, `core._private`): reaching a submodule or a private
name that way is an arrow too. Dynamic imports (`importlib.import_module`) are not seen.
"""
import ast
import collections
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

PACKAGE = "mindtorch_v2"
PACKAGE_DIR = Path(__file__).resolve().parents[1] / PACKAGE

# The core's face modules: what users and eager see. Ops families must not import them.
FACE_MODULES = ("mindtorch_v2.core.api", "mindtorch_v2.core.array_methods")
# The core's machinery: arrays, primitives, interpreters. They import only each other.
MACHINERY = tuple(f"mindtorch_v2.core.{m}" for m in
                  ("primitive", "autodiff", "batching", "pytree", "array", "dtypes", "devices"))
# Submodules of core that eager may name (`from ..core import dtypes`): the public namespaces core's
# __init__ re-exports on purpose, as jax.dtypes and jax.tree_util are.
CORE_PUBLIC_SUBMODULES = ("mindtorch_v2.core.dtypes", "mindtorch_v2.core.pytree", "mindtorch_v2.core.ops.fft",
                          "mindtorch_v2.core.ops.linalg", "mindtorch_v2.core.ops.special", "mindtorch_v2.core.ops.random")
# The torch-named modules built on eager: they import from defining modules, never the top package.
TORCH_FACES = ("mindtorch_v2.nn.*", "mindtorch_v2.optim.*", "mindtorch_v2.utils.*", "mindtorch_v2.func",
               "mindtorch_v2.autograd.*", "mindtorch_v2.serialization.*", "mindtorch_v2.fft", "mindtorch_v2.linalg",
               "mindtorch_v2.special", "mindtorch_v2.cuda.*", "mindtorch_v2.amp.*", "mindtorch_v2.backends.*",
               "mindtorch_v2.mps", "mindtorch_v2.xpu", "mindtorch_v2.accelerator", "mindtorch_v2.cpu",
               "mindtorch_v2.compiler", "mindtorch_v2.jit", "mindtorch_v2.onnx", "mindtorch_v2.testing",
               "mindtorch_v2._dynamo.*", "mindtorch_v2.run", "mindtorch_v2.version", "mindtorch_v2._torch_alias")


@attrs.frozen
class Rule:
    """Modules matching `importers` must not import a module matching `forbidden` unless it matches `allowed`.

    A pattern `x` is the module x alone (for a package, its __init__); `x.*` is x and every module under it.
    """
    name: str
    importers: tuple
    forbidden: tuple
    allowed: tuple = ()
    attributes: bool = False  # also check attribute chains through names bound to modules


RULES = (
    Rule("core is self-contained", ("mindtorch_v2.core.*",), ("mindtorch_v2.*",), ("mindtorch_v2.core.*",)),
    Rule("machinery imports only machinery", MACHINERY, ("mindtorch_v2.*",), MACHINERY),
    Rule("op families import neither the core package nor its faces", ("mindtorch_v2.core.ops.*",),
         ("mindtorch_v2.core",) + FACE_MODULES),
    Rule("eager uses only the core package's public names", ("mindtorch_v2.eager.*",), ("mindtorch_v2.core.*",),
         ("mindtorch_v2.core",) + CORE_PUBLIC_SUBMODULES, attributes=True),
    Rule("torch faces import defining modules, not the top package", TORCH_FACES, ("mindtorch_v2",)),
)


# ---------------------------------------------------------------------------
# the import graph


@attrs.frozen
class Edge:
    source: str
    target: str
    line: int
    scope: str        # "module level" or "in function f"
    statement: str    # the import statement (or attribute chain) as written
    kind: str = "import"  # or "attribute"

    def where(self):
        text = self.statement if len(self.statement) <= 100 else self.statement[:96] + " ..."
        return f"line {self.line}, {self.scope}: `{text}`"


def module_files(root, package):
    """{module name: path} for every .py file of the package at root/<package path>."""
    base = Path(root)
    modules = {}
    for path in sorted(base.rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join([package] + parts)] = path
    return modules


class _ImportCollector(ast.NodeVisitor):
    def __init__(self, name, is_package, modules):
        self.name = name
        self.package = name if is_package else name.rpartition(".")[0]
        self.modules = modules
        self.scopes = []
        self.edges = []
        self.bindings = {}  # local name -> module it is bound to (first binding wins)
        self.attribute_nodes = []

    def _scope(self):
        return f"in function {self.scopes[-1]}" if self.scopes else "module level"

    def _edge(self, node, target, kind="import", statement=None):
        self.edges.append(Edge(self.name, target, node.lineno, self._scope(),
                               statement or ast.unparse(node), kind))

    def _function(self, node):
        self.scopes.append(getattr(node, "name", "<lambda>"))
        self.generic_visit(node)
        self.scopes.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Import(self, node):
        for alias in node.names:
            self._edge(node, alias.name)
            if alias.asname:
                self.bindings.setdefault(alias.asname, alias.name)
            else:
                head = alias.name.partition(".")[0]
                self.bindings.setdefault(head, head)

    def visit_ImportFrom(self, node):
        if node.level:
            parts = self.package.split(".")
            if node.level - 1 >= len(parts):
                raise ValueError(f"{self.name}: relative import beyond the top package at line {node.lineno}")
            base = ".".join(parts[:len(parts) - (node.level - 1)])
            base = f"{base}.{node.module}" if node.module else base
        else:
            base = node.module
        to_base = False
        for alias in node.names:
            full = f"{base}.{alias.name}"
            if alias.name != "*" and full in self.modules:
                self._edge(node, full)
                self.bindings.setdefault(alias.asname or alias.name, full)
            else:
                to_base = True
        if to_base:
            self._edge(node, base)

    def visit_Attribute(self, node):
        self.attribute_nodes.append((node, self._scope()))
        self.generic_visit(node)


def _attribute_edges(collector):
    """Arrows made by attribute chains: `m.sub.x` reaches module m.sub; `m._x` reaches the private m._x."""
    edges, seen = [], set()
    for node, scope in collector.attribute_nodes:
        if id(node) in seen:
            continue
        chain, inner = [], node
        while isinstance(inner, ast.Attribute):
            seen.add(id(inner))
            chain.append(inner.attr)
            inner = inner.value
        if not isinstance(inner, ast.Name) or inner.id not in collector.bindings:
            continue
        start = module = collector.bindings[inner.id]
        for attr in reversed(chain):
            if f"{module}.{attr}" in collector.modules or attr.startswith("_"):
                module = f"{module}.{attr}"
                if attr.startswith("_") and module not in collector.modules:
                    break
            else:
                break
        if module != start:
            edges.append(Edge(collector.name, module, node.lineno, scope, ast.unparse(node), "attribute"))
    return edges


@attrs.frozen
class Graph:
    modules: dict     # name -> path
    edges: tuple      # every Edge between modules of the package (attribute arrows included)

    def imports(self):
        """{module: {imported module: [Edge, ...]}}, import statements only."""
        out = collections.defaultdict(lambda: collections.defaultdict(list))
        for e in self.edges:
            if e.kind == "import":
                out[e.source][e.target].append(e)
        return out


def scan(root, package):
    """The import graph of the package whose files are under `root` (the package directory itself)."""
    modules = module_files(root, package)
    edges = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        collector = _ImportCollector(name, path.name == "__init__.py", modules)
        collector.visit(tree)
        edges += collector.edges + _attribute_edges(collector)
    inside = [e for e in edges if e.target == package or e.target.startswith(package + ".")]
    return Graph(modules, tuple(inside))


# ---------------------------------------------------------------------------
# cycles


def strongly_connected_components(nodes, successors):
    """Tarjan's algorithm (iterative): the SCCs of the graph, each a list of nodes."""
    index, low, on_stack, stack, sccs = {}, {}, set(), [], []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(successors(root)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(successors(nxt))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    scc = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        scc.append(top)
                        if top == node:
                            break
                    sccs.append(scc)
    return sccs


def _shortest_cycle_through(start, members, successors):
    parent = {start: None}
    queue = collections.deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(successors(node)):
            if nxt == start:
                path = [node]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                return path[::-1] + [start]
            if nxt in members and nxt not in parent:
                parent[nxt] = node
                queue.append(nxt)
    return None


def find_cycles(graph):
    """Import cycles as node lists [a, b, ..., a]: per strongly connected component, shortest cycles
    until every module of the component lies on one of them."""
    imports = graph.imports()

    def successors(m):
        return sorted(t for t in imports.get(m, ()) if t in graph.modules)

    cycles = []
    for scc in strongly_connected_components(sorted(graph.modules), successors):
        members = set(scc)
        if len(scc) == 1 and scc[0] not in successors(scc[0]):
            continue
        covered = set()
        for start in sorted(members):
            if start in covered:
                continue
            cycle = _shortest_cycle_through(start, members, successors)
            covered.update(cycle)
            first = cycle.index(min(cycle[:-1]))  # read each cycle from its smallest module
            cycle = cycle[first:-1] + cycle[:first] + [cycle[first]]
            if cycle not in cycles:
                cycles.append(cycle)
    return cycles


def describe_cycle(graph, cycle):
    imports = graph.imports()
    lines = [" -> ".join(cycle)]
    for a, b in zip(cycle, cycle[1:]):
        lines.append(f"    {a} -> {b}: " + "; ".join(e.where() for e in imports[a][b]))
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# forbidden arrows


def matches(module, patterns):
    for p in patterns:
        if p.endswith(".*"):
            if module == p[:-2] or module.startswith(p[:-1]):
                return True
        elif module == p:
            return True
    return False


def violations(graph, rules):
    """(rule, edge) for every arrow a rule forbids."""
    found = []
    for rule in rules:
        for e in graph.edges:
            if e.kind == "attribute" and not rule.attributes:
                continue
            if (matches(e.source, rule.importers) and matches(e.target, rule.forbidden)
                    and not matches(e.target, rule.allowed)):
                found.append((rule, e))
    return found


def describe_violation(rule, edge):
    via = "reaches" if edge.kind == "attribute" else "imports"
    return f"[{rule.name}] {edge.source} {via} {edge.target} ({edge.where()})"


# ---------------------------------------------------------------------------
# the package


@pytest.fixture(scope="module")
def package_graph():
    return scan(PACKAGE_DIR, PACKAGE)


def test_no_import_cycles_between_package_modules(package_graph):
    cycles = find_cycles(package_graph)
    assert not cycles, f"{len(cycles)} import cycle(s):\n" + "\n".join(describe_cycle(package_graph, c)
                                                                      for c in cycles)


def test_no_forbidden_arrows_between_layers(package_graph):
    found = violations(package_graph, RULES)
    assert not found, f"{len(found)} forbidden import(s):\n" + "\n".join(describe_violation(r, e) for r, e in found)


def test_every_rule_pattern_names_existing_modules(package_graph):
    """A typo in the table would make a rule silently vacuous; face modules may not exist yet."""
    for rule in RULES:
        for pattern in rule.importers:
            assert any(matches(m, (pattern,)) for m in package_graph.modules), (rule.name, pattern)


# ---------------------------------------------------------------------------
# the checker itself, on a synthetic package


def write_package(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


SYNTHETIC_RULES = (
    Rule("core is self-contained", ("pkg.core.*",), ("pkg.*",), ("pkg.core.*",)),
    Rule("eager uses only the core package", ("pkg.eager.*",), ("pkg.core.*",), ("pkg.core",), attributes=True),
    Rule("faces import no top package", ("pkg.nn.*",), ("pkg",)),
)

CLEAN = {
    "pkg/__init__.py": "from . import core, eager\nfrom .eager.tensor import Tensor\n",
    "pkg/core/__init__.py": "from .array import Array\nfrom . import ops\n",
    "pkg/core/array.py": "import numpy as np\n\nclass Array:\n    pass\n",
    "pkg/core/ops.py": "from .array import Array\n",
    "pkg/eager/__init__.py": "",
    "pkg/eager/tensor.py": "from .. import core\nfrom ..core import Array\n\nclass Tensor:\n    x = core.Array\n",
    "pkg/nn/__init__.py": "from ..eager.tensor import Tensor\n",
}


def test_checker_passes_a_clean_package(tmp_path):
    graph = scan(write_package(tmp_path, CLEAN) / "pkg", "pkg")
    assert set(graph.modules) == {"pkg", "pkg.core", "pkg.core.array", "pkg.core.ops", "pkg.eager",
                                  "pkg.eager.tensor", "pkg.nn"}
    assert ("pkg.eager.tensor", "pkg.core") in {(e.source, e.target) for e in graph.edges}
    assert find_cycles(graph) == []
    assert violations(graph, SYNTHETIC_RULES) == []


def test_checker_finds_a_cycle_closed_by_a_function_local_import(tmp_path):
    files = dict(CLEAN)
    files["pkg/core/array.py"] = "def f():\n    from . import ops\n    return ops\n"
    graph = scan(write_package(tmp_path, files) / "pkg", "pkg")
    cycles = find_cycles(graph)
    assert cycles == [["pkg.core.array", "pkg.core.ops", "pkg.core.array"]]
    text = describe_cycle(graph, cycles[0])
    assert "pkg.core.array -> pkg.core.ops -> pkg.core.array" in text
    assert "line 2, in function f: `from . import ops`" in text


def test_checker_finds_a_three_module_cycle_and_a_self_import(tmp_path):
    files = dict(CLEAN)
    files["pkg/core/ops.py"] = "from .array import Array\nfrom .. import eager\n"
    files["pkg/eager/__init__.py"] = "import pkg.core.array\n"
    files["pkg/core/array.py"] = "from .ops import x\nfrom . import array\n"
    graph = scan(write_package(tmp_path, files) / "pkg", "pkg")
    cycles = find_cycles(graph)
    assert cycles == [["pkg.core.array", "pkg.core.array"],
                      ["pkg.core.array", "pkg.core.ops", "pkg.core.array"],
                      ["pkg.core.array", "pkg.core.ops", "pkg.eager", "pkg.core.array"]]


def test_checker_finds_forbidden_arrows_with_rule_module_and_line(tmp_path):
    files = dict(CLEAN)
    files["pkg/core/ops.py"] = "from .array import Array\n\ndef g():\n    from ..eager import tensor\n"
    files["pkg/eager/tensor.py"] = ("from .. import core\nfrom ..core.array import Array\n\n"
                                    "y = core.ops.thing\nz = core._private\nw = core.Array\n")
    files["pkg/nn/__init__.py"] = "import pkg as torch\nfrom .. import Tensor\nfrom .. import eager\n"
    graph = scan(write_package(tmp_path, files) / "pkg", "pkg")
    found = sorted(describe_violation(r, e) for r, e in violations(graph, SYNTHETIC_RULES))
    assert found == sorted([
        "[core is self-contained] pkg.core.ops imports pkg.eager.tensor "
        "(line 4, in function g: `from ..eager import tensor`)",
        "[eager uses only the core package] pkg.eager.tensor imports pkg.core.array "
        "(line 2, module level: `from ..core.array import Array`)",
        "[eager uses only the core package] pkg.eager.tensor reaches pkg.core.ops "
        "(line 4, module level: `core.ops.thing`)",
        "[eager uses only the core package] pkg.eager.tensor reaches pkg.core._private "
        "(line 5, module level: `core._private`)",
        "[faces import no top package] pkg.nn imports pkg (line 1, module level: `import pkg as torch`)",
        "[faces import no top package] pkg.nn imports pkg (line 2, module level: `from .. import Tensor`)",
    ])


def test_rule_patterns():
    assert matches("a.b", ("a.b",)) and not matches("a.b.c", ("a.b",))
    assert matches("a.b", ("a.b.*",)) and matches("a.b.c.d", ("a.b.*",)) and not matches("a.bc", ("a.b.*",))


def test_reexport_blocks_match_the_defining_modules_all():
    """The namespaces' by-name import blocks are what tools/wire_names.py writes from each module's __all__."""
    tool = PACKAGE_DIR.parent / "tools" / "wire_names.py"
    done = subprocess.run([sys.executable, str(tool), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
