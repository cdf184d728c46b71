"""Every view a face shows, computed once from a ``Resolution`` (and its clock, ``res.at``).

The command line prints these, the app renders them; neither derives a view of its own.

| view | here | CLI | app |
|---|---|---|---|
| owed groups, their order, each item's standing | ``owed_view`` | ``owed`` | Owed & late |
| open disputes | ``disputes_view`` | ``disputes`` | Open disputes |
| current truth | ``truth_view`` (and ``core.digest``) | ``digest`` | Current truth |
| problems and warnings (one ``Finding``) | ``problems_view`` | ``check`` | Problems |
| the thread tree | ``thread_view`` | ``thread`` | Thread tab |
| the ``exists`` verdict, the scope's reasons | ``exists_view``, ``scope_reasons`` | ``exists`` | query bar |
| seat mailboxes and their counts | ``seat_mailboxes``, ``mailbox_letters`` | | Mailboxes |
| a letter's body, hash, status notes | ``read_letter``, ``status_line`` | ``show`` | letter pane |
| the time order of letters | ``time_key``, ``newest_first`` | | every list |
| a letter's standing in a word, whether it needs attention | ``standing``, ``needs_attention`` | | status column, ``n``/``N`` |
| a supersession chain as a tree (forks, cycles, disputes) | ``chain_tree`` | ``current`` (its chain) | Chain tab |

Each view that is a ``--json`` document has ``to_json()`` (its type is in ``core.schema``).
"""

from __future__ import annotations

import importlib
from typing import Any

# Names are loaded on first use (PEP 562): a command imports only the views it prints, so
# ``letterbox-tui query`` does not pay for the thread tree or ``check``.
_WHERE = {
    "Finding": "..check",
    "DisputesView": ".disputes", "OpenDispute": ".disputes", "disputes_view": ".disputes",
    "Exists": ".exists", "exists_view": ".exists", "scope_reasons": ".exists",
    "BODY_MAX": ".letterfile", "LetterFile": ".letterfile", "read_letter": ".letterfile",
    "read_text": ".letterfile", "read_body": ".letterfile", "sha256_of": ".letterfile", "status_line": ".letterfile",
    "FOLDERS": ".mailboxes", "SeatMailboxes": ".mailboxes", "mailbox_letters": ".mailboxes",
    "seat_mailboxes": ".mailboxes",
    "newest_first": ".order", "oldest_first": ".order", "time_key": ".order",
    "OwedGroup": ".owed", "OwedItem": ".owed", "OwedView": ".owed", "owed_view": ".owed",
    "ProblemsView": ".problems", "problems_view": ".problems",
    "Node": ".thread", "ThreadView": ".thread", "thread_view": ".thread",
    "Standing": ".attention", "needs_attention": ".attention", "standing": ".attention",
    "ChainLine": ".chain", "ChainTree": ".chain", "chain_tree": ".chain",
    "TruthItem": ".truth", "TruthView": ".truth", "truth_view": ".truth",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
