"""CoreWeave's documents: its NCCL job files (mirror), the docs index and the pricing transcription
(third-party copies), on the real files, with the MANIFEST's traps."""

from __future__ import annotations

from datetime import datetime

from catalog.offers import build_offer
from normalize.vocab import Basis, Fabric
from records.documents import Document, DocumentSet, copy_url
from scrapers.documents import coreweave
from scrapers.documents.coreweave import INDEX, JOBS, PRICING, CoreWeave, parse_pricing
from tests.conftest import shared_fixture
from tests.helpers import MIRROR, SHARED

NOW = datetime(2026, 12, 3)


@shared_fixture(scope="module")
def documents() -> DocumentSet:
    jobs = [
        Document(url, "coreweave", 200, NOW, (MIRROR / url.removeprefix("https://")).read_text())
        for url in JOBS
    ]
    copies = [
        Document(copy_url(p), "coreweave", 200, NOW, (SHARED / p).read_text()) for p in (INDEX, PRICING)
    ]
    return DocumentSet([*jobs, *copies])


@shared_fixture(scope="module")
def rows(documents) -> dict:
    return {o.instance_type: o for o in CoreWeave().parse(documents)}


def field(offer, name):
    return [c for c in offer.claims if c.field == name]


def test_b300_on_infiniband_from_its_job_file(rows):
    b300 = rows["b300-8x"]
    stated = [c.value for c in field(b300, "gpu_count") if c.basis == Basis.STATED]
    assert stated == [8] and field(b300, "gpu_count")[0].quote == "nvidia.com/gpu: 8"  # the job leads
    assert {c.value for c in field(b300, "inter_node_fabric")} == {Fabric.INFINIBAND}  # job file and index
    (nics,) = field(b300, "nic_count")
    assert (
        nics.value == 8 and nics.basis == Basis.INFERRED and nics.quote.startswith("UCX_NET_DEVICES=ibp0:1")
    )
    assert build_offer(b300, scraped_at=NOW).gpu_model == "B300-SXM-288GB"


def test_gb300_is_one_gpu_on_two_fabric_rows(rows):
    ib, roce = rows["gb300-4x"], rows["gb300-4x-e"]
    index_fabric = {c.value for c in field(ib, "inter_node_fabric") if c.source_url == copy_url(INDEX)}
    assert index_fabric == {Fabric.INFINIBAND}  # "GB300 NVL72 Quantum-X InfiniBand"
    assert [c.value for c in field(roce, "inter_node_fabric")] == [Fabric.ROCE]  # "... Spectrum-X RoCE"
    # The RoCE job file selects node type gb300-4x: kept beside the index's InfiniBand, a conflict.
    job = [c for c in field(ib, "inter_node_fabric") if c.source_url.endswith("gb300-roce-nvl72-mpijob.yaml")]
    assert [c.value for c in job] == [Fabric.ROCE]
    assert build_offer(ib, scraped_at=NOW).conflict
    assert {c.value for c in field(ib, "gpu_count")} == {4}
    (count,) = field(roce, "gpu_count")  # no document states it: read from the ID's "4x", inferred
    assert (count.value, count.basis) == (4, Basis.INFERRED)


def test_h100_job_replaces_the_dead_curated_urls(rows):
    h100 = rows["gd-8xh100ib-i128"]
    assert [c.value for c in field(h100, "nic_count")] == [8]
    urls = {c.source_url for o in rows.values() for c in o.claims}
    assert not any("nccl-test-hgx-ib-mpijob" in u or "gpus/h100.cue" in u for u in urls)


def test_prices_from_the_transcription_and_a_scaffold_refused(documents):
    prices = {p.instance_type: p for p in CoreWeave().parse_prices(documents)}
    assert (prices["gd-8xh100ib-i128"].usd_per_hour, prices["gd-8xh100ib-i128"].spot_usd_per_hour) == (
        49.24,
        19.71,
    )
    assert (prices["gb200-4x"].usd_per_hour, prices["gd-1xgh200"].usd_per_hour) == (42.0, 6.5)
    assert (prices["b300-8x"].usd_per_hour, prices["b300-8x"].spot_usd_per_hour) == (
        None,
        35.84,
    )  # "Contact sales"
    assert all(p.source_url == copy_url(PRICING) for p in prices.values())
    text = documents.text(copy_url(PRICING))
    scaffold = text.replace("generated: '2026-09-20'\n", "").replace("method: searched", "method: scaffold")
    assert parse_pricing(scaffold) == []
    assert coreweave.is_transcription(documents.text(copy_url(PRICING)))
