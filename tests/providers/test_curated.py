"""Curated facts: every file loads through normalize/, every fact cites its source, quotes are exact,
and a live scrape supersedes curated facts field by field."""

from __future__ import annotations

import tomllib
from datetime import date, datetime

import pytest

from catalog.offers import build_offer
from normalize.errors import ParseError
from normalize.vocab import Basis, Evidence
from records.offers import Claim, RawOffer
from scrapers import REGISTRY, curated_facts
from tests.helpers import SHARED

CURATED = sorted(p for p in REGISTRY if curated_facts.curated_file(p) is not None)
URL = "https://example.test/specs"
SMALL = """
provider = "test"
reviewed_on = 2026-12-02
[defaults]
url = "https://example.test/specs"
read_on = 2026-12-01
[[instance]]
instance_type = "big.8x"
source_url = "https://example.test/specs"
fact = [
  { field = "gpu_model", text = "NVIDIA H100 SXM", quote = "8x H100 SXM" },
  { field = "gpu_count", text = "8", quote = "8x H100 SXM" },
  { field = "inter_node_gbits_per_s", text = "8 x 400 Gbps", quote = "8 x 400", qualifiers = "per node" },
  { field = "inter_node_fabric", text = "InfiniBand", quote = "8 x 400 Gbps InfiniBand", note = "a note" },
]
"""


def test_small_file_goes_through_normalize():
    (offer,) = curated_facts.parse_curated(SMALL, "test")
    assert offer.source_kind == "curated"
    row = build_offer(offer, scraped_at=datetime(2026, 12, 2))
    assert (row.gpu_model, row.gpu_count, row.inter_node_gbits_per_s) == ("H100-SXM-80GB", 8, 3200)
    assert row.inter_node_fabric == "infiniband" and row.source_kind == "curated"
    assert row.notes[0].startswith("a note")
    bandwidth = next(c for c in offer.claims if c.field == "inter_node_gbits_per_s")
    assert bandwidth.read_on == date(2026, 12, 1)
    assert bandwidth.qualifiers == "8 x 400 Gbit/s; per node"
    # No stored copy backs a curated quote: it is a paraphrase, and the figure paraphrased, never stated.
    assert {(c.evidence, c.basis) for c in offer.claims} == {(Evidence.PARAPHRASE, Basis.PARAPHRASED)}
    assert row.inter_node_basis == Basis.PARAPHRASED and not row.fabric_shares_frontend


def test_a_curated_fact_may_be_inferred_but_never_stated():
    inferred = SMALL.replace(
        '{ field = "gpu_count", text = "8", quote = "8x H100 SXM" }',
        '{ field = "gpu_count", text = "8", quote = "big.8x", basis = "inferred" }',
    )
    (offer,) = curated_facts.parse_curated(inferred, "test")
    count = next(c for c in offer.claims if c.field == "gpu_count")
    assert (count.basis, count.evidence, count.quote) == (Basis.INFERRED, Evidence.PARAPHRASE, "big.8x")
    with pytest.raises(ParseError, match="paraphrased or inferred, not stated"):
        curated_facts.parse_curated(SMALL.replace('qualifiers = "per node"', 'basis = "stated"'), "test")


def test_an_instance_may_say_its_fabric_figure_includes_the_front_end():
    shared = SMALL.replace(
        'source_url = "https://example.test/specs"\nfact',
        'source_url = "https://example.test/specs"\nfabric_shares_frontend = true\nfact',
    )
    (offer,) = curated_facts.parse_curated(shared, "test")
    assert offer.fabric_shares_frontend


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (SMALL.replace('provider = "test"', 'provider = "other"'), "declares provider 'other'"),
        (SMALL.replace("read_on = 2026-12-01", ""), "lacks read_on"),
        (SMALL.replace('text = "8 x 400 Gbps"', 'text = "fast"'), "no bandwidth figure"),
        (SMALL.replace('text = "InfiniBand"', 'text = "carrier pigeon"'), "no fabric named"),
        (SMALL.replace('instance_type = "big.8x"', ""), "lacks instance_type"),
        (SMALL + "[[[", "curated/test.toml"),
    ],
)
def test_bad_files_name_the_problem(broken, message):
    with pytest.raises(ParseError, match=message):
        curated_facts.parse_curated(broken, "test")


def claim(field, value, quote="q"):
    return Claim(field=field, value=value, quote=quote, source_url=URL)


def test_scraped_claims_supersede_curated_field_by_field():
    scraped = RawOffer("p", "a", URL, (claim("gpu_count", 8.0), claim("inter_node_gbits_per_s", 400.0)))
    extra = RawOffer(
        "p",
        "a",
        URL,
        (claim("inter_node_gbits_per_s", 200.0), claim("inter_node_fabric", "efa")),
        notes=("curated note",),
        source_kind="curated",
    )
    alone = RawOffer("p", "b", URL, (claim("gpu_model", "L4-24GB"),), source_kind="curated")
    supplement = RawOffer("p", "c", URL, (claim("inter_node_fabric", "efa"),), source_kind="curated")
    merged = curated_facts.merge([scraped], [extra, alone, supplement])
    assert [o.instance_type for o in merged] == ["a", "b"]
    values = {c.field: c.value for c in merged[0].claims}
    assert values == {"gpu_count": 8.0, "inter_node_gbits_per_s": 400.0, "inter_node_fabric": "efa"}
    assert merged[0].source_kind == "scraped" and merged[0].notes == ("curated note",)
    assert merged[1].source_kind == "curated"  # "c" names no GPU: it only supplements, so it is dropped


@pytest.mark.parametrize("provider", CURATED)
def test_every_curated_file_loads_and_cites(provider):
    text = curated_facts.curated_file(provider).read_text(encoding="utf-8")
    data = tomllib.loads(text)
    assert isinstance(data["reviewed_on"], date)
    offers = curated_facts.load(provider)
    assert offers and len({o.instance_type for o in offers}) == len(offers)
    for offer in offers:
        build_offer(offer, scraped_at=datetime(2026, 12, 2))
        for c in offer.claims:
            assert c.source_url.startswith("https://") and c.quote.strip() and c.read_on is not None
            assert c.evidence == Evidence.PARAPHRASE and c.basis in (Basis.PARAPHRASED, Basis.INFERRED)


@pytest.mark.parametrize("provider", CURATED)
@pytest.mark.shared
def test_real_quotes_are_verbatim_in_the_local_copies(provider):
    data = tomllib.loads(curated_facts.curated_file(provider).read_text(encoding="utf-8"))
    defaults = data.get("defaults", {})
    checked = 0
    for entry in data["instance"]:
        for item in entry["fact"]:
            item = {**defaults, **item}
            if item.get("local_copy"):
                document = " ".join((SHARED / item["local_copy"]).read_text(encoding="utf-8").split())
                assert " ".join(item["quote"].split()) in document, (provider, entry["instance_type"], item)
                checked += 1
    if provider not in ("coreweave", "aws"):  # their sources have no copy in ../shared
        assert checked > 0
