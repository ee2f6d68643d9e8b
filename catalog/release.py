"""``catalog release --out DIR``: the catalog as of its data, as files anyone can take with them.

A release directory holds ``catalog.duckdb`` (DuckDB's v1.1.0 storage format, which DuckDB 1.1 and
later open), one Parquet file per table, ``instances.json``, ``schema.md`` (generated from
``catalog/schema.sql``), ``manifest.json`` (data as of per provider, sources and their licences) and
``SHA256SUMS``. Stored document bodies are left out: they are the providers' and third parties' pages,
not ours to republish; every row keeps the URL it was read from.

Parquet row groups hold ``ROW_GROUP_ROWS`` rows sorted by provider and GPU model, so a reader that
asks for one provider or one GPU (DuckDB's ``read_parquet`` over HTTP, pyarrow's ``filters``) skips
the row groups whose statistics exclude it. The Parquet, JSON and Markdown files are reproducible:
the same catalog gives byte-identical files (rows in a total order, one thread, no build time
written). The DuckDB file holds the same rows but not the same bytes: DuckDB's block layout varies
from one write to the next.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from catalog.read.connect import unreadable
from catalog.release_manifest import manifest
from catalog.release_schema import schema_markdown
from catalog.store import STORAGE_VERSION, schema_sql
from normalize.errors import EnvironmentProblem

if TYPE_CHECKING:
    import pyarrow as pa

#: Tables a release carries, in schema order. ``documents`` (page bodies) stays out, see above.
TABLES = (
    "instances",
    "claims",
    "prices",
    "measurements",
    "fetches",
    "refreshes",
    "provider_refreshes",
    "source_layouts",
)
#: Columns every table is sorted by first, where it has them: what readers filter on.
SORT_FIRST = ("provider", "gpu_model")
ROW_GROUP_ROWS = 128
DUCKDB_FILE = "catalog.duckdb"
SUMS_FILE = "SHA256SUMS"


@dataclass(frozen=True)
class Release:
    """What ``build`` wrote: the directory, its files (name to SHA-256) and rows per table."""

    directory: Path
    sha256: dict[str, str]
    rows: dict[str, int]


def order_by(columns: list[str]) -> str:
    """A total order on a table's rows: provider, GPU model, then every other column as stored."""
    keys = [c for c in SORT_FIRST if c in columns] + [c for c in columns if c not in SORT_FIRST]
    return ", ".join(f'"{c}" NULLS LAST' for c in keys)


def _arrow(con: duckdb.DuckDBPyConnection, sql: str) -> pa.Table:
    relation = con.sql(sql)
    to_table = getattr(relation, "to_arrow_table", None) or relation.fetch_arrow_table  # duckdb 2.x, 1.x
    return to_table()


def _write_parquet(table: pa.Table, path: Path) -> None:
    import pyarrow.parquet as pq

    pq.write_table(
        table,
        path,
        row_group_size=ROW_GROUP_ROWS,
        compression="zstd",
        write_statistics=True,
        write_page_index=True,
    )


def _write_duckdb(source: duckdb.DuckDBPyConnection, path: Path, sorted_sql: dict[str, str]) -> None:
    """The release's DuckDB file: the catalog's schema (views included) and its rows, sorted, with
    no document bodies, in the compatible storage format."""
    quoted = str(path).replace("'", "''")
    source.execute(f"ATTACH '{quoted}' AS release (STORAGE_VERSION '{STORAGE_VERSION}')")
    try:
        source.execute("USE release")
        source.execute(schema_sql())
        for table, sql in sorted_sql.items():
            source.execute(f"INSERT INTO release.{table} BY NAME {sql}")
        source.execute("USE catalog_source")
        source.execute("CHECKPOINT release")
    finally:
        source.execute("USE catalog_source")
        source.execute("DETACH release")


def build(db: Path, out: Path) -> Release:
    """Write a release of the catalog at ``db`` into the directory ``out`` (created; it must be new
    or empty). EnvironmentProblem if ``out`` holds files already or cannot be written; whatever was
    written is removed then (a release cut short by a full disk once stayed, without SHA256SUMS)."""
    if not db.exists():
        raise FileNotFoundError(f"no catalog at {db}; run `make refresh` or `python -m catalog seed`")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise EnvironmentProblem(f"{out} is not an empty directory; give a new one for the release")
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EnvironmentProblem(f"cannot create {out}: {exc.strerror or exc}") from None
    try:
        return _write(db, out)
    except BaseException:  # a full disk, Ctrl-C: no half release to publish by mistake
        for path in out.iterdir():
            path.unlink(missing_ok=True)
        if created:
            out.rmdir()
        raise


def _write(db: Path, out: Path) -> Release:
    """Every file of the release into the empty directory ``out``, SHA256SUMS last."""
    con = duckdb.connect(config={"threads": 1})  # one thread: rows reach the files in one order
    try:
        quoted = str(db).replace("'", "''")
        con.execute(f"ATTACH '{quoted}' AS catalog_source (READ_ONLY)")
        con.execute("USE catalog_source")
        sorted_sql: dict[str, str] = {}
        described: dict[str, dict[str, Any]] = {}
        for table in TABLES:
            columns = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
            sorted_sql[table] = f"SELECT * FROM catalog_source.{table} ORDER BY {order_by(columns)}"
            arrow = _arrow(con, sorted_sql[table])
            _write_parquet(arrow, out / f"{table}.parquet")
            described[table] = {
                "file": f"{table}.parquet",
                "rows": arrow.num_rows,
                "sorted_by": [c for c in SORT_FIRST if c in columns],
                "row_group_rows": ROW_GROUP_ROWS,
            }
        path = str(out / "instances.json").replace("'", "''")
        con.execute(f"COPY ({sorted_sql['instances']}) TO '{path}' (FORMAT JSON, ARRAY true)")
        (out / "schema.md").write_text(schema_markdown(con, TABLES), encoding="utf-8")
        text = json.dumps(manifest(con, described), indent=2, ensure_ascii=False) + "\n"
        (out / "manifest.json").write_text(text, encoding="utf-8")
        _write_duckdb(con, out / DUCKDB_FILE, sorted_sql)
    except duckdb.IOException as exc:
        if (problem := unreadable(db, exc)) is not None:  # the catalog read, not the release written
            raise problem from None
        raise EnvironmentProblem(f"cannot write the release in {out}: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()
    sums = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir())}
    (out / SUMS_FILE).write_text("".join(f"{digest}  {name}\n" for name, digest in sums.items()))
    return Release(out, sums, {table: d["rows"] for table, d in described.items()})
