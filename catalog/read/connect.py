"""Opening the catalog for reading: always read-only, so a refresh can swap the file underneath.

``connect_readonly`` is what the app and the read-side questions use. ``connect_sandboxed`` is for
SQL someone typed (``catalog query``): read-only is not a sandbox by itself, since DuckDB SQL can
write files (``COPY ... TO``), read any file (``read_csv('/etc/passwd')``), attach another catalog
read-write and load extensions that reach the network. The sandbox turns all of that off and locks
the configuration so no ``SET`` can turn it back on; ``execute_limited`` adds a time limit and makes
Ctrl-C stop the query (DuckDB alone ignores it until the query ends). ``check_catalog`` tells a
corrupt catalog from a healthy one (the app uses it to show a clear error); ``unreadable`` tells a
DuckDB error that is the catalog file's (corrupt, not a database, a directory) from any other (the
command line's exit 4 for every command that reads it).
"""

from __future__ import annotations

import math
import os
import select
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from normalize.errors import CorruptCatalog, EnvironmentProblem, QueryStopped

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
QUERY_TIME_LIMIT_MAX_S = 86_400.0  # --timeout accepts 0 (no limit) up to a day, and nothing else
# What one query may hand to Python: rows fetched in batches and counted as they arrive; past a cap
# the fetch stops and the result says where it was cut (the whole catalog is under 20,000 rows a
# table; 3 GB once came back from one SELECT within the time limit).
QUERY_MAX_ROWS = 100_000
QUERY_MAX_TEXT_BYTES = 64_000_000  # the rows' values as text, roughly what printing them takes
# Rows per fetch: a batch is converted to Python whole before it can be counted, so a small one (64 x
# the largest value) keeps the fetch near the byte cap; 2,048 rows of 1 MB once made 2 GB here.
_FETCH_ROWS = 64
# What running one query may add to the ``query`` command's process (its data segment, RLIMIT_DATA):
# DuckDB builds each chunk of up to 2,048 values in full before Python sees a row, outside its own
# memory_limit (1,000 values of 1 MB once peaked at 1,982 MB); past this its allocation fails, cleanly.
QUERY_MAX_GROWTH_BYTES = 1_000_000_000


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


def unreadable(path: Path, exc: BaseException) -> CorruptCatalog | EnvironmentProblem | None:
    """The error a DuckDB error means when it says the catalog at ``path`` itself cannot be read, or
    None when it is about something else (the SQL, a bug). CorruptCatalog for a damaged file or one
    that is no database (garbage, an empty file); EnvironmentProblem for an I/O error naming the
    catalog file (a directory, no permission to read it), which ``make refresh`` would not mend."""
    if is_corrupt(exc):
        return corrupt(path, exc)
    names = {str(path), os.path.abspath(path), str(Path(path).resolve())}  # DuckDB makes it absolute
    if isinstance(exc, duckdb.IOException) and any(f'"{name}"' in str(exc) for name in names):
        return EnvironmentProblem(f"catalog {path} is unreadable: {str(exc).splitlines()[0][:300]}")
    return None


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


def time_limit_problem(seconds: float) -> str | None:
    """Why ``seconds`` is not a query time limit (NaN, negative, infinite, over a day), or None."""
    if not math.isfinite(seconds) or not 0 <= seconds <= QUERY_TIME_LIMIT_MAX_S:
        return f"must be a number of seconds from 0 (no limit) to {QUERY_TIME_LIMIT_MAX_S:,.0f}"
    return None


def fetch_capped(
    result: duckdb.DuckDBPyConnection, max_rows: int = QUERY_MAX_ROWS, max_bytes: int = QUERY_MAX_TEXT_BYTES
) -> tuple[list[tuple], str | None]:
    """The rows of an executed query, fetched in batches, and why they were cut (None if whole)."""
    rows: list[tuple] = []
    size = 0
    while batch := result.fetchmany(_FETCH_ROWS):
        for row in batch:
            if len(rows) >= max_rows:
                return rows, f"cut at {max_rows:,} rows (the cap on one query's result)"
            size += sum(len(str(value)) + 1 for value in row)
            if size > max_bytes:
                return rows, f"cut at {len(rows):,} rows: past {max_bytes:,} bytes of values (the cap)"
            rows.append(row)
    return rows, None


def _data_segment_bytes() -> int | None:
    """This process's data segment now (``VmData``, what RLIMIT_DATA counts), or None off Linux."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmData:"):
            return int(line.split()[1]) * 1024
    return None


@contextmanager
def growth_capped(max_bytes: int = QUERY_MAX_GROWTH_BYTES) -> Iterator[None]:
    """Let the process's data segment grow by at most ``max_bytes`` inside the block (RLIMIT_DATA's
    soft limit, restored after: the hard limit is left as it is). For a process of its own running one
    query (``catalog query``), not for a server whose other threads would share the cap. Does nothing
    where the data segment cannot be read or the hard limit is lower."""
    import resource

    now = _data_segment_bytes()
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    cap = None if now is None else now + max_bytes
    tighter = [limit for limit in (soft, hard) if limit != resource.RLIM_INFINITY and cap and limit <= cap]
    if cap is None or tighter:  # nothing to read, or a cap already as tight
        yield
        return
    resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def execute_limited(
    con: duckdb.DuckDBPyConnection, sql: str, time_limit_s: float | None
) -> tuple[list[str], list[tuple], str | None]:
    """Run ``sql`` and return its column names, rows (at most the caps, see ``fetch_capped``) and
    why they were cut (None if whole), stopping it after ``time_limit_s``
    (QueryStopped) or at Ctrl-C (KeyboardInterrupt). DuckDB runs the query in C without looking at
    signals, so a watcher thread does the stopping: Python's signal wake-up fd tells it of Ctrl-C
    even while the main thread is inside DuckDB, and it calls ``con.interrupt()``."""
    import signal  # here: every other reader of the catalog (a plan's, the app's) runs without it

    if time_limit_s is not None and not (0 <= time_limit_s <= QUERY_TIME_LIMIT_MAX_S):
        # NaN, a negative or an infinite limit makes the watcher die at once: no limit at all
        raise ValueError(f"time limit {time_limit_s!r}: from 0 (none) to {QUERY_TIME_LIMIT_MAX_S:,.0f} s")
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
        rows, cut = fetch_capped(result)
        return [d[0] for d in result.description or ()], rows, cut
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
