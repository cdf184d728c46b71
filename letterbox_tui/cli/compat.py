"""``letterbox-tui query --compat-v2 [--max-names N] TERM...``: the protocol's
``letterbox.query.compat.v2`` document (``core.compat``), printed as the protocol's compat
mode prints it: one line of JSON on stdout, exit 0 when complete and 2 otherwise, an
invalid term named in the document. For example
``letterbox-tui query --compat-v2 --participant planner type=request answered=unknown``.
"""

from __future__ import annotations

import argparse
import os
from argparse import Namespace


def configure(p: argparse.ArgumentParser) -> None:
    """``query``'s options for the protocol's compat document."""
    p.add_argument("--compat-v2", action="store_true",
                   help="print the protocol's letterbox.query.compat.v2 JSON (its filters: head=, legacy=, ...)")
    p.add_argument("--max-names", metavar="N", help="with --compat-v2: at most N names per directory (1..100000)")


def _root(args: Namespace) -> str:
    """The root as the protocol's tool is given it: absolute, not resolved (its walk refuses
    a symlink on the way); checked to be a letterbox first."""
    from letterbox_tui.core.root import resolve_root

    resolved = resolve_root(getattr(args, "root", None))
    given = getattr(args, "root", None) or os.environ.get("LETTERBOX_DIR")
    return os.path.abspath(given) if given else str(resolved)


def cmd_compat(args: Namespace) -> int:
    from letterbox_tui.core.compat import SCHEMA, compat_document, dumps

    from . import output

    if args.limit is not None or args.offset is not None:
        from letterbox_tui.core.errors import LetterboxError

        raise LetterboxError("--limit and --offset do not apply to --compat-v2 (its document is the protocol's)")
    limit = args.max_names
    if limit is None:
        doc, code = compat_document(_root(args), args.participant, args.terms)
    elif not limit.lstrip("-").isdigit():
        doc, code = {"schema": SCHEMA, "complete": False, "error": "invalid_arguments"}, 2
    else:
        doc, code = compat_document(_root(args), args.participant, args.terms, int(limit))
    output.write_line(dumps(doc))
    return code
