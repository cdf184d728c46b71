"""The one exception type a user can cause. The command line maps it to exit 2."""

from __future__ import annotations


class LetterboxError(Exception):
    """A user-caused problem, carrying a one-line message fit to print as it is."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split("\n")))
        self.message = self.args[0]

    def __str__(self) -> str:
        return self.message


class Unfinished(LetterboxError):
    """A reply was published but the replier's own folders could not be brought up to date
    (the move to ``processed/``, the sidecar): something was written, so the command line
    exits 4, not 2. Running the same reply again finishes the job."""

    def __init__(self, message: str, letter_id: str) -> None:
        super().__init__(message)
        self.letter_id = letter_id


class Terminated(BaseException):
    """SIGTERM arrived while a writer held the protocol's lifecycle lock: raised so the lock
    is released on the way out (the command line exits 128 + ``signum``)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"terminated by signal {signum}")
        self.signum = signum
