"""Google's own words for GCP: text captures of its machine-family pages, read as the copies they are.

The captures (``../shared/reference/thirdparty-copies/docs.cloud.google.com/...``, CC BY 4.0) render
Google's HTML to text with one table cell per line. Each machine-type table starts at a line
"Machine type" under an "Attached NVIDIA ... GPUs" title; its header cells run to "GPU memory ...",
then one group of cells per machine type, until the footnotes ("1 A vCPU is ..."). A cell can span two
lines (A3 Edge: "600: for asia-south1 ..." / "400: for all other ..."); those are one cell.

Trap: the table's "Maximum network bandwidth" is the machine's TOTAL, GPU NICs and gVNIC together, and
its "Physical NIC count" counts both kinds too. So the total is the GPU fabric's figure only for the
GPUDirect-TCPX(O) machine types, whose one allowance is shared with the front end (and said so), and
the front end's only where the machine has no GPU NICs (one physical NIC, or a series Google sells
without a GPU network); for the RoCE machine types the total is kept in a note, and only the prose's
own split (A4X, A4X Max) gives their GPU-NIC and front-end figures. NVLink figures are Google's own,
with the direction Google gives: "450 GB/s, unidirectionally" is stored as the two-way figure the
column holds (900), saying so. Every claim cites the copy; Google's URL is its ``original_url``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace
from fractions import Fraction

from normalize.boards import board_of
from normalize.errors import LayoutError, ParseError
from normalize.gpus import identify_gpu
from normalize.units import parse_bandwidth, parse_gpu_count, to_number
from normalize.vocab import PCIE_PEER_TO_PEER, Fabric, Link
from records.documents import copy_url
from records.offers import Claim, RawOffer
from scrapers.claims import bandwidth_claim, fact, gpu_model_claim
from scrapers.documents.gcp.network import SERIES_PREFIXES
from scrapers.revisions import cite_copy

log = logging.getLogger(__name__)

CAPTURE_DIR = "reference/thirdparty-copies/docs.cloud.google.com/"
MACHINES_COPY = CAPTURE_DIR + "compute/docs/accelerator-optimized-machines.txt"
GPUS_COPY = CAPTURE_DIR + "compute/docs/gpus.txt"
HYPERCOMPUTER_COPY = CAPTURE_DIR + "ai-hypercomputer/docs/gpu.txt"
COPIES = (MACHINES_COPY, GPUS_COPY, HYPERCOMPUTER_COPY)
ORIGINAL = "https://docs.cloud.google.com/"


def original_of(path: str) -> str:
    """Google's URL of the page a capture copies."""
    return ORIGINAL + path.removeprefix(CAPTURE_DIR).removesuffix(".txt")


def copy_note(path: str) -> str:
    return (
        f"from a text capture of Google's page {original_of(path)} (CC BY 4.0), cited as the copy it is; "
        "a live refresh of Google's page supersedes it"
    )


_MACHINE = re.compile(r"^[a-z][0-9][a-z]?-[a-z]+-\d+[a-z]?(?:-metal)?$")
_FOOTNOTE = re.compile(r"^\d+ [A-Z]")
_SPLIT_CELL = re.compile(r"^[\d,]+: for ")
_HEADER_MARK = re.compile(r"\s+\d$")  # "Maximum network bandwidth (Gbps) 2": its footnote mark
TOTAL_NOTE = (
    "Google's 'Maximum network bandwidth' ({total} Gbps) and 'Physical NIC count' ({nics}) are the machine's "
    "totals, GPU NICs and gVNIC together"
)


@dataclass(frozen=True)
class MachineRow:
    """One row of a capture's machine-type table: its cells by header, and the table's title."""

    instance_type: str
    title: str
    cells: dict[str, str]

    def cell(self, prefix: str) -> str | None:
        return next((v for k, v in self.cells.items() if k.startswith(prefix)), None)


def machine_tables(text: str) -> list[MachineRow]:
    """Every machine-type row of every "Attached ..." table in a capture. LayoutError if none."""
    lines = [line.strip() for line in text.split("\n")]
    rows: list[MachineRow] = []
    for start, line in enumerate(lines):
        if line == "Machine type" and start > 0 and lines[start - 1].startswith("Attached "):
            rows += _table(lines, start)
    if not rows:
        raise LayoutError("no 'Attached ...' table headed 'Machine type' in the capture")
    return rows


def _table(lines: list[str], start: int) -> list[MachineRow]:
    title = lines[start - 1].removeprefix("Attached ")
    at = start
    headers = []
    while at < len(lines) and not _MACHINE.match(lines[at]):
        headers.append(_HEADER_MARK.sub("", lines[at]))
        at += 1
    rows = []
    while at < len(lines) and _MACHINE.match(lines[at]):
        name, cells = lines[at], list[str]()
        at += 1
        while at < len(lines) and not _MACHINE.match(lines[at]) and not _FOOTNOTE.match(lines[at]):
            if cells and _SPLIT_CELL.match(lines[at]) and _SPLIT_CELL.match(cells[-1]):
                cells[-1] += " / " + lines[at]  # one cell printed on two lines
            elif len(cells) == len(headers) - 1:
                break  # the row is whole; prose follows a table without footnotes
            else:
                cells.append(lines[at])
            at += 1
        if len(cells) != len(headers) - 1:
            log.warning(
                "Skipping gcp capture row %s: %d cells under %d headers", name, len(cells), len(headers)
            )
            continue
        rows.append(MachineRow(name, title, dict(zip(headers[1:], cells, strict=True))))
    return rows


def series_of(instance_type: str) -> str | None:
    """The machine series (as ``scrapers.gcp_network`` names it) of a machine type."""
    return next((s for s, prefixes in SERIES_PREFIXES.items() if instance_type.startswith(prefixes)), None)


@dataclass(frozen=True)
class Prose:
    """A claim the page's prose states for every machine type of some series."""

    series: tuple[str, ...]
    claim: Claim
    multi_gpu_only: bool = False  # GPU-to-GPU facts: none for a one-GPU machine type
    only: tuple[str, ...] = ()  # the machine types it names, when it names them


# The prose is matched on the capture with its line breaks folded to spaces.
# "NVIDIA H100 GPUs provide peak GPU NVLink bandwidth of 450 GB/s, unidirectionally."
_NVLINK = re.compile(
    r"NVIDIA (?P<gpu>[A-Z]\d{3}) GPUs provide(?: peak)? GPU NVLink bandwidth of (?P<bw>[\d,]+ GB/?p?s), "
    r"(?P<dir>(?:uni|bi)directionally)(?: per GPU)?\."
)
_NVLINK_SERIES = {"H100": ("A3 Mega", "A3 High", "A3 Edge"), "H200": ("A3 Ultra",), "B200": ("A4",)}
_A4X_NVLINK = re.compile(
    r"For both A4X Max and A4X machine types, multi-node NVLink scales up to (?P<gpus>\d+) GPUs in a "
    r"single domain and provides GPU NVLink bandwidth of (?P<bw>[\d,]+ GBps), bidirectionally per GPU\."
)
_A2_NVLINK = re.compile(r"peak GPU to GPU NVLink bandwidth of (?P<bw>[\d,]+ GBps)\.")
_ALL_TO_ALL = re.compile(r"With all-to-all NVLink topology between 8 GPUs in a system")
_NVL72 = re.compile(r"An NVLink Domain is a group of interconnected NVIDIA NVSwitch chips and the GPUs")
_A4X_ROCE = re.compile(
    r"For (?P<series>A4X Max|A4X) instances, (?:RDMA over Converged Ethernet \(RoCE\)|RoCE) increases "
    r"network performance by combining NVIDIA ConnectX-\d \(CX-\d\) (?:Super)?NICs.{0,200}?up to "
    r"(?P<bw>[\d,]+ Gbps) of bandwidth.{0,120}?For general purpose networking, each instance also has "
    r"up to (?P<fe>[\d,]+ Gbps) of bandwidth\."
)
A3_HIGH_EDGE = ("A3 Edge", "A3 High")
_FABRIC_PROSE = (  # pattern, series, fabric, the machine types it names (all of the series if none)
    (re.compile(r"Enhanced networking with RoCE : RDMA over Converged Ethernet \(RoCE\) increases"),
     ("A4",), Fabric.ROCE, ()),
    (re.compile(r"For this machine type, RDMA over Converged Ethernet \(RoCE\) increases the network "
                r"performance by combining NVIDIA ConnectX-7 network interface cards \(NICs\)"),
     ("A3 Ultra",), Fabric.ROCE, ()),
    (re.compile(r"For the A3 Mega machine types, GPUDirect-TCPXO further"),
     ("A3 Mega",), Fabric.GPUDIRECT_TCPXO, ()),
    (re.compile(r"For the A3 Edge \( a3-edgegpu-8g \) and A3 High \( a3-highgpu-8g \) machine types, "
                r"GPUDirect-TCPX increases"),
     A3_HIGH_EDGE, Fabric.GPUDIRECT_TCPX, ("a3-edgegpu-8g", "a3-highgpu-8g")),
)  # fmt: skip
_G4_P2P = re.compile(
    r"This approach allows GPUs that attach to the same G4 instance to exchange data directly over the "
    r"PCIe bus"
)
_SXM = re.compile(
    r"(?P<series>A3 (?:Ultra|Mega|High|Edge)) machine types have (?P<gpu>NVIDIA H\d00 SXM) GPUs"
)
NO_GPU_NIC_SERIES = ("A2 Standard", "A2 Ultra", "G2", "G4")
A4X = ("A4X", "A4X Max")
A2 = ("A2 Standard", "A2 Ultra")


def _two_way(text: str, direction: str, url: str, context: str, quote: str) -> Claim:
    """An NVLink figure in the column's two-way unit, saying how Google gave it."""
    bandwidth = parse_bandwidth(text)
    if direction == "unidirectionally":
        bandwidth = replace(bandwidth, magnitude=bandwidth.magnitude * 2, direction="bidirectional")
        note = f"Google states {text} unidirectionally; the column holds the two-way figure (x2)"
    elif direction == "bidirectionally":
        note = ""
    else:
        note = "direction not stated by Google; read as the two-way figure the column holds"
    claim = bandwidth_claim(
        "intra_node_gbytes_per_s", bandwidth, quote=quote, source_url=url, context=context
    )
    return replace(claim, qualifiers="; ".join(q for q in (claim.qualifiers, note) if q))


def _stated(field: str, text: str, quote: str, url: str, qualifiers: str, context: str = "") -> Claim:
    claim = bandwidth_claim(field, parse_bandwidth(text), quote=quote, source_url=url, context=context)
    return replace(claim, qualifiers=qualifiers)


def prose_claims(text: str, url: str) -> list[Prose]:
    """The series-wide facts the pages' prose states (link, NVLink figure, fabric and its split,
    NVL72 domain, G4 peer-to-peer) and the gpus page's chart, each quoted verbatim."""
    found: list[Prose] = chart_claims(text, url)
    text = " ".join(text.split())  # the capture breaks sentences across lines
    for nv in _NVLINK.finditer(text):
        series = _NVLINK_SERIES.get(nv.group("gpu"), ())
        context = f"{nv.group('gpu')} › NVLink scalability"
        found.append(
            Prose(series, _two_way(nv.group("bw"), nv.group("dir"), url, context, nv.group(0)), True)
        )
    if m := _ALL_TO_ALL.search(text):
        link = fact("intra_node_link", Link.NVLINK.value, quote=m.group(0), source_url=url, context="NVLink")
        found.append(Prose(("A3 Ultra", "A3 Mega", *A3_HIGH_EDGE, "A4"), link, True))
    if m := _A4X_NVLINK.search(text):
        found.append(Prose(A4X, _two_way(m.group("bw"), "bidirectionally", url, "A4X › NVLink", m.group(0))))
        found.append(
            Prose(A4X, fact("scale_up_domain_gpus", int(m.group("gpus")), quote=m.group(0), source_url=url))
        )
    if m := _NVL72.search(text):
        link = fact("intra_node_link", Link.NVSWITCH.value, quote=m.group(0), source_url=url, context="NVL72")
        found.append(Prose(A4X, link))
    if m := _A2_NVLINK.search(text):
        found.append(Prose(A2, _two_way(m.group("bw"), "", url, "A2", m.group(0)), True))
        found.append(
            Prose(A2, fact("intra_node_link", Link.NVLINK.value, quote=m.group(0), source_url=url), True)
        )
    for roce in _A4X_ROCE.finditer(text):
        series, quote = (roce.group("series"),), roce.group(0)
        found += [
            Prose(series, fact("inter_node_fabric", Fabric.ROCE.value, quote=quote, source_url=url)),
            Prose(series, _stated("inter_node_gbits_per_s", roce.group("bw"), quote, url, "GPU NICs (RoCE)")),
            Prose(
                series,
                _stated("frontend_gbits_per_s", roce.group("fe"), quote, url, "general purpose networking"),
            ),
        ]
    for pattern, series, fabric, only in _FABRIC_PROSE:
        if m := pattern.search(text):
            claim = fact(
                "inter_node_fabric", fabric.value, quote=m.group(0), source_url=url, context="networking"
            )
            found.append(Prose(series, claim, only=only))
    if m := _G4_P2P.search(text):
        p2p = f"{PCIE_PEER_TO_PEER} (machine types with two or more GPUs)"
        link = fact("intra_node_link", Link.PCIE.value, quote=m.group(0), source_url=url, qualifiers=p2p)
        found.append(Prose(("G4",), link, True))
    return found


_CHART_SERIES = re.compile(r"^(?P<series>(?:A|G)\d[\w ,]*?) \((?P<gpu>[^)]+)\)$")
_CHART_LINK = re.compile(r"^NVLink Full Mesh @ (?P<bw>[\d,]+ GBps)$")


def chart_claims(text: str, url: str) -> list[Prose]:
    """The gpus page's "General comparison chart": "A3 Mega, A3 High, A3 Edge (H100)" / memory /
    "NVLink Full Mesh @ 900 GBps" (direction not stated; Google's other page says 450 GB/s one way)."""
    lines = text.split("\n")
    found = []
    # a link line holds its words: only those lines (and the head two lines above) are matched
    for at in [i - 2 for i, line in enumerate(lines) if i >= 2 and "NVLink Full Mesh @" in line]:
        link = _CHART_LINK.match(lines[at + 2].strip())
        head = _CHART_SERIES.match(lines[at].strip()) if link else None
        if head is None or link is None:
            continue
        series = tuple(s.strip() for s in head.group("series").split(","))
        quote = f"{lines[at].strip()} {lines[at + 1].strip()} {lines[at + 2].strip()}"
        context = "General comparison chart › Interconnect"
        found.append(Prose(series, _two_way(link.group("bw"), "", url, context, quote), multi_gpu_only=True))
    return found


def _gpu_texts(text: str) -> dict[str, tuple[str, str]]:
    """Series whose prose names the GPU's form factor ("A3 Mega machine types have NVIDIA H100 SXM GPUs")."""
    flat = " ".join(text.split())
    return {m.group("series"): (m.group("gpu"), m.group(0)) for m in _SXM.finditer(flat)}


def parse_capture(text: str, path: str) -> list[RawOffer]:
    """One RawOffer per machine type of a capture's tables, with the prose's series-wide facts,
    cited as the copy (``path``) of Google's page."""
    url = copy_url(path)
    prose = prose_claims(text, url)
    named = _gpu_texts(text)
    offers = []
    for row in machine_tables(text):
        try:
            offers.append(_offer(row, url, prose, named))
        except ParseError as exc:
            log.warning("Skipping gcp capture row %s: %s", row.instance_type, exc)
    return cite_copy(offers, original_of(path), copy_note(path))


def _offer(row: MachineRow, url: str, prose: list[Prose], named: dict[str, tuple[str, str]]) -> RawOffer:
    series = series_of(row.instance_type)
    if series is None:
        raise ParseError("no known machine series")
    count_text, memory_text = row.cell("GPU count"), row.cell("GPU memory")
    if count_text is None or memory_text is None:
        raise ParseError("no GPU count or GPU memory cell")
    count = parse_gpu_count(count_text)
    context = f"{row.instance_type} › "
    stated = Fraction(str(to_number(memory_text)))
    per_gpu = float(stated / count)  # a whole GPU's memory: what identifies the part
    # A fractional GPU's memory is its slice's, as the page states it (the catalog's rule for slices,
    # docs/schema.md); a whole GPU count shares the machine's memory out per GPU.
    memory, per = (float(stated), "the slice") if count < 1 else (round(per_gpu, 3), "per GPU")
    claims = [
        fact("gpu_count", float(count), quote=count_text, source_url=url, context=context + "GPU count"),
        fact(
            "gpu_memory_gb",
            memory,
            quote=memory_text,
            source_url=url,
            context=context + "GPU memory",
            qualifiers=f"{memory_text} GB for {count_text} GPU(s), {per}",
        ),
        _gpu(row, series, per_gpu, url, named),
    ]
    notes = []
    total, nics = row.cell("Maximum network bandwidth"), row.cell("Physical NIC count")
    fabrics = {
        p.claim.value
        for p in prose
        if p.claim.field == "inter_node_fabric" and _applies(p, row, series, count)
    }
    shares = False
    if total is not None:
        notes.append(TOTAL_NOTE.format(total=total, nics=nics or "not given"))
        claims += _total_claims(total, nics, series, fabrics, url, context, whole=count >= 1)
        tcpx = bool(fabrics & {Fabric.GPUDIRECT_TCPX, Fabric.GPUDIRECT_TCPXO})
        shares = tcpx or (not fabrics and (series in NO_GPU_NIC_SERIES or nics == "1"))
    claims += [p.claim for p in prose if _applies(p, row, series, count)]
    return RawOffer("gcp", row.instance_type, url, tuple(claims), tuple(notes), fabric_shares_frontend=shares)


def _applies(p: Prose, row: MachineRow, series: str, count: Fraction) -> bool:
    if series not in p.series or (p.only and row.instance_type not in p.only):
        return False
    return not (p.multi_gpu_only and count < 2)


def _gpu(row: MachineRow, series: str, per_gpu: float, url: str, named: dict[str, tuple[str, str]]) -> Claim:
    text, quote = named.get(series, (row.title, "Attached " + row.title))
    board = board_of("gcp", series)
    gpu = identify_gpu(text, memory_gb=per_gpu, form_factor=board.form_factor if board else None)
    return gpu_model_claim(gpu, quote=quote, source_url=url, context=f"{series} machine types")


def _total_claims(
    total: str,
    nics: str | None,
    series: str,
    fabrics: set[float | str],
    url: str,
    context: str,
    *,
    whole: bool = True,
) -> list[Claim]:
    """What the machine's total network bandwidth says: the GPU fabric's shared allowance for the
    GPUDirect-TCPX(O) types, the front end's figure where there are no GPU NICs, else nothing. A
    whole-GPU machine of a series Google sells without a GPU network (A2, G2, G4) has no other network
    between machines: its total is also the inter-node figure, as AWS's ENA-only rows have theirs."""
    if not re.fullmatch(r"[\d,]+", total):
        return []  # A3 Edge: "600: for asia-south1 ... / 400: for all other ...": per region, in the note
    bandwidth = parse_bandwidth(total, default_unit="Gbps")
    where = context + "Maximum network bandwidth (Gbps)"
    if fabrics & {Fabric.GPUDIRECT_TCPX, Fabric.GPUDIRECT_TCPXO}:
        claim = bandwidth_claim(
            "inter_node_gbits_per_s", bandwidth, quote=total, source_url=url, context=where
        )
        return [replace(claim, qualifiers="the machine's total, shared with the gVNIC (split not stated)")]
    if fabrics:
        return []  # RoCE: the total adds the gVNIC to the GPU NICs; only the prose splits it
    if series in NO_GPU_NIC_SERIES or nics == "1":
        why = "one physical NIC" if nics == "1" else "a series without GPU NICs"
        claim = bandwidth_claim("frontend_gbits_per_s", bandwidth, quote=total, source_url=url, context=where)
        found = [
            replace(
                claim, qualifiers=f"the machine's total network bandwidth; {why}, so all of it is front end"
            )
        ]
        if series in NO_GPU_NIC_SERIES and whole:
            inter = bandwidth_claim(
                "inter_node_gbits_per_s", bandwidth, quote=total, source_url=url, context=where
            )
            said = "the machine's total network bandwidth: no GPU network, the front end is its only one"
            found.append(replace(inter, qualifiers=said))
        return found
    return []
