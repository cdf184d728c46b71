"""The one exception type a user can cause. The command line maps it to exit 2."""

from __future__ import annotations


class LetterboxError(Exception):
    """A user-caused problem, carrying a one-line message fit to print as it is."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split("\n")))
        self.message = self.args[0]

    def __str__(self) -> str:
        return self.message
