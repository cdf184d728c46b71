"""What an answer writes while the proof that its letterbox is unchanged still runs
(``cli.indexed._answer_meanwhile``): held back, then shown once the proof holds, or
dropped when it does not."""

from __future__ import annotations

import io
import os

#: buffers given to one ``os.writev`` (Linux's IOV_MAX)
_IOV = 1024


class Held(io.TextIOBase):
    """What an answer writes while its proof runs: held, then written to the stream it
    stands for (``like``: its encoding and errors) once the proof holds, or dropped."""

    def __init__(self, like) -> None:
        super().__init__()
        self.like = like
        self.parts: list[str | bytes] = []  # (bytes: what was written to ``buffer``)
        self._buffer = _HeldBytes(self.parts) if getattr(like, "buffer", None) is not None else None

    @property
    def buffer(self):  # noqa: D102 - bytes, kept in order with the text
        if self._buffer is None:
            raise AttributeError("buffer")
        return self._buffer

    @property
    def encoding(self):  # noqa: D102
        return getattr(self.like, "encoding", None) or "utf-8"

    @property
    def errors(self):  # noqa: D102
        return getattr(self.like, "errors", None) or "strict"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:  # (a terminal is never answered this way)
        return False

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def show(self) -> None:
        like, text, run = self.like, [], []

        def out_bytes() -> None:
            like.flush()  # (the text before them first)
            write_bytes(like.buffer, run)
            run.clear()

        for part in self.parts:
            if type(part) is str:
                if run:
                    out_bytes()
                text.append(part)
            else:
                if text:
                    like.writelines(text)
                    text.clear()
                if type(part) is _Parts:
                    run.extend(part)
                else:
                    run.append(part)
        if run:
            out_bytes()
        like.writelines(text)
        self.parts.clear()


def write_bytes(buffer, parts: list) -> None:
    """``buffer.writelines(parts)`` without joining or copying the parts first: straight to
    the file with ``os.writev`` where ``buffer`` has one (every byte written, in order)."""
    if isinstance(buffer, _HeldBytes):
        buffer.parts.append(_Parts(parts))  # (held as one part: shown with one writev a thousand)
        return
    try:
        fd = buffer.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is None or not hasattr(os, "writev"):  # (no file, or no writev on this system)
        buffer.writelines(parts)
        return
    buffer.flush()
    views = list(parts)  # (bytes as they are: a memoryview each cost more than the write)
    at = 0
    while at < len(views):
        batch = views[at : at + _IOV]
        done = os.writev(fd, batch)
        if done == sum(map(len, batch)):
            at += len(batch)
            continue
        while done >= len(views[at]):  # a partial write (done < the batch's length)
            done -= len(views[at])
            at += 1
        if done:  # what is left of that buffer goes next
            views[at] = memoryview(views[at])[done:]


def between(rows: list, sep) -> list:
    """``rows`` with ``sep`` between each two, as parts (nothing joined)."""
    out = [sep] * (2 * len(rows) - 1) if rows else []
    out[::2] = rows
    return out


def utf8_pipe(out) -> bool:
    """True when ``out`` is no terminal and writes UTF-8 (strict or not: stored JSON is
    valid UTF-8): then rows may be written as the bytes the index keeps."""
    import codecs

    if out.isatty() or getattr(out, "buffer", None) is None:
        return False
    try:
        return codecs.lookup(out.encoding or "").name == "utf-8"
    except LookupError:
        return False


class _Parts(list):
    """Bytes written at once with ``write_bytes`` while held."""


class _HeldBytes:
    """``Held.buffer``: bytes written to it join its text, in order."""

    def __init__(self, parts: list) -> None:
        self.parts = parts

    def write(self, data) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def writelines(self, lines) -> None:
        self.parts.extend(bytes(x) for x in lines)

    def flush(self) -> None:
        pass
