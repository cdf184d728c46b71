"""The reading commands (SPEC 6, 7): query, exists, show, current, answered, thread, owed,
disputes, check, digest. Each parses its input first (errors exit 2 before any answer is
asked for), takes its answers at one clock from the one entry (``common.answers``), and
prints text or ``--json``. Nothing here writes.
"""

from __future__ import annotations

from argparse import Namespace
from dataclasses import replace
from datetime import datetime
from typing import Any

from letterbox_tui.core.documents import owed_document, query_document, query_part
from letterbox_tui.core.paging import Page, owed_part, page_of, part_said
from letterbox_tui.core.query import QueryResult, parse_query, run_query
from letterbox_tui.core.resolve import Resolution
from letterbox_tui.core.rows import row

from . import common, output
from .common import answers, parse_at, scope_exit
from .common import check_seat as _check_seat

#: ``show`` reads at most this much of a body (``core.views.letterfile.BODY_MAX``).
BODY_MAX = 1 << 20
#: ``exists`` lists this many reasons as text (all of them in ``--json``).
_SHOWN_REASONS = 20


def _resolved(args: Namespace, at: datetime) -> Resolution:
    """The letterbox's answers at ``at`` (``common.answers``)."""
    return answers(args, at)[2]


# --- query, exists ----------------------------------------------------------------

def _run(args: Namespace) -> tuple[Resolution, QueryResult]:
    """The query's terms parsed (errors exit 2 before any answer), then answered."""
    clock = common.now()
    tz = common.zone(args) if any("today" in t or "yesterday" in t for t in args.terms) else None
    query = parse_query(args.terms, clock, tz)
    res = _resolved(args, query.at or clock)
    return res, run_query(query, res)


def query_json(result: QueryResult, res: Resolution, page: Page | None = None) -> dict[str, Any]:
    """The ``query --json`` document (``core.documents``), its rows made as they are
    written (``output.Rows``)."""
    return query_document(res, None, result, page, rows=output.Rows)


def cmd_query(args: Namespace) -> int:
    page = page_of(args.limit, args.offset)  # refused before any scan
    res, result = _run(args)
    scope = res.snapshot.scope
    if args.json:
        output.emit_json(query_json(result, res, page))
        return scope_exit(scope)
    shown_matches, shown_unknown = query_part(res, result, page)
    matches = [row(x, res) for x in shown_matches]
    unknown = [row(x, res, why) for x, why in shown_unknown]
    con = output.console()
    if matches:
        output.print_rows(con, matches, common.zone(args))
    if unknown:
        con.print(output.text(f"unknown ({len(result.unknown)}): the record cannot settle these rows", "bold yellow"))
        output.print_rows(con, unknown, common.zone(args))
        output.print_lines(con, [f"  {r['id']}: {output.reasons_line([w.to_json() for w in why])}"
                                 for r, (_, why) in zip(unknown, shown_unknown)])
    n, u = len(result.matches), len(result.unknown)
    counts = f"{n} match{'es' if n != 1 else ''}, {u} unknown" + _part(page, n + u)
    output.print_scope(con, scope, counts)
    return scope_exit(scope)


def _part(page: Page | None, total: int) -> str:
    """What a text answer cut to ``page`` says of the part it shows ("" for the whole)."""
    return "" if page is None else "; " + part_said(page.to_json(total))


def cmd_exists(args: Namespace) -> int:
    from letterbox_tui.core.views.exists import exists_view

    res, result = _run(args)
    scope = res.snapshot.scope
    verdict = exists_view(result, res.snapshot)
    out = verdict.to_json()
    if args.json:
        output.emit_json(out)
        return scope_exit(scope)
    con = output.console()
    from letterbox_tui.core.sync import as_of

    if verdict.value == "no" and (copy := as_of(scope.sync)):  # absent here, as of the last fetch
        con.print(output.answer_text(verdict.value) + output.text(f" ({copy})"))
    else:
        con.print(output.answer_text(verdict.value))
    # a reason many letters share (a partial scope's) is said once, with their count (the
    # reasons are distinct: the same line again is another letter's)
    said: dict[str, int] = {}
    for r in verdict.reasons:
        line = output.reasons_line([r.to_json()])
        said[line] = said.get(line, 0) + 1
    for line, n in list(said.items())[:_SHOWN_REASONS]:
        con.print(output.text(f"  {line}" + (f" ({n} letters)" if n > 1 else "")))
    if len(said) > _SHOWN_REASONS:
        con.print(output.text(f"  ... and {len(said) - _SHOWN_REASONS} more reasons (--json lists them all)"))
    n = verdict.matches
    output.print_scope(con, scope, f"{n} match{'es' if n != 1 else ''}, {verdict.unknown} unknown")
    return scope_exit(scope)


# --- show ---------------------------------------------------------------------------

def cmd_show(args: Namespace) -> int:
    from letterbox_tui.core.views.letter import show_view

    res = _resolved(args, common.now())
    doc = show_view(res, args.id, BODY_MAX)
    shown = doc["letters"]
    scope = res.snapshot.scope
    if args.json:
        output.emit_json(doc)
        return scope_exit(scope)
    con = output.console()
    if len(shown) > 1:
        con.print(output.text(f"{len(shown)} files hold this id (duplicate-id); each copy follows", "bold yellow"))
    for item in shown:
        _print_show(con, item, common.zone(args))
    output.print_scope(con, scope)
    return scope_exit(scope)


def _print_show(con: Any, item: dict[str, Any], zone) -> None:
    from rich.rule import Rule

    width = min(con.width, 100)
    con.print(Rule(output.text(item["id"])), width=width)
    t = output.table("field", "value")
    for k, v in item["headers"].items():  # as written; a time also in the display zone
        shown = output.when(v, zone) if k in ("sent", "deadline") else v
        t.add_row(output.text(k), output.text(v if shown == v else f"{v}  ({shown})"))
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

    return Progress(doc["note"], doc["at"]).line(common.now())


# --- current, answered, thread ------------------------------------------------------

def cmd_current(args: Namespace) -> int:
    from letterbox_tui.core.views.letter import current_view

    res = _resolved(args, common.now())
    out = current_view(res, args.id)
    scope = res.snapshot.scope
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


def cmd_answered(args: Namespace) -> int:
    from letterbox_tui.core.views.letter import answered_view

    res = _resolved(args, common.now())
    out = answered_view(res, args.id)
    scope = res.snapshot.scope
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
        output.print_rows(con, replies, common.zone(args))
    if acks:
        con.print(output.text("acks:"))
        output.print_rows(con, acks, common.zone(args))
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


def cmd_thread(args: Namespace) -> int:
    from letterbox_tui.core.views.letter import thread_of
    from letterbox_tui.core.views.thread import thread_view

    res = _resolved(args, common.now())
    view = thread_view(res, thread_of(res, args.id))
    scope = res.snapshot.scope
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

def cmd_owed(args: Namespace) -> int:
    from letterbox_tui.core.records import Records
    from letterbox_tui.core.times import stamp
    from letterbox_tui.core.views.attention import Rules
    from letterbox_tui.core.views.owed import (attention_codes, attention_line, counts_line, nothing_owed, owed_row,
                                                owed_view)

    at = parse_at(args.at, args=args)
    codes = attention_codes(getattr(args, "attention", None))
    page = page_of(args.limit, args.offset)
    res = _resolved(args, at)
    snapshot = res.snapshot
    _check_seat(snapshot, args.seat)
    own = getattr(args, "as_seat", None)
    _check_seat(snapshot, own)
    # the records the attention codes rest on: read once, for the codes and the progress notes
    records = Records(snapshot)
    view = owed_view(res, args.seat, rules=Rules.of_letterbox(str(snapshot.root), own), codes=codes,
                     records=records)
    scope = snapshot.scope
    code = 1 if (args.fail_late and view.any_late) else scope_exit(scope)
    if args.json:
        output.emit_json(owed_document(res, args.seat, page, view, rows=output.Rows))
        return code
    con = output.console()
    zone = common.zone(args)
    con.print(output.text(f"owed at {stamp(at, zone)}"))
    # as text: each seat's items by their most urgent code (a page is cut in that order)
    whole = view.by_urgency()
    groups = whole if page is None else owed_part(replace(view, groups=whole), page)[0].groups
    counted = {g.seat: g for g in whole}
    for g in groups:
        all_of = counted[g.seat]
        part = f"; {len(g.items)} shown" if len(g.items) != len(all_of.items) else ""
        unsure = f", {all_of.uncertain} uncertain" if all_of.uncertain else ""  # ("0 late" read as none late)
        con.print(output.text(f"{g.seat} owes {len(all_of.items)} ({all_of.late} late{unsure}){part}", "bold"))
        rows = [owed_row(i, res) for i in g.items]
        output.print_rows(con, rows, zone)
        # an unknown is never shown without its reason
        output.print_lines(con, [f"  {r['id']}: {output.reasons_line(r['reasons'])}" for r in rows if r["reasons"]])
        output.print_lines(con, [f"  {i.letter.id} attention: {attention_line(i)}" for i in g.items if i.attention])
        # the holder's latest progress note, from its ack sidecar
        notes = ((item.letter.id, records.progress(item.letter)) for item in g.items)
        output.print_lines(con, [f"  {letter_id}: {note.line(at)}" for letter_id, note in notes if note is not None])
    if not view.groups:
        con.print(output.text(nothing_owed(scope, codes)))
    elif counts := counts_line(view):
        con.print(output.text(f"attention: {counts}"))
    output.print_scope(con, scope, f"{view.total} owed" + _part(page, view.total))
    return code


def cmd_disputes(args: Namespace) -> int:
    from letterbox_tui.core.views.disputes import disputes_view

    res = _resolved(args, common.now())
    scope = res.snapshot.scope
    doc = disputes_view(res).to_json()
    if args.json:
        output.emit_json(doc)
        return scope_exit(scope)
    con = output.console()
    data = doc["disputes"]
    for d in data:
        con.print(output.text(f"dispute {d['dispute']['id']} ({d['dispute']['from']}): open", "bold"))
        output.print_rows(con, d["disputed"], common.zone(args))
    if not data:
        con.print(output.text(scope.none_found("no open disputes")))
    output.print_scope(con, scope, f"{len(data)} open dispute{'s' if len(data) != 1 else ''}")
    return scope_exit(scope)


# --- check, digest ------------------------------------------------------------------

def cmd_check(args: Namespace) -> int:
    from letterbox_tui.core.documents import check_view

    _root, settings, res = answers(args, common.now())
    view = check_view(res, settings=settings)  # (the settings read once: check_view reads them when not given)
    findings = view.findings
    scope = res.snapshot.scope
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
    warnings = view.warnings
    output.print_scope(con, scope, f"{problems} problem{'s' if problems != 1 else ''}, "
                                   f"{warnings} warning{'s' if warnings != 1 else ''}")
    return code


def cmd_digest(args: Namespace) -> int:
    from letterbox_tui.core.digest import digest

    at = parse_at(args.at, args=args)
    res = _resolved(args, at)
    snapshot = res.snapshot
    _check_seat(snapshot, args.seat)
    data = digest(res, args.seat)
    scope = snapshot.scope
    if args.json:
        output.emit_json({**data, "scope": scope.to_json()})
        return scope_exit(scope)
    con = output.console()
    who = f" for {args.seat}" if args.seat else ""
    zone = common.zone(args)
    con.print(output.text(f"digest{who} at {output.when(data['at'], zone)}", "bold"))
    con.print(output.text(f"decisions in force ({len(data['decisions'])})", "bold"))
    output.print_lines(con, [f"  {d['id']}  {d['subject']}  ({d['from']} → {d['to']}, sent {output.when(d['sent'], zone) or '?'})"
                             for d in data["decisions"]])
    con.print(output.text(f"open disputes ({len(data['disputes'])})", "bold"))
    output.print_lines(con, [f"  {d['id']}  disputes {', '.join(x['id'] for x in d['disputed'])}" for d in data["disputes"]])
    from letterbox_tui.core.truth_file import codes_named
    from letterbox_tui.core.views.attention import counts_text

    urgent = data["attention"]["urgent"]
    con.print(output.text(f"most urgent ({len(urgent)}): {counts_text(data['attention']['counts']) or 'none'}", "bold"))
    # (a code whose record cannot be read is said to be unknown, as the --write file says it)
    output.print_lines(con, [f"  {u['id']}  {u['seat']} owes {u['from']}: {codes_named(u['attention'])}"
                             for u in urgent])
    n_owed = sum(len(g["items"]) for g in data["owed"])
    con.print(output.text(f"owed ({n_owed}, {len(data['late'])} late)", "bold"))
    output.print_lines(con, [f"  {'LATE ' if i['late'] == 'yes' else ''}{i['id']}  {g['seat']} owes {i['from']}"
                             f"{' due ' + output.when(i['deadline'], zone) if i['deadline'] else ''}"
                             for g in data["owed"] for i in g["items"]])
    merged: dict[str, tuple[list[str], list[dict[str, Any]]]] = {}
    for u in data["uncertain"]:  # (an entry per unknown answer: a line per letter)
        names, reasons = merged.setdefault(u["id"], ([], []))
        names.append(u["answer"])
        reasons.extend(u["reasons"])
    con.print(output.text(f"uncertain ({len(merged)})", "bold"))
    output.print_lines(con, [f"  {letter_id}  {', '.join(names)} unknown: {output.reasons_line(reasons)}"
                             for letter_id, (names, reasons) in merged.items()])
    output.print_scope(con, scope)
    return scope_exit(scope)
