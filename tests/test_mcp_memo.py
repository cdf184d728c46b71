"""The MCP server's memory of results (``mcp.Memo``), in process on the demo: a result kept
for a generation is the one a fresh computation gives at the asked clock, on either side of
every deadline, and ``at`` left to default follows the server's clock."""

from __future__ import annotations

from datetime import timedelta

import pytest

from letterbox_tui import mcp
from letterbox_tui.core.demo import remove_archive, write_demo
from letterbox_tui.core.query import parse_query
from letterbox_tui.store import open_answers
from tests.test_mcp import unclocked


@pytest.fixture
def box(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "box"
    write_demo(root)
    remove_archive(root)  # its unsupported entry would hold every late answer unknown
    resident = mcp.Resident(str(root))
    yield root, resident
    resident.close()


_RESOLVED = {}


def fresh(root, name, arguments, at):
    """The document computed from the letters (resolved once per letterbox, no store) at
    ``at``, with no memory of results."""
    if root not in _RESOLVED:
        _RESOLVED.clear()
        _RESOLVED[root] = open_answers(root, at, use_store=False)
    answers = _RESOLVED[root].with_clock(at)
    query = parse_query(arguments.get("terms", []), at) if name in ("query", "exists") else None
    return mcp._document(name, answers, arguments, query, arguments.get("seat"))


def write_request(root, letter_id):
    """A new request to the builder, written as a writer does (a temporary renamed)."""
    import os

    path = root / "builder" / "inbox" / f"{letter_id}.md"
    tmp = path.with_name("." + path.name + ".tmp")
    tmp.write_text(f"---\nid: {letter_id}\nfrom: planner\nto: builder\ntype: request\nrequires_ack: true\n"
                   "sent: 2026-11-29T10:00:00Z\n---\nbody\n")
    os.rename(tmp, path)


def deadlines(resident):
    mcp.call(resident, "leases", {})  # opens the answers
    letters = resident._answers.snapshot.letters
    return sorted({x.deadline_at for x in letters if x.deadline_at is not None}), letters


def test_a_kept_result_is_the_fresh_one_on_either_side_of_every_deadline(box, monkeypatch):
    root, resident = box
    times, letters = deadlines(resident)
    assert len(times) >= 3
    task = next(x for x in letters if x.deadline_at == times[len(times) // 2])
    clocks = sorted({t + d for t in times[::3] for d in (timedelta(seconds=-1), timedelta(0), timedelta(seconds=1))})
    asks = [
        ("query", {"terms": ["late=yes"]}),
        ("query", {"terms": ["state=open"]}),
        ("exists", {"terms": ["late=yes"]}),
        ("current", {"id": task.id}),
        ("answered", {"id": task.id}),
        ("thread", {"id": task.id}),
        ("disputes", {}),
        ("owed", {}),
        ("digest", {}),
    ]
    for name, arguments in asks:
        for at in clocks:  # the clock asked for, or the server's clock where the tool takes none
            asked = {**arguments, "at": at.isoformat()} if "at" in mcp.TOOLS[name][1]["properties"] else arguments
            monkeypatch.setattr(mcp, "clock", lambda: at)
            doc, meta = mcp.call(resident, name, asked)
            assert meta["generation"] == 1
            assert unclocked(doc) == unclocked(fresh(root, name, asked, at)), (name, at)
    assert resident.memo.hits > 0  # clocks with one place among the deadlines shared a result
    late = {at: len(mcp.call(resident, "query", {"terms": ["late=yes"], "at": at.isoformat()})[0]["matches"])
            for at in clocks}
    assert len(set(late.values())) > 1  # and the clock did move the answer


def test_at_left_to_default_follows_the_servers_clock(box, monkeypatch):
    root, resident = box
    times, letters = deadlines(resident)
    late_task = None
    for t in times:  # a deadline that makes some open task late once passed
        before = fresh(root, "query", {"terms": ["late=yes"]}, t)
        after = fresh(root, "query", {"terms": ["late=yes"]}, t + timedelta(seconds=1))
        if len(after["matches"]) > len(before["matches"]):
            late_task = t
            break
    assert late_task is not None
    now = [late_task - timedelta(seconds=5)]
    monkeypatch.setattr(mcp, "clock", lambda: now[0])
    first, _ = mcp.call(resident, "query", {"terms": ["late=yes"]})
    again, meta = mcp.call(resident, "query", {"terms": ["late=yes"]})
    assert meta["reused"] and again == first
    owed_then, _ = mcp.call(resident, "owed", {})
    now[0] = late_task + timedelta(seconds=1)  # the clock passes the deadline; nothing was written
    later, meta = mcp.call(resident, "query", {"terms": ["late=yes"]})
    assert meta["generation"] == 1 and not meta["reused"]
    assert len(later["matches"]) > len(first["matches"])
    assert unclocked(later) == unclocked(fresh(root, "query", {"terms": ["late=yes"]}, now[0]))
    owed_now, _ = mcp.call(resident, "owed", {})
    assert owed_now["at"] != owed_then["at"]
    assert unclocked(owed_now) == unclocked(fresh(root, "owed", {}, now[0]))


def test_an_event_opens_the_next_generation_before_any_call(box):
    """The watcher's event re-opens the answers at once: the next call finds them open."""
    import time

    root, resident = box
    first, meta = mcp.call(resident, "query", {"terms": ["type=request"]})
    assert meta["generation"] == 1
    letter_id = "2026-11-29T100000-planner-request-early-0000ffff"
    write_request(root, letter_id)
    end = time.monotonic() + 30
    while resident.generation < 2:  # no call is made meanwhile
        assert time.monotonic() < end, "the event never opened the answers again"
        time.sleep(0.02)
    doc, meta = mcp.call(resident, "query", {"terms": ["type=request"]})
    assert meta["generation"] >= 2
    assert any(r["id"] == letter_id for r in doc["matches"])
    assert unclocked(doc) == unclocked(fresh(root, "query", {"terms": ["type=request"]}, mcp.clock()))


def test_the_memo_is_bounded_and_keeps_the_newest():
    memo = mcp.Memo(size=3, budget=100)
    memo.begin(1, None)
    for n in range(5):
        memo.put(1, ("k", n), n, 10)
    assert [memo.get(1, ("k", n)) for n in range(5)] == [None, None, 2, 3, 4]  # at most three
    memo.put(1, ("big",), "big", 51)  # over half the budget: not kept, the others stay
    assert memo.get(1, ("big",)) is None and [memo.get(1, ("k", n)) for n in (2, 3, 4)] == [2, 3, 4]
    memo.put(1, ("half",), "half", 50)  # half of it: kept, the oldest go to make room
    assert memo.get(1, ("half",)) == "half" and memo.get(1, ("k", 2)) is None and memo.held == 70
    memo.put(1, ("k", 5), 5, 10)
    assert memo.get(1, ("k", 3)) is None and memo.get(1, ("k", 5)) == 5 and memo.held == 70
    assert memo.get(2, ("k", 5)) is None  # another generation's
    memo.put(0, ("old",), "old", 1)  # computed from answers since replaced: not kept
    assert memo.get(1, ("old",)) is None


def test_a_new_generation_answers_the_last_questions_before_they_are_asked(box):
    """After a change event the last questions asked are answered from the new answers in
    the background: the next such call is a reused result, and the right one."""
    import time

    root, resident = box
    asked = {"terms": ["type=request"]}
    mcp.call(resident, "query", asked)
    letter_id = "2026-11-29T100000-planner-request-again-0000abab"
    write_request(root, letter_id)
    end = time.monotonic() + 30
    while resident.generation < 2 or not resident.memo._kept:  # no call is made meanwhile
        assert time.monotonic() < end, "the new generation never answered the last question"
        time.sleep(0.02)
    doc, meta = mcp.call(resident, "query", asked)
    assert meta["reused"] and meta["generation"] >= 2
    assert any(r["id"] == letter_id for r in doc["matches"])
    assert unclocked(doc) == unclocked(fresh(root, "query", asked, mcp.clock()))


def test_the_memo_counts_what_its_results_take_and_keeps_within_its_budget(box, monkeypatch):
    """Each result is counted by what it takes in memory (document and text), and the memo
    holds no more than its budget beyond its newest result; answers stay the fresh ones."""
    import json

    root, resident = box
    now = mcp.clock()
    monkeypatch.setattr(mcp, "clock", lambda: now)
    doc, _ = mcp.call(resident, "query", {"terms": ["type=request"]})
    text = json.dumps(doc, ensure_ascii=False)
    assert mcp.footprint(doc, text) > 2 * len(text)  # a document takes more than its text
    assert mcp.footprint(doc) == mcp.footprint(doc, doc)  # each object counted once
    whole = mcp.footprint(doc, text)
    assert mcp.footprint(doc, text, beyond=whole) == whole
    assert len(text) < mcp.footprint(doc, text, beyond=len(text)) < whole  # counted only past the bound
    assert mcp.Memo(budget=2 * whole).weight(doc, text) == whole  # a memo counts what it could keep
    assert mcp.Memo(budget=whole).weight(doc, text) < whole  # and no further than half its budget
    budget = mcp.footprint(doc, text) * 2
    resident.memo = mcp.Memo(budget=budget)
    resident.memo.begin(resident.generation, resident._answers)
    asks = [("query", {"terms": ["type=request"]}), ("query", {"terms": ["state=open"]}),
            ("owed", {}), ("digest", {}), ("disputes", {}), ("check", {}), ("query", {"terms": ["type=request"]})]
    for name, arguments in asks * 2:
        doc, meta = mcp.call(resident, name, arguments)
        kept = resident.memo._kept
        assert resident.memo.held == sum(size if k[0] in ("check-problems", "query-result", "owed-view") else mcp.footprint(v)
                                         for k, (v, size) in kept.items())
        assert resident.memo.held <= budget or len(kept) == 1
        assert unclocked(doc) == unclocked(fresh(root, name, arguments, now)), name


def test_a_new_generation_lets_the_last_ones_letters_go(box):
    """The letters of the generation replaced are not kept alive by the index of the last
    plain list of letters asked of (``core.model``)."""
    import time

    from letterbox_tui.core import model

    root, resident = box
    letter_id = "2026-11-29T100000-planner-request-third-0000cdcd"
    mcp.call(resident, "leases", {})  # opens the answers
    mcp.call(resident, "thread", {"id": resident_letter_id(resident)})
    old = resident._answers.snapshot.letters
    assert model._INDEXED[0] is old  # the first generation is read from the letters: a plain list
    write_request(root, letter_id)
    end = time.monotonic() + 30
    while resident.generation < 2:
        assert time.monotonic() < end, "the event never opened the answers again"
        time.sleep(0.02)
    doc, meta = mcp.call(resident, "thread", {"id": letter_id})
    assert meta["generation"] >= 2 and doc
    assert model._INDEXED[0] is not old


def resident_letter_id(resident):
    return next(x.id for x in resident._answers.snapshot.letters if x.type == "request")


def test_once_the_watcher_runs_a_change_lists_only_the_folder_it_was_in(box, monkeypatch):
    """The folders no event was reported under are taken as the last opening listed them
    (``core.listings``): a change lists only the folder it was in, and each answer is the one computed from every letter."""
    import time

    from letterbox_tui.core import scan as scan_module

    monkeypatch.setattr("letterbox_tui.store.RACY_NS", -(10**12))  # every file and folder settled
    monkeypatch.setattr(scan_module, "RACY_NS", -(10**12))
    listed: list[str] = []
    real = scan_module._Scan._kept_folder
    monkeypatch.setattr(scan_module._Scan, "_kept_folder",
                        lambda self, entries, prefix: listed.append(prefix) or real(self, entries, prefix))
    root, resident = box
    mcp.call(resident, "query", {"terms": ["type=request"]})
    for n in range(3):
        listed.clear()
        letter_id = f"2026-11-29T10000{n}-planner-request-listed-0000ffff"
        write_request(root, letter_id)
        end = time.monotonic() + 30
        while True:  # until an answer reflects the event
            doc, meta = mcp.call(resident, "query", {"terms": ["type=request"]})
            if any(r["id"] == letter_id for r in doc["matches"]) and not meta["changes_pending"]:
                break
            assert time.monotonic() < end, "the new letter never showed"
            time.sleep(0.02)
        want = open_answers(root, mcp.clock(), use_store=False)
        assert unclocked(doc) == unclocked(mcp._document("query", want, {}, parse_query(["type=request"], mcp.clock()),
                                                         None))
        assert set(listed) == {"builder/inbox/"}, listed
    assert len(resident.listings._kept) > 4


def test_check_lists_temporaries_once_a_generation_and_ages_them_on_each_clock(box, monkeypatch):
    """``check``'s stale temporaries: listed once a generation (a temporary made, grown or
    removed is an event, and so a new generation), each one's age counted on the call's
    clock, so one that passes a day old while nothing changes is listed at once."""
    import os
    import time
    from types import SimpleNamespace

    from letterbox_tui.core import temporaries

    root, resident = box
    listed = []
    real = temporaries.find_temporaries
    monkeypatch.setattr(temporaries, "find_temporaries", lambda *a: listed.append(a) or real(*a))
    young = root / "builder" / "inbox" / ".young.md.tmp.AbC123"
    young.write_text("half a letter")
    then = time.time() - temporaries.STALE_AFTER + 60  # a day old in a minute
    os.utime(young, (then, then))

    def stale(doc):
        return sorted(p for f in doc["findings"] if f["code"] == "stale-temporary" for p in f["paths"])

    doc, meta = mcp.call(resident, "check", {})
    assert stale(doc) == [] and meta["generation"] == 1
    monkeypatch.setattr(temporaries, "time", SimpleNamespace(time=lambda: time.time() + 120))
    doc, meta = mcp.call(resident, "check", {})
    assert stale(doc) == ["builder/inbox/.young.md.tmp.AbC123"] and meta["generation"] == 1
    assert len(listed) == 1  # the second call aged the first listing
    old = root / "planner" / "processed" / ".old.md.tmp.0123456789ab"
    old.write_text("a killed writer's")
    os.utime(old, (then - 3600, then - 3600))
    end = time.monotonic() + 30
    while resident.generation < 2:
        assert time.monotonic() < end, "the event never opened the answers again"
        time.sleep(0.02)
    doc, meta = mcp.call(resident, "check", {})
    assert meta["generation"] >= 2
    assert stale(doc) == ["builder/inbox/.young.md.tmp.AbC123", "planner/processed/.old.md.tmp.0123456789ab"]
    assert len(listed) == 2


def test_a_question_asked_while_it_is_answered_waits_for_that_answer(box, monkeypatch):
    """The same question asked again while it is being answered (by another call, or by the
    refresher asking the last questions again after a change) is not answered twice: it
    waits, and is given the same result."""
    import sys
    import threading
    import time

    from letterbox_tui.core import documents

    root, resident = box
    mcp.call(resident, "leases", {})  # opens the answers
    started, release = threading.Event(), threading.Event()
    made = []
    real = documents.query_result

    def slow(answers, query):
        made.append(query)
        started.set()
        assert release.wait(30)
        return real(answers, query)

    monkeypatch.setattr(documents, "query_result", slow)
    asked = {"terms": ["type=request"]}
    results = {}
    first = threading.Thread(target=lambda: results.setdefault("first", mcp.call(resident, "query", asked)))
    second = threading.Thread(target=lambda: results.setdefault("second", mcp.call(resident, "query", asked)))
    first.start()
    assert started.wait(30)
    second.start()
    end = time.monotonic() + 30
    while True:  # until the second call waits for the first one's answer
        frame = sys._current_frames().get(second.ident)
        names = []
        while frame is not None:
            names.append(frame.f_code.co_name)
            frame = frame.f_back
        if "once" in names and names[0] == "wait":
            break
        assert second.is_alive() and time.monotonic() < end, names
        time.sleep(0.01)
    release.set()
    first.join(30)
    second.join(30)
    assert len(made) == 1
    (doc1, meta1), (doc2, meta2) = results["first"], results["second"]
    assert doc1 == doc2 and not meta1["reused"] and meta2["reused"]
    assert unclocked(doc1) == unclocked(fresh(root, "query", asked, mcp.clock()))
    assert resident.memo._flights == {}
