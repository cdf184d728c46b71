"""The app in a real terminal with ``TZ`` set: times are local and the zone is named."""

from __future__ import annotations

import pytest

from tests.app.test_terminal_tmux import cli, needs_tmux, tmux  # noqa: F401  (the fixture)
from tests.conftest import make_box


@pytest.mark.slow
@needs_tmux
def test_the_app_shows_local_times_and_the_zone(tmux, tmp_path):  # noqa: F811
    from datetime import datetime, timedelta, timezone

    box = make_box(tmp_path / "box", "alpha", "beta")
    soon = (datetime.now(timezone.utc) + timedelta(days=3)).replace(hour=2, minute=59, second=0, microsecond=0)
    sent = soon - timedelta(days=4)
    box.letter("2026-11-27T090000-alpha-request-zoned-abcdef03", frm="alpha", to="beta", type="request",
               requires_ack="true", sent=sent.strftime("%Y-%m-%dT%H:%M:%SZ"),
               deadline=soon.strftime("%Y-%m-%dT%H:%M:%SZ"), subject="Zoned task")
    tmux.env["TZ"] = "Asia/Kolkata"  # UTC+05:30, no daylight saving: 02:59Z is 08:29 there
    tmux.start("app", cli(box.root, "--view", "all"))
    shown = tmux.wait("app", lambda s: "Zoned task" in s and "IST" in s, timeout=25)
    status = [line for line in shown.splitlines() if "All letters" in line and "IST" in line]
    assert status, shown  # the status line names the zone
    local_sent = sent + timedelta(hours=5, minutes=30)
    assert local_sent.strftime("%b %d %H:%M") in shown  # the list: local time
    tmux("send-keys", "-t", "app", "Enter")
    shown = tmux.wait("app", lambda s: "deadline" in s and "Sent" in s)
    local_due = soon + timedelta(hours=5, minutes=30)
    assert local_due.strftime("%a %Y-%m-%d 08:29 IST") in shown, shown  # the letter's head
    tmux("send-keys", "-t", "app", "?")
    shown = tmux.wait("app", lambda s: "Keys" in s)
    line = "local time, IST (UTC+05:30)"

    def flat(screen: str) -> str:
        return " ".join(x.strip(" │") for x in screen.splitlines())

    for _ in range(12):  # the zone's line is at the end of the help: page down until it shows
        if line in flat(shown):
            break
        tmux("send-keys", "-t", "app", "space")
        # the page moved (a page down at the end moves nothing: the line would show by then)
        shown = tmux.wait("app", lambda s, was=shown: s != was or line in flat(s))
    joined = flat(shown)
    assert line in joined, shown
