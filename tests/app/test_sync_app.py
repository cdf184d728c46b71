"""A letterbox kept in git, in the app (#16): the banner says when this copy is not current,
S syncs it in a worker, and the sidebar's Not pushed mailbox lists what other machines lack."""

from __future__ import annotations

from textual.widgets import Static

from letterbox_tui.core.sync_run import fetch, sync
from tests.app.helpers import SIZE, list_text, scanned, until
from tests.core.sync_helpers import git, letter_text, machines, put

L1 = "2026-01-01T000000-alpha-info-one-aaaaaaaa"
L2 = "2026-01-01T000100-beta-info-two-bbbbbbbb"


class Root:
    def __init__(self, root):
        self.root = root


def banner(app) -> str:
    b = app.screen_stack[0].query_one("#banner", Static)
    return b.render().plain if b.display else ""


async def test_banner_key_and_not_pushed_mailbox(tmp_path):
    from tests.app.helpers import app_for

    _, a, b = machines(tmp_path)
    put(b, f"alpha/inbox/{L2}.md", letter_text(L2, frm="beta", to="alpha"))
    sync(b)
    fetch(a)  # a knows it is one behind
    put(a, f"beta/inbox/{L1}.md", letter_text(L1))  # and holds a letter not pushed
    app = app_for(Root(a), view="all")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        text = banner(app)
        assert text.startswith("⇅ Local copy as of ") and "1 behind; 1 file not pushed" in text
        assert text.count("ocal copy") == 1  # (it read "Local copy: local copy as of")
        assert "Press S to sync." in text
        assert app.model.unpushed == {f"beta/inbox/{L1}.md"}
        app.mailbox_id = "sync:unpushed"
        assert [r.letter.id for r in app.model.rows("sync:unpushed")] == [L1]
        await pilot.press("S")
        await until(pilot, lambda: not app.syncing and app.scan_count >= 2 and not app.scanning, timeout=30)
        await scanned(pilot, app, 2)
        assert banner(app) == ""  # current: nothing behind, nothing unpushed
        assert {x.id for x in app.model.snapshot.letters} == {L1, L2}
        assert app.model.unpushed == frozenset()
    assert git(a, "rev-parse", "HEAD") == git(b, "ls-remote", "origin", "HEAD").split()[0] + "\n"


async def test_a_refused_sync_is_a_notification(tmp_path):
    from tests.app.helpers import app_for

    _, a, _ = machines(tmp_path)
    git(a, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    app = app_for(Root(a), view="all")
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        await pilot.press("S")
        await until(pilot, lambda: not app.syncing, timeout=30)
        notes = [n.message for n in app._notifications]
        assert any("fetch from origin" in str(m) for m in notes), notes


async def test_provenance_shows_the_commit_that_brought_the_letter(tmp_path):
    from tests.app.helpers import app_for

    _, a, b = machines(tmp_path)
    put(b, f"alpha/inbox/{L2}.md", letter_text(L2, frm="beta", to="alpha"))
    sync(b)
    sync(a)
    app = app_for(Root(a), letter=L2)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        app.action_show_tab("provenance")
        commit = git(a, "log", "-1", "--format=%H").strip()
        await until(pilot, lambda: "Committed" in app.query_one("#letter-provenance", Static).render().plain)
        prov = app.query_one("#letter-provenance", Static).render().plain
        assert commit[:12] in prov and "sent 2026-01-01T00:00:00Z" in prov


async def test_a_fetch_made_outside_the_app_reaches_the_banner_without_a_rescan_key(tmp_path):
    """The watcher skips .git: the poll compares the refs a fetch moves, so a `git fetch`
    in another terminal shows in the banner (it waited for ctrl+r); its words say "local
    copy" once."""
    from tests.app.helpers import app_for

    _, a, b = machines(tmp_path)
    app = app_for(Root(a), view="all", poll_interval=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await scanned(pilot, app)
        assert "behind" not in banner(app)
        put(b, f"alpha/inbox/{L2}.md", letter_text(L2, frm="beta", to="alpha"))
        sync(b)
        fetch(a)  # as `git fetch` in another terminal
        await until(pilot, lambda: "1 behind" in banner(app), timeout=20)
        text = banner(app)
        assert text.startswith("⇅ Local copy as of ") and text.count("ocal copy") == 1


async def test_a_copy_with_no_remote_is_not_offered_a_sync_it_cannot_make(tmp_path):
    """A letterbox kept in git with no remote: the banner offered "Press S to sync", and S
    could only refuse. It says there is no remote and how to add one; once a remote is
    there (still no upstream), S is offered again."""
    from tests.app.helpers import app_for
    from tests.conftest import make_box

    box = make_box(tmp_path / "box", "alpha", "beta")
    put(box.root, f"beta/inbox/{L1}.md", letter_text(L1))
    git(box.root, "init", "-q", "-b", "main")
    git(box.root, "add", "-A")
    git(box.root, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "letters")
    for remote in (None, tmp_path / "shared.git"):
        if remote is not None:
            git(tmp_path, "init", "-q", "--bare", str(remote))
            git(box.root, "remote", "add", "origin", str(remote))
        app = app_for(Root(box.root), view="all")
        async with app.run_test(size=(160, 48), notifications=True) as pilot:
            await scanned(pilot, app)
            text = banner(app)
            if remote is None:
                assert "no remote: nothing is shared yet" in text and "git remote add origin URL" in text
                assert "Press S" not in text
                await pilot.press("S")  # pressed all the same: refused in the app's own words
                await until(pilot, lambda: not app.syncing)
                said = [str(n.message) for n in app._notifications if n.title == "Sync refused"]
                assert said and "git remote add origin URL" in said[-1] and "--remote" not in said[-1], said
            else:
                assert "no upstream: nothing is shared yet" in text and "Press S to sync." in text
