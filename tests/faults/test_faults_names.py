"""The fault matrix, names: no control character stored, no formula in a CSV, no escape sequence obeyed.

``=HYPERLINK(...)``, ``+cmd|...`` and ``@SUM(...)`` instance names once reached CSV downloads and
``export --format csv`` as formulas; terminal escape sequences and NUL bytes reached ``plan`` and
``query`` output.
"""

from __future__ import annotations

import csv
import shutil
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import duckdb
import pandas as pd
import pytest

from catalog.cli import main
from catalog.names import checked_offer
from catalog.offers import build_offer
from catalog.previous import row_offer
from catalog.store import INSTANCE_COLUMNS, offer_row, schema_sql
from normalize.safe_text import csv_safe_frame, escaped, formula_safe
from records.offers import Claim, RawOffer
from tests.helpers import AWS_PAGE, Clock, query, run

FORMULAS = ['=HYPERLINK("http://evil.example","x")', "+cmd|' /C calc'!A0", "@SUM(1+1)*cmd", "-2+3"]
ESCAPE = "g5\x1b[2J\x1b]0;pwned\x07\x00"


def test_a_control_character_in_a_name_is_stored_escaped_and_the_row_kept_with_a_note():
    url = "https://t.test/page"
    raw = RawOffer("t", "box\x00-8\x1b[31m", url, (Claim("gpu_count", 8.0, "8", url),))
    offer = checked_offer(raw)
    assert offer.instance_type == "box\\x00-8\\x1b[31m" and offer.claims == raw.claims
    assert offer.notes[-1].startswith("the source names this instance with 2 control or invisible characters")
    assert offer.name_escaped and not raw.name_escaped
    plain = checked_offer(RawOffer("t", "p5.48xlarge", url, ()))
    assert plain.instance_type == "p5.48xlarge" and not plain.name_escaped


def test_a_page_naming_an_instance_with_an_escape_sequence_loses_nothing(small_catalog, tmp_path):
    mirror, db = small_catalog
    page = mirror / AWS_PAGE
    page.write_text(page.read_text().replace("g5.12xlarge", "g5.12xl\x1b[2Jarge"))
    clock = Clock()
    clock.now = datetime.now(UTC).replace(tzinfo=None) + timedelta(hours=1)  # after the catalog was built
    report = run(db, mirror, clock)
    assert (report.exit_code, report.outcomes[0].rows_carried) == (1, 1)  # the last good row stays
    names = [n for (n,) in query(db, "SELECT instance_type FROM instances")]
    assert "g5.12xlarge" in names and not [n for n in names if "\x1b" in n]


def test_an_escaped_name_is_a_stored_flag_that_a_carried_row_keeps(tmp_path):
    """``name_escaped`` (not only the note) is written to ``instances`` and read back with the row, so a
    carried row keeps it; a plain name is not flagged."""
    url = "https://t.test/page"
    claims = (Claim("gpu_model", "H100-SXM-80GB", "H100", url), Claim("gpu_count", 8.0, "8", url))
    raw = RawOffer("t", "box\x00-8", url, claims)
    built = [
        build_offer(checked_offer(r), scraped_at=datetime(2026, 12, 1))
        for r in (raw, replace(raw, instance_type="box-8"))
    ]
    with duckdb.connect(str(tmp_path / "c.duckdb")) as con:
        con.execute(schema_sql())
        marks, columns = ", ".join("?" * len(INSTANCE_COLUMNS)), ", ".join(INSTANCE_COLUMNS)
        con.executemany(
            f"INSERT INTO instances BY NAME SELECT * FROM (VALUES ({marks})) AS v({columns})",
            [list(offer_row(o).values()) for o in built],
        )
        cursor = con.execute("SELECT * FROM instances ORDER BY instance_type")
        names = [d[0] for d in cursor.description]
        stored = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
    assert [(r["instance_type"], r["name_escaped"]) for r in stored] == [
        ("box-8", False),
        ("box\\x00-8", True),
    ]
    assert [row_offer(r, ()).name_escaped for r in stored] == [False, True]


@pytest.fixture
def hostile(small_catalog_file, tmp_path):
    """The small catalog with g5.xlarge renamed to an escape sequence and p5.48xlarge to a formula."""
    db = tmp_path / "hostile.duckdb"
    shutil.copyfile(small_catalog_file, db)
    with duckdb.connect(str(db)) as con:
        for table in ("instances", "claims", "prices"):
            con.execute(f"UPDATE {table} SET instance_type = ? WHERE instance_type = 'g5.xlarge'", [ESCAPE])
            con.execute(
                f"UPDATE {table} SET instance_type = ? WHERE instance_type = 'p5.48xlarge'", [FORMULAS[0]]
            )
    return db


def test_query_and_plan_print_an_escape_sequence_as_text(hostile, capsys):
    assert main(["query", "--db", str(hostile), "SELECT instance_type FROM instances"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x00" not in out and escaped(ESCAPE) in out
    assert (
        main(["plan", "--model", "llama-3.1-8b", "--workload", "serve", "--top", "0", "--db", str(hostile)])
        == 0
    )
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x00" not in out and "g5\\x1b[2J" in out


def test_export_and_cheapest_csv_neutralise_formulas(hostile, tmp_path, capsys):
    out = tmp_path / "instances.csv"
    assert (
        main(["export", "--db", str(hostile), "--table", "instances", "--format", "csv", "--out", str(out)])
        == 0
    )
    with out.open(newline="") as handle:
        names = [row["instance_type"] for row in csv.DictReader(handle)]
    assert "'" + FORMULAS[0] in names and FORMULAS[0] not in names
    assert "g5.12xlarge" in names  # a plain name as it is
    assert main(["cheapest", "--db", str(hostile), "--format", "csv"]) == 0
    assert ",'=HYPERLINK(" in capsys.readouterr().out.replace('"', "")
    assert (
        main(["query", "--db", str(hostile), "--format", "csv", "SELECT instance_type FROM instances"]) == 0
    )
    assert "'=HYPERLINK(" in capsys.readouterr().out


def test_a_csv_download_opens_every_formula_as_text():
    frame = pd.DataFrame({"instance": [*FORMULAS, "p5.48xlarge", "\tx", "\rx"], "gpus": range(7)})
    safe = csv_safe_frame(frame)
    assert list(safe["instance"]) == [*("'" + f for f in FORMULAS), "p5.48xlarge", "'\tx", "'\rx"]
    assert list(safe["gpus"]) == list(range(7)) and frame["instance"].iloc[0] == FORMULAS[0]
    assert formula_safe(-3.0) == -3.0  # numbers are numbers


def test_the_refresh_stores_a_name_with_control_characters_escaped_prices_joined():
    from catalog import pipeline
    from records.documents import Document
    from records.prices import Price
    from scrapers.base import Scraper

    url, name = "https://t.test/list.csv", "gpu_8x_h100\x1b[2J\x00"

    class Hostile(Scraper):
        name = "hostile"
        title = "a list naming an instance with an escape sequence"

        async def fetch(self, fetcher) -> None:
            return None

        def parse(self, documents):
            claims = (
                Claim("gpu_model", "H100-SXM-80GB", "H100", url),
                Claim("gpu_count", 8.0, "H100,8", url),
            )
            return [RawOffer("hostile", name, url, claims)]

        def parse_prices(self, documents):
            return [Price("hostile", name, "us-east-1", 20.0, None, url, "20.0")]

    when = datetime(2026, 12, 1)
    body = f"InstanceType,AcceleratorName,AcceleratorCount,Price\n{name},H100,8,20.0\n"
    document = Document(url, "hostile", 200, when, body, sha256="0" * 64)
    parsed = pipeline.parse_documents(Hostile(), [document], when)
    (offer,) = parsed.offers
    assert offer.instance_type == "gpu_8x_h100\\x1b[2J\\x00"
    assert "control or invisible characters (\\x1b, \\x00)" in offer.notes_text
    assert [p.instance_type for p in parsed.prices] == [offer.instance_type]
