"""The instances table's columns, read from the one table that declares them (instance_columns.toml).

Everything that lists the columns derives from here: the DDL (``instances_ddl``, checked against
catalog/schema.sql), the writer's column list, the claim fields and their units (records/offers.py) and
the table in docs/schema.md (``schema_markdown``). Adding a column is one entry there, one field on
``InstanceOffer`` and the parser that claims it (docs/contributing.md).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources

from normalize import vocab


@dataclass(frozen=True)
class Column:
    """One column: its SQL type and constraints, the unit its name carries, and what it means."""

    name: str
    sql: str
    doc: str
    unit: str | None = None
    claim: bool = False  # a claim (quote and URL) can feed it
    text: bool = False  # the claim's value is a vocabulary word, not a number
    enum: str | None = None  # the normalize.vocab enum its values come from

    def values(self) -> tuple[str, ...]:
        """The values an enum column may take, in the vocabulary's order; () for other columns."""
        return tuple(member.value for member in getattr(vocab, self.enum)) if self.enum else ()


def _load() -> tuple[tuple[Column, ...], tuple[str, ...]]:
    table = tomllib.loads(resources.files("records").joinpath("instance_columns.toml").read_text())
    return tuple(Column(**entry) for entry in table["column"]), tuple(table["constraints"])


INSTANCES, INSTANCE_CONSTRAINTS = _load()
INSTANCE_COLUMNS: tuple[str, ...] = tuple(c.name for c in INSTANCES)
#: Claim fields and the unit of each (None for vocabulary words).
FIELD_UNITS: dict[str, str | None] = {c.name: c.unit for c in INSTANCES if c.claim}
TEXT_FIELDS: frozenset[str] = frozenset(c.name for c in INSTANCES if c.text)


def instances_ddl() -> str:
    """The CREATE TABLE statement for instances, as catalog/schema.sql holds it."""
    width = max(len(c.name) for c in INSTANCES) + 2
    lines = [f"    {c.name:<{width}}{c.sql}," for c in INSTANCES]
    lines += [f"    {constraint}," for constraint in INSTANCE_CONSTRAINTS]
    lines[-1] = lines[-1].rstrip(",")
    return "CREATE TABLE IF NOT EXISTS instances (\n" + "\n".join(lines) + "\n);"


def schema_markdown() -> str:
    """The instances table of docs/schema.md: column, type, unit, meaning (with an enum's values)."""
    rows = ["| column | type | unit | meaning |", "| --- | --- | --- | --- |"]
    for c in INSTANCES:
        meaning = c.doc
        if c.values() and not all(f"`{v}`" in meaning for v in c.values()):
            meaning += " (one of " + ", ".join(f"`{v}`" for v in c.values()) + ")"
        rows.append(f"| `{c.name}` | {c.sql.split()[0]} | {c.unit or ''} | {meaning} |")
    return "\n".join(rows)
