"""Property tests of scrapers/offer_lists/vast.py: its catalog CSV (columns in the real file's order)
with random
lines, and the real document mutated."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapers.offer_lists import vast
from tests.property_checks import MARKS, run_parser, skypilot_parse
from tests.property_inputs import mutated, skypilot_csv

pytestmark = MARKS

HEADER = [
    "InstanceType",
    "AcceleratorName",
    "AcceleratorCount",
    "vCPUs",
    "MemoryGiB",
    "GpuInfo",
    "Price",
    "SpotPrice",
    "Region",
]
NAMES = st.sampled_from(
    ["8x-H100_SXM-32-65536", "2x-RTX_4070S_Ti-32-65536", "1x-H100_NVL-32-65536", "4x-B200-32-65536"]
)


@given(text=skypilot_csv(HEADER, NAMES))
def test_vast(text):
    run_parser(lambda: skypilot_parse(vast.Vast(), text), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_vast_real_mutated(real_document, data):
    text = data.draw(mutated(real_document(vast.VMS_URL)))
    run_parser(lambda: skypilot_parse(vast.Vast(), text), text)
