"""The derived index brought up to date by components (``Index.refresh``) holds exactly what
one built from scratch holds, over random sequences of letters added, moved, removed and
edited, sidecars appearing and going, and now and then an unreadable file: supersession
(chains, forks, cycles), replies, acks, disputes and rulings change other letters' answers,
and the property holds all the same."""

from __future__ import annotations

import os
from datetime import datetime, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from letterbox_tui.core.resolve import resolve
from letterbox_tui.core.scan import scan
from letterbox_tui.core.speed import index as index_mod
from letterbox_tui.core.speed import index_build
from letterbox_tui.core.speed.index import Index

AT = datetime(2026, 6, 1, tzinfo=timezone.utc)
SEATS = ("alpha", "beta", "gamma")
TYPES = ("request", "result", "nack", "ack", "info", "dispute", "ruling", "decision")


def _resolver(snapshot):
    return resolve(snapshot, AT)


def _rows(ix: Index) -> list[tuple]:
    """Every letter's stored columns (``letters``, its ``q`` row, its texts) but the numbers
    that place them, which a refresh and a build choose differently; the numbers in scan
    order, and no row of ``q`` or the texts without its letter."""
    assert index_build.misplaced(ix.db) == []
    ctimes = dict(ix.db.execute("SELECT path, ctime_ns FROM letters"))
    return sorted(r + (ctimes[p],) for p, r in index_build.stored_rows(ix.db).items())


def _meta(ix: Index) -> dict:
    return {"scope": ix.meta["scope"], "globals": ix.meta["globals"], "sidecars": ix._sidecars()}


add = st.tuples(st.just("add"), st.sampled_from(SEATS), st.sampled_from(SEATS), st.sampled_from(TYPES),
                st.integers(0, 30), st.sampled_from(["re", "supersedes", "thread", "disputes", "rules_on", "none",
                                                     "bad"]),
                st.integers(0, 30), st.booleans(), st.sampled_from(["", "2026-05-01T00:00:00Z",
                                                                   "2026-07-01T00:00:00Z", "soon"]))
op = st.one_of(
    add,
    # several letters at once (numbered between the same two neighbours: ``index_build.place``)
    st.tuples(st.just("many"), st.lists(st.one_of(add, st.tuples(st.just("move"), st.integers(0, 30))),
                                        min_size=2, max_size=4)),
    st.tuples(st.just("move"), st.integers(0, 30)),
    st.tuples(st.just("delete"), st.integers(0, 30)),
    st.tuples(st.just("edit"), st.integers(0, 30), st.sampled_from(["priority", "supersedes", "re", "type"]),
              st.integers(0, 30)),
    st.tuples(st.just("sidecar"), st.integers(0, 30)),
    st.tuples(st.just("unreadable"), st.integers(0, 30)),
    st.tuples(st.just("touch"), st.integers(0, 30)),
    st.tuples(st.just("rewrite"), st.integers(0, 30)),  # the same bytes, a new file (a checkout)
    st.tuples(st.just("touch_all"), st.booleans()),  # every file: touched, or written anew
)


class Box:
    def __init__(self, root) -> None:
        self.root = root
        self.n = 0
        for seat in SEATS:
            for folder in ("inbox", "processed"):
                (root / seat / folder).mkdir(parents=True)

    def files(self):
        return sorted(p for p in self.root.glob("*/*/*.md"))

    def ids(self):
        return [p.name[:-3] for p in self.files()]

    def pick(self, i):
        files = self.files()
        return files[i % len(files)] if files else None

    def write(self, path, fields: dict) -> None:
        text = "---\n" + "".join(f"{k}: {v}\n" for k, v in fields.items() if v is not None) + "---\nbody\n"
        path.write_text(text)

    def touch(self, path) -> None:
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_007))

    def rewrite(self, path) -> None:
        """The same bytes as a new file (a new inode, mtime and ctime), as git writes them."""
        data = path.read_bytes()
        tmp = path.with_name("." + path.name + ".tmp")
        tmp.write_bytes(data)
        os.utime(tmp, ns=(0, path.stat().st_mtime_ns + 2_000_000_011))
        tmp.replace(path)

    def apply(self, step) -> None:
        kind = step[0]
        if kind == "many":
            for one in step[1]:
                self.apply(one)
        elif kind == "add":
            _, frm, to, typ, target, how, other, ack, deadline = step
            self.n += 1
            lid = f"m{self.n:03d}"
            ids = self.ids()
            ref = ids[target % len(ids)] if ids else "nothing"
            fields = {"id": lid, "from": frm, "to": to, "type": typ, "requires_ack": "true" if ack else "false",
                      "sent": "2026-05-0%dT00:00:00Z" % (1 + self.n % 9), "deadline": deadline or None}
            if how == "disputes":
                fields["disputes"] = f"{ref},{ids[other % len(ids)] if ids else 'x'}"
            elif how == "bad":
                fields["supersedes"] = f"{ref} and more"
            elif how != "none":
                fields[how] = ref
            if typ == "ruling" and ids:
                fields["rules_on"] = ref
                fields["upholds"] = ids[other % len(ids)]
            # replies go to the sender's inbox, others to the recipient's
            seat = frm if typ in ("result", "nack", "ack") and how == "re" else to
            self.write(self.root / seat / "inbox" / f"{lid}.md", fields)
        elif kind == "move":
            p = self.pick(step[1])
            if p is not None and p.parent.name == "inbox":
                p.rename(p.parent.parent / "processed" / p.name)
        elif kind == "delete":
            p = self.pick(step[1])
            if p is not None:
                p.unlink()
                side = p.with_name(p.name + ".ack")
                if side.exists():
                    side.unlink()
        elif kind == "edit":
            p = self.pick(step[1])
            if p is None:
                return
            lines = p.read_text().split("---\n")[1].splitlines()
            fields = dict(line.split(": ", 1) for line in lines if ": " in line)
            ids = self.ids()
            key = step[2]
            if key == "priority":
                fields["priority"] = "now" if fields.get("priority") != "now" else "whenever"
            elif key == "type":
                fields["type"] = "result" if fields.get("type") != "result" else "info"
            else:
                fields[key] = ids[step[3] % len(ids)]
            fields["x-edit"] = "e" * (len(fields.get("x-edit", "")) + 1)  # the size changes too
            self.write(p, fields)
        elif kind == "sidecar":
            p = self.pick(step[1])
            if p is not None and p.parent.name == "inbox":
                side = p.with_name(p.name + ".ack")
                side.unlink() if side.exists() else side.write_text("")
        elif kind == "touch":
            p = self.pick(step[1])
            if p is not None:
                self.touch(p)
        elif kind == "rewrite":
            p = self.pick(step[1])
            if p is not None:
                self.rewrite(p)
        elif kind == "touch_all":
            for p in self.files():
                self.rewrite(p) if step[1] else self.touch(p)
        elif kind == "unreadable":
            p = self.pick(step[1])
            if p is not None:
                p.write_text(p.read_text().replace("---\nbody", "\tbroken\n---\nbody", 1))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(op, min_size=1, max_size=14), st.lists(op, min_size=3, max_size=12))
def test_refresh_equals_rebuild(tmp_path_factory, setup, steps):
    box = Box(tmp_path_factory.mktemp("box"))
    for step in setup:
        box.apply(step)
    snapshot = scan(box.root, id_time_is_utc=False)
    live = Index(str(box.root), False)
    live.write_all(snapshot, _resolver(snapshot))
    for n, step in enumerate(steps):
        box.apply(step)
        snapshot = scan(box.root, id_time_is_utc=False)
        live.refresh(snapshot, _resolver)
        fresh = Index(str(box.root), False, path=str(box.root.parent / f"scratch-{n}.index"))
        fresh.write_all(snapshot, _resolver(snapshot))
        assert _rows(live) == _rows(fresh), step
        assert _meta(live) == _meta(fresh), step
        fresh.close()
    live.close()


def test_refresh_touches_only_the_component(tmp_path):
    """A reply to one task re-derives that task's component, not the whole letterbox."""
    box = Box(tmp_path / "box")
    for i in range(40):
        box.apply(("add", "alpha", "beta", "request", 0, "none", 0, True, ""))
    snapshot = scan(box.root, id_time_is_utc=False)
    ix = Index(str(box.root), False)
    ix.write_all(snapshot, _resolver(snapshot))
    box.write(box.root / "alpha" / "inbox" / "m007--beta--result.md",
              {"id": "m007--beta--result", "from": "beta", "to": "alpha", "type": "result", "re": "m007",
               "requires_ack": "false", "sent": "2026-05-02T00:00:00Z"})
    snapshot = scan(box.root, id_time_is_utc=False)
    assert ix.refresh(snapshot, _resolver) == 2  # the task and its reply
    (answered,) = ix.db.execute("SELECT answered FROM letters WHERE id = 'm007'").fetchone()
    assert answered == "yes"


def test_a_wholesale_stat_change_keeps_every_row(tmp_path):
    """Every file touched, or written anew with the same bytes (a git checkout): nothing is
    re-derived, every row's stat follows the files, and the index is what a rebuild makes;
    with one letter edited as well, only its component is re-derived."""
    box = Box(tmp_path / "box")
    for i in range(30):
        box.apply(("add", "alpha", "beta", "request", i, "re" if i % 3 else "none", 0, True, ""))
    snapshot = scan(box.root, id_time_is_utc=False)
    ix = Index(str(box.root), False)
    ix.write_all(snapshot, _resolver(snapshot))
    for n, rewrite in enumerate((False, True)):
        box.apply(("touch_all", rewrite))
        snapshot = scan(box.root, id_time_is_utc=False)
        assert ix.refresh(snapshot, _resolver) == 0
        fresh = Index(str(box.root), False, path=str(tmp_path / f"scratch-{n}.index"))
        fresh.write_all(snapshot, _resolver(snapshot))
        assert _rows(ix) == _rows(fresh)
        fresh.close()
    box.apply(("touch_all", True))
    box.apply(("edit", 4, "priority", 0))
    snapshot = scan(box.root, id_time_is_utc=False)
    edited = box.pick(4).name[:-3]
    (comp,) = ix.db.execute("SELECT comp FROM letters WHERE id = ?", (edited,)).fetchone()
    (size,) = ix.db.execute("SELECT count(*) FROM letters WHERE comp = ?", (comp,)).fetchone()
    assert 1 <= ix.refresh(snapshot, _resolver) == size < 30
    fresh = Index(str(box.root), False, path=str(tmp_path / "scratch-edit.index"))
    fresh.write_all(snapshot, _resolver(snapshot))
    assert _rows(ix) == _rows(fresh)
    fresh.close()
    ix.close()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(op, min_size=1, max_size=20))
def test_a_build_a_few_components_at_a_time_equals_one_resolution(tmp_path_factory, monkeypatch, setup):
    """``Index.build`` resolves whole components a slice at a time (here 3 letters a slice):
    the same rows as one resolution of the whole letterbox."""
    box = Box(tmp_path_factory.mktemp("box"))
    for step in setup:
        box.apply(step)
    snapshot = scan(box.root, id_time_is_utc=False)
    whole = Index(str(box.root), False, path=str(box.root.parent / "whole.index"))
    whole.write_all(snapshot, _resolver(snapshot))
    monkeypatch.setattr(index_build, "CHUNK", 3)
    sliced = Index(str(box.root), False, path=str(box.root.parent / "sliced.index"))
    figures = sliced.build(snapshot, _resolver)
    assert figures["letters"] == len(snapshot.letters) and figures["seconds"] >= 0
    assert _rows(sliced) == _rows(whole)
    assert _meta(sliced) == _meta(whole)
    assert index_mod.built(sliced.path)["letters"] == len(snapshot.letters)
    whole.close()
    sliced.close()
