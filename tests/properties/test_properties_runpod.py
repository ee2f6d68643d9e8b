"""Property tests of scrapers/documents/runpod.py: the cluster, GPU-type and observability pages."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records.documents import DocumentSet
from scrapers.documents import runpod
from tests.properties.property_checks import MARKS, parse_all, run_parser
from tests.properties.property_inputs import (
    COUNT,
    DIGITS,
    GPU_NAME,
    MEMORY_CELL,
    NUMBER,
    RUNPOD_FIXTURE,
    SHORT_GPU_NAME,
    bandwidth_text,
    doc,
    document_set,
    md_table,
    or_noise,
)

pytestmark = MARKS

NODES_CELL = st.one_of(
    st.tuples(
        COUNT, st.just("-"), COUNT, st.just(" nodes ("), COUNT, st.just("-"), COUNT, st.just(" GPUs)")
    ).map("".join),
    st.tuples(COUNT, st.sampled_from([" node (", " nodes ("]), COUNT, st.just(" GPUs)")).map("".join),
)


@st.composite
def runpod_documents(draw: st.DrawFn) -> tuple[DocumentSet, str]:
    if draw(st.booleans()):
        return draw(document_set(RUNPOD_FIXTURE, "runpod"))
    clusters = md_table(
        ["GPU", "Network speed", "Nodes"],
        draw(
            st.lists(
                st.tuples(or_noise(SHORT_GPU_NAME), or_noise(bandwidth_text()), or_noise(NODES_CELL)).map(
                    list
                ),
                max_size=4,
            )
        ),
    )
    interfaces = draw(
        st.tuples(DIGITS, DIGITS).map(lambda t: f"The (`ens{t[0]}`-`ens{t[1]}`) handle inter-node traffic.")
    )
    types = md_table(
        ["GPU ID", "Display Name", f"Memory ({draw(st.sampled_from(['GB', 'GiB', 'MB', 'x']))})"],
        draw(
            st.lists(
                st.tuples(
                    or_noise(
                        st.tuples(GPU_NAME, st.sampled_from(["", " MIG 1g.24gb", " MIG 3g.40gb"])).map(
                            "".join
                        )
                    ),
                    or_noise(GPU_NAME),
                    or_noise(NUMBER),
                ).map(list),
                max_size=4,
            )
        ),
    )
    flash = md_table(
        ["GpuType", "GPU Model", "VRAM", "Architecture"],
        draw(
            st.lists(
                st.tuples(
                    or_noise(
                        st.sampled_from(
                            ["`GpuType.NVIDIA_H100_80GB_HBM3`", "`GpuType.NVIDIA_A100_80GB_PCIe`"]
                        )
                    ),
                    st.just("x"),
                    or_noise(MEMORY_CELL),
                    st.just("Hopper"),
                ).map(list),
                max_size=3,
            )
        ),
    )
    bodies = {
        runpod.CLUSTERS_URL: clusters + "\n" + interfaces,
        runpod.GPU_TYPES_URL: types,
        runpod.FLASH_GPU_TYPES_URL: flash,
        runpod.OBSERVABILITY_URL: draw(or_noise(st.just(RUNPOD_FIXTURE[runpod.OBSERVABILITY_URL]))),
    }
    return DocumentSet(doc(u, "runpod", b) for u, b in bodies.items()), "\n".join(bodies.values())


@given(case=runpod_documents())
def test_runpod(case):
    documents, text = case
    run_parser(lambda: parse_all(runpod.RunPod(), documents), text)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_runpod_real_mutated(real_document, data):
    documents, text = data.draw(document_set({url: real_document(url) for url in RUNPOD_FIXTURE}, "runpod"))
    run_parser(lambda: parse_all(runpod.RunPod(), documents), text)
