"""Property tests of scrapers/offer_lists/fluidstack.py: its catalog CSV (columns in the real file's
order) with random
lines, and the real document mutated."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapers.offer_lists import fluidstack
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
NAMES = st.sampled_from(["H100_NVLINK_80GB::8", "A100_PCIE_80GB::4", "L40_48GB::1"])


@given(text=skypilot_csv(HEADER, NAMES))
def test_fluidstack(text):
    run_parser(lambda: skypilot_parse(fluidstack.Fluidstack(), text), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fluidstack_real_mutated(real_document, data):
    text = data.draw(mutated(real_document(fluidstack.VMS_URL)))
    run_parser(lambda: skypilot_parse(fluidstack.Fluidstack(), text), text)
