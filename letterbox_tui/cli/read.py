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
from pathlib import Path
from typing import Any

from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.model import Letter, Reason, Scope, Snapshot
from letterbox_tui.core.query import Query, QueryResult, dedupe, parse_query, run_query
from letterbox_tui.core.resolve import Resolution, resolve
from letterbox_tui.core.rows import answers, row

from letterbox_tui.core.cache import paused_gc

from . import keep, output
from .common import load, scope_exit
from .memoised import Memoised

#: ``show`` reads at most this much of a body.
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


def parse_at(value: str | None, what: str = "--at") -> datetime:
    """``--at T``: RFC 3339 with an offset or relative to now (``--at=-1d``, ``today``;
    SPEC 6), default now; else exit 2."""
    from letterbox_tui.core.query import parse_when

    now = _now()
    if value is None:
        return now
    when = parse_when(value, now)
    if when is None:
        raise LetterboxError(f"{what} {value!r}: expected RFC 3339 with an offset (2026-10-04T00:00:00Z) "
                             "or a relative time (now, today, yesterday, -7d, +2d, -36h, -90m)")
    return when


def _resolved(args: Namespace, at: datetime) -> tuple[Snapshot, Resolution]:
    _, _, snapshot = load(args)
    res = resolve(snapshot, at)
    keep(res)
    return snapshot, res


def _letter(res: Resolution, letter_id: str) -> list[Letter]:
    """Every readable copy of ``letter_id``, or exit 2 naming the scope's completeness."""
    copies = res.by_id(letter_id)
    if not copies:
        scope = res.snapshot.scope
        done = "complete scope" if scope.complete else "incomplete scope: " + ", ".join(scope.why_incomplete())
        raise LetterboxError(f"no letter {output.clean(letter_id)} in scope ({done})")
    return sorted(copies, key=lambda x: x.path)


def _reasons(reasons: tuple[Reason, ...] | list[Reason]) -> list[dict[str, Any]]:
    return [r.to_json() for r in reasons]


def _scope_reasons(scope: Scope, snapshot: Snapshot) -> list[Reason]:
    """Why an incomplete scope cannot prove absence, as reasons about the match."""
    out = []
    for u in snapshot.unreadable:
        legible = u.legible.get("id", "")
        out.append(Reason("unreadable-file", "match", u.error, (legible,) if legible else (), (u.path,)))
    for e in snapshot.unsupported:
        out.append(Reason("unsupported-entry", "match", e.reason, (), (e.path,)))
    if scope.partial:
        out.append(Reason("outside-scope", "match", "partial scope: " + ", ".join(scope.participants) + " only"))
    if not scope.atomic:
        out.append(Reason("non-atomic-scan", "match", "files changed while the scan ran"))
    return out


# --- query, exists ----------------------------------------------------------------

def _run(args: Namespace) -> tuple[Query, Snapshot, Resolution, QueryResult]:
    now = _now()
    query = parse_query(args.terms, now)
    snapshot, res = _resolved(args, query.at or now)
    result = run_query(query, res)
    keep(result)
    return query, snapshot, res, result


@_collector_paused
def cmd_query(args: Namespace, memo: Memoised | None = None) -> int:
    """``memo``: the answer memo to record into (``cli.memoised`` tried to replay it)."""
    query, snapshot, res, result = _run(args)
    scope = snapshot.scope
    matches = [row(x, res) for x in result.matches]
    unknown = [row(x, res, why) for x, why in result.unknown]
    keep(matches, unknown)
    if memo is not None:
        return memo.emit({"matches": matches, "unknown": unknown, "scope": scope.to_json()}, snapshot, res, query)
    if args.json:
        output.emit_json({"matches": matches, "unknown": unknown, "scope": scope.to_json()})
        return scope_exit(scope)
    con = output.console()
    if matches:
        con.print(output.rows_table(matches))
    if unknown:
        con.print(output.text(f"unknown ({len(unknown)}): the record cannot settle these rows", "bold yellow"))
        con.print(output.rows_table(unknown))
        for r, (_, why) in zip(unknown, result.unknown):
            con.print(output.text(f"  {r['id']}: {output.reasons_line([w.to_json() for w in why])}"))
    counts = f"{len(matches)} match{'es' if len(matches) != 1 else ''}, {len(unknown)} unknown"
    output.print_scope(con, scope, counts)
    return scope_exit(scope)


@_collector_paused
def cmd_exists(args: Namespace, memo: Memoised | None = None) -> int:
    query, snapshot, res, result = _run(args)
    scope = snapshot.scope
    if result.matches:
        value, reasons = "yes", []
    elif scope.complete and not result.unknown:
        value, reasons = "no", []
    else:
        collected = [r for _, why in result.unknown for r in why] + _scope_reasons(scope, snapshot)
        value, reasons = "unknown", list(dedupe(collected))
    out = {
        "exists": value,
        "matches": len(result.matches),
        "unknown": len(result.unknown),
        "reasons": _reasons(reasons),
        "scope": scope.to_json(),
    }
    if memo is not None:
        return memo.emit(out, snapshot, res, query)
    if args.json:
        output.emit_json(out)
        return scope_exit(scope)
    con = output.console()
    con.print(output.answer_text(value))
    for r in reasons[:_SHOWN_REASONS]:
        con.print(output.text("  " + output.reasons_line([r.to_json()])))
    if len(reasons) > _SHOWN_REASONS:
        con.print(output.text(f"  ... and {len(reasons) - _SHOWN_REASONS} more reasons (--json lists them all)"))
    output.print_scope(con, scope, f"{out['matches']} matches, {out['unknown']} unknown")
    return scope_exit(scope)


# --- show ---------------------------------------------------------------------------

def read_letter_file(root: str, letter: Letter, limit: int | None = None) -> dict[str, Any]:
    """The file's sha256, its body (at most ``limit`` bytes, decoded leniently) and whether
    it changed since the scan. Read through ``core.files``: no symlink is followed and a
    FIFO never blocks. Errors become ``error``, never exceptions."""
    from letterbox_tui.core.files import NOT_REGULAR, read_file
    from letterbox_tui.core.header import MAX_HEADER, body_offset

    limit = BODY_MAX if limit is None else limit
    out: dict[str, Any] = {"sha256": None, "size": None, "changed": None, "body": None,
                           "body_truncated": False, "error": None}
    # keep the header (at most 32 KiB) and the body's first bytes
    f = read_file(root, letter.path, keep=limit + MAX_HEADER + 8 * 1024)
    if f.error is not None:
        out["error"] = "no longer a regular file" if f.error == NOT_REGULAR else f.error
        return out
    out["sha256"] = f.sha256
    out["size"] = f.size
    out["changed"] = f.stat_key != (letter.size, letter.mtime_ns, letter.inode)
    start = body_offset(f.data)
    if start is None:
        out["error"] = "the header no longer closes"
        return out
    body = f.data[start:]
    if len(body) > limit:
        body = body[:limit]
        out["body_truncated"] = True
    out["body"] = body.decode("utf-8", errors="replace")
    return out


def _show_one(letter: Letter, res: Resolution, root: str) -> dict[str, Any]:
    found = answers(letter, res)
    head = res.head(letter)
    f = read_letter_file(root, letter)
    return {
        "id": letter.id,
        "headers": dict(letter.fields),
        "answers": {
            name: {"value": a.value, "reasons": _reasons(a.reasons)} for name, a in found.items()
        },
        "head": head.id if head is not None else None,
        "heads": list(dict.fromkeys(h.id for h in res.heads(letter))),
        "provenance": {
            "path": letter.path,
            "seat": letter.seat,
            "folder": letter.folder,
            "sha256": f["sha256"],
            "size": f["size"],
            "changed_since_scan": f["changed"],
            "legacy": list(letter.flags),
            "malformed": list(letter.malformed),
            "error": f["error"],
        },
        "body": f["body"],
        "body_truncated": f["body_truncated"],
    }


@_collector_paused
def cmd_show(args: Namespace) -> int:
    snapshot, res = _resolved(args, _now())
    copies = _letter(res, args.id)
    shown = [_show_one(x, res, snapshot.root) for x in copies]
    scope = snapshot.scope
    if args.json:
        output.emit_json({"id": args.id, "letters": shown, "scope": scope.to_json()})
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
    p = item["provenance"]
    con.print(output.text(f"path {p['path']}  sha256 {p['sha256']}  size {p['size']}"))
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


# --- current, answered, thread ------------------------------------------------------

@_collector_paused
def cmd_current(args: Namespace) -> int:
    snapshot, res = _resolved(args, _now())
    letter = _letter(res, args.id)[0]
    ans = res.current(letter)
    head = res.head(letter)
    scope = snapshot.scope
    out = {
        "id": letter.id,
        "current": ans.value,
        "head": head.id if head is not None else None,
        "heads": list(dict.fromkeys(h.id for h in res.heads(letter))),
        "chain": list(dict.fromkeys(x.id for x in res.chain(letter))),
        "reasons": _reasons(ans.reasons),
        "scope": scope.to_json(),
    }
    if args.json:
        output.emit_json(out)
        return scope_exit(scope)
    con = output.console()
    con.print(output.text(f"current: {out['current']}  ({letter.id})"))
    con.print(output.text(f"head: {out['head'] or 'none'}   heads: {', '.join(out['heads']) or 'none'}"))
    con.print(output.text("chain: " + ", ".join(out["chain"])))
    for r in out["reasons"]:
        con.print(output.text("  " + output.reasons_line([r])))
    output.print_scope(con, scope)
    return scope_exit(scope)


@_collector_paused
def cmd_answered(args: Namespace) -> int:
    snapshot, res = _resolved(args, _now())
    letter = _letter(res, args.id)[0]
    ans = res.answered(letter)
    scope = snapshot.scope
    replies = [row(x, res) for x in res.replies(letter)]
    acks = [row(x, res) for x in res.acks(letter)]
    out = {
        "id": letter.id,
        "answered": ans.value,
        "replies": replies,
        "acks": acks,
        "reasons": _reasons(ans.reasons),
        "scope": scope.to_json(),
    }
    if args.json:
        output.emit_json(out)
        return scope_exit(scope)
    con = output.console()
    con.print(output.text(f"answered: {ans.value}  ({letter.id})"))
    for r in out["reasons"]:
        con.print(output.text("  " + output.reasons_line([r])))
    if replies:
        con.print(output.text("terminal replies:"))
        con.print(output.rows_table(replies))
    if acks:
        con.print(output.text("acks:"))
        con.print(output.rows_table(acks))
    output.print_scope(con, scope)
    return scope_exit(scope)


def _time_key(letter: Letter) -> tuple:
    t = letter.sent_at.timestamp() if letter.sent_at is not None else float("inf")
    return (t, letter.id, letter.path)


def thread_tree(res: Resolution, thread_id: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The thread's reply tree by ``re``: the root (the letter whose id is the thread, when
    present) first, then letters whose parent is absent from the thread as extra roots. A
    letter reached twice (an ``re`` loop) is listed once."""
    members = sorted(res.thread(thread_id), key=_time_key)
    first: dict[str, Letter] = {}
    for x in members:
        first.setdefault(x.id, x)
    children: dict[int, list[Letter]] = {}
    roots: list[Letter] = []
    for x in members:
        parent = first.get(x.re) if x.re and x.re != x.id else None
        if parent is None:
            roots.append(x)
        else:
            children.setdefault(id(parent), []).append(x)
    roots.sort(key=lambda x: (x.id != thread_id, _time_key(x)))
    seen: set[int] = set()
    tree: list[dict[str, Any]] = []

    def build(top: Letter) -> dict[str, Any]:
        node: dict[str, Any] = {"id": top.id, "children": []}
        seen.add(id(top))
        stack = [(top, node)]
        while stack:
            letter, into = stack.pop()
            for child in children.get(id(letter), []):
                if id(child) in seen:
                    continue
                seen.add(id(child))
                sub = {"id": child.id, "children": []}
                into["children"].append(sub)
                stack.append((child, sub))
        return node

    for r in roots:
        tree.append(build(r))
    for x in members:  # members on an re loop with no way in: extra roots
        if id(x) not in seen:
            tree.append(build(x))
    root = thread_id if thread_id in first else None
    return root, tree


@_collector_paused
def cmd_thread(args: Namespace) -> int:
    snapshot, res = _resolved(args, _now())
    letter = _letter(res, args.id)[0]
    thread_id = letter.thread_id
    root, tree = thread_tree(res, thread_id)
    scope = snapshot.scope
    if args.json:
        output.emit_json({"thread": thread_id, "root": root, "tree": tree, "scope": scope.to_json()})
        return scope_exit(scope)
    from rich.tree import Tree

    by_id = {x.id: x for x in res.thread(thread_id)}
    label = f"thread {thread_id}" + ("" if root else " (its root letter is not in scope)")
    top = Tree(output.text(label))

    def describe(node_id: str) -> Any:
        x = by_id.get(node_id)
        extra = f"  {x.sender} → {x.recipient} {x.type}" if x else ""
        return output.text(node_id + extra)

    stack = [(top, n) for n in reversed(tree)]
    while stack:
        parent, node = stack.pop()
        branch = parent.add(describe(node["id"]))
        stack.extend((branch, c) for c in reversed(node["children"]))
    con = output.console()
    con.print(top)
    output.print_scope(con, scope)
    return scope_exit(scope)


# --- owed, disputes -----------------------------------------------------------------

def _check_seat(snapshot: Snapshot, seat: str | None) -> None:
    if seat is not None and seat not in snapshot.seats:
        raise LetterboxError(f"no seat {output.clean(seat)!r} in {snapshot.root}")


@_collector_paused
def cmd_owed(args: Namespace) -> int:
    from letterbox_tui.core.owed import any_late, format_time, owed

    at = parse_at(args.at)
    snapshot, res = _resolved(args, at)
    _check_seat(snapshot, args.seat)
    groups = owed(res, args.seat)
    scope = snapshot.scope
    late = any_late(groups, res)
    code = 1 if (args.fail_late and late) else scope_exit(scope)
    data = [{"seat": g.seat, "items": [row(x, res) for x in g.items]} for g in groups]
    if args.json:
        output.emit_json({"at": format_time(at), "owed": data, "scope": scope.to_json()})
        return code
    con = output.console()
    con.print(output.text(f"owed at {format_time(at)}"))
    total = 0
    for g in data:
        n_late = sum(1 for r in g["items"] if r["late"] == "yes")
        total += len(g["items"])
        con.print(output.text(f"{g['seat']} owes {len(g['items'])} ({n_late} late)", "bold"))
        con.print(output.rows_table(g["items"]))
        for r in g["items"]:  # an unknown is never shown without its reason
            if r["reasons"]:
                con.print(output.text(f"  {r['id']}: {output.reasons_line(r['reasons'])}"))
    if not data:
        con.print(output.text("nothing owed"))
    output.print_scope(con, scope, f"{total} owed")
    return code


@_collector_paused
def cmd_disputes(args: Namespace) -> int:
    snapshot, res = _resolved(args, _now())
    scope = snapshot.scope
    data = [
        {"dispute": row(od.dispute, res), "disputed": [row(x, res) for x in od.disputed]}
        for od in res.open_disputes()
    ]
    if args.json:
        output.emit_json({"disputes": data, "scope": scope.to_json()})
        return scope_exit(scope)
    con = output.console()
    for d in data:
        con.print(output.text(f"dispute {d['dispute']['id']} ({d['dispute']['from']}): open", "bold"))
        con.print(output.rows_table(d["disputed"]))
    if not data:
        con.print(output.text("no open disputes"))
    output.print_scope(con, scope, f"{len(data)} open dispute{'s' if len(data) != 1 else ''}")
    return scope_exit(scope)


# --- check, digest ------------------------------------------------------------------

@_collector_paused
def cmd_check(args: Namespace) -> int:
    from letterbox_tui.core.check import Finding, check, has_problem

    root, settings, snapshot = load(args)
    stale: list[str] = []
    if args.verify:
        # Re-read every file against the derived cache; a wrong row is dropped and the
        # letterbox scanned again, so the findings below rest on the files themselves.
        from letterbox_tui.core.cache import verify_cache
        from letterbox_tui.core.memo import forget

        forget(str(root))
        stale = verify_cache(root, snapshot, id_time_is_utc=settings.id_time_is_utc)
        if stale:
            root, settings, snapshot = load(args)
    res = resolve(snapshot, _now())
    findings = check(res)
    if stale:
        detail = f"{len(stale)} cached header{'s' if len(stale) != 1 else ''} did not match the file; re-read"
        findings.append(Finding("stale-cache", detail, (), tuple(stale)))
    scope = snapshot.scope
    code = 1 if has_problem(findings) else scope_exit(scope)
    if args.json:
        output.emit_json({"findings": [f.to_json() for f in findings], "scope": scope.to_json()})
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
    problems = sum(1 for f in findings if f.problem)
    output.print_scope(con, scope, f"{problems} problem{'s' if problems != 1 else ''}, {len(findings) - problems} warnings")
    return code


@_collector_paused
def cmd_digest(args: Namespace) -> int:
    from letterbox_tui.core.digest import digest

    at = parse_at(args.at)
    snapshot, res = _resolved(args, at)
    _check_seat(snapshot, args.seat)
    if args.write is not None or args.check is not None:
        from .truth import digest_file

        return digest_file(args, Path(snapshot.root), snapshot, res)
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
