"""The package's import graph, read from the source with ``ast`` (every import statement,
at module level or deferred into a function, except those only for type checkers):

- no circle anywhere among letterbox_tui's modules;
- the core never imports the store, the command line or the app, and nothing under the
  core imports Textual;
- the faces (the command line, the app, the MCP server) take nothing from the store but its
  one entry, ``letterbox_tui.store.open_answers``, and the command line nothing from the
  old speed wing (``letterbox_tui.core.speed``);
- no module reads an environment switch that picks a read path (``LETTERBOX_TUI_PURE``,
  ``LETTERBOX_TUI_NO_CACHE``): what a scan uses is a parameter.

Run-time checks of the same rules (what a real import loads) are in
tests/core/test_import_hygiene.py."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "letterbox_tui"
SPEED = "letterbox_tui.core.speed"
STORE = "letterbox_tui.store"
#: the one name a face may take from the store
ENTRY = "letterbox_tui.store.open_answers"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


MODULES = _modules()


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(name: str, path: Path, names: bool = False) -> set[str]:
    """Every module ``name`` imports (absolute names; ``from pkg import mod`` counts as
    ``pkg.mod`` when that is a module of the package); with ``names``, every name it
    imports (``from pkg import x`` as ``pkg.x``, ``import pkg`` as ``pkg``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking_only(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in MODULES or names else target)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_graph_sees_the_imports_it_should():
    """The reader of the graph itself: known edges are found (a test that cannot fail
    would prove nothing)."""
    assert "letterbox_tui.core.letters" in GRAPH["letterbox_tui.core.scan"]
    assert "letterbox_tui.core.scan" in GRAPH["letterbox_tui.store"]
    assert "letterbox_tui.cli.common" in GRAPH["letterbox_tui.cli.read"]
    assert ENTRY in _imports("letterbox_tui.cli.common", MODULES["letterbox_tui.cli.common"], names=True)
    assert len(MODULES) > 40


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    internal = {m: {t for t in targets if t in graph and t != m} for m, targets in graph.items()}
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 on the path, 2 done
    for start in sorted(internal):
        if start in state:
            continue
        stack = [(start, iter(sorted(internal[start])))]
        path = [start]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                path.pop()
                state[node] = 2
            elif state.get(child) == 1:
                circles.append(path[path.index(child):] + [child])
            elif child not in state:
                state[child] = 1
                path.append(child)
                stack.append((child, iter(sorted(internal[child]))))
    return circles


def test_the_circle_finder_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_anywhere():
    circles = _circles(GRAPH)
    assert circles == [], "import circles:\n" + "\n".join(" -> ".join(c) for c in circles)


CORE = sorted(m for m in MODULES if _inside(m, "letterbox_tui.core"))
FACES = sorted(m for m in MODULES if _inside(m, "letterbox_tui.cli") or _inside(m, "letterbox_tui.app")
               or m == "letterbox_tui.mcp")


@pytest.mark.parametrize("module", CORE)
def test_the_core_never_imports_the_store_the_cli_or_the_app(module):
    bad = sorted(
        t for t in GRAPH[module]
        if _inside(t, STORE) or _inside(t, "letterbox_tui.cli") or _inside(t, "letterbox_tui.app")
        or _inside(t, "textual")
    )
    assert bad == [], f"{module} imports {bad}"


@pytest.mark.parametrize("module", FACES)
def test_a_face_takes_only_the_one_entry_from_the_store(module):
    taken = _imports(module, MODULES[module], names=True)
    bad = sorted(t for t in taken if _inside(t, STORE) and t != ENTRY)
    assert bad == [], f"{module} imports {bad} (only {ENTRY})"


@pytest.mark.parametrize("module", sorted(m for m in FACES if _inside(m, "letterbox_tui.cli")))
def test_the_cli_imports_nothing_of_the_old_speed_wing(module):
    bad = sorted(t for t in GRAPH[module] if _inside(t, SPEED))
    assert bad == [], f"{module} imports {bad}"


@pytest.mark.parametrize("module", CORE + sorted(m for m in FACES if _inside(m, "letterbox_tui.cli")))
def test_no_read_path_switch(module):
    text = MODULES[module].read_text(encoding="utf-8")
    for switch in ("LETTERBOX_TUI_PURE", "LETTERBOX_TUI_NO_CACHE"):
        assert switch not in text, f"{module} mentions {switch}: take a parameter instead"
