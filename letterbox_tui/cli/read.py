"""The reading commands (SPEC 6, 7): query, exists, show, current, answered, thread, owed,
disputes, check, digest. Each parses its input first (errors exit 2 before any scan),
scans, resolves at one clock, and prints text or ``--json``. Nothing here writes.

What only one command uses (check, digest, owed, core.files) is imported inside it: every
command's process start pays for this module's imports. Each command runs with the cyclic
garbage collector paused (``_collector_paused``).
"""

from __future__ import annotations

from argparse import Namespace
from collections.abc import Callable
from datetime import datetime, timezone
from functools import wraps
from typing import TYPE_CHECKING, Any

from letterbox_tui.core.collector import paused_gc
from letterbox_tui.core.model import Snapshot
from letterbox_tui.core.query import Query, QueryResult, parse_query, run_query
from letterbox_tui.core.resolve import Resolution, resolve
from letterbox_tui.core.rows import row

from . import keep, output
from .common import check_seat as _check_seat
from .common import load, parse_at, scope_exit

if TYPE_CHECKING:  # cli.memoised calls this module: it is not imported back
    from .memoised import Memoised

#: ``show`` reads at most this much of a body (``core.views.letterfile.BODY_MAX``).
BODY_MAX = 1 << 20
#: ``exists`` lists this many reasons as text (all of them in ``--json``).
_SHOWN_REASONS = 20


# --- shared -------------------------------------------------------------------------

def _collector_paused(command: Callable[..., int]) -> Callable[..., int]:
    """Run a reading command with the cyclic garbage collector paused (then as it was).

    A reading command is short and makes no garbage cycles worth finding, but at 100,000
    letters the resolver's indexes, the rows and the JSON are hundreds of thousands of
    containers, and the collector's passes over them (about 550 in one warm query) cost
    0.3 s of CPU. Reference counting still frees everything as usual.
    """

    @wraps(command)
    def run(args: Namespace, *more: Any) -> int:
        with paused_gc():
            return command(args, *more)

    return run


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _resolved(args: Namespace, at: datetime, snapshot: Snapshot | None = None) -> tuple[Snapshot, Resolution]:
    """Scan (unless ``snapshot`` is given: the derived index's part of the letterbox that
    holds every answer about the letter asked for, ``cli.indexed``) and resolve at ``at``."""
    if snapshot is None:
        _, _, snapshot = load(args)
    res = resolve(snapshot, at)
    keep(res)
    return snapshot, res


# --- query, exists ----------------------------------------------------------------

def _run(args: Namespace) -> tuple[Query, Snapshot, Resolution, QueryResult]:
    now = _now()
    query = parse_query(args.terms, now)
    snapshot, res = _resolved(args, query.at or now)
    result = run_query(query, res)
    keep(result)
    return query, snapshot, res, result


def _query_json(result: QueryResult, res: Resolution, scope) -> list[Callable[[], str]]:
    """The compact JSON of ``{"matches": rows, "unknown": rows, "scope": ...}`` as pieces
    (``output.json_pieces``), each made when called, the same text each time: written in
    order they are the whole document encoded at once, never a whole list of rows or the
    whole text in memory (at 100,000 letters those were tens of MB)."""
    return [
        lambda: '{"matches":[',
        *output.json_pieces(result.matches, lambda x: row(x, res)),
        lambda: '],"unknown":[',
        *output.json_pieces(result.unknown, lambda xw: row(xw[0], res, xw[1])),
        lambda: '],"scope":' + output.dumps_json(scope.to_json(), indent=None) + "}",
    ]


@_collector_paused
def cmd_query(args: Namespace, memo: Memoised | None = None) -> int:
    """``memo``: the answer memo to record into (``cli.memoised`` tried to replay it)."""
    query, snapshot, res, result = _run(args)
    scope = snapshot.scope
    if memo is not None:
        return memo.emit_pieces(_query_json(result, res, scope), snapshot, res, query)
    if args.json and output.json_indent() is None:
        from letterbox_tui.core.speed.ending import ending

        from .halves import write_pieces

        write_pieces(_query_json(result, res, scope), fork=ending())
        return scope_exit(scope)
    matches = [row(x, res) for x in result.matches]
    unknown = [row(x, res, why) for x, why in result.unknown]
    keep(matches, unknown)
    if args.json:
        output.emit_json({"matches": matches, "unknown": unknown, "scope": scope.to_json()})
        return scope_exit(scope)
    con = output.console()
    if matches:
        output.print_rows(con, matches)
    if unknown:
        con.print(output.text(f"unknown ({len(unknown)}): the record cannot settle these rows", "bold yellow"))
        output.print_rows(con, unknown)
        output.print_lines(con, [f"  {r['id']}: {output.reasons_line([w.to_json() for w in why])}"
                                 for r, (_, why) in zip(unknown, result.unknown)])
    counts = f"{len(matches)} match{'es' if len(matches) != 1 else ''}, {len(unknown)} unknown"
    output.print_scope(con, scope, counts)
    return scope_exit(scope)


@_collector_paused
def cmd_exists(args: Namespace, memo: Memoised | None = None) -> int:
    from letterbox_tui.core.views.exists import exists_view

    query, snapshot, res, result = _run(args)
    scope = snapshot.scope
    verdict = exists_view(result, snapshot)
    out = verdict.to_json()
    if memo is not None:
        return memo.emit(out, snapshot, res, query)
    if args.json:
        output.emit_json(out)
        return scope_exit(scope)
    con = output.console()
    from letterbox_tui.core.sync import as_of

    if verdict.value == "no" and (copy := as_of(scope.sync)):  # absent here, as of the last fetch
        con.print(output.answer_text(verdict.value) + output.text(f" ({copy})"))
    else:
        con.print(output.answer_text(verdict.value))
    reasons = verdict.reasons
    for r in reasons[:_SHOWN_REASONS]:
        con.print(output.text("  " + output.reasons_line([r.to_json()])))
    if len(reasons) > _SHOWN_REASONS:
        con.print(output.text(f"  ... and {len(reasons) - _SHOWN_REASONS} more reasons (--json lists them all)"))
    output.print_scope(con, scope, f"{verdict.matches} matches, {verdict.unknown} unknown")
    return scope_exit(scope)


# --- show ---------------------------------------------------------------------------

@_collector_paused
def cmd_show(args: Namespace, snapshot: Snapshot | None = None) -> int:
    from letterbox_tui.core.views.letter import show_view

    snapshot, res = _resolved(args, _now(), snapshot)
    doc = show_view(res, args.id, BODY_MAX)
    shown = doc["letters"]
    scope = snapshot.scope
    if args.json:
        output.emit_json(doc)
        return scope_exit(scope)
    con = output.console()
    if len(shown) > 1:
        con.print(output.text(f"{len(shown)} files hold this id (duplicate-id); each copy follows", "bold yellow"))
    for item in shown:
        _print_show(con, item)
    output.print_scope(con, scope)
    return scope_exit(scope)


def _print_show(con: Any, item: dict[str, Any]) -> None:
    from rich.rule import Rule

    width = min(con.width, 100)
    con.print(Rule(output.text(item["id"])), width=width)
    t = output.table("field", "value")
    for k, v in item["headers"].items():
        t.add_row(output.text(k), output.text(v))
    con.print(t)
    a = output.table("answer", "value", "reasons")
    for name, ans in item["answers"].items():
        a.add_row(output.text(name), output.answer_text(ans["value"]), output.text(output.reasons_line(ans["reasons"])))
    a.add_row(output.text("head"), output.text(item["head"] or "none"), output.text("heads: " + ", ".join(item["heads"])))
    con.print(a)
    from letterbox_tui.core.views.letter import dispute_lines

    for line in dispute_lines(item):  # what the letter itself never says
        con.print(output.text(line))
    if item["progress"] is not None:
        con.print(output.text(_progress_line(item["progress"])))
    p = item["provenance"]
    covers = ""
    if p["sha256"] is not None and p["size"] is not None and (p["sha256_bytes"] or 0) < p["size"]:
        covers = f" (of its first {p['sha256_bytes']} bytes only: the file is larger)"
    con.print(output.text(f"path {p['path']}  sha256 {p['sha256']}{covers}  size {p['size']}"))
    if (h := p["history"]) and h.get("unknown"):  # a shallow clone: when it arrived is not known
        con.print(output.text(f"arrival unknown: {h['unknown']}"))
    elif h:
        sent = item["headers"].get("sent", "")
        con.print(output.text(f"committed {h['committed_at']} by {h['author']} on {h['machine'] or 'an unknown machine'}"
                              f" in {h['commit'][:12]} (sent {sent or 'not given'})"))
    if p["legacy"]:
        con.print(output.text("flags: " + ", ".join(p["legacy"])))
    if p["changed_since_scan"]:
        con.print(output.text("the file changed since the scan", "bold yellow"))
    if p["error"]:
        con.print(output.text(p["error"], "bold red"))
    if item["body"] is not None:
        con.print(Rule(output.text("body")), width=width)
        con.print(output.text(item["body"], single_line=False))
        if item["body_truncated"]:
            con.print(output.text(f"[body truncated at {BODY_MAX} bytes]", "dim"))


def _progress_line(doc: dict[str, Any]) -> str:
    from letterbox_tui.core.sidecar import Progress

    return Progress(doc["note"], doc["at"]).line(_now())


# --- current, answered, thread ------------------------------------------------------

@_collector_paused
def cmd_current(args: Namespace, snapshot: Snapshot | None = None) -> int:
    from letterbox_tui.core.views.letter import current_view

    snapshot, res = _resolved(args, _now(), snapshot)
    out = current_view(res, args.id)
    scope = snapshot.scope
    if args.json:
        output.emit_json(out)
        return scope_exit(scope)
    con = output.console()
    con.print(output.text(f"current: {out['current']}  ({out['id']})"))
    con.print(output.text(f"head: {out['head'] or 'none'}   heads: {', '.join(out['heads']) or 'none'}"))
    con.print(output.text("chain: " + ", ".join(out["chain"])))
    for r in out["reasons"]:
        con.print(output.text("  " + output.reasons_line([r])))
    output.print_scope(con, scope)
    return scope_exit(scope)


@_collector_paused
def cmd_answered(args: Namespace, snapshot: Snapshot | None = None) -> int:
    from letterbox_tui.core.views.letter import answered_view

    snapshot, res = _resolved(args, _now(), snapshot)
    out = answered_view(res, args.id)
    scope = snapshot.scope
    replies, acks = out["replies"], out["acks"]
    if args.json:
        output.emit_json(out)
        return scope_exit(scope)
    con = output.console()
    con.print(output.text(f"answered: {out['answered']}  ({out['id']})"))
    for r in out["reasons"]:
        con.print(output.text("  " + output.reasons_line([r])))
    if replies:
        con.print(output.text("terminal replies:"))
        output.print_rows(con, replies)
    if acks:
        con.print(output.text("acks:"))
        output.print_rows(con, acks)
    if out["progress"] is not None:
        con.print(output.text(_progress_line(out["progress"])))
    output.print_scope(con, scope)
    return scope_exit(scope)


#: ``thread`` text indents this many levels; deeper letters keep that indent and say
#: their depth, so no letter is ever cut off or folded away by the terminal's width.
THREAD_INDENT = 16


def thread_lines(view: Any, res: Resolution) -> list[str]:
    """One line per letter of the thread, in tree order (the text face of ``thread``)."""
    lines = []
    for n in view.nodes:
        x = n.letter
        depth = n.depth
        lead = "  " * min(depth, THREAD_INDENT) + ("└ " if depth else "")
        if depth > THREAD_INDENT:
            lead += f"[depth {depth}] "
        note = {"detached": f"  (replies to {x.re}, not in this thread)",
                "label": "  (in the thread by its label; no re)",
                "loop": "  (on a reply loop)"}.get(n.via, "")
        lines.append(f"{lead}{x.id}  {x.sender} → {x.recipient} {x.type}{note}")
    return lines


@_collector_paused
def cmd_thread(args: Namespace) -> int:
    from letterbox_tui.core.views.letter import thread_of
    from letterbox_tui.core.views.thread import thread_view

    snapshot, res = _resolved(args, _now())
    view = thread_view(res, thread_of(res, args.id))
    scope = snapshot.scope
    if args.json:
        # the tree is encoded by the view without recursion (json.dumps recurses: a reply
        # chain ~500 deep was a RecursionError); the rest as every document is
        indent = output.json_indent()
        head = output.dumps_json({"thread": view.thread, "root": view.root, "tree": None, "scope": scope.to_json()},
                                 indent=indent)
        tree = view.encode(indent, 1)
        if not tree.isascii():
            from letterbox_tui.core.text import json_escape

            tree = json_escape(tree)
        null = '"tree": null' if indent else '"tree":null'
        output.write_line(head.replace(null, null[:-4] + tree, 1))
        return scope_exit(scope)
    con = output.console()
    label = f"thread {view.thread}" + ("" if view.root else " (its root letter is not in scope)")
    n = len(view.nodes)
    deep = f"; {view.max_depth} deep" if view.max_depth > THREAD_INDENT else ""
    con.print(output.text(f"{label}: {n} letter{'s' if n != 1 else ''}{deep}"))
    output.print_lines(con, thread_lines(view, res))
    output.print_scope(con, scope)
    return scope_exit(scope)


# --- owed, disputes -----------------------------------------------------------------

@_collector_paused
def cmd_owed(args: Namespace) -> int:
    from letterbox_tui.core.owed import format_time
    from letterbox_tui.core.sidecar import progress_of
    from letterbox_tui.core.views.owed import owed_view

    at = parse_at(args.at)
    snapshot, res = _resolved(args, at)
    _check_seat(snapshot, args.seat)
    view = owed_view(res, args.seat)
    scope = snapshot.scope
    code = 1 if (args.fail_late and view.any_late) else scope_exit(scope)
    doc = view.to_json()
    if args.json:
        output.emit_json(doc)
        return code
    con = output.console()
    con.print(output.text(f"owed at {format_time(at)}"))
    for g, data in zip(view.groups, doc["owed"]):
        con.print(output.text(f"{g.seat} owes {len(g.items)} ({g.late} late)", "bold"))
        output.print_rows(con, data["items"])
        # an unknown is never shown without its reason
        output.print_lines(con, [f"  {r['id']}: {output.reasons_line(r['reasons'])}" for r in data["items"] if r["reasons"]])
        for item in g.items:  # the holder's latest progress note, from its ack sidecar
            progress = progress_of(str(snapshot.root), item.letter, snapshot)
            if progress is not None:
                con.print(output.text(f"  {item.letter.id}: {progress.line(at)}"))
    if not view.groups:
        con.print(output.text("nothing owed"))
    output.print_scope(con, scope, f"{view.total} owed")
    return code


@_collector_paused
def cmd_disputes(args: Namespace) -> int:
    from letterbox_tui.core.views.disputes import disputes_view

    snapshot, res = _resolved(args, _now())
    scope = snapshot.scope
    doc = disputes_view(res).to_json()
    if args.json:
        output.emit_json(doc)
        return scope_exit(scope)
    con = output.console()
    data = doc["disputes"]
    for d in data:
        con.print(output.text(f"dispute {d['dispute']['id']} ({d['dispute']['from']}): open", "bold"))
        output.print_rows(con, d["disputed"])
    if not data:
        con.print(output.text("no open disputes"))
    output.print_scope(con, scope, f"{len(data)} open dispute{'s' if len(data) != 1 else ''}")
    return scope_exit(scope)


# --- check, digest ------------------------------------------------------------------

@_collector_paused
def cmd_check(args: Namespace) -> int:
    from letterbox_tui.core.check import Finding
    from letterbox_tui.core.views.problems import problems_view

    root, settings, snapshot = load(args)
    stale: list[str] = []
    if args.verify:
        # Re-read every file against the derived cache; a wrong row is dropped and the
        # letterbox scanned again, so the findings below rest on the files themselves.
        from letterbox_tui.core.speed.memo import forget
        from letterbox_tui.core.speed.verify import verify_cache

        forget(str(root))
        stale = verify_cache(root, snapshot, id_time_is_utc=settings.id_time_is_utc)
        if stale:
            root, settings, snapshot = load(args)
    res = resolve(snapshot, _now())
    view = problems_view(res)
    if args.verify and snapshot.scope.partial is False:
        # the derived index, row by row against what the files say now; then dropped
        from letterbox_tui.core.speed.index import verify_index

        wrong = verify_index(str(root), settings.id_time_is_utc, snapshot, res)
        if wrong:
            detail = f"{len(wrong)} row{'s' if len(wrong) != 1 else ''} of the derived index did not match the files; dropped"
            view = view.with_findings([Finding("stale-index", detail, (), tuple(wrong[:50]))])
    from letterbox_tui.core.temporaries import find_stale

    temporaries = find_stale(str(root), snapshot.seats)  # a killed writer's, over a day old
    if temporaries:
        view = view.with_findings([Finding("stale-temporary", "a writer's hidden temporary over a day old "
                                           "(a writer was killed before publishing); safe to remove", (), (rel,))
                                   for rel in temporaries])
    from letterbox_tui.core.sync_losses import remote_losses

    if losses := remote_losses(root):  # in git: letters the upstream deleted or rewrote (sync refuses)
        view = view.with_findings([Finding(f"remote-{'deletion' if x.kind == 'deleted' else 'rewrite'}",
                                           f"{x.kind} on {x.commit[:12]} by {x.author}; kept here, sync refuses it",
                                           (x.letter,), (x.path,)) for x in losses])
    if stale:
        detail = f"{len(stale)} cached header{'s' if len(stale) != 1 else ''} did not match the file; re-read"
        view = view.with_findings([Finding("stale-cache", detail, (), tuple(stale))])
    findings = view.findings
    scope = snapshot.scope
    code = 1 if view.problems else scope_exit(scope)
    if args.json:
        output.emit_json(view.to_json())
        return code
    con = output.console()
    t = output.table("severity", "code", "detail", "letters", "paths")
    for f in findings:
        t.add_row(
            output.text(f.severity, "bold red" if f.problem else "yellow"),
            output.text(f.code),
            output.text(f.detail),
            output.text(", ".join(f.letters)),
            output.text(", ".join(f.paths)),
        )
    if findings:
        con.print(t)
    problems = view.problems
    output.print_scope(con, scope, f"{problems} problem{'s' if problems != 1 else ''}, {view.warnings} warnings")
    return code


@_collector_paused
def cmd_digest(args: Namespace) -> int:
    from letterbox_tui.core.digest import digest

    at = parse_at(args.at)
    snapshot, res = _resolved(args, at)
    _check_seat(snapshot, args.seat)
    data = digest(res, args.seat)
    scope = snapshot.scope
    if args.json:
        output.emit_json({**data, "scope": scope.to_json()})
        return scope_exit(scope)
    con = output.console()
    who = f" for {args.seat}" if args.seat else ""
    con.print(output.text(f"digest{who} at {data['at']}", "bold"))
    con.print(output.text(f"decisions in force ({len(data['decisions'])})", "bold"))
    for d in data["decisions"]:
        con.print(output.text(f"  {d['id']}  {d['subject']}  ({d['from']} → {d['to']}, sent {d['sent'] or '?'})"))
    con.print(output.text(f"open disputes ({len(data['disputes'])})", "bold"))
    for d in data["disputes"]:
        names = ", ".join(x["id"] for x in d["disputed"])
        con.print(output.text(f"  {d['id']}  disputes {names}"))
    n_owed = sum(len(g["items"]) for g in data["owed"])
    con.print(output.text(f"owed ({n_owed}, {len(data['late'])} late)", "bold"))
    for g in data["owed"]:
        for i in g["items"]:
            mark = "LATE " if i["late"] == "yes" else ""
            due = f" due {i['deadline']}" if i["deadline"] else ""
            con.print(output.text(f"  {mark}{i['id']}  {g['seat']} owes {i['from']}{due}"))
    con.print(output.text(f"uncertain ({len(data['uncertain'])})", "bold"))
    merged: dict[str, tuple[list[str], list[dict[str, Any]]]] = {}
    for u in data["uncertain"]:
        names, reasons = merged.setdefault(u["id"], ([], []))
        names.append(u["answer"])
        reasons.extend(u["reasons"])
    for letter_id, (names, reasons) in merged.items():
        con.print(output.text(f"  {letter_id}  {', '.join(names)} unknown: {output.reasons_line(reasons)}"))
    output.print_scope(con, scope)
    return scope_exit(scope)
