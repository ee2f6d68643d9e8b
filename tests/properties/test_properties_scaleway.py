"""Property tests of scrapers/documents/scaleway.py: its catalog CSV (columns in the real file's order)
with random
lines, and the real documents mutated."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapers.documents import scaleway
from tests.properties.property_checks import MARKS, catalog_parse, run_parser, skypilot_parse
from tests.properties.property_inputs import document_set, skypilot_csv

pytestmark = MARKS

HEADER = [
    "AvailabilityZone",
    "InstanceType",
    "vCPUs",
    "MemoryGiB",
    "AcceleratorName",
    "AcceleratorCount",
    "GpuInfo",
    "Region",
    "Price",
    "SpotPrice",
]
NAMES = st.sampled_from(["H100-2-80G", "RENDER-S", "GPU-3070-S", "H100-SXM-8-80G"])


@given(text=skypilot_csv(HEADER, NAMES))
def test_scaleway(text):
    run_parser(lambda: skypilot_parse(scaleway.Scaleway(), text), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_scaleway_real_mutated(real_document, data):
    documents, text = data.draw(
        document_set(
            {
                url: real_document(url)
                for url in [scaleway.VMS_URL, scaleway.BANDWIDTH_URL, scaleway.NVLINK_URL]
            },
            "scaleway",
        )
    )
    run_parser(lambda: catalog_parse(scaleway.Scaleway(), documents), text)
