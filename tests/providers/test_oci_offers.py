"""OCI: SkyPilot's v6 and v8 OCI offer lists (local copies) for prices and the shapes Oracle's table
lacks, and the shapes only Oracle's health-check template names; on the real copies, with their traps."""

from __future__ import annotations

from datetime import datetime

from catalog.offers import build_offer
from normalize.vocab import Basis
from records.documents import Document, DocumentSet, copy_url
from scrapers.documents import oci_offers
from scrapers.documents.oci import EXCERPT, TEMPLATE, Oci
from tests.conftest import shared_fixture
from tests.helpers import MIRROR, SHARED

NOW = datetime(2026, 12, 3)


@shared_fixture(scope="module")
def documents() -> DocumentSet:
    copies = [
        Document(copy_url(p), "oci", 200, NOW, (SHARED / p).read_text())
        for p in (EXCERPT, *oci_offers.COPIES)
    ]
    template = (MIRROR / TEMPLATE.removeprefix("https://")).read_text()
    return DocumentSet([*copies, Document(TEMPLATE, "oci", 200, NOW, template)])


@shared_fixture(scope="module")
def rows(documents) -> dict:
    return {o.instance_type: o for o in Oci().parse(documents)}


def test_grace_shapes_count_four_gpus_and_memory_is_per_gpu(rows):
    """Traps: AcceleratorName GB200/GB300 with count 4 per shape; SizeInMiB is ONE GPU's memory."""
    gb300 = build_offer(rows["BM.GPU.GB300.4"], scraped_at=NOW)
    assert (gb300.gpu_model, gb300.gpu_count) == ("GB300-288GB", 4)
    assert round(gb300.gpu_memory_gb, 1) == 298.5  # 284672 MiB per GPU, not / 4
    b300 = build_offer(rows["BM.GPU.B300.8"], scraped_at=NOW)
    assert (b300.gpu_model, b300.gpu_count) == ("B300-SXM-288GB", 8)
    model = next(c for c in b300.claims if c.field == "gpu_model")
    assert model.source_url == copy_url(oci_offers.V8_COPY)  # a row only the v8 list gives
    assert build_offer(rows["BM.GPU.MI355X.8"], scraped_at=NOW).gpu_model == "MI355X-288GB"


def test_oracle_table_leads_where_it_lists_the_shape(rows):
    h100 = rows["BM.GPU.H100.8"]
    models = [c for c in h100.claims if c.field == "gpu_model"]
    assert len(models) == 1 and models[0].source_url == copy_url(EXCERPT)  # the list adds no rival claim


def test_prices_per_whole_shape_and_no_spot_on_bare_metal(documents):
    prices = oci_offers.prices_in(documents)
    by_shape = {(p.instance_type, p.region): p for p in prices}
    assert len(by_shape) == len(prices)  # one price per shape and region
    b300 = [p for p in prices if p.instance_type == "BM.GPU.B300.8"]
    assert (
        b300 and {p.usd_per_hour for p in b300} == {120.0} and {p.spot_usd_per_hour for p in b300} == {None}
    )
    assert {p.usd_per_hour for p in prices if p.instance_type == "BM.GPU.GB200.4"} == {64.0}
    assert all(p.source_url.startswith("copy:reference/") for p in prices)
    # the v6 list prices shapes in regions the v8 prefix does not reach
    assert any(p.source_url == copy_url(oci_offers.V6_COPY) for p in prices)


def test_template_only_shapes_are_inferred_from_their_names(rows):
    v3 = rows["BM.GPU.GB200-v3.4"]
    assert {(c.field, c.value, c.basis) for c in v3.claims} == {
        ("gpu_model", "GB200-186GB", Basis.INFERRED),
        ("gpu_count", 4, Basis.INFERRED),
    }
    assert "{% elif 'BM.GPU.GB200-v3.4' in nhc_node_shape %}" in {c.quote for c in v3.claims}
    assert "BM.GPU.B4.8" not in rows  # its name names no GPU: not a row (docs/providers.md says so)
