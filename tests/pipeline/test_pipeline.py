"""The refresh pipeline end to end on a small mirror written by the tests (no ../shared needed)."""

from __future__ import annotations

import asyncio
from datetime import datetime

import duckdb
import httpx
import pytest

from catalog import pipeline
from catalog.lock import refresh_lock
from catalog.read.changes import changes
from fetch.http import make_client
from normalize.errors import LockHeld
from records.measurements import Measurement
from records.offers import RawOffer
from records.prices import Price
from scrapers.base import Scraper
from scrapers.claims import fact
from scrapers.documents.azure import SIZES
from tests.helpers import AWS_PAGE, GCP_PAGES, Clock, add_gcp, build_mirror, no_sleep, query, run


@pytest.fixture
def setup(tmp_path):
    return build_mirror(tmp_path / "mirror"), tmp_path / "catalog.duckdb", Clock()


def test_first_refresh_builds_every_table(setup):
    mirror, db, clock = setup
    report = run(db, mirror, clock)
    assert report.exit_code == 0
    assert {o.provider: (o.outcome, o.rows_after) for o in report.outcomes} == {
        "aws": ("ok", 3),
        "azure": ("ok", 2),
    }
    assert query(
        db, "SELECT inter_node_gbits_per_s, stale FROM instances WHERE instance_type = 'p5.48xlarge'"
    ) == [(3200.0, False)]
    fetched = dict(query(db, "SELECT url, status FROM fetches"))
    assert fetched["https://" + AWS_PAGE] == 200
    assert fetched[SIZES + "nd-gb200-v6-series.md"] == 404  # a known series absent here: recorded
    assert query(db, "SELECT count(*) FROM claims WHERE fetched_at IS NULL AND basis = 'stated'") == [(0,)]
    assert query(db, "SELECT count(*) FROM documents")[0][0] >= 5
    assert not list(db.parent.glob("*.tmp-*"))


def test_failed_provider_keeps_its_rows_marked_stale_and_others_refresh(setup):
    mirror, db, clock = setup
    run(db, mirror, clock)
    (mirror / AWS_PAGE).unlink()
    clock.advance()
    report = run(db, mirror, clock)
    outcomes = {o.provider: o for o in report.outcomes}
    assert report.exit_code == pipeline.EXIT_PROVIDER_FAILED
    assert outcomes["aws"].outcome == "stale" and "HTTP 404" in outcomes["aws"].cause
    assert outcomes["aws"].last_success_at == datetime(2026, 12, 1, 6, 0)
    assert outcomes["azure"].outcome == "ok"
    rows = query(
        db, "SELECT instance_type, stale, stale_since, stale_cause FROM instances WHERE provider='aws'"
    )
    assert len(rows) == 3
    assert all(stale and since == clock.now and "404" in cause for _, stale, since, cause in rows)
    assert query(db, "SELECT count(*) FROM instances WHERE provider='azure' AND stale") == [(0,)]
    assert query(db, "SELECT count(*) FROM current_claims WHERE provider='aws'")[0][0] > 0
    # A second failure keeps the time the rows first went stale.
    clock.advance()
    run(db, mirror, clock)
    assert {r[0] for r in query(db, "SELECT stale_since FROM instances WHERE provider='aws'")} == {
        datetime(2026, 12, 2, 6, 0)
    }


def test_a_changed_figure_closes_the_old_claim(setup):
    mirror, db, clock = setup
    run(db, mirror, clock)
    page = mirror / AWS_PAGE
    page.write_text(page.read_text().replace("3200 Gigabit", "6400 Gigabit"))
    clock.advance()
    run(db, mirror, clock)
    history = query(
        db,
        """SELECT value, valid_from, valid_to FROM claims
                           WHERE instance_type='p5.48xlarge' AND field='inter_node_gbits_per_s'
                           ORDER BY valid_from""",
    )
    assert history == [
        (3200.0, datetime(2026, 12, 1, 6), datetime(2026, 12, 2, 6)),
        (6400.0, datetime(2026, 12, 2, 6), None),
    ]
    unchanged = query(
        db,
        """SELECT valid_from FROM current_claims
                             WHERE instance_type='p5.48xlarge' AND field='gpu_count'""",
    )
    assert unchanged == [(datetime(2026, 12, 1, 6),)]
    with duckdb.connect(str(db), read_only=True) as con:
        listed = changes(con)
        assert sorted(listed[["instance_type", "field"]].itertuples(index=False, name=None)) == [
            ("p5.48xlarge", "frontend_gbits_per_s"),
            ("p5.48xlarge", "inter_node_gbits_per_s"),
        ]
        row = listed[listed["field"] == "inter_node_gbits_per_s"].iloc[0]
        assert (list(row["before"]), list(row["after"]), row["unit"]) == (["3200.0"], ["6400.0"], "Gbit/s")
        assert row["changed_at"] == datetime(2026, 12, 2, 6)
        assert changes(con, datetime(2026, 12, 3)).empty


def test_losing_more_than_half_the_rows_is_refused(setup):
    mirror, db, clock = setup
    run(db, mirror, clock)
    page = mirror / AWS_PAGE
    lines = [ln for ln in page.read_text().splitlines() if not ln.startswith(("| g5.", "| p5."))]
    page.write_text("\n".join(lines) + "\n| **P5** |\n")
    clock.advance()
    report = run(db, mirror, clock)
    aws = next(o for o in report.outcomes if o.provider == "aws")
    assert aws.outcome == "stale"
    assert "parse" in aws.cause or "half" in aws.cause or "no GPU" in aws.cause
    assert query(db, "SELECT count(*) FROM instances WHERE provider='aws' AND stale") == [(3,)]


def test_reparse_needs_no_network(setup):
    mirror, db, clock = setup
    run(db, mirror, clock)
    before = query(db, "SELECT * EXCLUDE (scraped_at) FROM instances ORDER BY 1, 2")
    clock.advance()
    report = run(db, None, clock, replay=True)  # the transport would answer 599 to anything
    assert report.exit_code == 0
    assert query(db, "SELECT * EXCLUDE (scraped_at) FROM instances ORDER BY 1, 2") == before


def test_refresh_of_one_provider_leaves_the_others_untouched(setup):
    mirror, db, clock = setup
    run(db, mirror, clock)
    clock.advance()
    run(db, mirror, clock, providers=["aws"])
    assert query(db, "SELECT DISTINCT scraped_at FROM instances WHERE provider='azure'") == [
        (datetime(2026, 12, 1, 6),)
    ]
    assert query(db, "SELECT DISTINCT scraped_at FROM instances WHERE provider='aws'") == [(clock.now,)]


def test_a_crash_while_writing_leaves_the_old_catalog_intact(setup, monkeypatch):
    mirror, db, clock = setup
    run(db, mirror, clock)
    before = db.read_bytes()

    def disk_full(self, *args):
        raise OSError("No space left on device")

    monkeypatch.setattr(pipeline.CatalogWriter, "write_fresh", disk_full)
    with pytest.raises(OSError, match="No space"):
        run(db, mirror, clock)
    assert db.read_bytes() == before
    assert not list(db.parent.glob("*.tmp-*"))


def test_lock_keeps_a_second_refresh_out(tmp_path):
    db = tmp_path / "c.duckdb"
    with refresh_lock(db), pytest.raises(LockHeld, match="another refresh"), refresh_lock(db):
        pass
    with refresh_lock(db):  # released: can be taken again
        pass


def test_absent_from_the_mirror_curated_facts_stand_in_without_failing(setup):
    mirror, db, clock = setup
    report = run(db, mirror, clock, providers=["gcp"])
    (gcp,) = report.outcomes
    assert (gcp.outcome, gcp.failure, report.exit_code) == ("curated", False, 0)
    assert "not in mirror" in gcp.cause
    assert query(db, "SELECT DISTINCT source_kind, stale FROM instances WHERE provider='gcp'") == [
        ("curated", False)
    ]


def test_a_live_failure_with_curated_facts_still_fails_the_run(setup):
    _, db, clock = setup

    async def go():
        transport = httpx.MockTransport(lambda r: httpx.Response(500))
        async with make_client(transport=transport) as client:
            return await pipeline.refresh(
                db,
                client,
                providers=["gcp"],
                now=clock,
                fetcher_options={"sleep": no_sleep, "max_attempts": 1},
            )

    report = asyncio.run(go())
    (gcp,) = report.outcomes
    assert (gcp.outcome, gcp.failure, report.exit_code) == ("curated", True, 1)
    assert "HTTP 500" in gcp.cause


def test_a_scrape_supersedes_curated_facts_and_its_rows_go_stale_not_curated(setup):
    mirror, db, clock = setup
    add_gcp(mirror)
    report = run(db, mirror, clock, providers=["gcp"])
    assert report.exit_code == 0 and report.outcomes[0].outcome == "ok"
    kinds = dict(query(db, "SELECT instance_type, source_kind FROM instances WHERE provider='gcp'"))
    assert kinds["a3-highgpu-8g"] == "scraped"  # listed on the (fixture) page
    assert kinds["a4-highgpu-8g"] == "curated"  # not on the fixture page: curated row stands alone
    for path in GCP_PAGES:
        (mirror / path).unlink()
    clock.advance()
    report = run(db, mirror, clock, providers=["gcp"])
    assert (report.outcomes[0].outcome, report.exit_code) == ("stale", 1)
    assert query(db, "SELECT DISTINCT stale FROM instances WHERE provider='gcp'") == [(True,)]


PRICE_URL = "https://prices.example.test/list.csv"


class PricedSource(Scraper):
    """A provider whose one CSV document gives a row (curated-free), a price and a measurement."""

    name = "pricedtest"
    title = "Priced test source"
    url_prefixes = ("https://prices.example.test/",)

    async def fetch(self, fetcher) -> None:
        await fetcher.get(PRICE_URL)

    def _line(self, documents) -> tuple[str, float]:
        line = documents.text(PRICE_URL).splitlines()[1]
        return line, float(line.split(",")[1])

    def parse(self, documents):
        line, _ = self._line(documents)
        claims = (
            fact("gpu_model", "H100-SXM-80GB", quote=line, source_url=PRICE_URL),
            fact("gpu_count", 8, quote=line, source_url=PRICE_URL),
        )
        return [RawOffer("pricedtest", "box-8", PRICE_URL, claims)]

    def parse_prices(self, documents):
        line, usd = self._line(documents)
        return [Price("pricedtest", "box-8", "r1", usd, None, PRICE_URL, line)]

    def parse_measurements(self, documents):
        line, _usd = self._line(documents)
        return [
            Measurement(
                "pricedtest",
                "box-8",
                "expected",
                "ib_port_gbits_per_s",
                400.0,
                "pricedtest",
                PRICE_URL,
                "line 2",
                line,
            )
        ]


def test_prices_keep_history_and_a_failed_source_keeps_its_prices_and_measurements(tmp_path, monkeypatch):
    monkeypatch.setitem(pipeline.REGISTRY, "pricedtest", PricedSource)
    mirror, db, clock = tmp_path / "mirror", tmp_path / "c.duckdb", Clock()
    page = mirror / "prices.example.test" / "list.csv"
    page.parent.mkdir(parents=True)
    page.write_text("name,usd\nbox-8,20.0\n")
    assert run(db, mirror, clock, providers=["pricedtest"]).exit_code == 0
    first = clock.now
    clock.advance()
    page.write_text("name,usd\nbox-8,18.5\n")
    assert run(db, mirror, clock, providers=["pricedtest"]).exit_code == 0
    assert query(db, "SELECT usd_per_hour, valid_from, valid_to FROM prices ORDER BY valid_from") == [
        (20.0, first, clock.now),
        (18.5, clock.now, None),
    ]
    clock.advance()
    page.unlink()
    report = run(db, mirror, clock, providers=["pricedtest"])
    assert report.exit_code == 1 and report.outcomes[0].outcome == "stale"
    assert query(db, "SELECT usd_per_hour FROM current_prices") == [(18.5,)]
    assert query(db, "SELECT source, value, stale FROM measurements") == [("pricedtest", 400.0, True)]


def test_a_row_that_breaks_an_invariant_after_the_joins_aborts_the_publish(setup, monkeypatch):
    """Rows are checked as published, after prices and expectations were joined in: a row the joins made
    inconsistent stops the swap, and the last good catalog stays as it was."""
    from catalog import finish
    from normalize.errors import Unpublishable

    mirror, db, clock = setup
    run(db, mirror, clock)
    before = query(db, "SELECT instance_type, inter_node_gbytes_per_s FROM instances ORDER BY 1")
    insert = finish._insert_finished

    def insert_then_break(con, now, *, derive):
        insert(con, now, derive=derive)
        con.execute("UPDATE instances SET inter_node_gbytes_per_s = 1 WHERE instance_type = 'p5.48xlarge'")

    monkeypatch.setattr(finish, "_insert_finished", insert_then_break)
    clock.advance()
    with pytest.raises(Unpublishable, match=r"aws/p5\.48xlarge: .*inter_node_gbytes_per_s is not"):
        run(db, mirror, clock)
    assert query(db, "SELECT instance_type, inter_node_gbytes_per_s FROM instances ORDER BY 1") == before
    assert not list(db.parent.glob("*.tmp-*"))


def test_rows_spilled_to_the_staging_tables_give_the_same_catalog(setup, monkeypatch, tmp_path):
    """Staged rows (and fetch rows) move to the new file every SPILL_ROWS (SPILL_FETCHES) rows (flat
    memory at scale); spilling after every row builds exactly the catalog that staging everything in
    Python builds, history included."""
    from catalog import store

    mirror, db, _ = setup
    spilled, clocks = tmp_path / "spilled.duckdb", (Clock(), Clock())
    tables = ("instances", "claims", "prices", "measurements", "fetches")

    def dump(path):  # fetched_at is the wall clock's for some local files, refresh_id random: not compared
        picked = {t: "* EXCLUDE (fetched_at)" if t != "instances" else "*" for t in tables}
        picked["fetches"] = "* EXCLUDE (fetched_at, refresh_id)"
        return {t: sorted(map(repr, query(path, f"SELECT {picked[t]} FROM {t}"))) for t in tables}

    for when in (0, 1):
        run(db, mirror, clocks[0])
        with monkeypatch.context() as patch:
            patch.setattr(store, "SPILL_ROWS", 1)
            patch.setattr(store, "SPILL_FETCHES", 1)
            run(spilled, mirror, clocks[1])
        for clock in clocks:
            clock.advance()
        if when == 0:
            (mirror / AWS_PAGE).write_text((mirror / AWS_PAGE).read_text().replace("3200", "1600", 1))
    assert dump(db) == dump(spilled)
    assert query(
        spilled,
        "SELECT count(*) FROM information_schema.schemata WHERE schema_name IN ('staging', 'fetched')",
    ) == [(0,)]


def test_the_bodies_are_written_once_every_source_is_fetched_before_the_rows_are_finished(setup, monkeypatch):
    """Every body goes to the new file when the last source is fetched, while sources still parse (not at
    the commit); a refresh over a catalog that holds them already keeps each body once."""
    from catalog import finish, store

    mirror, db, clock = setup
    calls: list[str] = []
    write_bodies, finish_rows = store.CatalogWriter.write_bodies, finish.finish_rows

    def writing(writer):
        calls.append(f"bodies {len(writer._bodies)}")
        write_bodies(writer)

    def finishing(*args, **kwargs):
        calls.append("finish")
        finish_rows(*args, **kwargs)

    monkeypatch.setattr(store.CatalogWriter, "write_bodies", writing)
    monkeypatch.setattr(finish, "finish_rows", finishing)
    for _ in range(2):
        calls.clear()
        assert run(db, mirror, clock).exit_code == 0
        clock.advance()
        fetched = query(db, "SELECT count(DISTINCT sha256) FROM fetches WHERE sha256 IS NOT NULL")[0][0]
        assert calls == [f"bodies {fetched}", "finish"]
        assert query(db, "SELECT count(*), count(DISTINCT sha256) FROM documents") == [(fetched, fetched)]
