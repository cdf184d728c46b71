"""Fixtures for the app tests: ``letterbox`` (described in letterboxes.py, with the
ruling that settles its fork) and ``incomplete_box`` (the same, plus an unreadable file in
builder/inbox that makes the scope incomplete)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.app.letterboxes import fill, ruling
from tests.conftest import Box, make_box


@pytest.fixture
def letterbox(tmp_path: Path) -> Box:
    box = fill(make_box(tmp_path / "box", "planner", "builder", "reviewer"))
    ruling(box)
    return box


@pytest.fixture
def incomplete_box(letterbox: Box) -> Box:
    letterbox.raw("builder/inbox/broken.md", "---\nid: x\nfrom planner\n---\n")
    return letterbox


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Run ``async def`` tests with asyncio (no async plugin is installed)."""
    import asyncio
    import inspect

    if inspect.iscoroutinefunction(pyfuncitem.obj):
        names = pyfuncitem._fixtureinfo.argnames
        kwargs = {name: pyfuncitem.funcargs[name] for name in names}
        asyncio.run(pyfuncitem.obj(**kwargs))
        return True
    return None
