"""``letterbox-tui inbox [SEAT] [--recent|--all] [--at T] [--json]``: a seat's inbox as the
protocol's ``letterbox check`` lists it, live work first and stale last, with our answers
beside each letter (``core.views.inbox``). For example ``letterbox-tui inbox beta --recent``.
"""

from __future__ import annotations

import argparse
import os
from argparse import Namespace

from letterbox_tui.core.errors import LetterboxError

from . import output
from .common import answers, check_seat, parse_at, scope_exit


def configure(p: argparse.ArgumentParser) -> None:
    """The command's arguments (SPEC 7)."""
    p.add_argument("seat", nargs="?", metavar="SEAT", help="the seat (default: $LETTERBOX_AGENT)")
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--recent", action="store_true", help="hide stale letters (count them)")
    shown.add_argument("--all", action="store_true", help="list stale letters too (the default)")
    p.add_argument("--at", metavar="T", help="'now' for staleness and lateness, not a filter: RFC 3339 with an offset, "
                                          "or relative (today, -1d: --at=-1d)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--fetch", action="store_true", help="a letterbox in git: fetch its upstream first")


def cmd_inbox(args: Namespace) -> int:
    from letterbox_tui.core.views.inbox import inbox_json, inbox_view, stale_days_from

    seat = args.seat or os.environ.get("LETTERBOX_AGENT") or None
    if seat is None:
        raise LetterboxError("inbox: name a seat, or set LETTERBOX_AGENT")
    stale_days = stale_days_from(os.environ)
    at = parse_at(args.at, args=args)
    _root, _settings, res = answers(args, at)
    snapshot = res.snapshot
    check_seat(snapshot, seat)
    view = inbox_view(res, seat, at, stale_days=stale_days, recent=args.recent)
    doc = inbox_json(view, res)
    scope = snapshot.scope
    if args.json:
        output.emit_json(doc)
        return scope_exit(scope)
    con = output.console()
    counts = doc["counts"]
    con.print(output.text(f"── {seat} inbox: {counts['letters']} letter{'s' if counts['letters'] != 1 else ''}  "
                          f"open: {counts['live']} live · {counts['stale']} stale (>{stale_days}d)", "bold"))
    lines: list[str] = []  # written at once: a Rich print a line costs seconds at 100,000 letters
    for item in doc["letters"]:
        r = item["letter"]
        mark = ""
        if r["requires_ack"] == "true":
            mark = "  [ACCEPTED]" if r["accepted"] == "yes" else "  [UNACKED]"
        if item["stale"]:
            mark += f"  STALE {item['age']}"
        lines.append(f"═══ {item['display_id']}{mark}  {r['id']}")
        lines.append(f"    from: {r['from']}  type: {r['type']}  state {r['state']}  answered {r['answered']}"
                     f"  accepted {r['accepted']}  late {r['late']}  (active {item['age']} ago)")
        if item["progress"] is not None:
            lines.append(f"    progress: {item['progress']['note']}")
        if r["reasons"]:
            lines.append("    " + output.reasons_line(r["reasons"]))
    output.print_lines(con, lines)
    if args.recent:
        hidden = counts["hidden"]
        con.print(output.text(f"{hidden} stale letter{'s' if hidden != 1 else ''} hidden; "
                              f"letterbox-tui inbox {seat} lists all open work"))
    for u in doc["unreadable"]:
        con.print(output.text(f"═══ MALFORMED  {u['path']}: {u['error']}", "bold red"))
    output.print_scope(con, scope)
    return scope_exit(scope)
