"""A letter's raw file, handed to another program as mutt does: ``e`` opens it in
``$PAGER`` (``less`` when unset), ``|`` pipes it to a shell command and waits for Enter.

The app is suspended properly (``App.suspend``: the terminal is restored, then taken back
and repainted). The file is read in a worker through ``core.files`` (no symlink followed,
no FIFO blocking) and given to the program on its standard input: the program never opens
a path itself, and the default pager shows control characters as visible notation.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Awaitable
from dataclasses import dataclass

from textual import work
from textual.message import Message


RAW_LIMIT = 64 * 1024 * 1024


@dataclass
class RawRead(Message):
    """The raw bytes of a letter file, read for ``purpose`` (``pager`` or ``pipe``)."""

    purpose: str
    command: str
    data: bytes
    error: str


def pager_argv() -> list[str]:
    try:
        argv = shlex.split(os.environ.get("PAGER") or "less")
    except ValueError:
        argv = []
    return argv or ["less"]


class RawFileMixin:
    """``e`` (pager) and ``|`` (pipe) for ``LetterboxApp``."""

    def action_pager(self) -> None:
        x = self.selected_letter()
        if x is None:
            self.notify("Select a letter first.", timeout=2)
            return
        self._read_raw(x.path, "pager", "")

    def action_pipe(self) -> Awaitable[None] | None:
        if self.selected_letter() is None:
            self.notify("Select a letter first.", timeout=2)
            return None
        return self.after_bars(self._open_pipe)

    def _open_pipe(self) -> None:
        self.pipe_bar.display = True
        self.pipe_input.value = ""
        self.pipe_input.focus()

    def pipe_submitted(self, command: str) -> None:
        self.pipe_bar.display = False
        self.letter_list.focus()
        x = self.selected_letter()
        if command.strip() and x is not None:
            self._read_raw(x.path, "pipe", command)

    @work(thread=True, exclusive=True, group="raw-file", exit_on_error=False)
    def _read_raw(self, rel: str, purpose: str, command: str) -> None:
        from letterbox_tui.core.files import read_file

        f = read_file(self.root, rel, keep=RAW_LIMIT, hashing=False)
        self.post_message(RawRead(purpose, command, f.data, f.error or ""))

    def on_raw_read(self, message: RawRead) -> None:
        if message.error:
            self.notify(f"cannot read the letter: {message.error}", severity="error")
            return
        if message.purpose == "pager":
            argv, shell, wait = pager_argv(), False, False
        else:
            argv, shell, wait = message.command, True, True
        self.run_program(argv, message.data, shell=shell, wait=wait)

    def run_program(self, argv, data: bytes, *, shell: bool, wait: bool) -> int | None:
        """Run a program on the real terminal with ``data`` on its standard input."""
        from textual.app import SuspendNotSupported

        def run() -> int | None:
            try:
                done = subprocess.run(argv, input=data, shell=shell, check=False)
            except OSError as exc:
                self.notify(f"cannot run it: {exc.strerror or exc}", severity="error")
                return None
            if wait and not self.is_headless:
                try:
                    input(f"\n[exit {done.returncode}] press Enter to return to letterbox-tui ")
                except (EOFError, OSError):
                    pass
            return done.returncode

        self.last_program = (argv, shell)
        if self.is_headless:  # tests: there is no terminal to give away
            return run()
        try:
            with self.suspend():
                code = run()
        except SuspendNotSupported:
            self.notify("This terminal cannot suspend the app.", severity="warning")
            return None
        self.refresh(layout=True)
        return code
