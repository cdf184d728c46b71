"""The open flags are declared in one place (core/flags.py): a module that spells out its
own O_NOFOLLOW set fails here (there were twelve, then four new ones in a day)."""

from __future__ import annotations

import os
from pathlib import Path

import letterbox_tui
from letterbox_tui.core import flags


def test_no_module_declares_its_own_nofollow_flags():
    package = Path(letterbox_tui.__file__).parent
    offenders = []
    for path in package.rglob("*.py"):
        if path == Path(flags.__file__):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if "os.O_NOFOLLOW" in code:
                offenders.append(f"{path.relative_to(package)}:{n}")
    assert offenders == [], "use letterbox_tui.core.flags (DIR, READ, READ_FOLLOWING, CREATE, REWRITE, LOCK): " + ", ".join(offenders)


def test_the_flag_sets():
    assert flags.DIR & os.O_NOFOLLOW and flags.DIR & os.O_DIRECTORY
    assert flags.READ & os.O_NOFOLLOW and flags.READ & os.O_NONBLOCK and not flags.READ & os.O_WRONLY
    assert not flags.READ_FOLLOWING & os.O_NOFOLLOW and flags.READ_FOLLOWING & os.O_NONBLOCK
    assert flags.CREATE & os.O_EXCL and flags.CREATE & os.O_NOFOLLOW
    assert flags.LOCK & os.O_NOFOLLOW and flags.LOCK & os.O_RDWR and not flags.LOCK & (os.O_CREAT | os.O_TRUNC)
    assert all(f & os.O_CLOEXEC for f in (flags.DIR, flags.READ, flags.READ_FOLLOWING, flags.CREATE, flags.LOCK))
