"""Property tests of scrapers/documents/coreweave.py: NCCL job files, the docs index and the pricing
transcription, random and mutated from the real files."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records.documents import DocumentSet, copy_url
from scrapers.documents import coreweave
from tests.properties.property_checks import MARKS, parse_all, run_parser
from tests.properties.property_inputs import COUNT, TEXT, doc, mutated

pytestmark = MARKS
JOB = st.builds(
    lambda n, node, ports: (
        f"        nvidia.com/gpu: {n}\n        - key: node.coreweave.cloud/type\n"
        f"          operator: In\n          values:\n            - {node}\n"
        f"  -x UCX_NET_DEVICES={','.join(f'ibp{i}:1' for i in range(ports))}\n"
    ),
    COUNT,
    st.sampled_from(["b300-8x", "gb300-4x", "x", ""]),
    st.integers(min_value=0, max_value=9),
)
INDEX = st.lists(
    st.tuples(
        st.sampled_from(["B300 (InfiniBand)", "GB300 NVL72 Spectrum-X RoCE", "GH200", "??"]), COUNT
    ).map(lambda t: f"- [{t[0]}](https://docs.coreweave.com/platform/instances/gpu/gd-{t[1]}x.md): x\n"),
    max_size=4,
).map("".join)


def documents(job: str, index: str, pricing: str) -> DocumentSet:
    return DocumentSet(
        [
            doc(coreweave.JOBS[1], "coreweave", job),
            doc(copy_url(coreweave.INDEX), "coreweave", index),
            doc(copy_url(coreweave.PRICING), "coreweave", pricing),
        ]
    )


@given(job=st.one_of(JOB, TEXT), index=st.one_of(INDEX, TEXT), pricing=TEXT)
def test_coreweave(job, index, pricing):
    run_parser(lambda: parse_all(coreweave.CoreWeave(), documents(job, index, pricing)), job, index, pricing)


@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=30)
@given(data=st.data())
def test_coreweave_real_mutated(real_document, data):
    job = data.draw(mutated(real_document(coreweave.JOBS[1])))
    run_parser(lambda: parse_all(coreweave.CoreWeave(), documents(job, "", "")), job)
