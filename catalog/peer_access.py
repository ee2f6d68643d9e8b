"""GPU peer access as a fact of its own: yes, no, unknown or not applicable, with its basis and evidence.

At build time (``at_build``) the row's link decides it: one GPU has no peer (not applicable); an
NVLink-class link is peer access (stated when the source names the link, else inferred from the GPU
table); a PCIe link whose source states the GPUs exchange data directly (Google's G4) is peer access,
stated; a GeForce card on PCIe has none by default (inferred from the product line); anything else on
PCIe is unknown: a PCIe slot is no proof of a peer-to-peer path (GPUs on different root complexes, or
virtualised, are staged through host memory). Measurements then overrule the inference
(``catalog.expectations``): a Spare Cores run whose every device-to-device test was waived is "no",
a measured GPU-to-GPU copy is "yes", both with basis measured and the reading as evidence.
"""

from __future__ import annotations

from dataclasses import dataclass

from normalize.gpus import GpuSpec
from normalize.vocab import (
    GEFORCE_FAMILY,
    LINK_LABELS,
    NVLINK_CLASS_LINKS,
    PCIE_PEER_TO_PEER,
    Basis,
    Link,
    PeerAccess,
)
from records.frozen import direct_init
from records.offers import Claim

GEFORCE_EVIDENCE = (
    "inferred from the product line: {gpu} is a GeForce card, and NVIDIA's GeForce driver exposes no "
    "GPU peer-to-peer path over PCIe (cudaDeviceCanAccessPeer is false); GPU-to-GPU copies are staged "
    "through host memory"
)


@direct_init
@dataclass(frozen=True)
class Peer:
    """The three peer-access columns of one row."""

    access: PeerAccess
    basis: Basis
    evidence: str | None = None


def is_geforce(spec: GpuSpec | None) -> bool:
    return spec is not None and bool(GEFORCE_FAMILY.match(spec.family))


def at_build(link: Link, spec: GpuSpec | None, link_claim: Claim | None) -> Peer:
    """Peer access as the row's own claims and the GPU table imply it (before any measurement)."""
    if link == Link.SINGLE_GPU:
        return Peer(PeerAccess.NOT_APPLICABLE, Basis.NOT_APPLICABLE)
    if link in NVLINK_CLASS_LINKS:
        if link_claim is not None and link_claim.basis in (Basis.STATED, Basis.PARAPHRASED):
            evidence = f"{link_claim.quote} ({link_claim.source_url})"
            return Peer(PeerAccess.YES, link_claim.basis, evidence)
        where = f"GPU table row {spec.id}" if spec is not None else "the row's link"
        return Peer(PeerAccess.YES, Basis.INFERRED, f"inferred from the link: {LINK_LABELS[link]} ({where})")
    if link == Link.PCIE and _states_pcie_p2p(link_claim):
        assert link_claim is not None
        return Peer(PeerAccess.YES, link_claim.basis, f"{link_claim.quote} ({link_claim.source_url})")
    if link == Link.PCIE and is_geforce(spec):
        assert spec is not None
        return Peer(PeerAccess.NO, Basis.INFERRED, GEFORCE_EVIDENCE.format(gpu=spec.id))
    return Peer(PeerAccess.UNKNOWN, Basis.MISSING)


def _states_pcie_p2p(claim: Claim | None) -> bool:
    """Whether a link claim is the source's own statement that the GPUs reach each other over PCIe."""
    return (
        claim is not None
        and claim.basis in (Basis.STATED, Basis.PARAPHRASED)
        and claim.qualifiers.startswith(PCIE_PEER_TO_PEER)
    )


#: Measured GPU-to-GPU copy metrics, and by what each is multiplied to bound the two-way total per GPU
#: pair: a two-way total is one; one direction while both copy, or one direction alone, at most twice.
COPY_METRICS = {
    ("gpu_to_gpu_gbytes_per_s", "two-way"): 1.0,
    ("gpu_to_gpu_each_way_gbytes_per_s", "two-way"): 2.0,
    ("gpu_to_gpu_gbytes_per_s", "one-way"): 2.0,
}
#: An inferred GPU-to-GPU figure more than this many times the measured bound is contradicted.
CONTRADICTED_RATIO = 2.0


@dataclass(frozen=True)
class Measured:
    """What one row's measurements say of its peer access, and an inferred figure they contradict."""

    peer: Peer | None
    withdraw_note: str | None = None


def _reading(m: dict) -> str:
    version = f" {m['tool_version']}" if isinstance(m.get("tool_version"), str) else ""
    shown = (
        m["value_text"] if isinstance(m.get("value_text"), str) else f"{m['value']:g} GB/s {m['direction']}"
    )
    return f"{m['tool']}{version} {m['metric']} {shown}: {m['quote']} at {m['locator']} ({m['source_url']})"


def from_measurements(readings: list[dict], row: dict) -> Measured:
    """Peer access as one row's measured readings show it (pure): a measured GPU-to-GPU copy is
    "yes", a run that waived every device-to-device test "no"; and, when the row's GPU-to-GPU figure
    is inferred, a note withdrawing it where the readings contradict it (no peer access, or a
    measured bound under half of it)."""
    copies = [
        m for m in readings if (m["metric"], m.get("direction")) in COPY_METRICS and m["kind"] == "measured"
    ]
    waived = [m for m in readings if m["metric"] == "gpu_p2p_status" and m.get("value_text") == "Waived"]
    inferred = row.get("intra_node_basis") == Basis.INFERRED.value and row.get("intra_node_gbytes_per_s")
    if copies:
        best = max(
            copies, key=lambda m: (m["value"] * COPY_METRICS[(m["metric"], m["direction"])], m["locator"])
        )
        bound = best["value"] * COPY_METRICS[(best["metric"], best["direction"])]
        peer = Peer(PeerAccess.YES, Basis.MEASURED, _reading(best))
        if inferred and float(row["intra_node_gbytes_per_s"]) > CONTRADICTED_RATIO * bound:
            note = (
                f"inferred {float(row['intra_node_gbytes_per_s']):g} GB/s GPU-to-GPU withdrawn: measured at "
                f"most {bound:g} GB/s both ways together ({best['metric']} {best['value']:g} "
                f"{best['direction']}, {best['source_url']})"
            )
            return Measured(peer, note)
        return Measured(peer)
    if waived:
        first = sorted(waived, key=lambda m: m["source_url"])[0]
        peer = Peer(PeerAccess.NO, Basis.MEASURED, _reading(first))
        withdrawn: str | None = None
        if inferred:
            withdrawn = (
                f"inferred {float(row['intra_node_gbytes_per_s']):g} GB/s GPU-to-GPU withdrawn: nvbandwidth "
                f"waived every device-to-device test, no peer access ({first['source_url']})"
            )
        return Measured(peer, withdrawn)
    return Measured(None)
