"""The core and the reading commands never import Textual (STYLE.md, harlequin's rule)."""

import subprocess
import sys


def _imported(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True, text=True, check=True,
    ).stdout
    return set(out.split())


def test_core_does_not_import_textual():
    mods = _imported("import letterbox_tui.core, letterbox_tui.core.scan")
    assert "textual" not in mods
    assert "rich" not in mods


def test_cli_module_does_not_import_textual():
    mods = _imported("import letterbox_tui.cli, letterbox_tui.cli.common")
    assert "textual" not in mods


def test_the_reading_commands_load_neither_textual_nor_rich():
    """``--json`` output needs no terminal library: Rich is loaded only for text."""
    mods = _imported("import letterbox_tui.cli, letterbox_tui.cli.read, letterbox_tui.store")
    for heavy in ("textual", "rich"):
        assert heavy not in mods


def test_importing_a_core_module_gives_the_module():
    """``letterbox_tui.core`` binds no function over a submodule's name (it once bound
    ``scan``, so ``import letterbox_tui.core.scan as m`` gave the function)."""
    import letterbox_tui.core.scan as scan_module
    from letterbox_tui.core.scan import scan

    assert type(scan_module).__name__ == "module" and scan_module.scan is scan
    mods = _imported("import letterbox_tui.core")
    assert "letterbox_tui.core.scan" not in mods and "letterbox_tui.core.model" not in mods  # loaded on use


def test_the_core_package_names_still_resolve():
    """Every name ``letterbox_tui.core`` exported before it went lazy resolves to the object
    of its home module, the same object twice (harlequin's test of its lazy package)."""
    import pytest

    import letterbox_tui.core as core
    from letterbox_tui.core.errors import LetterboxError
    from letterbox_tui.core.model import Answer, Letter, Reason, Scope, Snapshot, Unreadable, Unsupported
    from letterbox_tui.core.root import resolve_root
    from letterbox_tui.core.settings import Settings, load_settings

    expected = {
        "Answer": Answer, "Letter": Letter, "LetterboxError": LetterboxError, "Reason": Reason,
        "Scope": Scope, "Settings": Settings, "Snapshot": Snapshot, "Unreadable": Unreadable,
        "Unsupported": Unsupported, "load_settings": load_settings, "resolve_root": resolve_root,
    }
    assert sorted(expected) == sorted(core.__all__)
    for name, obj in expected.items():
        assert getattr(core, name) is obj and getattr(core, name) is getattr(core, name)
    with pytest.raises(AttributeError):
        _ = core.NotAThing


def test_the_core_loads_no_face_at_run_time():
    """What a plain core user loads: the scan, resolving, querying never bring the store,
    the command line, the app or Textual with them."""
    mods = _imported(
        "import letterbox_tui.core.scan, letterbox_tui.core.resolve, letterbox_tui.core.query, "
        "letterbox_tui.core.rows, letterbox_tui.core.write, letterbox_tui.core.check"
    )
    leaked = sorted(m for m in mods if m.startswith(("letterbox_tui.store", "letterbox_tui.cli",
                                                    "letterbox_tui.app", "textual")))
    assert leaked == []
