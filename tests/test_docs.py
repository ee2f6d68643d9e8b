"""The README stays true: set-up commands, providers, CLI commands and every schema column."""

from __future__ import annotations

import re

import duckdb

from catalog.cli import build_parser
from catalog.store import CLAIM_COLUMNS, INSTANCE_COLUMNS, schema_sql
from scrapers import REGISTRY
from tests.helpers import ROOT

README = (ROOT / "README.md").read_text()


def test_setup_is_make_app_then_make_test():
    first_block = re.search(r"```sh\n(.*?)```", README, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in first_block.splitlines() if line.strip()]
    assert commands == ["make app", "make test"]


def test_every_provider_is_documented():
    for name in REGISTRY:
        assert f"| `{name}` |" in README, f"provider {name} missing from the README table"


def test_every_cli_command_is_documented():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    for command in commands:
        assert f"`{command}" in README, f"command {command} missing from the README"


def test_every_instances_column_is_documented():
    with duckdb.connect() as con:
        con.execute(schema_sql())
        columns = [row[0] for row in con.execute("DESCRIBE instances").fetchall()]
    assert tuple(columns) == INSTANCE_COLUMNS
    for column in columns:
        assert f"`{column}`" in README, f"column {column} missing from the README schema"


def test_every_claims_column_is_documented():
    with duckdb.connect() as con:
        con.execute(schema_sql())
        columns = [row[0] for row in con.execute("DESCRIBE claims").fetchall()]
    assert tuple(columns) == CLAIM_COLUMNS
    section = README.split("### `claims`", 1)[1].split("\n### ", 1)[0]
    for column in columns:
        assert re.search(rf"\b{column}\b", section), f"claims column {column} missing from the README"
