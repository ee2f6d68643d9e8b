"""Property tests of scrapers/curated.py: random well-typed TOML files and the repository's own, mutated."""

from __future__ import annotations

from datetime import date
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from normalize.vocab import Basis, Fabric
from records.offers import FIELD_UNITS
from tests.helpers import ROOT
from tests.properties.property_checks import MARKS, curated_parse, run_parser
from tests.properties.property_inputs import (
    COUNT,
    FORM_FACTORS,
    GPU_NAME,
    MEMORY_CELL,
    NUMBER,
    bandwidth_text,
    mutated,
    noise,
    or_noise,
    toml_document,
)

pytestmark = MARKS

FACT_TEXT = {
    "gpu_model": GPU_NAME,
    "gpu_count": COUNT,
    "gpu_memory_gb": MEMORY_CELL,
    "intra_node_link": st.sampled_from(["NVLink", "NVSwitch", "PCIe", "Infinity Fabric", "NVLink bridge"]),
    "inter_node_fabric": st.sampled_from(
        [*sorted(f.value for f in Fabric), "InfiniBand", "RoCE", "carrier pigeon"]
    ),
    "nic_count": NUMBER,
    "frontend_nic_count": NUMBER,
    "scale_up_domain_gpus": NUMBER,
}
FIELDS = st.sampled_from([*FIELD_UNITS, "bogus", "bogus_gbits_per_s"])


@st.composite
def curated_fact(draw: st.DrawFn) -> dict[str, Any]:
    field = draw(FIELDS)
    text_strategy = FACT_TEXT.get(field, bandwidth_text())
    optional = {
        "field": st.just(field),
        "text": or_noise(text_strategy),
        "quote": or_noise(st.just("quoted text")),
        "url": st.just("https://example.test/specs"),
        "read_on": st.one_of(st.dates(), st.dates().map(date.isoformat)),
        "basis": st.sampled_from([b.value for b in Basis]),
        "qualifiers": noise(3),
        "context": noise(3),
        "form_factor": FORM_FACTORS.filter(lambda f: f is not None),
        "note": noise(3),
    }
    required = {key: optional.pop(key) for key in ("field", "text")}
    return draw(st.fixed_dictionaries(required, optional=optional))


CURATED_FILE = st.fixed_dictionaries(
    {"provider": st.just("test")},
    optional={
        "reviewed_on": st.dates(),
        "defaults": st.fixed_dictionaries(
            {},
            optional={"url": st.just("https://example.test/d"), "read_on": st.dates(), "context": noise(2)},
        ),
        "instance": st.lists(
            st.fixed_dictionaries(
                {"instance_type": or_noise(st.just("big.8x"))},
                optional={
                    "source_url": st.just("https://example.test/specs"),
                    "fact": st.lists(curated_fact(), max_size=5),
                },
            ),
            max_size=3,
        ),
    },
).map(toml_document)
CURATED_REPO_FILES = {
    p.stem: p.read_text(encoding="utf-8") for p in sorted((ROOT / "scrapers/curated").glob("*.toml"))
}


@st.composite
def curated_case(draw: st.DrawFn) -> tuple[str, str]:
    if draw(st.booleans()):
        return draw(CURATED_FILE), "test"
    provider = draw(st.sampled_from(sorted(CURATED_REPO_FILES)))
    return draw(mutated(CURATED_REPO_FILES[provider])), provider


@given(case=curated_case())
def test_curated(case):
    text, provider = case
    run_parser(lambda: curated_parse(text, provider), text)
