"""Issue 18 item 12 in the app: the compose form says, as the slug is typed, that a task's
replies would have no room (the gate's own rule, ``core.write.id_room_problem``)."""

from __future__ import annotations


def test_the_app_form_says_as_typed_that_a_task_slug_leaves_its_replies_no_room():
    from datetime import datetime, timezone

    from letterbox_tui.app.screens import write_rules
    from letterbox_tui.core.write import id_room_problem

    now = datetime(2026, 12, 1, tzinfo=timezone.utc)
    form = {"as": "alpha", "to": "beta", "type": "request", "slug": "x" * 74, "task": True, "body": "b"}
    assert any("replies would have 129-character ids" in p for p in write_rules.problems("compose", form, None, now))
    assert not [p for p in write_rules.problems("compose", {**form, "slug": "x" * 73}, None, now) if "replies" in p]
    assert not [p for p in write_rules.problems("compose", {**form, "task": False}, None, now) if "replies" in p]
    assert id_room_problem("alpha", "beta", "request", "x" * 74, True) is not None
