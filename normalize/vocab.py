"""The link, fabric and basis vocabulary of the catalog, and the words providers use for them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum


class Link(StrEnum):
    """How the GPUs inside one instance talk to each other."""

    NVSWITCH = "nvswitch"
    NVLINK = "nvlink"
    NVLINK_BRIDGE = "nvlink-bridge"
    PCIE = "pcie"
    INFINITY_FABRIC = "infinity-fabric"
    # AWS Trainium: NeuronLink chip-to-chip links in a 2D torus (each chip to its neighbours; no switch)
    NEURONLINK_TORUS = "neuronlink-torus"
    # AWS Trainium3: chip-to-chip traffic through a PCIe switch fabric (not NVLink, not a torus)
    SWITCHED_PCIE = "switched-pcie"
    SINGLE_GPU = "single-gpu"
    UNKNOWN = "unknown"


class Fabric(StrEnum):
    """The network that carries GPU traffic between instances."""

    INFINIBAND = "infiniband"
    EFA = "efa"
    ROCE = "roce"
    GPUDIRECT_TCPX = "gpudirect-tcpx"
    GPUDIRECT_TCPXO = "gpudirect-tcpxo"
    ETHERNET = "ethernet"
    NONE = "none"
    UNKNOWN = "unknown"


#: Links whose GPUs form a scale-up domain (all-reduce at NVLink-class speed), bridges excluded.
SCALE_UP_LINKS = frozenset(
    {Link.NVSWITCH, Link.NVLINK, Link.INFINITY_FABRIC, Link.NEURONLINK_TORUS, Link.SWITCHED_PCIE}
)
#: Every GPU-to-GPU link faster than PCIe: the scale-up links and NVLink bridges.
NVLINK_CLASS_LINKS = SCALE_UP_LINKS | {Link.NVLINK_BRIDGE}
#: Node-to-node fabrics built for GPU traffic (RDMA, or GPUDirect over dedicated NICs).
GPU_FABRICS = frozenset(
    {Fabric.INFINIBAND, Fabric.EFA, Fabric.ROCE, Fabric.GPUDIRECT_TCPX, Fabric.GPUDIRECT_TCPXO}
)

#: How the app and the CLI name each link and fabric in a sentence.
LINK_LABELS: dict[Link, str] = {
    Link.NVSWITCH: "NVSwitch",
    Link.NVLINK: "NVLink",
    Link.NVLINK_BRIDGE: "NVLink bridge",
    Link.INFINITY_FABRIC: "Infinity Fabric",
    Link.NEURONLINK_TORUS: "NeuronLink (2D torus)",
    Link.SWITCHED_PCIE: "switched PCIe",
    Link.PCIE: "PCIe",
    Link.SINGLE_GPU: "single GPU",
    Link.UNKNOWN: "unknown link",
}
FABRIC_LABELS: dict[Fabric, str] = {
    Fabric.INFINIBAND: "InfiniBand",
    Fabric.EFA: "EFA",
    Fabric.ROCE: "RoCE",
    Fabric.GPUDIRECT_TCPX: "GPUDirect-TCPX",
    Fabric.GPUDIRECT_TCPXO: "GPUDirect-TCPXO",
    Fabric.ETHERNET: "Ethernet",
    Fabric.NONE: "no fabric",
    Fabric.UNKNOWN: "unknown fabric",
}


def sql_list(values: Iterable[str]) -> str:
    """A vocabulary set as a SQL list literal, sorted (``('efa', 'infiniband')``), for queries."""
    return "(" + ", ".join(f"'{v}'" for v in sorted(values)) + ")"


class Basis(StrEnum):
    """Where a figure came from."""

    STATED = "stated"  # the provider's document says it, and we hold its words (evidence verbatim)
    PARAPHRASED = "paraphrased"  # the provider says it, but we hold a person's restatement (curated)
    INFERRED = "inferred"  # derived from the GPU model's datasheet, a name or a named standard
    EXPECTED = "expected"  # the provider's own health check or topology file expects it (not its pages)
    MEASURED = "measured"  # a tool measured it on a real instance (never stated by the provider)
    UPSTREAM = "upstream"  # a reseller's row carries the upstream cloud's own row's stated figure
    MISSING = "missing"  # nobody states it; stored as NULL and flagged
    NOT_APPLICABLE = "not-applicable"  # e.g. GPU-to-GPU bandwidth of a single-GPU instance


#: Bases of a figure the provider itself gives (in its words or in ours).
PROVIDER_BASES = frozenset({Basis.STATED, Basis.PARAPHRASED})
#: Bases of a figure the row holds; with any other (missing, not-applicable) the figure is NULL.
VALUE_BASES = PROVIDER_BASES | {Basis.INFERRED, Basis.EXPECTED, Basis.MEASURED, Basis.UPSTREAM}


class Evidence(StrEnum):
    """What a claim's ``quote`` is, and so how it can be checked.

    ``verbatim``: the source's own words, a substring of the stored document at ``source_url``
    (checked when the catalog is built). ``paraphrase``: a curated fact in our words; ``source_url``
    is where a person read it and ``read_on`` when. ``datasheet``: an inferred value; the quote is
    the row of the GPU table (normalize/gpus.csv) it came from and ``source_url`` that GPU's datasheet.
    """

    VERBATIM = "verbatim"
    PARAPHRASE = "paraphrase"
    DATASHEET = "datasheet"


# Scale-up links, most specific first: "NVLink via NVSwitch" is nvswitch, "NVLink bridge" a bridge.
_LINK_WORDS: tuple[tuple[re.Pattern[str], Link], ...] = (
    (re.compile(r"(?i)nv\s*switch"), Link.NVSWITCH),
    (re.compile(r"(?i)nv\s*link[\s-]*bridge"), Link.NVLINK_BRIDGE),
    (re.compile(r"(?i)nv\s*link"), Link.NVLINK),
    (re.compile(r"(?i)infinity\s*fabric"), Link.INFINITY_FABRIC),
    (re.compile(r"(?i)neuron\s*link"), Link.NEURONLINK_TORUS),
    (re.compile(r"(?i)\bpci-?e(?:xpress)?\b"), Link.PCIE),
)

# Scale-out fabrics, most specific first: TCPXO before TCPX, RoCE before plain Ethernet.
_FABRIC_WORDS: tuple[tuple[re.Pattern[str], Fabric], ...] = (
    (re.compile(r"(?i)gpudirect[\s-]*tcpxo"), Fabric.GPUDIRECT_TCPXO),
    (re.compile(r"(?i)gpudirect[\s-]*tcpx\b"), Fabric.GPUDIRECT_TCPX),
    (re.compile(r"(?i)infini\s*band|\bIB\b"), Fabric.INFINIBAND),
    (re.compile(r"(?i)\bEFA\b|elastic fabric adapter"), Fabric.EFA),
    (re.compile(r"(?i)\broce\b|rdma over converged ethernet|\bm?rdma\b"), Fabric.ROCE),
    (re.compile(r"(?i)ethernet"), Fabric.ETHERNET),
)

# InfiniBand 4x link rates by generation name, in Gbit/s (InfiniBand Trade Association roadmap).
INFINIBAND_RATE_GBITS: dict[str, float] = {
    "SDR": 10,
    "DDR": 20,
    "QDR": 40,
    "FDR": 56,
    "EDR": 100,
    "HDR": 200,
    "NDR": 400,
    "XDR": 800,
}
INFINIBAND_RATE_SOURCE = "https://www.infinibandta.org/infiniband-roadmap/"

#: How a link claim's qualifiers begin when its source states that the GPUs exchange data directly over
#: PCIe (Google's G4: "exchange data directly over the PCIe bus"): peer access, stated.
PCIE_PEER_TO_PEER = "GPU peer-to-peer over PCIe"

# PCIe x16 bandwidth per GPU, both directions together, GB/s (PCI-SIG base specifications).
PCIE_X16_GBYTES_PER_S: dict[int, float] = {3: 32, 4: 64, 5: 128, 6: 256}


def link_from_text(text: str) -> Link | None:
    """The scale-up link a phrase names ('NVLINK 4.0' → nvlink), or None."""
    for pattern, link in _LINK_WORDS:
        if pattern.search(text):
            return link
    return None


def fabric_from_text(text: str) -> Fabric | None:
    """The scale-out fabric a phrase names ('Quantum-2 CX7 InfiniBand' → infiniband), or None."""
    for pattern, fabric in _FABRIC_WORDS:
        if pattern.search(text):
            return fabric
    return None


def infiniband_generation(text: str) -> str | None:
    """The InfiniBand generation a phrase names ('HDR InfiniBand' → 'HDR'), or None."""
    match = re.search(r"\b(" + "|".join(INFINIBAND_RATE_GBITS) + r")\b", text)
    return match.group(1) if match else None


class SellerKind(StrEnum):
    """Who sells an offer: the cloud that runs the hardware, or a shop in front of other clouds."""

    CLOUD = "cloud"  # runs the hardware it rents out
    MARKETPLACE = "marketplace"  # lists machines that hosts offer (Vast.ai); no upstream cloud named
    AGGREGATOR = (
        "aggregator"  # resells other clouds' instances under its own names (Shadeform, Prime Intellect)
    )


class PeerAccess(StrEnum):
    """Whether the GPUs of one instance can read and write each other's memory directly (CUDA peer
    access); without it GPU-to-GPU traffic is staged through host memory."""

    YES = "yes"
    NO = "no"
    UNKNOWN = "unknown"
    NOT_APPLICABLE = "not-applicable"  # one GPU (or a slice of one): no peer


#: GeForce consumer cards (RTX 3060 … RTX 5090): NVIDIA's GeForce driver exposes no GPU peer-to-peer
#: path over PCIe (CUDA's cudaDeviceCanAccessPeer is false), so no PCIe P2P figure is inferred for them.
GEFORCE_FAMILY = re.compile(r"^RTX-[2-5]0[5-9]0(?:-|$)")
