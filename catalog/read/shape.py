"""What a catalog file holds beyond the core tables: prices, measurements, fetch records.

A catalog built by an older or newer version of the refresh may lack a table or carry extra columns;
the read side asks ``shape`` once per file and shows what is there, never a column it would have to
make up (e.g. the price filter appears only when the file has prices).
"""

from __future__ import annotations

import duckdb

from records.frozen import record


@record
class Shape:
    """Tables and ``instances`` columns of one catalog file, and whether the optional data has rows."""

    tables: frozenset[str]
    instance_columns: frozenset[str]
    price_rows: int = 0
    measurement_rows: int = 0
    fetch_rows: int = 0

    @property
    def priced(self) -> bool:
        """Whether the file holds current prices (or instance columns derived from them)."""
        return self.price_rows > 0

    @property
    def prices_in_instances(self) -> bool:
        """Whether ``instances`` carries its own price columns (issue 11's ``usd_per_gpu_hour``)."""
        return "usd_per_gpu_hour" in self.instance_columns


def _count(con: duckdb.DuckDBPyConnection, tables: frozenset[str], name: str, sql: str) -> int:
    return int(con.execute(sql).fetchall()[0][0]) if name in tables else 0


def shape(con: duckdb.DuckDBPyConnection) -> Shape:
    """The shape of the catalog behind ``con``. Tables and columns are read from DuckDB's own
    catalog functions, which ``information_schema.tables`` (its tables and non-internal views) and
    ``.columns`` select from: binding those views took twice the work."""
    tables = frozenset(
        name
        for (name,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' UNION ALL "
            "SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal"
        ).fetchall()
    )
    columns = frozenset(
        name
        for (name,) in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = 'instances'"
        ).fetchall()
    )
    if "usd_per_gpu_hour" in columns:
        prices = int(
            con.execute("SELECT count(*) FROM instances WHERE usd_per_gpu_hour IS NOT NULL").fetchall()[0][0]
        )
    else:
        prices = _count(con, tables, "current_prices", "SELECT count(*) FROM current_prices")
    return Shape(
        tables=tables,
        instance_columns=columns,
        price_rows=prices,
        measurement_rows=_count(con, tables, "measurements", "SELECT count(*) FROM measurements"),
        fetch_rows=_count(con, tables, "fetches", "SELECT count(*) FROM fetches"),
    )
