"""catalog.carry on small records: what a fresh parse lost is carried, what jumped is held back."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import date, datetime

from catalog.carry import reconcile, skipped_rows
from catalog.offers import build_offer
from normalize.vocab import Basis
from records.offers import Claim, RawOffer

URL = "https://example.test/page"
T0, T1 = datetime(2026, 12, 1), datetime(2026, 12, 2)


def claim(field: str, value, **kw) -> Claim:
    return Claim(field=field, value=value, quote=f"{field} {value}", source_url=URL, **kw)


def raw(name: str, *claims: Claim) -> RawOffer:
    return RawOffer(
        "test", name, URL, (claim("gpu_model", "H100-SXM-80GB"), claim("gpu_count", 8.0), *claims)
    )


def built(offer: RawOffer, **kw):
    return replace(build_offer(offer, scraped_at=T0), **kw)


def test_a_row_the_parse_lost_is_carried_whole_with_the_skip_warning_as_cause():
    before = {"box-8": built(raw("box-8", claim("inter_node_gbits_per_s", 3200.0)))}
    result = reconcile([], before, ["Skipping test row box-80: bad", "Skipping test row box-8: NaN cell"], T1)
    (row,) = result.carried_rows
    assert (row.inter_node_gbits_per_s, row.stale, row.stale_since, row.scraped_at) == (3200.0, True, T1, T0)
    assert row.stale_cause == "not in this refresh's parse (Skipping test row box-8: NaN cell)"
    assert result.cause() == "1 rows not in this parse, carried: box-8"
    assert {c for _, c in result.carried_claims} == set(row.claims)


def test_a_row_already_stale_keeps_its_stale_since():
    before = {"box-8": built(raw("box-8"), stale=True, stale_since=T0, stale_cause="earlier")}
    assert reconcile([], before, [], T1).carried_rows[0].stale_since == T0


def test_a_lost_field_keeps_its_last_good_claim_and_marks_the_row():
    good = raw("box-8", claim("inter_node_gbits_per_s", 3200.0), claim("nic_count", 8.0))
    result = reconcile([raw("box-8", claim("nic_count", 8.0))], {"box-8": built(good)}, [], T1)
    (offer,) = result.offers
    assert claim("inter_node_gbits_per_s", 3200.0) in offer.claims
    assert result.row_causes == {
        "box-8": "carried from the last good catalog (not in this parse): inter_node_gbits_per_s"
    }
    assert (result.fields_carried, result.fields_held, result.rows_carried) == (1, 0, 0)
    row = result.mark(build_offer(offer, scraped_at=T1), T1, {"box-8": built(good)})
    assert (row.inter_node_gbits_per_s, row.stale, row.stale_since) == (3200.0, True, T1)


def test_a_figure_that_jumped_8x_is_held_back_one_that_doubled_is_not():
    good = raw("box-8", claim("frontend_gbits_per_s", 100.0), claim("inter_node_gbits_per_s", 3200.0))
    fresh = raw("box-8", claim("frontend_gbits_per_s", 800.0), claim("inter_node_gbits_per_s", 6400.0))
    result = reconcile([fresh], {"box-8": built(good)}, [], T1)
    (offer,) = result.offers
    values = {(c.field, c.value) for c in offer.claims}
    assert ("frontend_gbits_per_s", 100.0) in values and ("frontend_gbits_per_s", 800.0) not in values
    assert ("inter_node_gbits_per_s", 6400.0) in values  # 2x: a real upgrade is published
    assert result.held == ["box-8 frontend_gbits_per_s 100 → 800 Gbit/s (8x)"]
    assert (
        result.cause() == "1 figures held back as suspect: box-8 frontend_gbits_per_s 100 → 800 Gbit/s (8x)"
    )


def test_datasheet_inferences_and_curated_facts_are_not_carried():
    curated = claim("nic_count", 8.0, read_on=date(2026, 12, 1))
    good = built(raw("box-8", curated))  # build_offer adds the H100's datasheet NVLink figure, inferred
    assert any(c.basis == Basis.INFERRED for c in good.claims)
    result = reconcile([raw("box-8")], {"box-8": good}, [], T1)
    assert result.row_causes == {} and result.offers == [raw("box-8")]


def test_new_rows_pass_and_curated_rows_are_not_carried():
    curated_row = built(raw("cur-1"), source_kind="curated")
    result = reconcile([raw("new-1")], {"cur-1": curated_row}, [], T1)
    assert result.offers == [raw("new-1")] and result.carried_rows == [] and result.cause() is None


def test_skip_warnings_are_collected_while_parsing():
    with skipped_rows() as skipped:
        logging.getLogger("scrapers.test").warning("Skipping test row %s: %s", "box-8", "x" * 500)
        logging.getLogger("scrapers.test").warning("Something else")
    assert skipped == ["Skipping test row box-8: " + "x" * 175 + "…"]
    logging.getLogger("scrapers.test").warning("Skipping test row box-9: after")
    assert len(skipped) == 1


def test_a_figure_creeping_up_under_8x_is_held_against_the_last_accepted_value():
    last_good = built(raw("box-8", claim("inter_node_gbits_per_s", 35.0)))  # 5 → 35 passed: 7x
    fresh = raw("box-8", claim("inter_node_gbits_per_s", 245.0))  # 7x again, 49x the accepted 5
    accepted = {"box-8": {("inter_node_gbits_per_s", URL): (5.0,)}}
    result = reconcile([fresh], {"box-8": last_good}, [], T1, accepted)
    assert result.held == ["box-8 inter_node_gbits_per_s 35 → 245 Gbit/s (49x the last accepted 5)"]
    assert claim("inter_node_gbits_per_s", 35.0) in result.offers[0].claims


def test_a_gpu_count_that_quadrupled_is_held_at_the_count_factor():
    good = built(raw("box-8"))  # 8 GPUs
    fresh = RawOffer("test", "box-8", URL, (claim("gpu_model", "H100-SXM-80GB"), claim("gpu_count", 32.0)))
    result = reconcile([fresh], {"box-8": good}, [], T1)
    assert result.held == ["box-8 gpu_count 8 → 32 GPUs (4x)"]
    assert result.row_causes["box-8"].startswith("held back as suspect (moved 8x, a count 2x or more)")
    assert claim("gpu_count", 8.0) in result.offers[0].claims


def test_a_row_read_back_from_an_older_catalog_splits_its_joined_notes():
    """Issue 18: catalogs written before notes became a list stored them '; '-joined; a refresh that
    carries such a row reads them back as the list they were joined from."""
    from catalog.previous import _notes

    assert _notes("form factor inferred; missing includes: a.md") == (
        "form factor inferred",
        "missing includes: a.md",
    )
    assert _notes("") == () and _notes(["one; with a semicolon"]) == ("one; with a semicolon",)
