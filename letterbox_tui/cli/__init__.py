"""The ``letterbox-tui`` command: parses arguments, calls the core, prints text or JSON.

Each command's handler lives in a sibling module and is imported only when that command
runs, so reading commands never import Textual and start quickly. Exit codes (SPEC 7),
first that applies: 2 usage or input error (one line on stderr); 1 ``check`` found a
problem or ``owed --fail-late`` found a late item; 3 the scope is incomplete; 0 otherwise.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from collections.abc import Sequence

from letterbox_tui.core.errors import LetterboxError, Terminated

PROG = "letterbox-tui"
PRIORITY_HELP = "how soon it is to be looked at (default: next)"
#: ``--at`` of the commands whose answers depend on the clock (``common.parse_at``)
AT_HELP = ("'now' for lateness and ages, not a filter: RFC 3339 with an offset, or relative "
           "(today, -1d, +2d: --at=-1d)")

# command -> (module:function, help)
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("write:cmd_init", "create a letterbox the protocol's tools accept"),
    "demo": ("write:cmd_demo", "write a demo letterbox, then open it"),
    "query": ("read:cmd_query", "letters matching header terms, three-valued"),
    "exists": ("read:cmd_exists", "did this ever happen? yes, no or unknown"),
    "show": ("read:cmd_show", "one letter: headers, answers, provenance, body"),
    "current": ("read:cmd_current", "is this letter current? its chain and head"),
    "answered": ("read:cmd_answered", "is this letter answered? its replies and acks"),
    "thread": ("read:cmd_thread", "a thread as a reply tree"),
    "owed": ("read:cmd_owed", "tasks still owed, by the seat that owes them"),
    "disputes": ("read:cmd_disputes", "open disputes: where we still disagree"),
    "check": ("read:cmd_check", "every problem and warning in the letterbox"),
    "digest": ("truth:cmd_digest", "current truth, citing letter ids"),
    "send": ("write:cmd_send", "send a letter (body on stdin)"),
    "reply": ("write:cmd_reply", "reply ack|nack|result|info to a letter (body on stdin)"),
    "file": ("write:cmd_file", "file a non-task letter into your processed/"),
    "supersede": ("write:cmd_supersede", "send a letter that supersedes ID (body on stdin)"),
    "dispute": ("write:cmd_dispute", "raise a dispute naming letters that disagree"),
    "rule": ("write:cmd_rule", "rule on a dispute, optionally upholding one letter"),
    "review": ("write:cmd_review", "record a review of what is owed and late"),
    "progress": ("write:cmd_progress", "note your progress on a letter you accepted (the ack sidecar)"),
    "chase": ("chase:cmd_chase", "ask the seat that owes ID how it stands (an info letter re: ID)"),
    "leases": ("leases:cmd_leases", "the protocol's leases under locks/: owner, session, since"),
    "schema": ("schema:cmd_schema", "the JSON Schema of each command's --json output"),
    "sync": ("sync:cmd_sync", "a letterbox in git: commit what is new, fetch, rebase, push"),
    "mcp": ("mcp:cmd_mcp", "a read-only MCP server over stdio: the reading commands as tools"),
    "status": ("write:cmd_status", "write a seat's status note (<seat>/status.md): working, idle or blocked"),
    "inbox": ("inbox:cmd_inbox", "a seat's inbox as the protocol's check lists it: live first, stale last"),
}


class UsageError(LetterboxError):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse, but every usage error is one line on stderr and exit 2."""

    #: positionals may follow options (``chase ID --as S NOTE``): argparse alone gives an
    #: optional NOTE nothing once ID is matched, and refuses words after ``--as S``
    intermixed = False

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        if not self.intermixed:
            return super().parse_known_args(args, namespace)
        self.intermixed = False  # the intermixed parse calls back here, twice
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self.intermixed = True

    def error(self, message: str) -> None:  # type: ignore[override]
        sub = self.prog.removeprefix(PROG).strip()
        raise UsageError(f"{sub}: {message}" if sub else message)


def _add_globals(p: argparse.ArgumentParser, suppress: bool) -> None:
    default = argparse.SUPPRESS if suppress else None
    p.add_argument("--root", metavar="DIR", default=default, help="the letterbox directory")
    p.add_argument(
        "--participant", metavar="SEAT", action="append", default=default,
        help="restrict the scan to this seat (repeatable; the scope is then partial)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The whole command line's parser."""
    parser = _Parser(prog=PROG, description="Terminal mail client for agent-letterbox letterboxes.")
    _add_globals(parser, suppress=False)
    parser.add_argument("--view", choices=["owed", "disputes", "truth", "all", "problems"], help="open the app on this view")
    parser.add_argument("--letter", metavar="ID", help="open the app with this letter selected")
    parser.add_argument("--theme", metavar="NAME", help="the app's theme")
    from letterbox_tui import __version__

    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (_, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        _add_globals(p, suppress=True)
        _configure(name, p)
    return parser


def _configure(name: str, p: argparse.ArgumentParser) -> None:
    """Each command's own arguments (SPEC 7)."""
    reading = {"query", "exists", "show", "current", "answered", "thread", "owed", "disputes", "check", "digest"}
    if name in reading:
        p.add_argument("--json", action="store_true", help="print JSON")
        p.add_argument("--fetch", action="store_true", help="a letterbox in git: fetch its upstream first")
    if name in ("query", "exists"):
        p.add_argument("terms", nargs="*", metavar="TERM")
        if name == "query":  # --compat-v2, --max-names
            importlib.import_module(f"{__name__}.compat").configure(p)
            _paging_options(p, "rows")
    elif name in ("show", "current", "answered", "thread"):
        p.add_argument("id", metavar="ID")
    elif name == "owed":
        p.add_argument("--seat", metavar="S", help="only what seat S owes")
        p.add_argument("--at", metavar="T", help=AT_HELP)
        p.add_argument("--fail-late", action="store_true", help="exit 1 when anything is late")
        p.add_argument("--attention", action="append", metavar="CODE",
                       help="only items with this attention code (repeatable: any of them), e.g. never-acked")
        _as_option(p, "your own seat: what it owes is waiting-on-human")
        _paging_options(p, "items")
    elif name == "digest":
        p.add_argument("--seat", metavar="S", help="only what seat S wrote, received or owes")
        p.add_argument("--at", metavar="T", help=AT_HELP)
        kept = p.add_mutually_exclusive_group()
        kept.add_argument("--write", metavar="PATH",
                          help="keep the digest in PATH (Markdown with front matter), rewritten only when its letters change")
        kept.add_argument("--check", metavar="PATH", help="exit 1 when the digest file at PATH is stale, 2 when it is not one")
        p.add_argument("--max-lines", type=int, default=200, metavar="N", help="with --write: at most N cited lines (default 200)")
    elif name == "init":
        p.add_argument("dir", nargs="?", metavar="DIR")
        p.add_argument("--seats", required=True, metavar="a,b", help="the seats to make, comma-separated")
        p.add_argument("--git", action="store_true", help="keep it in git, to share it between machines (sync)")
    elif name == "sync":
        p.add_argument("--no-push", action="store_true", help="commit, fetch and rebase, but do not push")
        p.add_argument("--remote", metavar="R", help="the remote to sync with (default: the branch's own, else origin)")
        p.add_argument("--restore-letters", action="store_true",
                       help="when the remote deleted or rewrote letters this copy holds: take its other changes "
                            "and commit those letters back as they are here (without it: nothing changes, exit 2)")
        p.add_argument("--json", action="store_true", help="print JSON")
    elif name == "demo":
        p.add_argument("dir", nargs="?", metavar="DIR")
        p.add_argument("--no-open", action="store_true", help="write it, do not open the app")
        p.add_argument("--seed", type=int, default=7, help=argparse.SUPPRESS)
    elif name == "send":
        _as_option(p)
        p.add_argument("--to", required=True, metavar="S", help="the recipient seat")
        p.add_argument("--type", required=True, metavar="T",
                       help="request, delegate, blocker, status, info, decision, ...")
        p.add_argument("--slug", required=True, metavar="X", help="a few words for the id, e.g. auth-flow")
        _writing_options(p)
    elif name == "reply":
        p.add_argument("id", metavar="ID")
        p.add_argument("kind", choices=["ack", "nack", "result", "info"])
        _as_option(p)
        p.add_argument("--slug", metavar="X", help="for info replies (default: the letter's slug)")
        p.add_argument("--priority", default="next", choices=["now", "next", "whenever"], help=PRIORITY_HELP)
    elif name == "file":
        p.add_argument("id", metavar="ID")
        _as_option(p)
        p.add_argument("--read", action="store_true",
                       help="you have read it: needed to file a result or nack named by its path")
    elif name == "supersede":
        p.add_argument("id", metavar="ID")
        _as_option(p)
        p.add_argument("--to", metavar="S", help="default: the superseded letter's recipient")
        p.add_argument("--type", metavar="T", help="default: the superseded letter's type")
        p.add_argument("--slug", metavar="X", help="default: the superseded letter's slug")
        _writing_options(p, supersedes=False, inherit=True)
    elif name == "dispute":
        p.add_argument("ids", nargs="+", metavar="ID")
        _as_option(p)
        p.add_argument("--to", metavar="S", help="default: your own seat")
        p.add_argument("--slug", metavar="X", help="default: the first disputed letter's slug")
        p.add_argument("--notify", action="store_true", help="also send info letters to the disputed letters' authors")
    elif name == "rule":
        p.add_argument("dispute", metavar="D")
        _as_option(p)
        p.add_argument("--upholds", metavar="X", help="the disputed letter that holds (default: none is upheld)")
        p.add_argument("--to", metavar="S", help="default: the dispute's author")
        p.add_argument("--slug", metavar="X", help="default: the dispute's slug")
    elif name == "progress":
        p.add_argument("id", metavar="ID")
        _as_option(p)
        p.add_argument("note", nargs="+", metavar="NOTE", help="one line (the words are joined by spaces)")
    elif name == "status":
        p.add_argument("seat", metavar="SEAT")
        p.add_argument("state", choices=["working", "idle", "blocked"])
        p.add_argument("note", nargs="*", metavar="NOTE", help="one line (the words are joined by spaces)")
    elif name == "chase":
        p.intermixed = True  # the NOTE may follow --as S
        p.add_argument("id", metavar="ID")
        _as_option(p)
        p.add_argument("note", nargs="*", metavar="NOTE", help='what is asked (default "status?")')
        p.add_argument("--again", action="store_true", help="chase even if it was chased within the silence setting")
    elif name == "leases":
        p.add_argument("--json", action="store_true", help="print JSON")
    elif name == "review":
        _as_option(p)
        p.add_argument("--at", metavar="T", help=AT_HELP)
        p.add_argument("--check", action="store_true",
                       help="write nothing: exit 1 when the seat's last review is older than --every")
        p.add_argument("--every", metavar="INTERVAL", help="with --check: how often a review is due (1d, 12h, 90m, 2w)")
        p.add_argument("--json", action="store_true", help="with --check: print JSON")
    elif name == "inbox":
        importlib.import_module(f"{__name__}.inbox").configure(p)
    elif name == "schema":  # the names are checked by the command (core.schema stays unimported here)
        p.add_argument("name", nargs="?", metavar="COMMAND", help="a command with --json (default: all of them)")


def _paging_options(p: argparse.ArgumentParser, what: str) -> None:
    """``--limit``/``--offset``: a part of a long answer (``core.paging``); checked by the
    command, so a bad value is the same one-line refusal as the MCP tools'."""
    p.add_argument("--limit", type=_whole, metavar="N", help=f"at most N {what} (the JSON then carries a page)")
    p.add_argument("--offset", type=_whole, metavar="K", help=f"skip the first K {what} (with --json: page.next)")


def _whole(value: str) -> int | str:
    """An option's whole number; anything else as given (the command refuses it)."""
    try:
        return int(value)
    except ValueError:
        return value


def _as_option(p: argparse.ArgumentParser, help_text: str = "the writing seat (default: $LETTERBOX_AGENT)") -> None:
    p.add_argument("--as", dest="as_seat", metavar="S", help=help_text)


def _writing_options(p: argparse.ArgumentParser, supersedes: bool = True, inherit: bool = False) -> None:
    """``inherit``: unset options default to the superseded letter's values (supersede)."""
    if inherit:
        p.add_argument("--ack", action=argparse.BooleanOptionalAction, default=None,
                       help="the letter is a task (default: as the superseded letter)")
        p.add_argument("--priority", default=None, choices=["now", "next", "whenever"],
                       help="how soon it is to be looked at (default: as the superseded letter)")
    else:
        p.add_argument("--ack", action="store_true", help="the letter is a task (requires_ack: true)")
        p.add_argument("--priority", default="next", choices=["now", "next", "whenever"], help=PRIORITY_HELP)
    p.add_argument("--deadline", metavar="T",
                   help="RFC 3339 with an offset (2026-12-05T17:00:00Z), or relative (+2d, +36h)")
    p.add_argument("--thread", metavar="T", help="the thread it belongs to: the id that began it, or a label")
    p.add_argument("--re", metavar="ID", help="the letter it answers")
    if supersedes:
        p.add_argument("--supersedes", metavar="ID", help="the letter it replaces")
    p.add_argument("--subject", metavar="S", help="a subject line (default: the slug)")


def run() -> None:
    """The console script: ``main()``, its output flushed before the exit code is given."""
    code = main()
    if sys.stdout is None:  # started with stdout closed (``>&-``): main said so
        raise SystemExit(code)
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away: nothing more to say to it
        _drop_stdout()
    raise SystemExit(code)


def _drop_stdout() -> None:
    """Point standard output at ``os.devnull`` (the reader of a pipe went away), so the
    interpreter's own flush at exit finds nothing to complain of (Python's documented way,
    in the ``signal`` module's notes on SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    finally:
        os.close(devnull)


def _safe(exc: BaseException) -> str:
    """An error's message for the terminal: it may quote a file name or an id a letter
    wrote, so it goes through the one sanitizer (a message listing several problems keeps
    its one line per problem)."""
    from letterbox_tui.core.text import clean

    return clean(str(exc), tab=" ")


def _dash_hint(message: str, argv: list[str]) -> str:
    """argparse's "expected one argument" for ``--at -1d`` (it takes ``-1d`` for an
    option): the refusal says how such a value is given, ``--at=-1d``."""
    found = re.search(r"argument (--[a-z-]+): expected one argument$", message)
    if found:
        option = found.group(1)
        for word, value in zip(argv, argv[1:]):
            if word == option and re.match(r"-\d", value):
                return f"{message} (a value that starts with '-' goes after '=': {option}={value})"
    return message


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        try:
            args = build_parser().parse_args(argv)
        except UsageError as exc:
            raise UsageError(_dash_hint(str(exc), argv)) from None
        if args.command is None:
            from .app_launch import cmd_app

            return cmd_app(args)
        target, _ = COMMANDS[args.command]
        if getattr(args, "compat_v2", False):  # the protocol's compat document (cli.compat)
            target = "compat:cmd_compat"
        module_name, func_name = target.split(":")
        module = importlib.import_module(f"letterbox_tui.cli.{module_name}")
        return int(getattr(module, func_name)(args) or 0)
    except LetterboxError as exc:
        print(f"{PROG}: {_safe(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Terminated as exc:  # SIGTERM while a writer held a lifecycle lock (released)
        print(f"{PROG}: terminated; a reply cut short converges when run again", file=sys.stderr)
        return 128 + exc.signum
    except BrokenPipeError:
        _drop_stdout()
        return 0
    except (OSError, UnicodeError, RecursionError) as exc:
        print(f"{PROG}: {type(exc).__name__}: {_safe(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug: still one line, never a traceback (unless asked for)
        if os.environ.get("LETTERBOX_TUI_DEBUG"):
            raise
        detail = " ".join(_safe(exc).split())[:200]
        print(f"{PROG}: internal error ({type(exc).__name__}: {detail}); "
              "set LETTERBOX_TUI_DEBUG=1 to see the traceback and please report it", file=sys.stderr)
        return 2
