"""``query``, ``exists``, ``show``, ``current`` and ``answered`` from the derived index.

On an unchanged letterbox the answer is read from the index (``core.speed.index``) after
a ``stat`` of every file: no header is loaded and nothing is resolved. A changed one is
rescanned with the header cache and only what the change touches is re-derived, then the
answer is read the same way. With no index yet (or one made by other code), the command
runs from scratch as before (``cli.read``) and the index is built once the answer is out,
by a process that holds the index's writer lock until it is done: the same question asked
meanwhile waits for the answer memo it writes first; any other answers from the letters at
once (without the header cache) and leaves the index to it (``serve``).

Not served (from scratch as before): a partial scope (``--participant``), and
``LETTERBOX_TUI_NO_CACHE``.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from argparse import Namespace
from datetime import datetime, timezone
from typing import Any

from typing import TYPE_CHECKING

from letterbox_tui.core.speed import Later
from letterbox_tui.core.speed.index import WAIT_S, Index, Unusable, notice, set_aside

from . import held

ir = Later("index_rows", globals(), "ir")  # (first used once the proof runs)
#: the page cache of an answer read from the index (``early``), KB
READER_CACHE_KB = 2048

if TYPE_CHECKING:  # (``ir``, the model and the rest are loaded once the proof runs)
    from letterbox_tui.core.model import Scope


def _now() -> datetime:
    return datetime.now(timezone.utc)


class Served:
    """A fresh index to answer from, and the scope it answers over."""

    def __init__(self, ix: Index, began: datetime, proof=None) -> None:
        self.ix = ix
        self.began = began
        #: the proof that the letterbox is as the index recorded it, while it still runs
        #: (``core.speed.memo.Proof``); None once proven
        self.proof = proof
        self.scanned_at = began.isoformat().replace("+00:00", "Z")
        self.scope = ix.scope(self.scanned_at)
        from letterbox_tui.core.sync import status

        self.scope.sync = status(ix.root)

    def scope_text(self) -> str:
        """The scope as compact JSON: what the index recorded, then ``sync`` and
        ``scanned_at`` (the keys ``Scope.to_json`` ends with)."""
        return (self.ix.meta["scope"][:-1] + ',"sync":' + ir.dumps(self.scope.sync)
                + ',"scanned_at":' + ir.dumps(self.scanned_at) + "}")


def early(args: Namespace) -> Served | None:
    """The index, served at once with the proof that it is fresh still running
    (``Served.proof``: the caller makes its answer meanwhile and shows it only once the
    proof holds, ``_guarded``), when there is one that may be; else None, and ``serve``
    goes the usual way. Nothing is written, no lock taken and nothing said: whatever is
    wrong (not a letterbox, an unusable index) ``serve`` says, in its own order."""
    if os.environ.get("LETTERBOX_TUI_NO_CACHE") or getattr(args, "participant", None) or getattr(args, "fetch", False):
        return None
    from letterbox_tui.core.errors import LetterboxError

    from .common import open_root, settings_utc

    try:
        root = str(open_root(args))
        utc = settings_utc(root)
    except LetterboxError:
        return None
    began = _now()
    ix = Index(root, utc)
    try:
        if ix.open() and ix.why_not() is None:
            # a reader's pages are read once each: a small page cache is reused, not made
            ix.db.execute(f"PRAGMA cache_size = -{READER_CACHE_KB}")  # (16 MB: ~4,000 page faults)
            proof = ix.start_proof()
            if proof is not None:
                return Served(ix, began, proof)
    except (sqlite3.Error, Unusable, OSError):
        pass
    ix.close()
    return None


def serve(args: Namespace, poll=None, *, stale: bool = False, key: str | None = None) -> Served | int | None:
    """A fresh index for this command, made fresh first if need be; None: answer from
    scratch (then, when that is worth it, the index is built after the answer). While it
    waits for another process writing the index, ``poll()`` is asked now and then: an exit
    code from it (the answer memo replayed meanwhile) is returned as it is. ``stale``: the
    proof that the index is fresh failed (``early``): go straight on to bring it up to date.

    ``key``: this question's answer memo key. A command that finds the index being built
    after another question (the lock's holder says so: ``index_lock``) does not wait for
    the build: it answers from the letters (the header cache's scan, as with no index) and
    leaves the index to the builder; only the same question waits, for the memo the
    builder writes first."""
    if os.environ.get("LETTERBOX_TUI_NO_CACHE") or getattr(args, "participant", None):
        return None
    from .common import open_root, settings_utc

    root = str(open_root(args))
    utc = settings_utc(root)
    began = _now()
    ix = Index(root, utc)
    try:
        if _usable(ix) and not stale and ix.fresh():
            return Served(ix, began)
    except sqlite3.OperationalError as exc:  # locked past SQLite's wait: a new one is built
        notice(f"the derived index {ix.path} is locked ({exc}); answering from the letters and rebuilding it")
        ix.close()
        ix.meta = {}
    from letterbox_tui.core.speed.index_lock import WriterLock  # (json, fcntl: after the proof)

    lock = WriterLock(ix.path)
    replayed: list[int] = []
    mine = f"build {key}" if key is not None else None

    def answered_meanwhile() -> bool:
        if poll is not None:
            code = poll()
            if code is not None:
                replayed.append(code)
                return True
        said = lock.holder() or ""
        # a build for another question (or this one's memo already written): not worth waiting
        return said == "index" or (said.startswith("build ") and said != mine)

    if not lock.acquire(WAIT_S, answered_meanwhile):
        ix.close()
        if replayed:
            return replayed[0]
        said = lock.holder() or ""
        if said == "index" or said.startswith("build "):
            # a builder writes the header cache and the index: this scan goes without the
            # cache (loading a million rows costs more than the accelerator's reading them
            # afresh: bench's 'scan only' against 'warm cache') and leaves the writing to it
            from . import common

            common.use_header_cache = False
        return None  # from scratch (or: held past any sensible wait)
    try:
        began = _now()
        if ix.db is None or ix.why_not() is not None:
            ix.close()
            if _usable(ix, said=True) and ix.fresh():  # a builder finished while we waited
                lock.release()
                return Served(ix, began)
        elif ix.fresh():
            lock.release()
            return Served(ix, began)
        if ix.db is None or ix.why_not() is not None:
            _build_after(ix, lock, utc, key)
            return None
        lock.announce("refresh")
        _refresh(ix, root, utc)
        lock.release()
        return Served(ix, began)
    except (sqlite3.DatabaseError, Unusable) as exc:
        ix.close()
        set_aside(ix.path, str(exc))
        _build_after(ix, lock, utc, key)
        return None


def _usable(ix: Index, said: bool = False) -> bool:
    """Open ``ix``: True when it describes this letterbox with this code (``said``: why not
    was said already, before the wait)."""
    try:
        if not ix.open():
            return False
    except Unusable as exc:
        set_aside(ix.path, str(exc))
        return False
    why = ix.why_not()
    if why is None:
        return True
    if why != "made by another build" and why != "empty" and not said:
        notice(f"the derived index {ix.path} is {why}; rebuilding it")
    return False


def _refresh(ix: Index, root: str, utc: bool) -> None:
    from letterbox_tui.core.speed.choice import scan_cached
    from letterbox_tui.core.resolve import resolve

    from letterbox_tui.core.speed.ending import keep

    at = _now()
    snapshot = scan_cached(root, None, id_time_is_utc=utc, background=True, freeze=True)
    keep(snapshot)
    ix.refresh(snapshot, lambda s: resolve(s, at))


def _build_after(ix: Index, lock, utc: bool, key: str | None = None) -> None:
    """Build the index from the snapshot the command is about to scan, once its answer is
    out and the answer memo is written (then the header cache; keeping the writer lock
    until then: the same question meanwhile waits for the memo; another one answers from
    the letters, scanning without the header cache, and does not wait: ``serve``)."""
    from . import common

    lock.announce(f"build {key if key is not None else '-'}")

    def loaded(snapshot) -> None:
        from letterbox_tui.core.speed.after import INDEX_DETACHED_ROWS, after_answer

        common.on_loaded = None
        if snapshot.scope.partial:
            lock.release()
            return

        answering = os.getpid()

        def work() -> None:
            from letterbox_tui.core.resolve import resolve

            lock.announce("index")  # the memo is written (it goes first): nobody need wait
            if os.getpid() != answering:  # detached: yield the CPU to the questions asked meanwhile
                try:
                    os.nice(10)
                except OSError:
                    pass
            try:
                ix.build(snapshot, lambda s: resolve(s, _now()))
            except (sqlite3.Error, Unusable) as exc:
                notice(f"cannot write the derived index {ix.path}: {exc}")
            finally:
                ix.close()
                lock.release()

        # before the header cache's save (a question asked during the build goes without
        # it: ``serve``), so that the builder starts from what the answer left, not from
        # what saving a million rows adds; the memo still goes first (``memo.record_after_answer``)
        after_answer(work, big=len(snapshot.letters) >= INDEX_DETACHED_ROWS, first=True)

    def abandon() -> None:
        ix.close()
        lock.release()

    loaded.abandon = abandon  # type: ignore[attr-defined]
    common.on_loaded = loaded


def _abandon_unloaded_build() -> None:
    """The command ended without loading its snapshot (it refused or failed first): the
    build waiting for it is dropped and the writer lock released, so a process that goes
    on (the app, a test) never waits on its own lock."""
    from . import common

    abandon = getattr(common.on_loaded, "abandon", None)
    if abandon is not None:
        common.on_loaded = None
        abandon()


# --- the commands ---------------------------------------------------------------------

def _or_scratch(command: str, args: Namespace, *more: Any) -> int:
    from . import read

    return getattr(read, f"cmd_{command}")(args, *more)


def _guarded(command: str, args: Namespace, answer, memoised=None, prepare=None) -> int:
    """Answer from the index, or from scratch when it cannot serve (or fails on the way:
    nothing has been printed before the whole answer is ready). ``memoised``: the answer
    memo, asked again while waiting for a builder (it records the memo first).
    ``prepare(now)``: the command's own checks (its errors exit 2 before any answer).

    On a letterbox that may be unchanged the answer is made while the proof that it is
    runs (``early``; the proof's ``stat`` calls run on threads of their own, without the
    GIL, and SQLite releases it too): it is held back, and shown only once the proof
    holds; else dropped, and the index brought up to date first as ever. A terminal is
    answered once the proof holds (what it shows depends on the terminal), the answer's
    modules loaded meanwhile."""
    more = (memoised,) if memoised is not None else ()
    poll = memoised.replay if memoised is not None else None
    key = memoised.key if memoised is not None else None
    first = early(args)
    if prepare is not None:
        try:
            prepare(first.began if first is not None else _now())
        except BaseException:
            if first is not None:
                first.proof.stop()
                first.ix.close()
            raise
    if first is None:
        served = serve(args, poll, key=key)
    else:
        if sys.stdout.isatty():
            _load_answer_modules(command)
            held = first.proof.holds()
        else:
            code = _answer_meanwhile(command, args, first, answer, more)
            if code is not None:
                return code
            held = False
        if held:
            first.proof = None
            served = first
        else:
            first.ix.close()
            served = serve(args, poll, stale=True, key=key)
    if isinstance(served, int):
        return served
    if served is None:
        from . import common

        try:
            return _or_scratch(command, args, *more)
        finally:
            common.use_header_cache = None
            _abandon_unloaded_build()
    try:
        with served.ix.reading():
            out = answer(served)
    except (sqlite3.DatabaseError, Unusable) as exc:
        served.ix.close()
        set_aside(served.ix.path, str(exc))
        return _or_scratch(command, args, *more)
    _finished(served.ix)
    return out


def _finished(ix: Index) -> None:
    """Done with ``ix`` after its answer: closed, or, when the process ends right after
    (``core.speed.ending``), kept open until then (a reader holds no lock between reads,
    and closing unmaps the file page by page: a few ms at 100,000 letters)."""
    from letterbox_tui.core.speed import ending

    if ending.ending() and ix.db is not None:
        ending.keep(ix.db)
        ix.db = None
    else:
        ix.close()


def _answer_meanwhile(command: str, args: Namespace, served: Served, answer, more: tuple) -> int | None:
    """``answer(served)`` made while ``served.proof`` runs, with what it writes held back;
    shown (and its exit code returned) once the proof holds. None, nothing shown, when the
    proof does not hold: the answer was made from an index the letterbox no longer matches."""
    out, err = held.Held(sys.stdout), held.Held(sys.stderr)
    real = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    failed: BaseException | None = None
    code = 0
    try:
        with served.ix.reading():
            code = answer(served)
    except Exception as exc:  # noqa: BLE001 - judged below, once the proof is in
        failed = exc
    finally:
        sys.stdout, sys.stderr = real
    if not served.proof.holds():
        served.ix.close()
        return None
    served.proof = None
    if isinstance(failed, (sqlite3.DatabaseError, Unusable)):  # (nothing is shown of it)
        served.ix.close()
        set_aside(served.ix.path, str(failed))
        return _or_scratch(command, args, *more)
    _finished(served.ix)
    out.show()
    err.show()
    if failed is not None:
        raise failed
    return code


def _load_answer_modules(command: str) -> None:
    """Import what answering ``command`` on a terminal loads (while the proof runs)."""
    from . import output  # noqa: F401

    if command in ("show", "current", "answered", "exists"):
        from . import read  # noqa: F401
    try:
        import rich.console  # noqa: F401
        import rich.table  # noqa: F401
    except ImportError:  # pragma: no cover - a dependency
        pass


class _Parsed:
    """The query's terms parsed (errors exit 2 before any answer) at the command's clock,
    once the proof runs (``_guarded``'s ``prepare``)."""

    def __init__(self, terms: list[str]) -> None:
        self.terms = terms
        self.query = None

    def __call__(self, now: datetime) -> None:
        from letterbox_tui.core.query import parse_query

        self.query = parse_query(self.terms, now)


def cmd_query(args: Namespace, memoised=None) -> int:
    parsed = _Parsed(args.terms)
    return _guarded("query", args, lambda s: _query(s, parsed.query, args), memoised, parsed)


def cmd_exists(args: Namespace, memoised=None) -> int:
    parsed = _Parsed(args.terms)
    return _guarded("exists", args, lambda s: _exists(s, parsed.query, args), memoised, parsed)


def cmd_show(args: Namespace) -> int:
    return _guarded("show", args, lambda s: _one("show", s, args))


def cmd_current(args: Namespace) -> int:
    return _guarded("current", args, lambda s: _one("current", s, args))


def cmd_answered(args: Namespace) -> int:
    return _guarded("answered", args, lambda s: _one("answered", s, args))


def _exit(scope: Scope) -> int:
    return 0 if scope.complete else 3


def _write(*parts: str) -> None:
    """Compact JSON given in parts, written as they are (never joined first: at a million
    letters an answer is hundreds of MB); indented for a person, as ``emit_json`` does."""
    if sys.stdout.isatty():
        from . import output

        sys.stdout.write(output.dumps_json(ir.json.loads("".join(parts)), indent=2) + "\n")
        return
    sys.stdout.writelines(parts)
    sys.stdout.write("\n")


def _rows_parts(rows: list, size: int = 2000, sep=","):
    """Rows joined by commas a slice at a time (``sep=b","``: rows of bytes)."""
    for at in range(0, len(rows), size):
        yield (sep if at else sep[:0]) + sep.join(rows[at : at + size])


def _utf8_pipe() -> bool:
    return held.utf8_pipe(sys.stdout)


def _matched(s: Served, query, *, texts: bool = True, judged: bool = True, raw: bool = False) -> tuple[list, list]:
    """The matching rows' JSON (as stored) and the unknown rows with their reasons, in
    scan order: SQL filters and judges every row of the narrow ``q``; only an unknown one is
    read whole (its reasons are the terms'). ``texts=False``: the matches' numbers, not their
    JSON (``exists`` counts them); ``judged=False``: the unknown rows' numbers, not yet judged
    (``_judged``), or with ``texts`` each unknown row's JSON with its reasons
    (``index_rows.spliced``); ``raw``: the rows' JSON as the UTF-8 bytes SQLite keeps."""
    at_ns = ir.ns(query.at or _now())
    where, params = ir.sql_filter(query, at_ns)
    verdict = ir.sql_verdict(query)
    matches: list[str] = []
    doubtful: list[str] = []
    row = "t.row0, q.sent_ns IS NULL, q.deadline_ns IS NULL, " if texts else ""
    joined = f"JOIN texts AS t ON t.tn = {ir.TEXT_TN} " if texts else ""
    db = s.ix.db
    if raw:
        db.text_factory = bytes  # (every text column)
    try:
        for n, *text, v in db.execute(
            f"SELECT q.n, {row}{verdict} AS v FROM q {joined}WHERE ({where}) AND v > 0 ORDER BY q.n", params,
        ):
            if v == 2:
                matches.append(text[0] if texts else n)
            elif texts and not judged:
                doubtful.append(text)
            else:
                doubtful.append(n)
    finally:
        db.text_factory = str
    if texts and not judged:
        return matches, [t[0] if not (t[1] or t[2]) else ir.spliced(query, *t) for t in doubtful]
    return matches, (_judged(s, query, doubtful) if judged else doubtful)


def _judged(s: Served, query, doubtful: list[int]) -> list[tuple[ir.Stored, tuple[str, ...]]]:
    """The rows numbered ``doubtful`` (in that order), each with the reasons it is unknown."""
    at_ns = ir.ns(query.at or _now())
    unknown = []
    for at in range(0, len(doubtful), 500):
        part = {f"u{i}": n for i, n in enumerate(doubtful[at : at + 500])}
        for r in s.ix.rows(f"n IN ({','.join(':' + k for k in part)})", part):
            st = ir.Stored(r, at_ns)
            value, why = ir.judge(query, st)
            unknown.append((st, why))  # (value is "unknown": the verdict said so)
    return unknown


def _query(s: Served, query, args: Namespace) -> int:
    raw = args.json and _utf8_pipe()
    if args.json:  # the unknown rows' JSON read with the matches' (``index_rows.spliced``)
        m, u = _matched(s, query, raw=raw, judged=False)
    if raw:  # the rows' JSON as SQLite keeps it, UTF-8: written as it is (nothing decoded, encoded)
        sys.stdout.flush()
        held.write_bytes(sys.stdout.buffer, [b'{"matches":[', *held.between(m, b","), b'],"unknown":[',
                                             *held.between(u, b","), b'],"scope":', s.scope_text().encode(), b"}\n"])
        return _exit(s.scope)
    if args.json:
        _write('{"matches":[', *_rows_parts(m), '],"unknown":[', *_rows_parts(u), '],"scope":', s.scope_text(), "}")
        return _exit(s.scope)
    m, unknown = _matched(s, query)
    u = [x.row_text(why) for x, why in unknown]
    from . import output

    json = ir.json
    rows_m = [json.loads(x) for x in m]
    rows_u = [json.loads(x) for x in u]
    con = output.console()
    if rows_m:
        con.print(output.rows_table(rows_m))
    if rows_u:
        con.print(output.text(f"unknown ({len(rows_u)}): the record cannot settle these rows", "bold yellow"))
        con.print(output.rows_table(rows_u))
        for r, (_, why) in zip(rows_u, unknown):
            con.print(output.text(f"  {r['id']}: {output.reasons_line([json.loads(w) for w in why])}"))
    counts = f"{len(rows_m)} match{'es' if len(rows_m) != 1 else ''}, {len(rows_u)} unknown"
    output.print_scope(con, s.scope, counts)
    return _exit(s.scope)


def _scope_reasons(s: Served) -> list[str]:
    """``core.views.exists.scope_reasons`` from what the index recorded."""
    from letterbox_tui.core.model import Reason

    unreadable, unsupported, partial, atomic, participants = s.ix.globals()
    out = []
    for path, _seat, _folder, error, legible, *_ in unreadable:
        lid = dict(legible).get("id", "")
        out.append(Reason("unreadable-file", "match", error, (lid,) if lid else (), (path,)))
    for path, reason in unsupported:
        out.append(Reason("unsupported-entry", "match", reason, (), (path,)))
    if partial:
        out.append(Reason("outside-scope", "match", "partial scope: " + ", ".join(participants) + " only"))
    if not atomic:
        out.append(Reason("non-atomic-scan", "match", "files changed while the scan ran"))
    return [ir.dumps(r.to_json()) for r in out]


def _exists(s: Served, query, args: Namespace) -> int:
    # counted in SQL: no row's JSON is read, and an unknown row's reasons only when the
    # answer is "unknown" (they are its reasons)
    matches, unknown = _matched(s, query, texts=False, judged=False)
    scope = s.scope
    if matches:
        value, reasons = "yes", []
    elif scope.complete and not unknown:
        value, reasons = "no", []
    else:
        unknown = _judged(s, query, unknown)
        reasons = list(dict.fromkeys([r for _, why in unknown for r in why] + _scope_reasons(s)))
        value = "unknown"
    if args.json:
        _write(f'{{"exists":"{value}","matches":{len(matches)},"unknown":{len(unknown)},'
               f'"reasons":[{",".join(reasons)}],"scope":{s.scope_text()}}}')
        return _exit(scope)
    from . import output
    from .read import _SHOWN_REASONS

    from letterbox_tui.core.sync import as_of

    con = output.console()
    if value == "no" and (copy := as_of(scope.sync)):  # absent here, as of the last fetch
        con.print(output.answer_text(value) + output.text(f" ({copy})"))
    else:
        con.print(output.answer_text(value))
    for r in reasons[:_SHOWN_REASONS]:
        con.print(output.text("  " + output.reasons_line([ir.json.loads(r)])))
    if len(reasons) > _SHOWN_REASONS:
        con.print(output.text(f"  ... and {len(reasons) - _SHOWN_REASONS} more reasons (--json lists them all)"))
    output.print_scope(con, scope, f"{len(matches)} matches, {len(unknown)} unknown")
    return _exit(scope)


# --- one letter -----------------------------------------------------------------------
# ``show``, ``current`` and ``answered`` run as ever (``cli.read``, ``core.views``) over
# the part of the letterbox their answers rest on: the letter's components, rebuilt from
# the index, with everything that bears on every letter (``Index.component_snapshot``).

def _one(command: str, s: Served, args: Namespace) -> int:
    from . import read

    part = s.ix.component_snapshot(args.id, s.scanned_at)  # a token, display id, path: a whole scan
    return getattr(read, f"cmd_{command}")(args, *([part] if any(x.id == args.id for x in part.letters) else []))
