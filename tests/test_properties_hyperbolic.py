"""Property tests of scrapers/offer_lists/hyperbolic.py: its catalog CSV (columns in the real file's
order) with random
lines, and the real document mutated."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapers.offer_lists import hyperbolic
from tests.property_checks import MARKS, run_parser, skypilot_parse
from tests.property_inputs import mutated, skypilot_csv

pytestmark = MARKS

HEADER = [
    "InstanceType",
    "AcceleratorName",
    "AcceleratorCount",
    "vCPUs",
    "MemoryGiB",
    "StorageGiB",
    "Price",
    "Region",
    "GpuInfo",
    "SpotPrice",
]
NAMES = st.sampled_from(["1x-H100-75-722", "3x-H100-224-2165"])


@given(text=skypilot_csv(HEADER, NAMES))
def test_hyperbolic(text):
    run_parser(lambda: skypilot_parse(hyperbolic.Hyperbolic(), text), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hyperbolic_real_mutated(real_document, data):
    text = data.draw(mutated(real_document(hyperbolic.VMS_URL)))
    run_parser(lambda: skypilot_parse(hyperbolic.Hyperbolic(), text), text)
