"""``letterbox-tui leases [--json]``: the protocol's advisory leases under ``locks/`` (who
holds what since when), read and never taken or broken. A lease that is not well formed is
listed with its problems."""

from __future__ import annotations

from argparse import Namespace

from letterbox_tui.core.documents import leases_document

from . import common, output
from .common import answers, scope_exit


def cmd_leases(args: Namespace) -> int:
    res = answers(args, common.now())[2]
    scope = res.snapshot.scope
    doc = leases_document(res)
    if args.json:
        output.emit_json(doc)
        return scope_exit(scope)
    con = output.console()
    t = output.table("lease", "owner", "session", "since", "problems")
    for x in doc["leases"]:
        t.add_row(output.text(x["target"]), output.text(x["owner"] or "?"), output.text(x["session"] or ""),
                  output.text(x["taken"] or "?"), output.text("; ".join(x["problems"]), "bold red"))
    if doc["leases"]:
        con.print(t)
    else:
        con.print(output.text("no leases"))
    if doc["more"]:
        con.print(output.text(f"... and {doc['more']} more entries under locks/ (not listed)"))
    bad = sum(1 for x in doc["leases"] if x["problems"])
    n = len(doc["leases"])
    output.print_scope(con, scope, f"{n} lease{'s' if n != 1 else ''}, {bad} with problems")
    return scope_exit(scope)
