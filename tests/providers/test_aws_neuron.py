"""Trainium from AWS's own Neuron architecture pages (mirror), merged with AWS's instance-type page."""

from __future__ import annotations

from datetime import datetime

from catalog.offers import build_offer
from normalize.vocab import SCALE_UP_LINKS, Fabric, Link
from records.documents import Document, DocumentSet
from scrapers.documents import aws_neuron
from tests.conftest import shared_fixture
from tests.helpers import MIRROR

NOW = datetime(2026, 12, 3)


@shared_fixture(scope="module")
def rows() -> dict:
    docs = [
        Document(url, "aws", 200, NOW, (MIRROR / url.removeprefix("https://")).read_text())
        for url in aws_neuron.URLS
    ]
    return {o.instance_type: o for o in aws_neuron.neuron_offers(DocumentSet(docs))}


def claims(offer, field):
    return [c for c in offer.claims if c.field == field]


def test_trn2_neuronlink_per_chip_and_efa_per_instance(rows):
    trn2 = build_offer(rows["trn2.48xlarge"], scraped_at=NOW)
    assert (trn2.gpu_model, trn2.gpu_count, trn2.intra_node_link) == (
        "TRAINIUM2-96GB",
        16,
        Link.NEURONLINK_TORUS,
    )
    assert (trn2.inter_node_fabric, trn2.inter_node_gbits_per_s) == (Fabric.EFA, 3200)
    assert round(trn2.gpu_memory_gb, 1) == 103.1  # 1,536 GiB / 16 chips = 96 GiB per chip
    # Trap: the chip page's 1.28 TB/s and trn2-arch's 1,024 GB/s per chip are both kept (a conflict)
    figures = sorted(c.value for c in claims(rows["trn2.48xlarge"], "intra_node_gbytes_per_s"))
    assert figures == [1024, 1280] and trn2.conflict
    assert all(
        "does not say one-way or two-way" in c.qualifiers
        for c in claims(rows["trn2.48xlarge"], "intra_node_gbytes_per_s")
    )


def test_a_2d_torus_is_not_nvswitch_and_the_ultraserver_is_the_domain(rows):
    link = claims(rows["trn2.48xlarge"], "intra_node_link")[0]
    assert link.value == Link.NEURONLINK_TORUS != Link.NVSWITCH and "2D Torus" in link.quote
    assert Link.NEURONLINK_TORUS in SCALE_UP_LINKS
    assert [c.value for c in claims(rows["trn2u.48xlarge"], "scale_up_domain_gpus")] == [64]
    assert claims(rows["trn2.48xlarge"], "scale_up_domain_gpus") == []


def test_trn1_rows_read_past_the_unlabelled_cell(rows):
    assert {n for n in rows if n.startswith("trn1")} == {"trn1.2xlarge", "trn1.32xlarge", "trn1n.32xlarge"}
    efa = {
        n: [c.value for c in claims(rows[n], "inter_node_gbits_per_s")]
        for n in ("trn1.32xlarge", "trn1n.32xlarge")
    }
    assert efa == {"trn1.32xlarge": [800], "trn1n.32xlarge": [1600]}  # not the unlabelled 384 / 768
    assert (
        claims(rows["trn1.2xlarge"], "inter_node_gbits_per_s") == []
    )  # one chip: "up-to 25", no fabric claim
    assert claims(rows["trn1.2xlarge"], "intra_node_link") == []


def test_list_table_reader_on_a_fixture():
    text = ".. list-table::\n    :header-rows: 1\n\n"
    text += "    *   - A\n        - B\n    *   - x\n        - 1\n\nAfter\n"
    (table,) = aws_neuron.list_tables(text)
    assert table.headers == ("A", "B") and table.rows == (("x", "1"),)
