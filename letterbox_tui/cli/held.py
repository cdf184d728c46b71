"""What an answer writes while the proof that its letterbox is unchanged still runs
(``cli.indexed._answer_meanwhile``): held back, then shown once the proof holds, or
dropped when it does not."""

from __future__ import annotations

import io


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
        like, text = self.like, []
        for part in self.parts:
            if type(part) is str:
                text.append(part)
                continue
            like.writelines(text)
            text = []
            like.flush()
            like.buffer.write(part)
        like.writelines(text)
        self.parts.clear()


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
