"""catalog/expectations.py and catalog/finish.py: expected fabrics become claims (conflicts like any
other), missing figures are filled with basis expected/measured (never stated), history holds, and it
is undone when its measurement goes away."""

from __future__ import annotations

import duckdb
import pytest

from catalog import finish, pipeline
from catalog.store import schema_sql
from records.columns import instances_ddl
from records.measurements import CONDITIONAL, Measurement
from records.offers import RawOffer
from scrapers.base import Scraper
from scrapers.claims import fact
from tests.helpers import Clock, query, run

BOX_URL = "https://box.example.test/list.txt"
HC_URL = "https://hc.example.test/expected.txt"


class BoxProvider(Scraper):
    """box-a states 1,600 Gbit/s of InfiniBand; box-b (an A100 of unstated form) states no network."""

    name = "boxtest"
    title = "Box test provider"
    url_prefixes = ("https://box.example.test/",)

    async def fetch(self, fetcher) -> None:
        await fetcher.get(BOX_URL)

    def parse(self, documents):
        line = documents.text(BOX_URL).splitlines()[0]
        a = (
            fact("gpu_model", "H100-SXM-80GB", quote=line, source_url=BOX_URL),
            fact("gpu_count", 8, quote=line, source_url=BOX_URL),
            fact("inter_node_fabric", "infiniband", quote=line, source_url=BOX_URL),
            fact("inter_node_gbits_per_s", 1600.0, quote=line, source_url=BOX_URL),
        )
        b = (
            fact("gpu_model", "A100-80GB", quote=line, source_url=BOX_URL),
            fact("gpu_count", 8, quote=line, source_url=BOX_URL),
        )
        return [RawOffer("boxtest", "box-a", BOX_URL, a), RawOffer("boxtest", "box-b", BOX_URL, b)]


class HealthCheck(Scraper):
    """One reading per line: 'instance kind metric value port_count direction [notes]'."""

    name = "hctest"
    title = "Health-check test source"
    kind = "measurements"
    url_prefixes = ("https://hc.example.test/",)

    async def fetch(self, fetcher) -> None:
        await fetcher.get(HC_URL)

    def parse(self, documents):
        return []

    def parse_measurements(self, documents):
        readings = []
        for number, line in enumerate(documents.text(HC_URL).splitlines(), start=1):
            instance, kind, metric, value, ports, direction, *notes = line.split(" ", 6)
            readings.append(
                Measurement(
                    "boxtest",
                    instance,
                    kind,
                    metric,
                    float(value),
                    "hctest",
                    HC_URL,
                    f"line {number}",
                    line,
                    tool="hc",
                    port_count=int(ports) or None,
                    direction=None if direction == "-" else direction,
                    notes=" ".join(notes),
                )
            )
        return readings


@pytest.fixture
def setup(tmp_path, monkeypatch):
    monkeypatch.setitem(pipeline.REGISTRY, "boxtest", BoxProvider)
    monkeypatch.setitem(pipeline.REGISTRY, "hctest", HealthCheck)
    mirror = tmp_path / "mirror"
    for url, text in ((BOX_URL, "box list: H100 SXM x8, 1.6 Tbps InfiniBand\n"), (HC_URL, "")):
        path = mirror / url.split("://")[1]
        path.parent.mkdir(parents=True)
        path.write_text(text)
    return mirror, tmp_path / "c.duckdb", Clock()


def write_hc(mirror, *lines: str) -> None:
    (mirror / HC_URL.split("://")[1]).write_text("\n".join(lines) + "\n")


def refresh(mirror, db, clock):
    report = run(db, mirror, clock, providers=["boxtest", "hctest"])
    assert report.exit_code == 0, report.outcomes
    return report


def derived(db):
    return query(
        db,
        "SELECT instance_type, field, value, basis, valid_from, valid_to FROM claims "
        "WHERE basis IN ('expected', 'measured') ORDER BY valid_from, instance_type, value",
    )


def test_an_expected_fabric_that_contradicts_the_page_is_a_conflict_and_history_holds(setup):
    mirror, db, clock = setup
    write_hc(mirror, "box-a expected ib_port_gbits_per_s 100 8 -")  # 800 vs the page's 1,600
    refresh(mirror, db, clock)
    first = clock.now
    assert derived(db) == [("box-a", "inter_node_gbits_per_s", 800.0, "expected", first, None)]
    assert query(
        db,
        "SELECT inter_node_gbits_per_s, inter_node_basis, conflict FROM instances "
        "WHERE instance_type='box-a'",
    ) == [(1600.0, "stated", True)]
    (notes,) = query(db, "SELECT array_to_string(notes, '; ') FROM instances WHERE instance_type='box-a'")[0]
    assert (
        "conflicting claims for inter_node_gbits_per_s: 1600 (stated) vs 800 (expected: 8 x 100 Gbit/s"
        in notes
    )
    assert query(db, "SELECT field, values FROM claim_conflicts") == [
        ("inter_node_gbits_per_s", ["800.0", "1600.0"])
    ]
    clock.advance()
    refresh(mirror, db, clock)  # unchanged: the derived claim keeps its valid_from, no duplicate
    assert derived(db) == [("box-a", "inter_node_gbits_per_s", 800.0, "expected", first, None)]
    clock.advance()
    write_hc(mirror, "box-a expected ib_port_gbits_per_s 200 8 -")  # now it agrees
    refresh(mirror, db, clock)
    assert derived(db) == [
        ("box-a", "inter_node_gbits_per_s", 800.0, "expected", first, clock.now),
        ("box-a", "inter_node_gbits_per_s", 1600.0, "expected", clock.now, None),
    ]
    assert query(db, "SELECT conflict FROM instances WHERE instance_type='box-a'") == [(False,)]
    assert query(db, "SELECT count(*) FROM claim_conflicts") == [(0,)]


def test_missing_figures_are_filled_expected_or_measured_never_stated(setup):
    mirror, db, clock = setup
    write_hc(
        mirror,
        "box-b expected ib_port_gbits_per_s 400 8 -",
        "box-b expected ib_port_gbits_per_s 50 1 -",  # a lone port of another rate: not the fabric
        f"box-b expected ib_port_gbits_per_s 800 8 - {CONDITIONAL}planes == 4",  # conditional: left out
        "box-b measured gpu_to_gpu_gbytes_per_s 390.6 0 one-way",  # one-way: never fills the column
        "box-b measured gpu_to_gpu_gbytes_per_s 781.3 0 two-way",
    )
    refresh(mirror, db, clock)
    row = query(
        db,
        "SELECT inter_node_gbits_per_s, inter_node_gbytes_per_s, inter_node_basis, missing_inter_bw, "
        "intra_node_gbytes_per_s, intra_node_basis, missing_intra_bw FROM instances "
        "WHERE instance_type='box-b'",
    )
    assert row == [(3200.0, 400.0, "expected", False, 781.3, "measured", False)]
    (claims,) = [
        query(
            db,
            "SELECT field, value, basis, qualifiers, quote FROM current_claims "
            "WHERE instance_type='box-b' AND basis IN ('expected', 'measured') ORDER BY field",
        )
    ]
    assert claims == [
        (
            "inter_node_gbits_per_s",
            3200.0,
            "expected",
            "8 x 400 Gbit/s expected (hc); also checked: 1 x 50 Gbit/s",
            "box-b expected ib_port_gbits_per_s 400 8 -",
        ),
        (
            "intra_node_gbytes_per_s",
            781.3,
            "measured",
            "measured two-way copy between one GPU pair (both directions together)",
            "box-b measured gpu_to_gpu_gbytes_per_s 781.3 0 two-way",
        ),
    ]
    assert query(
        db, "SELECT count(*) FROM instances WHERE inter_node_basis = 'stated' AND instance_type='box-b'"
    ) == [(0,)]


def test_a_fill_whose_measurement_is_gone_goes_back_to_missing(tmp_path):
    """A kept row an earlier derivation filled, whose measurement is gone: finished again, its figure
    is missing and the derived claim closed."""
    db = tmp_path / "c.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(schema_sql())
        con.execute("CREATE SCHEMA staging")
        con.execute(instances_ddl().replace("IF NOT EXISTS instances", "staging.kept"))
        con.execute("CREATE TABLE staging.instances AS SELECT * FROM main.instances LIMIT 0")
        con.execute(
            """INSERT INTO staging.kept (provider, instance_type, gpu_memory_bw_basis, intra_node_link,
                   intra_node_basis, inter_node_fabric, inter_node_gbits_per_s, inter_node_gbytes_per_s,
                   inter_node_basis, fabric_shares_frontend, missing_intra_bw, missing_inter_bw, unit_suspect,
                   conflict, notes, source_kind, source_url, scraped_at, stale)
               VALUES ('x', 'y', 'missing', 'unknown', 'missing', 'infiniband', 3200, 400, 'expected',
                       false, true, false, false, false,
                       ['kept', 'from measurements: inter_node_gbits_per_s 3200 expected'],
                       'scraped', 'https://x', '2026-12-01', true)"""
        )
        con.execute(
            """INSERT INTO claims VALUES ('x', 'y', 'inter_node_gbits_per_s', 3200, NULL, 'Gbit/s',
                   'expected', '', false, 'q', 'c', 'https://x', 'verbatim', NULL, NULL, NULL,
                   '2026-12-01', NULL)"""
        )
        finish._insert_finished(con, pipeline.utcnow(), derive=True)
        assert con.execute(
            "SELECT inter_node_gbits_per_s, inter_node_basis, missing_inter_bw, notes FROM instances"
        ).fetchall() == [(None, "missing", True, ["kept"])]
        assert con.execute("SELECT count(*) FROM current_claims").fetchall() == [(0,)]


def test_a_failing_derivation_is_undone_and_the_refresh_goes_on(setup, monkeypatch, caplog):
    mirror, db, clock = setup
    write_hc(mirror, "box-b expected ib_port_gbits_per_s 400 8 -")

    def broken(*_):
        raise RuntimeError("boom")

    monkeypatch.setattr(finish, "_fill", broken)
    refresh(mirror, db, clock)
    assert "deriving from measurements failed" in caplog.text
    assert query(db, "SELECT inter_node_basis FROM instances WHERE instance_type='box-b'") == [("missing",)]
    assert derived(db) == []  # the claims written before the failure were rolled back too


def test_real_expected_fabrics_agree_with_every_page_nebius_included(real_catalog_file):
    claims = query(
        real_catalog_file,
        "SELECT provider, instance_type, value, qualifiers FROM current_claims WHERE basis = 'expected' "
        "AND field = 'inter_node_gbits_per_s' ORDER BY 1, 2",
    )
    # + the OCI shapes only the offer lists and the template give, + Nebius's B200 and H200 presets
    # from its MLPerf system descriptions (8 x 400 Gbit/s, where its pages state no figure), +
    # Standard_ND96isrf_H200_v5 (a size only its health check names: its 8 x 400 ports agree with the
    # InfiniBand its series states)
    assert len(claims) == 25
    assert (
        "azure",
        "Standard_ND96isrf_H200_v5",
        3200.0,
        "8 x 400 Gbit/s expected (AzureHPC NHC check_hw_ib)",
    ) in (claims)
    assert ("oci", "BM.GPU.H100.8", 3200.0, "16 x 200 Gbit/s expected (oci-hpc NHC check_hw_ib)") in claims
    assert ("aws", "p5.48xlarge", 3200.0, "32 x 100 Gbit/s expected (aws-ofi-nccl topology)") in claims
    conflicts = query(real_catalog_file, "SELECT provider, instance_type, field FROM claim_conflicts")
    assert not [c for c in conflicts if c[2] == "inter_node_gbits_per_s" and c[0] in ("aws", "azure", "oci")]
    nebius = query(
        real_catalog_file,
        "SELECT inter_node_gbits_per_s, inter_node_basis FROM instances WHERE instance_type = "
        "'gpu-h100-sxm_8gpu-128vcpu-1600gb'",
    )
    assert nebius == [(3200.0, "paraphrased")]  # its curated fact; the topology file agrees
    assert query(real_catalog_file, "SELECT count(*) FROM instances WHERE intra_node_basis = 'measured'") == [
        (0,)
    ]


def test_a_source_that_loses_most_of_its_readings_keeps_the_last_good_ones_stale(setup):
    mirror, db, clock = setup
    lines = [f"box-a expected ib_port_gbits_per_s 200 {n} -" for n in (8, 4, 2, 1)]
    write_hc(mirror, *lines)
    refresh(mirror, db, clock)
    clock.advance()
    write_hc(mirror, lines[0])  # 4 readings -> 1: most of the source vanished
    report = run(db, mirror, clock, providers=["boxtest", "hctest"])
    hc = next(o for o in report.outcomes if o.provider == "hctest")
    assert (report.exit_code, hc.outcome) == (1, "stale")
    assert hc.cause == "ValidationError: hctest: 1 readings against 4 before (more than half lost)"
    assert query(db, "SELECT count(*), bool_and(stale) FROM measurements WHERE source = 'hctest'") == [
        (4, True)
    ]
