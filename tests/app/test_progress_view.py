"""Progress notes in the app (issue 13 point 5): the owed view says "in progress: NOTE, 2h
ago" for an accepted task, and Provenance shows the note; a hostile note is sanitized."""

from __future__ import annotations

from textual.widgets import Static

from tests.app.helpers import SIZE, app_for, list_text, scanned, screen_text
from tests.app.letterboxes import NOW
from tests.conftest import make_box

TASK = "2026-11-29T090000-alpha-request-plan-3f9a1c07"


def accepted_box(tmp_path, note: str):
    box = make_box(tmp_path / "box", "alpha", "beta")
    box.letter(TASK, frm="alpha", to="beta", type="request", requires_ack="true",
               deadline="2026-12-05T00:00:00Z", sent="2026-11-29T09:00:00Z")
    box.letter(f"{TASK}--beta--ack", frm="beta", to="alpha", type="ack", re=TASK, thread=TASK,
               sent="2026-11-29T10:00:00Z")
    box.raw(f"beta/inbox/{TASK}.md.ack", f"ack_id: {TASK}--beta--ack\nacked_at: 2026-11-29T10:00:00Z\nby: beta\n"
                                         f"progress: {note}\nprogress_at: 2026-11-29T13:00:00Z\n")
    return box


async def test_the_owed_view_and_provenance_show_the_progress_note(tmp_path):
    box = accepted_box(tmp_path, "drafted 3 of 5")
    app = app_for(box, letter=TASK)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        rows = [t for t in list_text(app) if TASK[:10] in t or "plan" in t]
        assert any("in progress: drafted 3 of 5, 2h ago" in t for t in rows), list_text(app)
        app.action_show_tab("provenance")
        await pilot.pause()
        prov = app.query_one("#letter-provenance", Static).render().plain
        assert "Progress" in prov and "in progress: drafted 3 of 5, 2h ago" in prov
    assert NOW.hour == 15


async def test_a_hostile_progress_note_is_sanitized(tmp_path):
    box = accepted_box(tmp_path, "\x1b]52;c;x\x07 [@click=app.quit]q[/] \u202eevil")
    app = app_for(box, letter=TASK)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        app.action_show_tab("provenance")
        await pilot.pause()
        shown = screen_text(app)
        for bad in ("\x1b", "\x07", "\u202e"):
            assert bad not in shown
        assert "[@click=app.quit]q[/]" in app.query_one("#letter-provenance", Static).render().plain


async def test_a_leases_mailbox_lists_who_holds_what_with_problems_and_takes_nothing(tmp_path):
    box = accepted_box(tmp_path, "x")
    held = box.root / "locks" / "src-slash-auth.ts.lock"
    held.mkdir(parents=True)
    (held / "lease").write_text("owner=alpha session=s-1 taken=2026-11-29T13:00:00Z\n")
    (box.root / "locks" / "orphan.lock").mkdir()
    before = box.tree_bytes()
    app = app_for(box)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert any(mb.id == "view:leases" and mb.count == 2 for mb in app.model.mailboxes())
        assert "Leases" in screen_text(app)  # in the mailboxes pane
        app.open_mailbox("view:leases")
        await pilot.pause()
        rows = list_text(app)
        assert any("src/auth.ts" in t and "alpha session=s-1" in t and "2h ago" in t for t in rows), rows
        assert any("orphan" in t and "no lease file" in t for t in rows), rows
    assert box.tree_bytes() == before


async def test_no_leases_no_leases_mailbox(tmp_path):
    box = accepted_box(tmp_path, "x")
    app = app_for(box)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert not any(mb.id == "view:leases" for mb in app.model.mailboxes())
        assert "Leases" not in screen_text(app)


async def test_p_writes_a_progress_note_from_the_app(tmp_path):
    from textual.widgets import Input

    from letterbox_tui.app.screens.progress import ProgressScreen
    from tests.app.helpers import until

    box = accepted_box(tmp_path, "drafted 3 of 5")
    app = app_for(box, letter=TASK)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("P")
        await until(pilot, lambda: isinstance(app.screen, ProgressScreen))
        assert "Now: in progress: drafted 3 of 5" in app.screen.query_one("#progress-about", Static).render().plain
        app.screen.query_one("#progress-note", Input).value = "drafted 4 of 5"
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, ProgressScreen))
    text = (box.root / "beta" / "inbox" / f"{TASK}.md.ack").read_text()
    assert "progress: drafted 4 of 5\n" in text and text.count("progress:") == 1 and "by: beta\n" in text


async def test_a_refused_progress_note_says_why_and_writes_nothing(tmp_path):
    from textual.widgets import Input

    from letterbox_tui.app.screens.progress import ProgressScreen
    from tests.app.helpers import until

    box = accepted_box(tmp_path, "x")
    (box.root / "beta" / "inbox" / f"{TASK}.md.ack").unlink()  # not accepted after all
    before = box.tree_bytes()
    app = app_for(box, letter=TASK)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("P")
        await until(pilot, lambda: isinstance(app.screen, ProgressScreen))
        app.screen.query_one("#progress-note", Input).value = "half"
        await pilot.press("enter")
        await until(pilot, lambda: "Refused" in app.screen.query_one("#progress-error", Static).render().plain)
        assert "reply 'ack'" in app.screen.query_one("#progress-error", Static).render().plain
        await pilot.press("escape")
    assert box.tree_bytes() == before


def test_building_owed_and_late_opens_each_ack_sidecar_once(tmp_path, monkeypatch):
    """The holder's progress note comes from the sidecar the attention codes read: the
    owed view's rows carry it, and no sidecar is opened a second time for it."""
    from letterbox_tui.app.model import AppModel
    from letterbox_tui.core import files, records, sidecar
    from letterbox_tui.core.resolve import resolve
    from letterbox_tui.core.scan import scan
    from letterbox_tui.core.settings import load_settings

    box = accepted_box(tmp_path, "drafted 3 of 5")
    res = resolve(scan(box.root), NOW)
    opened = []

    def counted(root, rel, **kw):
        opened.append(rel)
        return files.read_file(root, rel, **kw)

    def counted_together(root, folder, names, **kw):  # the owed items' sidecars, a folder at once
        opened.extend(f"{folder}/{name}" for name in names)
        return files.read_files(root, folder, names, **kw)

    for mod in (records, sidecar):
        monkeypatch.setattr(mod, "read_file", counted)
    monkeypatch.setattr(records, "read_files", counted_together)
    model = AppModel.build(str(box.root), load_settings(box.root), res, NOW, views=("view:owed",))
    [row] = [r for r in model.views["view:owed"] if r.heading is None]
    assert row.extra["progress"] == "in progress: drafted 3 of 5, 2h ago"
    acks = [rel for rel in opened if rel.endswith(".ack")]
    assert acks and len(acks) == len(set(acks)), opened
