"""CoreWeave's curated facts: the values the curated file yields (its documents are tested in
tests/test_coreweave_sources.py)."""

from __future__ import annotations

from datetime import datetime

import pytest

from catalog.offers import build_offer
from normalize.vocab import Basis, Evidence, Fabric, Link
from scrapers import curated_facts


@pytest.fixture(scope="module")
def real():
    return {
        o.instance_type: build_offer(o, scraped_at=datetime(2026, 12, 1))
        for o in curated_facts.load("coreweave")
    }


@pytest.mark.parametrize(
    ("name", "model", "count", "link", "intra", "fabric"),
    [
        ("gb200-4x", "GB200-186GB", 4, Link.NVSWITCH, 1800, Fabric.INFINIBAND),
        ("b200-8x", "B200-SXM-180GB", 8, Link.NVSWITCH, 1800, Fabric.INFINIBAND),
        ("gd-8xh200ib-i128", "H200-SXM-141GB", 8, Link.NVSWITCH, 900, Fabric.INFINIBAND),
        ("gd-8xh100ib-i128", "H100-SXM-80GB", 8, Link.NVSWITCH, 900, Fabric.INFINIBAND),  # HGX: SXM
        ("gd-8xa100-i128", "A100-SXM-80GB", 8, Link.NVSWITCH, 600, Fabric.INFINIBAND),  # A100 HGX
        ("gd-8xl40s-i128", "L40S-48GB", 8, Link.PCIE, 64, Fabric.UNKNOWN),
        ("gd-8xl40-i128", "L40-48GB", 8, Link.PCIE, 64, Fabric.UNKNOWN),
        ("rtxp6000-8x", "RTX-PRO-6000-SERVER-96GB", 8, Link.PCIE, 128, Fabric.UNKNOWN),
    ],
)
def test_real_instances_by_id_with_their_fabrics(real, name, model, count, link, intra, fabric):
    row = real[name]
    assert (row.gpu_model, row.gpu_count, row.intra_node_link, row.intra_node_gbytes_per_s) == (
        model,
        count,
        link,
        intra,
    )
    assert row.inter_node_fabric == fabric
    assert row.missing_inter_bw  # no per-node fabric figure is published in the sources read


def test_real_rows_are_named_by_instance_id_and_note_their_pricing_label(real):
    assert set(real) == {
        "gb200-4x",
        "b200-8x",
        "gd-8xh200ib-i128",
        "gd-8xh100ib-i128",
        "gd-8xa100-i128",
        "gd-8xl40s-i128",
        "gd-8xl40-i128",
        "rtxp6000-8x",  # the docs index titles it "(High Memory)"
    }
    assert "pricing-page label 'NVIDIA HGX H100'" in real["gd-8xh100ib-i128"].notes_text
    fabric = next(c for c in real["gd-8xa100-i128"].claims if c.field == "inter_node_fabric")
    assert (fabric.basis, fabric.evidence, fabric.source_url) == (
        Basis.PARAPHRASED,
        Evidence.PARAPHRASE,
        "https://docs.coreweave.com/networking/hpc-interconnect",
    )


def test_real_nvl72_domain_spans_instances(real):
    gb200 = real["gb200-4x"]
    assert gb200.scale_up_domain_gpus == 72
    link = next(c for c in gb200.claims if c.field == "intra_node_link")
    assert link.basis == Basis.PARAPHRASED and "NVLink Switch System" in link.quote
