"""Shared test helpers: a tiny letterbox builder so a test shows the letterbox it is about.

    box = make_box(tmp_path, "alpha", "beta")
    box.letter("ask-1", frm="alpha", to="beta", type="request", requires_ack="true")
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DEFAULT_SENT = "2026-01-01T00:00:00Z"
FIELD_ORDER = ("id", "from", "to", "type", "re", "thread", "priority", "requires_ack", "deadline", "sent")


class Box:
    def __init__(self, root: Path) -> None:
        self.root = root

    def seat(self, *names: str) -> Box:
        for name in names:
            for folder in ("inbox", "processed"):
                (self.root / name / folder).mkdir(parents=True, exist_ok=True)
        return self

    def letter(
        self,
        letter_id: str,
        *,
        frm: str = "alpha",
        to: str = "beta",
        type: str = "info",
        seat: str | None = None,
        folder: str = "inbox",
        name: str | None = None,
        body: str = "body\n",
        **fields: str | None,
    ) -> Path:
        """Write one letter into ``<seat>/<folder>/`` (seat defaults to the recipient).

        ``fields`` add or override header fields; a value of None leaves the field out.
        """
        values: dict[str, str | None] = {
            "id": letter_id, "from": frm, "to": to, "type": type, "re": "", "thread": "",
            "priority": "next", "requires_ack": "false", "deadline": "", "sent": DEFAULT_SENT,
        }
        values.update(fields)
        keys = [k for k in FIELD_ORDER if k in values] + [k for k in values if k not in FIELD_ORDER]
        header = "".join(f"{k}: {values[k]}\n" for k in keys if values[k] is not None)
        return self.raw(f"{seat or to}/{folder}/{name or letter_id + '.md'}", f"---\n{header}---\n{body}")

    def raw(self, rel: str, content: str | bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        return path

    def tree_bytes(self) -> dict[str, bytes | str]:
        """Every entry under the root with its content (for "nothing was written" checks)."""
        out: dict[str, bytes | str] = {}
        for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
            for n in dirnames + filenames:
                p = Path(dirpath) / n
                rel = str(p.relative_to(self.root))
                if p.is_symlink():
                    out[rel] = "symlink->" + os.readlink(p)
                elif p.is_file():
                    st = p.stat()
                    out[rel] = p.read_bytes() + f"|{st.st_mtime_ns}".encode()
                else:
                    out[rel] = "dir"
        return out


def make_box(root: Path, *seats: str) -> Box:
    root.mkdir(parents=True, exist_ok=True)
    return Box(root).seat(*(seats or ("alpha", "beta")))


def pytest_collection_modifyitems(items):
    """Run the tests marked slow first (otherwise in their order): pytest-xdist hands out
    tests in this order, and a long test handed out last would end the run alone while the
    other workers sit idle."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture
def box(tmp_path: Path) -> Box:
    """A letterbox with seats alpha and beta."""
    return make_box(tmp_path / "box", "alpha", "beta")


@pytest.fixture(autouse=True)
def _isolate_user_dirs(tmp_path_factory, monkeypatch):
    """Never read or write the developer's own config or cache."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    for name in ("LETTERBOX_DIR", "LETTERBOX_AGENT", "LETTERBOX_SESSION", "LETTERBOX_TUI_LOCK_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session", autouse=True)
def _quick_pilot_idle():
    """Textual's Pilot waits after every key press (twice) and ``pause()`` until the process
    looks idle: less than 1/20 of a CPU over a window of 1/50 s, so at least 20 ms each.
    The app tests press thousands of keys; a 5 ms window (the same 1/20) makes that wait a
    quarter as long. What a test depends on it waits for by condition (tests/app/helpers.py:
    ``until``, ``scanned``, ``reads_done``), never on this heuristic."""
    import textual._wait as idle

    assert hasattr(idle, "SLEEP_GRANULARITY") and hasattr(idle, "SLEEP_IDLE"), "Textual's idle wait changed"
    saved = idle.SLEEP_GRANULARITY, idle.SLEEP_IDLE
    idle.SLEEP_GRANULARITY = 1 / 200
    idle.SLEEP_IDLE = idle.SLEEP_GRANULARITY / 20.0
    yield
    idle.SLEEP_GRANULARITY, idle.SLEEP_IDLE = saved


@pytest.fixture(autouse=True)
def _pin_time_zone():
    """Times are shown in local time: every test starts in UTC whatever the machine's zone
    (snapshots and text stay the same everywhere); a test about zones sets its own ``TZ``."""
    import time

    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    os.environ["TZ"] = "UTC"
    time.tzset()
