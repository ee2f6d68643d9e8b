"""Reading a local file a user or a copies directory hands us, within a cap.

A path can name anything: a symlink to /dev/zero (endless), a FIFO (a read that blocks forever), a
directory, a 500 MB file. ``read_capped_file`` opens without blocking, checks on the open file that
it is a regular file, and reads at most ``max_bytes``; ``FileRefused`` (one line naming the path and
the reason) otherwise.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISSOCK, "a socket"),
)


class FileRefused(ValueError):
    """A local file that is not read: not a regular file, over the cap, or unreadable."""


class FileTooLarge(FileRefused):
    """A regular file over the cap."""


class FileMissing(FileRefused):
    """No regular file at the path: nothing there, or something else (a FIFO, a directory...)."""


# What opening a path says when no file is there (``Path.is_file`` is False on these too).
_NO_FILE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_capped_file(path: Path | str, max_bytes: int) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed), at most ``max_bytes``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        refused = FileMissing if exc.errno in _NO_FILE else FileRefused
        raise refused(f"{path}: cannot open it: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd)
        if not stat.S_ISREG(mode.st_mode):
            raise FileMissing(f"{path}: not a regular file ({_kind(mode.st_mode)}); refused unread")
        if mode.st_size > max_bytes:
            raise FileTooLarge(f"{path}: {mode.st_size:,} bytes, over the {max_bytes:,}-byte cap")
        body = _read(fd, mode.st_size + 1)  # its size and a byte more, not a buffer of the cap
        if len(body) > mode.st_size:  # it grew since fstat: the rest, up to a byte past the cap
            body += _read(fd, max_bytes + 1 - len(body))
    finally:
        os.close(fd)
    if len(body) > max_bytes:
        raise FileTooLarge(f"{path}: over the {max_bytes:,}-byte cap")
    return body


def _read(fd: int, size: int) -> bytes:
    """Up to ``size`` bytes of ``fd``, fewer only at its end (``os.read`` may return less at once),
    without a buffered file object around it."""
    chunks = []
    while size > 0 and (chunk := os.read(fd, size)):
        chunks.append(chunk)
        size -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
