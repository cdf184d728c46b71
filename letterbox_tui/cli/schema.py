"""``letterbox-tui schema [COMMAND]``: the JSON Schema of each command's ``--json`` output.

    letterbox-tui schema owed        # one command's document
    letterbox-tui schema             # {"query": {...}, "exists": {...}, ...}

The schemas come from the TypedDicts of ``core.schema`` (the contract the tests hold every
command's real output to). Needs no letterbox.
"""

from __future__ import annotations

from argparse import Namespace

from letterbox_tui.core.schema import DOCUMENTS, json_schema

from . import output


def cmd_schema(args: Namespace) -> int:
    if args.name is not None:
        output.emit_json(json_schema(args.name))
    else:
        output.emit_json({name: json_schema(name) for name in DOCUMENTS})
    return 0
