"""The one sanitizer (``core.text``), run with every hostile class through both faces: the
command line's text and JSON output, and what the app renders.

Each class reaches a face the way it can in a letterbox: C1, bidi, invisible, tag and
annotation characters and markup in header values (the header grammar refuses C0 and DEL
there); escape sequences (CSI, OSC) and C0 in the body; a newline and ESC in a file name; a
lone surrogate in a string handed to a face directly (a non-UTF-8 name is escaped by the
scan, but nothing stops a future caller).
"""

from __future__ import annotations

import asyncio
import json

import pytest

from letterbox_tui.cli import main
from letterbox_tui.core import text as core_text
from tests.conftest import make_box

#: Every hostile class, one sample each: (name, text, what a face must show instead).
CLASSES = {
    "csi": ("\x1b[2J\x1b[31mred", "\u241b[2J\u241b[31mred"),
    "osc title": ("\x1b]0;pwned\x07", "\u241b]0;pwned\u2407"),
    "osc8 link": ("\x1b]8;;https://evil\x1b\\x", "\u241b]8;;https://evil\u241b\\x"),
    "c0": ("a\x00b\x08c\rd", "a\u2400b\u2408c\u240dd"),
    "del": ("x\x7fy", "x\u2421y"),
    "c1 csi": ("\u009b31m", "<U+009B>31m"),
    "c1 nel": ("a\u0085b", "a<U+0085>b"),
    "bidi override": ("\u202eevil\u202c", "<U+202E>evil<U+202C>"),
    "bidi isolate": ("\u2066x\u2069\u2067y\u2068", "<U+2066>x<U+2069><U+2067>y<U+2068>"),
    "bidi mark": ("\u200e\u200f\u061c", "<U+200E><U+200F><U+061C>"),
    "zero width": ("z\u200bw\u2060j\ufeff", "z<U+200B>w<U+2060>j<U+FEFF>"),
    "tag": ("t\U000e0041", "t<U+E0041>"),
    "annotation": ("\ufff9base\ufffaruby\ufffb", "<U+FFF9>base<U+FFFA>ruby<U+FFFB>"),
    "lone surrogate": ("s\ud800\udfffe", "s<U+D800><U+DFFF>e"),
    "click": ("[@click=app.quit]quit[/]", "[@click=app.quit]quit[/]"),
    "bold tag": ("[B]x[/B]", "[B]x[/B]"),
    "variable": ("[$accent]x", "[$accent]x"),
    "close": ("[/", "[/"),
}
#: What may never reach a terminal raw (\n and \t are the only controls let through).
RAW = [chr(c) for c in range(0x20) if c not in (0x09, 0x0A)] + [chr(c) for c in range(0x7F, 0xA0)] + list(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u2060\ufeff"
    "\ufff9\ufffa\ufffb\U000e0041\ud800\udfff"
)
#: Classes a header value can carry (SPEC 3 refuses C0 and DEL in a header line; a header
#: is strict UTF-8, so it holds no lone surrogate).
IN_HEADER = [n for n in CLASSES if n not in ("csi", "osc title", "osc8 link", "c0", "del", "lone surrogate")]
IN_BODY = [n for n in CLASSES if n != "lone surrogate"]

ID = "2026-11-28T120000-alpha-request-hostile-abcdef01"
NAMED = "2026-11-28T130000-alpha-info-named-abcdef02"
BAD_NAME = "evil\nname\x1b[2J.md"


def _raw_in(shown: str) -> list[str]:
    return [repr(c) for c in RAW if c in shown]


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_core_clean_replaces_each_class_visibly(name):
    text, expected = CLASSES[name]
    assert core_text.clean(text) == expected
    plain, marks = core_text.marked(text)
    assert plain == expected
    assert [plain[a:b] for a, b in marks] == [core_text.placeholder(c) for c in text if core_text.UNSAFE.match(c)]
    assert core_text.clean("a\nb\tc", single_line=True) == "a\u2424b c"
    assert core_text.clean("a\r\nb") == "a\nb"


def _box(tmp_path):
    box = make_box(tmp_path / "box", "alpha", "beta")
    subject = " ".join(CLASSES[n][0] for n in IN_HEADER)
    body = "\n".join(f"{n}: {CLASSES[n][0]}" for n in IN_BODY) + "\n"
    box.letter(ID, frm="alpha", to="beta", type="request", requires_ack="true",
               sent="2026-11-28T12:00:00Z", subject=subject, note=subject, body=body)
    box.letter(NAMED, frm="alpha", to="beta", sent="2026-11-28T13:00:00Z", name=BAD_NAME)
    (box.root / "beta" / "inbox" / f"{ID}.md.ack").write_text(
        f"ack_id: x\nby: beta\nprogress: {subject}\nprogress_at: 2026-11-28T14:00:00Z\n", encoding="utf-8")
    return box


def _cli(capsys, box, *argv):
    code = main(["--root", str(box.root), *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out


def test_the_command_line_shows_every_class_as_placeholders(tmp_path, capsys):
    box = _box(tmp_path)
    shown = {}
    for argv in (["show", ID], ["query"], ["owed", "--at", "2026-11-29T00:00:00Z"], ["check"],
                 ["thread", ID], ["answered", ID], ["current", ID], ["digest"], ["inbox", "beta"]):
        _, out = _cli(capsys, box, *argv)
        shown[argv[0]] = out
        assert not _raw_in(out), (argv, _raw_in(out))
    for command in ("owed", "inbox"):  # the holder's progress note, shown as placeholders
        assert all(CLASSES[n][1] in shown[command] for n in IN_HEADER), command
    for n in IN_HEADER + IN_BODY:
        assert CLASSES[n][1] in shown["show"], n
    for n in IN_HEADER:
        assert CLASSES[n][1] in shown["show"].split("body")[0], n  # in the subject's row
    # the file name holding a newline stays on its line of check's table
    line = next(ln for ln in shown["check"].splitlines() if "id-filename-mismatch" in ln)
    assert "evil\u2424name\u241b[2J.md" in line
    # JSON: equivalent to the letter and free of raw unsafe characters
    for argv in (["show", ID], ["query"], ["check"]):
        _, out = _cli(capsys, box, *argv, "--json")
        assert not _raw_in(out), (argv, _raw_in(out))
        json.loads(out)
    _, out = _cli(capsys, box, "show", ID, "--json")
    letter = json.loads(out)["letters"][0]
    assert letter["headers"]["subject"] == " ".join(CLASSES[n][0] for n in IN_HEADER)
    assert letter["body"].startswith("csi: \x1b[2J")


def test_the_command_line_output_module_handles_what_no_letter_can_carry(capsys):
    """A lone surrogate (from some future caller) is a placeholder in text and a \\u escape
    in JSON, and never an encoding error."""
    from letterbox_tui.cli import output

    value = CLASSES["lone surrogate"][0]
    assert output.clean(value) == CLASSES["lone surrogate"][1]
    doc = output.dumps_json({"v": value}, indent=None)
    assert doc == '{"v":"s\\ud800\\udfffe"}'
    doc.encode("utf-8")
    output.console().print(output.text(value + " " + CLASSES["c0"][0]))
    assert not _raw_in(capsys.readouterr().out)


def test_the_app_renders_every_class_as_placeholders(tmp_path):
    asyncio.run(_app_renders(tmp_path))


async def _app_renders(tmp_path):
    from textual.widgets import Static

    from letterbox_tui.app.sanitize import clean
    from letterbox_tui.app.widgets.letter_pane import LetterPane
    from tests.app.helpers import SIZE, app_for, letters, scanned, screen_text

    for name, (text, expected) in CLASSES.items():
        content = clean(text)
        assert content.plain == expected, name
        assert not content.spans or name not in ("click", "bold tag", "variable", "close")
        assert clean(text, single_line=True).plain == core_text.clean(text, single_line=True)

    box = _box(tmp_path)
    app = app_for(box, letter=ID, view="all")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert letters(app).current.letter.id == ID
        head = app.query_one("#letter-head", Static).render().plain
        for n in IN_HEADER:
            assert CLASSES[n][1] in head, n
        body = app.query_one(LetterPane).body_text
        for n in IN_BODY:
            assert CLASSES[n][1] in body, n
        seen = [screen_text(app)]
        for tab in ("thread", "chain", "provenance"):
            app.action_show_tab(tab)
            await pilot.pause()
            seen.append(screen_text(app))
        prov = app.query_one("#letter-provenance", Static).render().plain
        assert "note: " + core_text.clean(" ".join(CLASSES[n][0] for n in IN_HEADER)) in prov
        app.action_view("problems")
        await pilot.pause()
        seen.append(screen_text(app))
        for shown in seen:
            assert not _raw_in(shown), _raw_in(shown)
        await pilot.click("#letter-head")
        await pilot.pause()
        assert app.is_running  # [@click=app.quit] is text, not an action
        svg = app.export_screenshot()
        assert "\x1b" not in svg and "\u202e" not in svg


def test_an_error_message_quoting_a_hostile_name_is_sanitized(tmp_path, capsys):
    """stderr is a terminal too: a root or an id named with escapes is shown as placeholders."""
    evil = tmp_path / "box\x1b]0;pwned\x07\u202e"
    evil.mkdir()
    assert main(["--root", str(evil), "query"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and not _raw_in(err) and "is not a letterbox" in err
    box = _box(tmp_path)
    assert main(["--root", str(box.root), "show", "x\x1b[2J\u202e"]) == 2
    err = capsys.readouterr().err
    assert not _raw_in(err) and "no letter x\u241b[2J<U+202E> in scope" in err


def test_every_error_line_goes_through_the_sanitizer(tmp_path, capsys, monkeypatch):
    """Whatever a message quotes (a refusal, an OSError's file name), stderr gets placeholders."""
    from letterbox_tui.cli import read
    from letterbox_tui.core.errors import LetterboxError

    box = _box(tmp_path)
    for exc in (LetterboxError("bad \x1b]0;t\x07 name\u2028second line"), OSError(5, "Input/output error", "f\x1b[2J\u202e")):
        def boom(args, *more, exc=exc):
            raise exc
        monkeypatch.setattr(read, "cmd_show", boom)
        assert main(["--root", str(box.root), "show", ID]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and not _raw_in(err), err
        assert "\u241b" in err or "\\x1b" in err


def test_the_stores_notice_shows_a_hostile_cache_path_as_placeholders(tmp_path, capsys, monkeypatch):
    """Issue 28 item 14: the notice naming an unusable cache prints its path sanitized."""
    box = _box(tmp_path)
    cache = tmp_path / "cache\x1b]0;t\x07\x1b[2J\u202e"
    cache.write_text("a file, not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    assert main(["--root", str(box.root), "query", "state=any"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cache" in err, err
    assert not _raw_in(err), err
