"""``bench`` byte-compiles the package first (as ``pip install`` does): an editable install
under ``PYTHONDONTWRITEBYTECODE`` has no ``.pyc``, and every measured command would compile
its modules again before doing any work."""

from __future__ import annotations

import importlib.util
import os

import letterbox_tui
from letterbox_tui.cli import bench


def test_every_module_of_the_package_gets_its_bytecode(tmp_path):
    pkg = os.path.dirname(os.path.abspath(letterbox_tui.__file__))
    source = os.path.join(pkg, "cli", "schema.py")
    cached = importlib.util.cache_from_source(source)
    if os.path.exists(cached):
        os.unlink(cached)  # (the interpreter makes it again in memory when it is missing)
    done = bench.byte_compile()
    assert done == {"dir": pkg, "ok": True}
    with open(cached, "rb") as fh:
        assert fh.read(4) == importlib.util.MAGIC_NUMBER
    sources = [os.path.join(d, n) for d, _, names in os.walk(pkg) for n in names if n.endswith(".py")]
    assert sources and all(os.path.exists(importlib.util.cache_from_source(s)) for s in sources)
