"""A release's ``schema.md``, generated: each table's columns with their DuckDB types (from the file)
and what they mean (the comments of ``catalog/schema.sql``, the one place the schema is written).

A column the DDL has no comment for says so rather than being left blank; a view is listed with its
comment, since the Parquet files hold tables only (a view is a query over them).
"""

from __future__ import annotations

import re

import duckdb

from catalog.store import schema_sql
from records.columns import INSTANCES

_TABLE = re.compile(r"CREATE (TABLE IF NOT EXISTS|OR REPLACE VIEW) (\w+)")
_COLUMN = re.compile(r"^\s{4}(\w+)\s+[A-Z]+[^-]*?(?:--\s*(.*))?$")


def comments(ddl: str) -> tuple[dict[str, str], dict[str, dict[str, str]], list[str]]:
    """From the DDL: each table's and view's comment (the ``--`` lines above it), each table column's
    (``--`` at the end of its line), and the views' names."""
    about: dict[str, str] = {}
    columns: dict[str, dict[str, str]] = {}
    views: list[str] = []
    pending: list[str] = []
    current = ""
    for line in ddl.splitlines():
        if line.startswith("--"):
            pending.append(line.lstrip("- ").strip())
            continue
        if found := _TABLE.match(line):
            current = found.group(2)
            about[current] = " ".join(pending)
            columns[current] = {}
            if "VIEW" in found.group(1):
                views.append(current)
                current = ""
        elif current and (column := _COLUMN.match(line)) and column.group(1) not in ("PRIMARY", "CHECK"):
            columns[current][column.group(1)] = (column.group(2) or "").strip()
        pending = []
    return about, columns, views


def schema_markdown(con: duckdb.DuckDBPyConnection, tables: tuple[str, ...]) -> str:
    """``schema.md`` for the tables of a release, read from the connection's current database."""
    about, described, views = comments(schema_sql())
    described["instances"] = {c.name: " ".join(c.doc.split()) for c in INSTANCES}  # the column table
    lines = [
        "# Schema of this release",
        "",
        "Generated from `catalog/schema.sql` by `catalog release`. Every number carries its unit in its",
        "column name; timestamps are UTC. Each table is one Parquet file (`<table>.parquet`) and a table",
        "of `catalog.duckdb`; the views are in `catalog.duckdb` only.",
        "",
    ]
    for table in tables:
        lines += [f"## `{table}`", ""]
        if about.get(table):
            lines += [about[table], ""]
        lines += ["| column | type | null | meaning |", "| --- | --- | --- | --- |"]
        for name, kind, null, *_ in con.execute(f"DESCRIBE {table}").fetchall():
            meaning = described.get(table, {}).get(name) or "(no comment in the schema)"
            meaning = meaning.replace("|", "\\|")  # "cloud | marketplace" inside a Markdown table
            lines.append(f"| `{name}` | {kind} | {'yes' if null == 'YES' else 'no'} | {meaning} |")
        lines.append("")
    if views:
        lines += ["## Views (in `catalog.duckdb`)", ""]
        lines += [f"- `{view}`: {about[view] or '(no comment in the schema)'}" for view in views]
        lines.append("")
    return "\n".join(lines)
