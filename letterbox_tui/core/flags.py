"""The one place the open flags are declared: every file and folder of a letterbox (and of
the user's settings, cache and themes) is opened with one of these.

``O_NOFOLLOW``: a symlink is never followed (the open fails with ``ELOOP``); a folder is
opened relative to its parent's descriptor with ``DIR`` so no part of a path is followed.
``O_NONBLOCK`` on reads: a FIFO never blocks (the caller then ``fstat``s and refuses what is
not a regular file). ``O_EXCL`` on creates: never overwrite. ``O_CLOEXEC`` everywhere: no
descriptor leaks into ``$EDITOR``, git or a child.
"""

from __future__ import annotations

import os

#: A folder, relative to its parent's descriptor.
DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: A folder of the user's own, where their symlink to it is theirs to follow.
DIR_FOLLOWING = DIR & ~os.O_NOFOLLOW
#: A file to read (``fstat`` it before reading: it may be a FIFO or a device).
READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
#: A file to read where the user's own symlink is theirs to follow (their config file).
READ_FOLLOWING = READ & ~os.O_NOFOLLOW
#: A new file, created exclusively (never an existing one, never through a symlink).
CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
#: A private file written whole, made when missing and emptied when not (never a symlink).
REWRITE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
#: A lock file to ``flock``: opened read-write, never through a symlink (``LOCK | os.O_CREAT``
#: makes it when missing; it is never written, so an existing one is fine).
LOCK = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC
