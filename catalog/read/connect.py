"""Opening the catalog for reading: always read-only, so a refresh can swap the file underneath.

``connect_readonly`` is what the app and the read-side questions use. ``connect_sandboxed`` is for
SQL someone typed (``catalog query``): read-only is not a sandbox by itself, since DuckDB SQL can
write files (``COPY ... TO``), read any file (``read_csv('/etc/passwd')``), attach another catalog
read-write and load extensions that reach the network. The sandbox turns all of that off and locks
the configuration so no ``SET`` can turn it back on; ``execute_limited`` adds a time limit and makes
Ctrl-C stop the query (DuckDB alone ignores it until the query ends). ``check_catalog`` tells a
corrupt catalog from a healthy one (the app uses it to show a clear error).
"""

from __future__ import annotations

import select
import signal
import socket
import threading
from pathlib import Path

import duckdb

from normalize.errors import CorruptCatalog, QueryStopped

# What DuckDB says of a file it cannot read: not a database at all, a block failing its checksum, a
# file cut short. Other errors (a lock held by a writer, a newer format) are not corruption.
CORRUPTION_SIGNS = (
    "not a valid DuckDB database file",
    "Corrupt database file",
    "Could not read enough bytes",
)

SANDBOX: dict[str, str | bool | int | float | list[str]] = {
    "enable_external_access": False,  # no file or network access: COPY TO, read_*(), ATTACH, INSTALL, LOAD
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "allow_community_extensions": False,
    "memory_limit": "2GB",
    "lock_configuration": True,  # and no SET or PRAGMA can change any of it afterwards
}
QUERY_TIME_LIMIT_S = 30.0


def _exists(path: Path) -> Path:
    if not Path(path).exists():
        raise FileNotFoundError(f"no catalog at {path}; run `make refresh` or `python -m catalog seed`")
    return Path(path)


def connect_readonly(path: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection; FileNotFoundError with a hint if there is no catalog yet."""
    return duckdb.connect(str(_exists(path)), read_only=True)


def connect_sandboxed(path: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection for untrusted SQL: no file or network access, no ATTACH, no
    extensions, 2 GB of memory, configuration locked. FileNotFoundError if there is no catalog."""
    return duckdb.connect(str(_exists(path)), read_only=True, config=SANDBOX)


def is_corrupt(exc: BaseException) -> bool:
    """Whether a DuckDB error says the catalog file itself is damaged."""
    return isinstance(exc, duckdb.Error) and any(sign in str(exc) for sign in CORRUPTION_SIGNS)


def corrupt(path: Path, exc: BaseException) -> CorruptCatalog:
    """The CorruptCatalog error for ``path``, with the first line of what DuckDB said."""
    return CorruptCatalog(f"catalog {path} is unreadable: {str(exc).splitlines()[0][:300]}")


def check_catalog(path: Path) -> None:
    """Raise CorruptCatalog if the catalog at ``path`` cannot be read in full: a damaged header, or any
    block of any table failing its checksum (every column of every table is read once: tens of
    milliseconds for the shipped catalog). FileNotFoundError if there is none."""
    try:
        with connect_readonly(path) as con:
            tables = con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
            ).fetchall()
            for (table,) in tables:
                con.execute(f'SELECT count(*), sum(hash(COLUMNS(*))) FROM "{table}"').fetchall()
    except duckdb.Error as exc:
        if is_corrupt(exc):
            raise corrupt(path, exc) from None
        raise


def execute_limited(
    con: duckdb.DuckDBPyConnection, sql: str, time_limit_s: float | None
) -> tuple[list[str], list[tuple]]:
    """Run ``sql`` and return its column names and rows, stopping it after ``time_limit_s``
    (QueryStopped) or at Ctrl-C (KeyboardInterrupt). DuckDB runs the query in C without looking at
    signals, so a watcher thread does the stopping: Python's signal wake-up fd tells it of Ctrl-C
    even while the main thread is inside DuckDB, and it calls ``con.interrupt()``."""
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    why: list[str] = []

    def watch() -> None:
        ready, _, _ = select.select([reader], [], [], time_limit_s or None)
        if ready and reader.recv(1) != bytes([signal.SIGINT]):
            return  # the query ended (the writer was closed)
        why.append("interrupted" if ready else "timeout")
        con.interrupt()

    in_main = threading.current_thread() is threading.main_thread()  # only it may handle signals
    if in_main:
        previous_handler = signal.signal(signal.SIGINT, lambda *_: None)  # the watcher stops the query
        previous_fd = signal.set_wakeup_fd(writer.fileno())
    watcher = threading.Thread(target=watch, name="catalog-query-watch", daemon=True)
    watcher.start()
    try:
        result = con.execute(sql)
        return [d[0] for d in result.description or ()], result.fetchall()
    except duckdb.InterruptException:
        if why == ["timeout"]:
            raise QueryStopped(f"query stopped after its time limit of {time_limit_s:g} s") from None
        if why == ["interrupted"]:
            raise KeyboardInterrupt from None
        raise
    finally:
        if in_main:
            signal.set_wakeup_fd(previous_fd)
            signal.signal(signal.SIGINT, previous_handler)
        writer.close()
        watcher.join()
        reader.close()
