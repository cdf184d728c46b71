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


def test_the_memo_replay_path_loads_no_resolver_nor_rich():
    """A replayed answer needs a stat of every file, not the reading commands' modules."""
    mods = _imported("import letterbox_tui.cli, letterbox_tui.cli.memoised, letterbox_tui.core.memo")
    for heavy in ("textual", "rich", "letterbox_tui.core.resolve", "letterbox_tui.core.query", "letterbox_tui.cli.read"):
        assert heavy not in mods
