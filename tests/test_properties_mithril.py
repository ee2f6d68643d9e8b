"""Property tests of scrapers/offer_lists/mithril.py: its catalog CSV (columns in the real file's order)
with random
lines, and the real document mutated."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapers.offer_lists import mithril
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
    "SpotPrice",
    "Region",
    "GpuInfo",
]
NAMES = st.sampled_from(["h100-80gb.sxm.8x", "ccs-h200.sxm.1x"])


@given(text=skypilot_csv(HEADER, NAMES))
def test_mithril(text):
    run_parser(lambda: skypilot_parse(mithril.Mithril(), text), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mithril_real_mutated(real_document, data):
    text = data.draw(mutated(real_document(mithril.VMS_URL)))
    run_parser(lambda: skypilot_parse(mithril.Mithril(), text), text)
