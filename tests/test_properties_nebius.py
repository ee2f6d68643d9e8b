"""Property tests of scrapers/nebius.py: SkyPilot's vms.csv with random rows and GpuInfo literals."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records.documents import DocumentSet
from scrapers import nebius
from tests.property_checks import MARKS, parse_all, run_parser
from tests.property_inputs import (
    COUNT,
    NUMBER,
    SHORT_GPU_NAME,
    TEXT,
    csv_text,
    doc,
    fixtures,
    mutated,
    or_noise,
)

pytestmark = MARKS

PY_SCALAR = st.one_of(
    st.integers(-10, 10**6),
    st.integers(),
    st.floats(),
    st.text(max_size=4),
    st.booleans(),
    st.none(),
).map(repr)


def _py_containers(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Lists, dicts, sets and tuples of ``inner`` as Python source: keys may be unhashable."""
    return st.one_of(
        st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.lists(st.tuples(inner, inner), max_size=3).map(
            lambda kv: "{" + ", ".join(f"{k}: {v}" for k, v in kv) + "}"
        ),
        st.lists(inner, min_size=1, max_size=3).map(lambda xs: "{" + ", ".join(xs) + "}"),
        st.lists(inner, max_size=3).map(lambda xs: "(" + ", ".join(xs) + ",)"),
    )


PY_LITERAL = st.recursive(PY_SCALAR, _py_containers, max_leaves=6)
MIB = st.one_of(
    st.integers(0, 10**6).map(str),
    st.sampled_from(["204800", "81920", "0", "-1", "1e999", "'80'", "9" * 400]),
    PY_LITERAL,
)
GPU_INFO = st.one_of(
    st.tuples(or_noise(SHORT_GPU_NAME, 1), or_noise(COUNT, 1), MIB, MIB).map(
        lambda t: (
            f"{{'Gpus': [{{'Name': '{t[0]}', 'Manufacturer': 'NVIDIA', 'Count': {t[1]}, "
            f"'MemoryInfo': {{'SizeInMiB': {t[2]}}}}}], 'TotalGpuMemoryInMiB': {t[3]}}}"
        )
    ),
    PY_LITERAL,
    st.just(""),
)
NEBIUS_ROW = st.tuples(
    or_noise(
        st.tuples(
            st.sampled_from(
                ["gpu-h100-sxm", "gpu-h200-sxm", "gpu-b200-sxm", "gpu-l40s-d", "cpu-e2", "gpu-x9000"]
            ),
            st.sampled_from(["_8gpu-128vcpu-1600gb", "_1gpu-16vcpu-200gb", "", "_"]),
        ).map("".join),
        2,
    ),
    or_noise(SHORT_GPU_NAME, 2),
    or_noise(COUNT, 2),
    st.just("16"),
    or_noise(NUMBER, 2),
    st.just("1.00"),
    st.sampled_from(["eu-north1", "us-central1"]),
    GPU_INFO,
    st.just(""),
).map(list)
NEBIUS_CSV = st.one_of(
    st.lists(NEBIUS_ROW, max_size=4).map(csv_text),
    fixtures("nebius/*.csv").flatmap(mutated),
    TEXT,
)


@given(text=NEBIUS_CSV)
def test_nebius(text):
    run_parser(lambda: parse_all(nebius.Nebius(), DocumentSet([doc(nebius.VMS_URL, "nebius", text)])), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_nebius_real_mutated(real_document, data):
    text = data.draw(mutated(real_document(nebius.VMS_URL)))
    run_parser(lambda: parse_all(nebius.Nebius(), DocumentSet([doc(nebius.VMS_URL, "nebius", text)])), text)
