"""Property tests of scrapers/offer_lists/nebius.py: its catalog CSV (columns in the real file's order)
with random
lines, and the real document mutated."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapers.offer_lists import nebius
from tests.property_checks import MARKS, run_parser, skypilot_parse
from tests.property_inputs import mutated, skypilot_csv

pytestmark = MARKS

HEADER = [
    "InstanceType",
    "AcceleratorName",
    "AcceleratorCount",
    "vCPUs",
    "MemoryGiB",
    "Price",
    "Region",
    "GpuInfo",
    "SpotPrice",
]
NAMES = st.sampled_from(
    ["gpu-h100-sxm_8gpu-128vcpu-1600gb", "gpu-l40s-d_1gpu-16vcpu-96gb", "cpu-e2_2vcpu-8gb", "gpu-x9000_", "_"]
)


@given(text=skypilot_csv(HEADER, NAMES))
def test_nebius(text):
    run_parser(lambda: skypilot_parse(nebius.Nebius(), text), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_nebius_real_mutated(real_document, data):
    text = data.draw(mutated(real_document(nebius.VMS_URL)))
    run_parser(lambda: skypilot_parse(nebius.Nebius(), text), text)
