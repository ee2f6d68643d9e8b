"""Property tests of scrapers/offer_lists/paperspace.py: its catalog CSV (columns in the real file's
order) with random
lines, and the real document mutated."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapers.offer_lists import paperspace
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
    "Region",
    "SpotPrice",
    "Price",
]
NAMES = st.sampled_from(["H100x8", "GPU+", "C5"])


@given(text=skypilot_csv(HEADER, NAMES))
def test_paperspace(text):
    run_parser(lambda: skypilot_parse(paperspace.Paperspace(), text), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_paperspace_real_mutated(real_document, data):
    text = data.draw(mutated(real_document(paperspace.VMS_URL)))
    run_parser(lambda: skypilot_parse(paperspace.Paperspace(), text), text)
