"""CoreWeave: curated facts only. Its sources (pricing page transcription, docs) have no copy in
../shared, so these tests check the values the curated file yields."""

from __future__ import annotations

from datetime import datetime

import pytest

from catalog.offers import build_offer
from normalize.vocab import Basis, Fabric, Link
from scrapers import curated_facts


@pytest.fixture(scope="module")
def real():
    return {
        o.instance_type: build_offer(o, scraped_at=datetime(2026, 12, 1))
        for o in curated_facts.load("coreweave")
    }


@pytest.mark.parametrize(
    ("name", "model", "count", "link", "intra"),
    [
        ("NVIDIA GB200 NVL72", "GB200-186GB", 4, Link.NVSWITCH, 1800),
        ("NVIDIA HGX B200", "B200-SXM-180GB", 8, Link.NVSWITCH, 1800),
        ("NVIDIA HGX H200", "H200-SXM-141GB", 8, Link.NVSWITCH, 900),
        ("NVIDIA HGX H100", "H100-SXM-80GB", 8, Link.NVSWITCH, 900),  # HGX: SXM modules
        ("NVIDIA L40S", "L40S-48GB", 8, Link.PCIE, 64),
        (
            "NVIDIA RTX PRO 6000 Blackwell Server Edition (High Memory)",
            "RTX-PRO-6000-SERVER-96GB",
            8,
            Link.PCIE,
            128,
        ),
    ],
)
def test_real_instance_shapes(real, name, model, count, link, intra):
    row = real[name]
    assert (row.gpu_model, row.gpu_count, row.intra_node_link, row.intra_node_gbytes_per_s) == (
        model,
        count,
        link,
        intra,
    )
    assert row.missing_inter_bw and row.inter_node_fabric == Fabric.UNKNOWN  # unpublished per instance


def test_real_nvl72_domain_spans_instances(real):
    gb200 = real["NVIDIA GB200 NVL72"]
    assert gb200.scale_up_domain_gpus == 72
    link = next(c for c in gb200.claims if c.field == "intra_node_link")
    assert link.basis == Basis.PARAPHRASED and "NVLink Switch System" in link.quote


def test_real_a100_form_factor_is_not_guessed(real):
    assert real["NVIDIA A100"].gpu_model == "A100-80GB" and real["NVIDIA A100"].missing_intra_bw
