"""The shared core's modules import each other without a cycle, so that every module can be
imported first and none needs an import hidden inside a function. The graph is read from the
modules' source: every import statement, at any depth, that names a module of the layer."""

import ast
from pathlib import Path

import pytest

import iam_console.core

ROOT = Path(iam_console.core.__file__).parent
PACKAGE = "iam_console.core"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((PACKAGE, *parts))


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(ROOT.rglob("*.py"))}


def _imported(name: str, path: Path, node: ast.Import | ast.ImportFrom, modules: dict[str, Path]) -> set[str]:
    """The layer's modules one import statement loads."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names} & modules.keys()
    if node.level:
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{node.module}" if node.module else package
    else:
        base = node.module or ""
    submodules = {f"{base}.{alias.name}" for alias in node.names} & modules.keys()
    named_values = any(f"{base}.{alias.name}" not in modules for alias in node.names)
    return submodules | ({base} & modules.keys() if named_values else set())


def _with_packages(importer: str, module: str, modules: dict[str, Path]) -> set[str]:
    """A module and the packages above it that importing it runs first (the importer's own
    packages have started already)."""
    found, package = {module}, module.rpartition(".")[0]
    while package in modules and not importer.startswith(package + "."):
        found.add(package)
        package = package.rpartition(".")[0]
    return found


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        graph[name] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for module in _imported(name, path, node, modules):
                    graph[name] |= _with_packages(name, module, modules) - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of the graph (its modules in import order, the first repeated at the end), or []."""
    state: dict[str, str] = {}  # "open" while on the current path, then "done"
    path: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = "open"
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                return [*path[path.index(target):], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[module] = "done"
        return []

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)):
            return cycle
    return []


def test_the_service_layer_has_no_import_cycle():
    graph = import_graph(_modules())
    assert len(graph) > 25 and f"{PACKAGE}.query" in graph[f"{PACKAGE}.crud"]
    cycle = find_cycle(graph)
    assert not cycle, "import cycle: " + " -> ".join(module.removeprefix(PACKAGE + ".") for module in cycle)


@pytest.mark.parametrize("source, cycle", [
    ("from . import b", {"a", "b"}),
    ("def f():\n    from .b import thing", {"a", "b"}),  # an import inside a function counts too
    ("from .errors import ServiceError", set()),
    # importing a package's module runs the package first, and the package imports b
    ("from .package.leaf import thing", {"a", "b", "package"}),
])
def test_the_graph_sees_imports_that_close_a_cycle(tmp_path, source, cycle):
    files = {"a.py": source, "b.py": "from . import a", "errors.py": "",
             "package/__init__.py": "from .. import b\nfrom . import leaf", "package/leaf.py": "thing = 1"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text + "\n")
    modules = {PACKAGE + "." + ".".join(p.relative_to(tmp_path).with_suffix("").parts).removesuffix(".__init__"): p
               for p in tmp_path.rglob("*.py")}
    found = find_cycle(import_graph(modules))
    assert {module.removeprefix(PACKAGE + ".") for module in found} == cycle
