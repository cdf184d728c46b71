"""Every reading command's ``--json`` document, made from an ``Answers`` in one place.

The command line prints these (and draws its text from the same views); the MCP server
returns them as its tools' results. A document's shape is in ``core.schema``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .answers import Answers
from .paging import Page, owed_part
from .query import Query, QueryResult, run_query
from .rows import row


def query_result(answers: Answers, query: Query) -> QueryResult:
    return run_query(query, answers)


def query_document(answers: Answers, query: Query | None, result: QueryResult | None = None,
                   page: Page | None = None, rows: Callable[[list, Callable], Any] | None = None) -> dict[str, Any]:
    """``query --json``: the matches and the unknown rows (with the reasons that left each
    unknown), and the scope; with ``page``, only its part of the rows (matches first) and
    the ``page`` saying so. ``rows(items, make)``: what stands for a list of ``make(item)``
    (default: the list, made now; ``cli.output.Rows`` makes it as it is written)."""
    result = query_result(answers, query) if result is None else result
    matches, unknown = query_part(answers, result, page)
    if rows is None:
        rows = _made
    doc = {
        "matches": rows(matches, lambda x: row(x, answers)),
        "unknown": rows(unknown, lambda xw: row(xw[0], answers, xw[1])),
        "scope": answers.snapshot.scope.to_json(),
    }
    if page is not None:
        doc["page"] = page.to_json(len(result.matches) + len(result.unknown))
    return doc


def query_part(answers: Answers, result: QueryResult, page: Page | None = None) -> tuple[list, list]:
    """The matches and the unknown rows (letter, reasons) of ``result`` that ``page`` shows
    (matches first; None: all of them), their answers read together, ready to be rows."""
    matches, unknown = (result.matches, result.unknown) if page is None else page.cut(result.matches, result.unknown)
    warm = getattr(answers, "warm", None)  # (the store's; a resolver computes each as asked)
    if warm is not None:
        warm([*matches, *(x for x, _ in unknown)])
    return matches, unknown


def _made(items: list, make: Callable) -> list:
    return [make(x) for x in items]


def exists_document(answers: Answers, query: Query, result: QueryResult | None = None) -> dict[str, Any]:
    from .views.exists import exists_view

    result = query_result(answers, query) if result is None else result
    return exists_view(result, answers.snapshot).to_json()


def show_document(answers: Answers, letter_id: str, limit: int) -> dict[str, Any]:
    from .views.letter import show_view

    return show_view(answers, letter_id, limit)


def current_document(answers: Answers, letter_id: str) -> dict[str, Any]:
    from .views.letter import current_view

    return current_view(answers, letter_id)


def answered_document(answers: Answers, letter_id: str) -> dict[str, Any]:
    from .views.letter import answered_view

    return answered_view(answers, letter_id)


def thread_document(answers: Answers, letter_id: str) -> dict[str, Any]:
    from .views.letter import thread_of
    from .views.thread import thread_view

    view = thread_view(answers, thread_of(answers, letter_id))
    return {"thread": view.thread, "root": view.root, "tree": view.to_json(),
            "scope": answers.snapshot.scope.to_json()}


def owed_document(answers: Answers, seat: str | None = None, page: Page | None = None, view=None,
                  rows: Callable[[list, Callable], Any] | None = None) -> dict[str, Any]:
    """``owed --json`` (with ``page``: its part); ``view``: the ``owed_view`` of these
    answers and ``seat`` when the caller made it; ``rows`` as ``query_document``'s."""
    from .views.owed import owed_view

    view = owed_view(answers, seat) if view is None else view
    if page is None:
        return view.to_json(rows)
    part, shown = owed_part(view, page)
    return {**part.to_json(rows), "page": shown}


def disputes_document(answers: Answers) -> dict[str, Any]:
    from .views.disputes import disputes_view

    return disputes_view(answers).to_json()


def check_view(answers: Answers, problems=None, temporaries=None, settings=None):
    """Every problem and warning: the problems view (``problems``, when the caller kept the
    one made from these answers), a killed writer's temporaries over a day old on the clock
    (of ``temporaries``, the caller's ``find_temporaries`` since these answers, or listed
    now), what the settings (``settings``, else read now) name that is not there and, in
    git, the upstream's losses (read afresh each time)."""
    from .check import Finding, settings_findings
    from .temporaries import find_temporaries, stale_of
    from .views.problems import problems_view

    snapshot = answers.snapshot
    view = problems_view(answers) if problems is None else problems
    if temporaries is None:
        temporaries = find_temporaries(str(snapshot.root), snapshot.seats)
    stale = stale_of(temporaries)
    if stale:
        view = view.with_findings([Finding("stale-temporary", "a writer's hidden temporary over a day old "
                                           "(a writer was killed before publishing); safe to remove", (), (rel,))
                                   for rel in stale])
    if settings is None:
        from .settings import SettingsError, load_settings

        try:
            settings = load_settings(str(snapshot.root))
        except SettingsError:  # (said by whoever read them first: a command exits 2 on it)
            settings = None
    if settings is not None and (found := settings_findings(settings, snapshot.seats)):
        view = view.with_findings(found)
    from .sync_losses import remote_losses

    if losses := remote_losses(str(snapshot.root)):  # in git: letters the upstream deleted or rewrote
        view = view.with_findings([Finding(f"remote-{'deletion' if x.kind == 'deleted' else 'rewrite'}",
                                           f"{x.kind} on {x.commit[:12]} by {x.author}; kept here, sync refuses it",
                                           (x.letter,), (x.path,)) for x in losses])
    return view


def check_document(answers: Answers, problems=None, temporaries=None) -> dict[str, Any]:
    return check_view(answers, problems, temporaries).to_json()


def digest_document(answers: Answers, seat: str | None = None) -> dict[str, Any]:
    from .digest import digest

    return {**digest(answers, seat), "scope": answers.snapshot.scope.to_json()}


def leases_document(answers: Answers) -> dict[str, Any]:
    from .leases import read_leases

    snapshot = answers.snapshot
    leases, more = read_leases(str(snapshot.root), snapshot.seats)
    return {"leases": [x.to_json() for x in leases], "more": more, "scope": snapshot.scope.to_json()}
