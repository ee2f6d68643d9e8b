"""The one column table: the DDL, the writer, the claim fields and the docs all come from it, and a
place that forgets a column fails here."""

from __future__ import annotations

import dataclasses

import duckdb

from catalog.store import INSTANCE_COLUMNS as WRITTEN
from catalog.store import schema_sql
from devtools.schema import SCHEMA_DOC, SCHEMA_SQL, with_ddl, with_table
from records.columns import FIELD_UNITS, INSTANCE_COLUMNS, INSTANCES, TEXT_FIELDS
from records.offers import InstanceOffer
from tests.helpers import snapshot_records


def test_the_checked_in_schema_and_docs_are_the_column_table():
    assert SCHEMA_SQL.read_text() == with_ddl(SCHEMA_SQL.read_text()), "run python -m devtools schema"
    assert SCHEMA_DOC.read_text() == with_table(SCHEMA_DOC.read_text()), "run python -m devtools schema"


def test_the_table_duckdb_builds_has_the_columns_in_order():
    with duckdb.connect() as con:
        con.execute(schema_sql())
        built = [row[0] for row in con.execute("DESCRIBE instances").fetchall()]
    assert tuple(built) == INSTANCE_COLUMNS == WRITTEN


def test_every_column_is_a_field_of_the_row_record():
    """InstanceOffer carries every column (as a field or, for the identity, a property)."""
    fields = {f.name for f in dataclasses.fields(InstanceOffer)}
    properties = {name for name, value in vars(InstanceOffer).items() if isinstance(value, property)}
    missing = [c for c in INSTANCE_COLUMNS if c not in fields | properties]
    assert not missing, f"columns with no InstanceOffer field: {missing}"


def test_every_field_of_the_row_record_is_a_column():
    """A field added to InstanceOffer without its entry in records/instance_columns.toml (step 1 of
    docs/contributing.md's "Add a field") is named here, not only by a scraper's "unknown claim field"."""
    extra = [f.name for f in dataclasses.fields(InstanceOffer) if f.name not in INSTANCE_COLUMNS]
    assert extra == ["identity", "claims"], f"InstanceOffer fields with no column in the table: {extra}"


def test_units_are_named_and_claim_fields_follow_the_table():
    for column in INSTANCES:
        for suffix, unit in (("_gbits_per_s", "Gbit/s"), ("_gbytes_per_s", "GB/s"), ("_gb", "GB")):
            if column.name.endswith(suffix):
                assert column.unit == unit, column.name
        assert not column.text or column.claim, f"{column.name}: a text claim field must be a claim field"
        # a number names its unit (a count what it counts: "GPUs", "NICs"); the claims, the carry's and
        # the gates' messages print it
        assert not column.claim or column.text or column.unit, (
            f"{column.name}: a numeric claim field needs a unit"
        )
        assert column.doc.strip(), f"{column.name} has no doc"
    assert "inter_node_gbits_per_s" in FIELD_UNITS and FIELD_UNITS["intra_node_link"] is None
    assert {"gpu_model", "intra_node_link", "inter_node_fabric"} <= TEXT_FIELDS


def test_every_claim_column_is_fed_by_a_claim_in_the_shipped_snapshot():
    """A claim column no scraper claims is a forgotten step of docs/contributing.md's "Add a field":
    the column would be NULL in every row and nothing else would notice."""
    claimed = {claim["field"] for claim in snapshot_records("claims")}
    assert sorted(name for name in FIELD_UNITS if name not in claimed) == []


def test_enum_columns_name_their_vocabulary():
    link = next(c for c in INSTANCES if c.name == "intra_node_link")
    assert "nvswitch" in link.values() and "unknown" in link.values()
