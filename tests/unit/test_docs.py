"""The documents stay true: the README is a front page whose set-up, commands and links work; the manual
in docs/ names every provider, CLI command and schema column."""

from __future__ import annotations

import re
import shlex

import duckdb
import pytest

from catalog.cli import build_parser
from catalog.store import CLAIM_COLUMNS, INSTANCE_COLUMNS, schema_sql
from scrapers import REGISTRY
from tests.helpers import ROOT, snapshot_records

README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"


def doc(name: str) -> str:
    return (DOCS / name).read_text()


def catalog_commands(text: str) -> list[list[str]]:
    """Every `python -m catalog ...` command in the text's shell blocks, as arguments (a quoted argument may
    span lines; a trailing backslash continues the line)."""
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        pending = ""
        for line in block.splitlines():
            pending = f"{pending} {line.rstrip(chr(92))}" if pending else line.rstrip(chr(92))
            if pending.count('"') % 2 or line.endswith(chr(92)):
                continue
            if "-m catalog " in pending:
                commands.append(shlex.split(pending.split("-m catalog ", 1)[1], comments=True))
            pending = ""
    return commands


def test_setup_is_make_app_then_make_test():
    first_block = re.search(r"```sh\n(.*?)```", README, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in first_block.splitlines() if line.strip()]
    assert commands == ["make app", "make test"]


def test_the_readme_is_a_front_page_whose_links_exist():
    assert len(README.splitlines()) <= 200
    links = re.findall(r"\]\((docs/[^)#]+)", README)
    assert {"docs/contributing.md", "docs/schema.md", "docs/operations.md"} <= set(links)
    for link in links:
        assert (ROOT / link).is_file(), f"the README links to {link}, which does not exist"


@pytest.mark.parametrize("page", ["README.md", *sorted(p.name for p in DOCS.glob("*.md"))])
def test_every_catalog_command_quoted_parses(page):
    """A command the documents tell people to run is one the CLI accepts (option names, choices)."""
    text = README if page == "README.md" else doc(page)
    if page == "README.md":
        assert len(catalog_commands(text)) >= 3, "the front page shows its three questions as commands"
    parser = build_parser()
    for argv in catalog_commands(text):
        try:
            parser.parse_args(argv)
        except SystemExit as exit:
            raise AssertionError(f"{page}: `catalog {' '.join(argv)}` does not parse") from exit


def test_every_provider_is_documented():
    providers = doc("providers.md")
    for name in REGISTRY:
        assert f"| `{name}` |" in providers, f"provider {name} missing from the table in docs/providers.md"


def test_the_row_counts_per_provider_are_the_shipped_snapshot_s():
    """docs/providers.md's table of rows, priced rows and prices per provider, and its totals line,
    are the shipped snapshot's (the SQL above the table gives them from a catalog)."""
    rows = snapshot_records("instances")
    prices = snapshot_records("prices")
    priced = {(p["provider"], p["instance_type"]) for p in prices}
    expected = {
        provider: (
            sum(1 for r in rows if r["provider"] == provider),
            sum(1 for r in rows if r["provider"] == provider and (provider, r["instance_type"]) in priced),
            sum(1 for p in prices if p["provider"] == provider),
        )
        for provider in {r["provider"] for r in rows}
    }
    page = doc("providers.md")
    table = {
        name: (int(n), int(priced_rows), int(count))
        for name, n, priced_rows, count in re.findall(r"^\| (\w+) \| (\d+) \| (\d+) \| (\d+) \|", page, re.M)
    }
    assert table == expected, "docs/providers.md: the row counts per provider differ from data/snapshot"
    on_demand = sum(1 for r in rows if r["min_usd_per_hour"] is not None)
    with_price = sum(1 for r in rows if (r["provider"], r["instance_type"]) in priced)
    totals = (
        f"{len(rows):,} rows from {len(expected)} providers; {with_price:,} have a current price, "
        f"{on_demand:,} an on-demand one (`min_usd_per_hour`); {len(prices):,} current prices."
    )
    assert totals in " ".join(page.split()), f"docs/providers.md should say: {totals}"


def test_every_offer_list_is_in_the_age_table():
    """docs/providers.md's "How old each offer list is" names each list read with its status, and a
    frozen or newer one with its copy's commit (the current ones share one row)."""
    from catalog.pricing import offer_lists

    section = doc("providers.md").split("## How old each offer list is", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    for listed in offer_lists():
        assert any(
            re.search(rf"\b{listed.provider}\b", line.split("|")[1])
            and f"| {listed.status} |" in line
            and (listed.status == "current" or f"| {listed.stored_commit[:8]} |" in line)
            for line in lines
        ), f"docs/providers.md: {listed.provider}'s {listed.catalog_version} list is not in the age table"


def test_every_cli_command_is_documented():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    cli = doc("cli.md")
    for command in commands:
        assert f"`{command}" in cli, f"command {command} missing from docs/cli.md"


def test_every_instances_column_is_documented():
    with duckdb.connect() as con:
        con.execute(schema_sql())
        columns = [row[0] for row in con.execute("DESCRIBE instances").fetchall()]
    assert tuple(columns) == INSTANCE_COLUMNS
    schema = doc("schema.md")
    for column in columns:
        assert f"`{column}`" in schema, f"column {column} missing from docs/schema.md"


def test_every_claims_column_is_documented():
    with duckdb.connect() as con:
        con.execute(schema_sql())
        columns = [row[0] for row in con.execute("DESCRIBE claims").fetchall()]
    assert tuple(columns) == CLAIM_COLUMNS
    section = doc("schema.md").split("## `claims`", 1)[1].split("\n## ", 1)[0]
    for column in columns:
        assert re.search(rf"\b{column}\b", section), f"claims column {column} missing from docs/schema.md"


def test_the_app_page_shows_the_nine_tasks_with_screenshots():
    """docs/app.md: the nine tasks of issue 21, each with a screenshot the e2e tests take (the file
    exists and a test names it). It quotes no live row count of the shipped catalog (its bench figures
    say the size they were measured at), so a new provider changes no page but providers.md."""
    page = (DOCS / "app.md").read_text()
    tasks = re.findall(r"!\[Task (\d)[^\]]*\]\((screenshots/task-\d\.png)\)", page)
    assert [int(n) for n, _ in tasks] == list(range(1, 10))
    e2e = (ROOT / "tests" / "e2e" / "test_nine_tasks.py").read_text()
    for n, shot in tasks:
        assert (DOCS / shot).is_file(), shot
        assert f'screenshot(page, "task-{n}")' in e2e or f'screenshot(other, "task-{n}")' in e2e
    assert "rows now" not in page
