"""Opening the terminal app from the command line (no subcommand)."""

from __future__ import annotations

from argparse import Namespace


def cmd_app(args: Namespace) -> int:
    from letterbox_tui.app import run_app

    return run_app(
        root=getattr(args, "root", None),
        participants=getattr(args, "participant", None),
        view=getattr(args, "view", None),
        letter=getattr(args, "letter", None),
        theme=getattr(args, "theme", None),
    )
