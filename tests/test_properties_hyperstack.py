"""Property tests of scrapers/offer_lists/hyperstack.py: its catalog CSV (columns in the real file's
order) with random
lines, and the real document mutated."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapers.offer_lists import hyperstack
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
    "Region",
    "SpotPrice",
]
NAMES = st.sampled_from(["n3-H100x8-NVLink", "n3-H100-SXM5x8", "n3-A100x8", "n3-RTX-A6000x2"])


@given(text=skypilot_csv(HEADER, NAMES))
def test_hyperstack(text):
    run_parser(lambda: skypilot_parse(hyperstack.Hyperstack(), text), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hyperstack_real_mutated(real_document, data):
    text = data.draw(mutated(real_document(hyperstack.VMS_URL)))
    run_parser(lambda: skypilot_parse(hyperstack.Hyperstack(), text), text)
