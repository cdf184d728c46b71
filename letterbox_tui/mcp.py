"""``letterbox-tui mcp``: the agents' face, a read-only MCP server over stdio.

One tool per reading command, each returning that command's ``--json`` document (its
``outputSchema`` is the command's JSON Schema, ``core.schema``), made by the same
documents (``core.documents``) from the same answers (``store.open_answers``).

The server keeps the answers between calls and re-opens them when ``watchfiles`` reports a
change under the letterbox; where no watcher runs (it could not start, or the letterbox
vanished), every call re-opens them (the store's stat proof). A call made while changes are
still arriving says, in its result's ``_meta``, how many change events its answers reflect
and whether more are pending. Nothing here writes into a letterbox.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from letterbox_tui.core import documents
from letterbox_tui.core.answers import Answers
from letterbox_tui.core.errors import LetterboxError
from letterbox_tui.core.text import clean

#: how much of a body ``show`` returns when asked for it
BODY_LIMIT = 64 * 1024

INSTRUCTIONS = (
    "Every answer is yes, no or unknown: unknown always names its reasons, and no is only "
    "proof of absence when the result's scope says complete: true (an incomplete or partial "
    "scope is listed in scope.unreadable, scope.unsupported and scope.partial). These tools "
    "only read; write letters with the letterbox-tui command or the protocol's own tools."
)

_TERMS = {"type": "array", "items": {"type": "string"},
          "description": "query terms (SPEC 6), e.g. [\"state=open\", \"answered=no\"]"}
_AT = {"type": "string", "description": "the clock for late: RFC 3339 with an offset, or now, today, -7d, +2d"}
_SEAT = {"type": "string", "description": "a seat of the letterbox"}
_PARTICIPANT = {"type": "array", "items": {"type": "string"},
                "description": "restrict the scan to these seats (the scope is then partial)"}
_ID = {"type": "string", "description": "a letter's id"}


def _schema(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": {**properties, "participant": _PARTICIPANT},
            "required": list(required), "additionalProperties": False}


#: tool -> (description, input schema)
TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "query": ("Letters matching header terms, three-valued: matches, unknown rows with reasons, scope.",
              _schema({"terms": _TERMS, "at": _AT})),
    "exists": ("Did this ever happen? yes, no (only on a complete scope) or unknown, with reasons.",
               _schema({"terms": _TERMS, "at": _AT})),
    "show": ("One letter: headers, derived answers with reasons, provenance; the body only with body=true "
             f"(at most {BODY_LIMIT} bytes, body_truncated says when cut).",
             _schema({"id": _ID, "body": {"type": "boolean", "default": False}}, ("id",))),
    "current": ("Is this letter current? Its chain, head and candidate heads.", _schema({"id": _ID}, ("id",))),
    "answered": ("Is this letter answered? Its terminal replies, acks and progress note.",
                 _schema({"id": _ID}, ("id",))),
    "thread": ("The letter's thread as a reply tree.", _schema({"id": _ID}, ("id",))),
    "owed": ("Tasks still owed, by the seat that owes them, late first.", _schema({"seat": _SEAT, "at": _AT})),
    "disputes": ("Open disputes: where the letters still disagree.", _schema({})),
    "digest": ("Current truth: decisions in force, open disputes, owed and late, what is uncertain.",
               _schema({"seat": _SEAT, "at": _AT})),
    "check": ("Every problem and warning in the letterbox.", _schema({})),
    "leases": ("The protocol's leases under locks/: owner, session, since.", _schema({})),
}


class Resident:
    """The answers kept between calls, re-opened after a change under the letterbox."""

    def __init__(self, root: str, opener: Callable[..., Answers] | None = None) -> None:
        from letterbox_tui.store import open_answers

        self.root = root
        self.open = opener or open_answers
        self._lock = threading.Lock()
        self._answers: Answers | None = None
        self.events = 0  # change events seen by the watcher
        self._reflected = -1  # the events the kept answers reflect
        self._watching = False
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        self._identity: tuple[int, int] | None = None  # the watched letterbox's (device, inode)
        self.notices: list[str] = []

    # --- watching ---------------------------------------------------------------------
    def watch(self) -> None:
        """Start watching the letterbox (again, when an earlier watcher ended)."""
        if self._watcher is not None and self._watcher.is_alive() and self._watching:
            return
        if not os.path.isdir(self.root):
            return
        self._watcher = threading.Thread(target=self._watch, args=(self._stop,), name="letterbox-watch", daemon=True)
        self._watching = True
        self._watcher.start()

    def _watch(self, stop: threading.Event) -> None:
        try:
            from watchfiles import watch

            for _changes in watch(self.root, stop_event=stop, debounce=20, step=10,
                                  raise_interrupt=False, yield_on_timeout=False):
                with self._lock:
                    self.events += 1
        except Exception:  # no native watcher, or the letterbox vanished: prove every call
            pass
        finally:
            with self._lock:
                if stop is self._stop:
                    self._watching = False
                self.events += 1  # what the watcher may have missed since

    def close(self) -> None:
        self._stop.set()

    # --- answering --------------------------------------------------------------------
    def answers(self, at: datetime, participants: list[str] | None = None) -> tuple[Answers, dict[str, Any]]:
        """The answers at ``at`` and what they reflect (for the result's ``_meta``)."""
        if participants:  # a partial scope is asked afresh each time
            return self.open(self.root, at, participants=participants, notice=self.notices.append), {}
        try:  # the letterbox itself moved, vanished or was replaced: nothing kept holds
            st = os.stat(self.root)
            here = (st.st_dev, st.st_ino)
        except OSError:
            here = None
        if here != self._identity:
            self.close()
            self._identity = here
            with self._lock:
                self._answers = None
                self._watching = False
                self._stop = threading.Event()
        if here is None:
            return self.open(self.root, at, notice=self.notices.append), {}  # says why it cannot
        self.watch()
        with self._lock:
            events = self.events
            stale = self._answers is None or not self._watching or events != self._reflected
        if stale:
            answers = self.open(self.root, at, notice=self.notices.append)
            with self._lock:
                self._answers, self._reflected = answers, events
        with self._lock:
            answers = self._answers.with_clock(at)
            meta = {"events_reflected": self._reflected, "changes_pending": self.events != self._reflected,
                    "watching": self._watching}
        return answers, meta


def _zone(root: str, values: list[str]):
    """The calendar of ``today`` and ``yesterday`` (``core.times``), as the CLI and the app
    count them: read only when a value names one."""
    if not any("today" in v or "yesterday" in v for v in values):
        return None
    from letterbox_tui.core.settings import display_zone, load_settings, load_user_settings

    return display_zone(load_settings(root), load_user_settings())


def _at(arguments: dict[str, Any], root: str) -> datetime:
    from letterbox_tui.core.query import parse_when

    now = datetime.now(timezone.utc)
    value = arguments.get("at")
    if value is None:
        return now
    when = parse_when(str(value), now, _zone(root, [str(value)]))
    if when is None:
        raise LetterboxError(f"at {value!r}: expected RFC 3339 with an offset or a relative time "
                             "(now, today, yesterday, -7d, +2d, -36h, -90m)")
    return when


def _terms(arguments: dict[str, Any]) -> list[str]:
    terms = arguments.get("terms") or []
    if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
        raise LetterboxError("terms: a list of strings (KEY=VALUE)")
    return terms


def call(resident: Resident, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The document the tool ``name`` returns, and its ``_meta``; ``LetterboxError`` for
    bad input, with the command line's one-line message."""
    from letterbox_tui.core.query import parse_query

    if name not in TOOLS:
        raise LetterboxError(f"no tool {name!r}: one of {', '.join(TOOLS)}")
    allowed = set(TOOLS[name][1]["properties"])
    unknown = sorted(set(arguments) - allowed)
    if unknown:
        raise LetterboxError(f"{name}: unknown argument {unknown[0]!r} (takes {', '.join(sorted(allowed))})")
    participants = arguments.get("participant") or None
    if participants is not None and (not isinstance(participants, list)
                                     or not all(isinstance(p, str) for p in participants)):
        raise LetterboxError("participant: a list of seat names")
    now = datetime.now(timezone.utc)
    query = None
    if name in ("query", "exists"):
        terms = _terms(arguments)
        query = parse_query(terms, now, _zone(resident.root, terms))  # bad terms are refused before any scan
    at = (query.at if query is not None and query.at is not None else None) or _at(arguments, resident.root)
    for key in ("id", "seat"):
        if key in arguments and not isinstance(arguments[key], str):
            raise LetterboxError(f"{key}: a string")
    answers, meta = resident.answers(at, participants)
    seat = arguments.get("seat")
    if seat is not None and seat not in answers.snapshot.seats:
        raise LetterboxError(f"no seat {clean(seat, single_line=True)!r} in {answers.snapshot.root}")
    if name == "query":
        doc = documents.query_document(answers, query)
    elif name == "exists":
        doc = documents.exists_document(answers, query)
    elif name == "show":
        wanted = bool(arguments.get("body", False))
        doc = documents.show_document(answers, arguments["id"], BODY_LIMIT if wanted else 0)
        for item in doc["letters"]:
            if wanted:
                item["body"] = clean(item["body"]) if item["body"] is not None else None
            else:
                item["body"], item["body_truncated"] = None, False
    elif name in ("current", "answered", "thread"):
        doc = getattr(documents, f"{name}_document")(answers, arguments["id"])
    elif name in ("owed", "digest"):
        doc = getattr(documents, f"{name}_document")(answers, seat)
    else:
        doc = getattr(documents, f"{name}_document")(answers)
    return doc, meta


def _summary(doc: dict[str, Any]) -> str:
    scope = doc.get("scope") or {}
    if scope.get("complete", True):
        return "complete scope"
    why = []
    if scope.get("unreadable"):
        why.append(f"{len(scope['unreadable'])} unreadable")
    if scope.get("unsupported"):
        why.append(f"{len(scope['unsupported'])} unsupported")
    if scope.get("partial"):
        why.append("partial")
    if not scope.get("atomic", True):
        why.append("files changed during the scan")
    return "INCOMPLETE scope (" + ", ".join(why) + "): a no here is not proof of absence"


def output_schema(name: str) -> dict[str, Any]:
    """The tool's result schema: its command's ``--json`` schema, an object at the top (as
    MCP requires of an ``outputSchema``; ``digest``'s is a choice of two objects)."""
    from letterbox_tui.core.schema import json_schema

    schema = json_schema(name)
    schema.setdefault("type", "object")
    return schema


def build_server(root: str):
    """The MCP server over the letterbox at ``root`` (and its resident answers)."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from letterbox_tui import __version__

    resident = Resident(root)
    tools = [types.Tool(name=name, description=desc, inputSchema=schema, outputSchema=output_schema(name),
                        annotations=types.ToolAnnotations(readOnlyHint=True, idempotentHint=True,
                                                          openWorldHint=False))
             for name, (desc, schema) in TOOLS.items()]

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params) -> types.CallToolResult:
        try:
            doc, meta = await anyio.to_thread.run_sync(call, resident, params.name, dict(params.arguments or {}))
        except LetterboxError as exc:
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(exc))], isError=True)
        except Exception as exc:  # never die on one call: say what went wrong, keep serving
            message = f"internal error: {type(exc).__name__}: {clean(str(exc), single_line=True)}"
            return types.CallToolResult(content=[types.TextContent(type="text", text=message)], isError=True)
        text = json.dumps(doc, ensure_ascii=False)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=_summary(doc)), types.TextContent(type="text", text=text)],
            structuredContent=doc, _meta={"letterbox-tui": meta} if meta else None,
        )

    server = Server("letterbox-tui", version=__version__, instructions=INSTRUCTIONS,
                    on_list_tools=list_tools, on_call_tool=call_tool)
    return server, resident


def serve(root: str) -> None:
    """Serve the letterbox at ``root`` over stdio until the client closes it."""
    import anyio
    from mcp.server.stdio import stdio_server

    server, resident = build_server(root)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        resident.close()
