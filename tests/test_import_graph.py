"""The package's import graph, read from the source with ``ast`` (every import statement,
at module level or deferred into a function, except those only for type checkers):

- no circle among letterbox_tui's modules;
- the core (outside its speed wing) never imports the speed wing, the command line or the
  app, and nothing under the core imports Textual;
- the speed wing never imports the command line or the app;
- the core reads none of the speed wing's switches (``LETTERBOX_TUI_PURE``,
  ``LETTERBOX_TUI_NO_CACHE``): it takes a reader and a cache as parameters.

Run-time checks of the same rules (what a real import loads) are in
tests/core/test_import_hygiene.py."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "letterbox_tui"
SPEED = "letterbox_tui.core.speed"


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


def _imports(name: str, path: Path) -> set[str]:
    """Every module ``name`` imports (absolute names; ``from pkg import mod`` counts as
    ``pkg.mod`` when that is a module of the package)."""
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
                found.add(sub if sub in MODULES else target)
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
    assert "letterbox_tui.core.scan" in GRAPH["letterbox_tui.core.speed.choice"]
    assert "letterbox_tui.core.letters" in GRAPH["letterbox_tui.core.taking"]  # (the scan takes its letters there)
    assert "letterbox_tui.core.speed.ending" in GRAPH["letterbox_tui.cli"]
    assert len(MODULES) > 40


#: circles known when this test was written, each to be broken by the module's owner; the
#: test fails for any other circle, and for one of these once it is gone (then delete it)
KNOWN_CIRCLES: set[frozenset[str]] = set()


def test_no_import_circle():
    internal = {m: {t for t in targets if t in MODULES and t != m} for m, targets in GRAPH.items()}
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
    found = {frozenset(c) for c in circles}
    new = [c for c in circles if frozenset(c) not in KNOWN_CIRCLES]
    assert new == [], "import circles:\n" + "\n".join(" -> ".join(c) for c in new)
    assert KNOWN_CIRCLES <= found, f"a known circle is gone: delete it from KNOWN_CIRCLES ({KNOWN_CIRCLES - found})"


CORE = sorted(m for m in MODULES if _inside(m, "letterbox_tui.core") and not _inside(m, SPEED))


@pytest.mark.parametrize("module", CORE)
def test_the_core_never_imports_the_speed_wing_the_cli_or_the_app(module):
    bad = sorted(
        t for t in GRAPH[module]
        if _inside(t, SPEED) or _inside(t, "letterbox_tui.cli") or _inside(t, "letterbox_tui.app")
        or _inside(t, "textual")
    )
    assert bad == [], f"{module} imports {bad}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _inside(m, SPEED)))
def test_the_speed_wing_never_imports_the_cli_the_app_or_textual(module):
    bad = sorted(
        t for t in GRAPH[module]
        if _inside(t, "letterbox_tui.cli") or _inside(t, "letterbox_tui.app") or _inside(t, "textual")
    )
    assert bad == [], f"{module} imports {bad}"


@pytest.mark.parametrize("module", CORE)
def test_the_core_reads_no_speed_switch(module):
    text = MODULES[module].read_text(encoding="utf-8")
    for switch in ("LETTERBOX_TUI_PURE", "LETTERBOX_TUI_NO_CACHE"):
        assert switch not in text, f"{module} mentions {switch}: take a parameter instead"
