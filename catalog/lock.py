"""One refresh at a time per catalog file: an advisory lock next to it."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from normalize.errors import LockHeld


@contextmanager
def refresh_lock(db_path: Path) -> Iterator[Path]:
    """Hold ``<db>.lock`` for the duration; LockHeld (naming the holder's pid) if it is taken.

    The kernel drops the lock when its holder exits, however it exits, so a killed refresh never
    leaves a stale lock behind.
    """
    lock_path = Path(f"{db_path}.lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(lock_path, "a+")  # noqa: SIM115 - held open for the lock's lifetime
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise LockHeld(f"another refresh (pid {holder}) is updating {db_path}") from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        with _file_lock(db_path):
            yield lock_path
    finally:
        handle.close()


@contextmanager
def _file_lock(db_path: Path) -> Iterator[None]:
    """The catalog file itself locked too, so that another name for it (a hard link, whose lock file
    is another one) cannot start a second refresh of the same file. flock is independent of the POSIX
    locks DuckDB takes, so readers are not affected."""
    try:
        handle = open(db_path, "rb")  # noqa: SIM115 - held open for the lock's lifetime
    except FileNotFoundError:  # a first refresh: no file, no other name for it
        yield
        return
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LockHeld(
                f"another refresh is updating {db_path} under another name (a hard link)"
            ) from None
        yield
    finally:
        handle.close()
