"""catalog.system_facts on readings of our own: a measured product name that contradicts a row, one
that settles an open form factor, an unreliable fabric, a front-end NIC fill."""

from __future__ import annotations

from catalog.system_facts import row_facts


def reading(metric: str, value=None, text=None, source="sparecores", kind="measured", **extra) -> dict:
    return {
        "metric": metric, "value": value, "value_text": text, "source": source, "kind": kind,
        "quote": "<product_name>x</product_name>", "source_url": "https://example.test/stdout",
        "locator": "line 9", "tool": "nvidia-smi -q -x", "tool_version": None, "gpus": 8, "port_count": None,
        "notes": "front-end NIC: '200Gb/s Ethernet NIC'; matched", "fetched_at": None, **extra,
    }  # fmt: skip


ROW = {"gpu_model": "H100-SXM-80GB", "inter_node_fabric": "infiniband", "intra_node_link": "nvswitch",
       "intra_node_gbytes_per_s": 900.0, "frontend_gbits_per_s": None}  # fmt: skip


def facts(readings: list[dict], row: dict):
    return row_facts(readings, row)


def test_a_measured_part_that_contradicts_the_row_is_a_conflict():
    found = facts([reading("gpu_product_name", text="NVIDIA H100 PCIe")], ROW)
    [(claim, _)] = found.claims
    assert (claim.field, claim.value, claim.basis.value) == ("gpu_model", "H100-PCIE-80GB", "measured")
    assert found.conflicts and "H100-SXM-80GB vs H100-PCIE-80GB measured" in found.conflicts[0]


def test_a_measured_part_settles_a_family_level_model_in_a_note_and_agreement_adds_nothing():
    found = facts(
        [reading("gpu_product_name", text="NVIDIA H100 80GB HBM3")], {**ROW, "gpu_model": "H100-80GB"}
    )
    assert not found.conflicts and "leaves the form factor open" in found.notes[0]
    same = facts([reading("gpu_product_name", text="NVIDIA H100 80GB HBM3")], ROW)
    assert len(same.claims) == 1 and not same.notes and not same.conflicts
    open_name = facts([reading("gpu_product_name", text="NVIDIA H100")], ROW)
    assert not open_name.claims  # a name that leaves the form factor open claims nothing


def test_system_descriptions_claim_expected_facts_and_conflict_but_never_change_the_row():
    found = facts(
        [
            reading("node_fabric", text="roce", source="mlperf", kind="expected"),
            reading("node_fabric", text="unreliable", source="mlperf", kind="expected"),
            reading("gpu_nvlink_gbytes_per_s", value=1800.0, source="mlperf", kind="expected"),
            reading("nic_gbits_per_s", value=200.0, source="mlperf", kind="expected", port_count=1),
            reading("nic_gbits_per_s", value=100.0, source="azurehpc", kind="expected", port_count=1),
        ],
        ROW,
    )
    assert sorted(c.field for c, _ in found.claims) == [
        "frontend_gbits_per_s", "inter_node_fabric", "intra_node_gbytes_per_s",
    ]  # fmt: skip
    assert {c.basis.value for c, _ in found.claims} == {"expected"}
    assert len(found.conflicts) == 2  # roce vs infiniband, 1800 vs 900
    assert found.frontend is not None and found.frontend[0].value == 200.0  # a health check's port: not
    assert facts([reading("nic_gbits_per_s", value=200.0, source="mlperf", kind="expected")],
                 {**ROW, "frontend_gbits_per_s": 80.0}).frontend is None  # fmt: skip


def test_nominal_memory_of_a_family_level_gpu_and_fitting_memory_first():
    from catalog.offers import family_nominal_gb, fitting_first, nominal_memory
    from normalize.gpus import BY_ID
    from records.offers import Claim

    assert family_nominal_gb("H100-80GB") == 80.0 and family_nominal_gb("H200-141GB") == 141.0
    assert family_nominal_gb("H100") is None and family_nominal_gb("NOT-A-GPU-8GB") is None
    assert nominal_memory(85.52, None, 8, "H100-80GB") == (80.0, None)
    assert nominal_memory(None, None, 2, "V100-32GB") == (32.0, None)
    value, flag = nominal_memory(40.0, None, 1, "H100-80GB")
    assert value == 40.0 and flag is not None and "H100-80GB" in flag
    assert nominal_memory(85.52, None, 1, None) == (85.52, None)
    page = Claim("gpu_memory_gb", 549.756, "8192 GiB (16 x 512 GiB)", "https://example.test/a")
    neuron = Claim("gpu_memory_gb", 103.079, "1,536", "https://example.test/b")
    spec = BY_ID["TRAINIUM2-96GB"]
    assert fitting_first([page, neuron], spec, 16) == [neuron, page]
    assert fitting_first([page, neuron], None, 16) == [page, neuron]


def test_a_stated_pcie_peer_to_peer_link_is_peer_access_stated():
    from catalog.peer_access import at_build
    from normalize.gpus import BY_ID
    from normalize.vocab import PCIE_PEER_TO_PEER, Link
    from records.offers import Claim

    spec = BY_ID["RTX-PRO-6000-SERVER-96GB"]
    said = Claim("intra_node_link", "pcie", "exchange data directly over the PCIe bus", "https://example.test",
                 qualifiers=f"{PCIE_PEER_TO_PEER} (machine types with two or more GPUs)")  # fmt: skip
    peer = at_build(Link.PCIE, spec, said)
    assert (peer.access.value, peer.basis.value) == ("yes", "stated") and "PCIe bus" in (peer.evidence or "")
    plain = Claim("intra_node_link", "pcie", "PCIe", "https://example.test")
    assert at_build(Link.PCIE, spec, plain).access.value == "unknown"
