"""``letterbox-tui mcp``: serve the letterbox's answers to agents over stdio (MCP)."""

from __future__ import annotations

from argparse import Namespace

from letterbox_tui.core.root import candidate_root, resolve_root


def cmd_mcp(args: Namespace) -> int:
    from letterbox_tui.mcp import serve

    root = resolve_root(getattr(args, "root", None))  # not a letterbox: exit 2 before serving
    # (a letterbox that vanishes later is refused as the command line refuses it, by source)
    serve(str(root), candidate_root(getattr(args, "root", None))[1])
    return 0
