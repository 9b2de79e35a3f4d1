"""The package's import graph has no cycles, no module imports another project module
inside a function unless that import is lazy by design (marked ``# lazy: why`` on its line),
and no module uses another module's private names (a leading underscore): what another
module calls is public within the package.

The graph is read from the source with ``ast``: every import statement, at module level,
inside functions and under ``if TYPE_CHECKING:``, relative imports resolved, ``from . import
x`` of a submodule taken as an import of that submodule, and an import of a module inside
another package counted as an import of that package too (its ``__init__`` runs first)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "cosim"
LAZY = "# lazy:"
EXTENSIONS = ("cosim._native",)  # compiled modules: imported, never importing back


def modules(package: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package's __init__)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _base(module: str, is_package: bool, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[:len(parts) - (level - 1)]
    return ".".join(parts + ([name] if name else []))


def _in_function(tree: ast.Module) -> set[int]:
    """Ids of the import nodes that sit inside a function."""
    inner = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inner.update(id(n) for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom)))
    return inner


def import_graph(package: Path) -> tuple[dict[str, dict[str, int]], list[str]]:
    """The edges (module -> {imported module: line}) and the function-level imports of
    project modules that are not marked lazy (``file:line: statement``)."""
    known = modules(package)
    top = package.name
    graph: dict[str, dict[str, int]] = {name: {} for name in known}
    unmarked = []
    for name, (path, is_package) in known.items():
        source = path.read_text()
        lines = source.splitlines()
        tree = ast.parse(source)
        inner = _in_function(tree)
        own = name if is_package else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _base(name, is_package, node.level, node.module)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known or f"{base}.{a.name}" in EXTENSIONS
                           else base for a in node.names]
            else:
                continue
            targets = [t for t in targets if t == top or t.startswith(top + ".")]
            if not targets:
                continue
            if id(node) in inner and not any(LAZY in lines[i - 1] for i in range(node.lineno, node.end_lineno + 1)):
                unmarked.append(f"{path.relative_to(package.parent)}:{node.lineno}: {ast.unparse(node)}")
            for target in targets:
                while target not in known and target not in EXTENSIONS and "." in target:
                    target = target.rpartition(".")[0]
                parts = target.split(".")
                # The target, and each package above it that this module is not inside.
                for k in range(2, len(parts) + 1):
                    step = ".".join(parts[:k])
                    if step != name and (k == len(parts) or not (own == step or own.startswith(step + "."))):
                        graph[name].setdefault(step, node.lineno)
    return graph, unmarked


def private_uses(package: Path) -> list[str]:
    """``file:line: module.name`` for each private name of another project module used: a
    ``from module import _name`` that is not a submodule, or ``module._name`` on a module
    imported by name."""
    known = modules(package)
    found = []
    for name, (path, is_package) in known.items():
        tree = ast.parse(path.read_text())
        aliases = {}  # local name -> project module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = _base(name, is_package, node.level, node.module)
                if not (base == package.name or base.startswith(package.name + ".")):
                    continue
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    if sub in known or sub in EXTENSIONS:
                        aliases[a.asname or a.name] = sub
                    elif a.name.startswith("_") and base != name:
                        found.append(f"{path.relative_to(package.parent)}:{node.lineno}: {base}.{a.name}")
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname and a.name in known:
                        aliases[a.asname] = a.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and node.attr.startswith("_") and not node.attr.startswith("__")
                    and aliases[node.value.id] not in EXTENSIONS
                    and f"{aliases[node.value.id]}.{node.attr}" not in known):
                found.append(f"{path.relative_to(package.parent)}:{node.lineno}: "
                             f"{aliases[node.value.id]}.{node.attr}")
    return found


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules (Tarjan's algorithm),
    as the path of modules that closes on its first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    found = []
    for group in groups:
        start = min(group)
        # Breadth-first from start back to start, inside the group: the shortest cycle through it.
        came_from = {start: None}
        frontier = [start]
        path = None
        while frontier and path is None:
            nxt = []
            for v in frontier:
                for w in sorted(graph.get(v, {})):
                    if w == start:
                        path = [v]
                        while came_from[path[-1]] is not None:
                            path.append(came_from[path[-1]])
                        path = path[::-1] + [start]
                        break
                    if w in group and w not in came_from:
                        came_from[w] = v
                        nxt.append(w)
                if path:
                    break
            frontier = nxt
        found.append(path)
    return found


def test_the_package_imports_without_cycles():
    graph, _ = import_graph(PACKAGE)
    assert len(graph) > 100  # the whole package was read
    found = cycles(graph)
    assert not found, "import cycles: " + "; ".join(" -> ".join(c) for c in found)


def test_function_level_imports_of_project_modules_are_lazy_by_design():
    _, unmarked = import_graph(PACKAGE)
    assert not unmarked, ("imports of project modules inside functions, not marked '# lazy: why' "
                          "(import at module level; break a cycle by moving code down):\n" + "\n".join(unmarked))


def test_no_module_uses_another_modules_private_names():
    found = private_uses(PACKAGE)
    assert not found, "private names used across modules (make them public):\n" + "\n".join(found)


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "cosim"


def test_the_check_names_a_cycle_through_a_function_level_import(tmp_path):
    package = _write(tmp_path, {
        "cosim/__init__.py": "",
        "cosim/a.py": "from .b import f\n",
        "cosim/b.py": "def f():\n    from . import a\n    return a\n",
        "cosim/c.py": "import cosim.a\n",
    })
    graph, unmarked = import_graph(package)
    assert cycles(graph) == [["cosim.a", "cosim.b", "cosim.a"]]
    assert unmarked == ["cosim/b.py:2: from . import a"]


def test_the_check_names_private_names_used_across_modules(tmp_path):
    package = _write(tmp_path, {
        "cosim/__init__.py": "",
        "cosim/a.py": "def _helper():\n    pass\n_TABLE = {}\n",
        "cosim/b.py": "from .a import _helper\nfrom . import a\nx = a._TABLE\n",
        "cosim/c.py": "from . import a\nx = a.__name__\n",
    })
    assert private_uses(package) == ["cosim/b.py:1: cosim.a._helper", "cosim/b.py:3: cosim.a._TABLE"]


def test_the_check_counts_a_package_init_and_type_checking_imports(tmp_path):
    # low.stats imports high through the package's __init__ (which runs first); the other
    # cycle closes only under TYPE_CHECKING.
    package = _write(tmp_path, {
        "cosim/__init__.py": "",
        "cosim/low/__init__.py": "from .heavy import run\n",
        "cosim/low/heavy.py": "from ..high import x\n",
        "cosim/low/stats.py": "",
        "cosim/high.py": "from .low.stats import y\nx = 1\n",
        "cosim/p.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .q import Q\n",
        "cosim/q.py": "from .p import P\n",
        "cosim/lazy.py": "def f():\n    from .q import P  # lazy: an example\n",
    })
    graph, unmarked = import_graph(package)
    assert sorted(cycles(graph)) == [["cosim.high", "cosim.low", "cosim.low.heavy", "cosim.high"],
                                     ["cosim.p", "cosim.q", "cosim.p"]]
    assert unmarked == []
