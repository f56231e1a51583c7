"""The package is layered: no import cycle among its modules (module-level imports; imports
inside functions are deliberate late bindings and are not counted)."""

import ast
from pathlib import Path

import dltheory

SRC = Path(dltheory.__file__).parent


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve(mod: str, is_pkg: bool, node: ast.ImportFrom) -> list[str]:
    if node.level == 0:
        base = node.module or ""
    else:
        pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
        pkg = pkg[: len(pkg) - (node.level - 1)]
        base = ".".join(pkg + ([node.module] if node.module else []))
    if not base.startswith("dltheory"):
        return []
    # "from . import x" imports the submodule x when it exists
    out = []
    for alias in node.names:
        cand = f"{base}.{alias.name}"
        out.append(cand if _exists(cand) else base)
    return out


def _exists(name: str) -> bool:
    p = SRC.parent.joinpath(*name.split("."))
    return p.with_suffix(".py").exists() or (p / "__init__.py").exists()


def import_graph() -> dict[str, set[str]]:
    graph = {}
    for f in SRC.rglob("*.py"):
        mod = _module_name(f)
        tree = ast.parse(f.read_text())
        deps = set()
        for node in tree.body:                       # module level only
            if isinstance(node, ast.ImportFrom):
                deps.update(_resolve(mod, f.name == "__init__.py", node))
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name.startswith("dltheory"))
        deps.discard(mod)
        # importing a package's own submodule from its __init__ is not a cycle
        graph[mod] = {d for d in deps if not (f.name == "__init__.py" and d.startswith(mod + "."))}
    return graph


def test_no_import_cycle_in_the_package():
    graph = import_graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if d not in graph:
                continue
            if state.get(d) == 1:
                cycle = stack[stack.index(d):] + [d]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_lowest_layers_import_nothing_above_them():
    graph = import_graph()
    assert graph["dltheory.validation"] == set()
    assert graph["dltheory.budget"] <= {"dltheory.validation"}
    assert "dltheory.ledgers" not in graph["dltheory.claims"]
