"""AWS's Neuron architecture pages for Trainium: chips per instance, NeuronLink per chip, EFA per
instance, from AWS's own docs (aws-neuron/aws-neuron-sdk, CC BY-SA 4.0; the .rst sources of
https://awsdocs-neuron.readthedocs-hosted.com/).

``trn2-arch.rst`` has one reStructuredText list-table for trn2.48xlarge / trn2u.48xlarge (one column for
both) and the Trn2 UltraServer: "# of Trainium2 chips" 16, "Device Memory (GiB)" 1,536, "Intra-instance
NeuronLink-v3 bandwidth (GB/sec/chip)" 1,024, "EFAv3 bandwidth (Gbps)" 3,200. ``trn1-arch.rst`` has one
row per instance size; its rows hold one cell more than its header (an unlabelled column before the
last): that cell is ignored and the last cell read as the last header's, "EFA bandwidth (Gbps)". The
chips form a 2D torus ("a 4x4, 2D Torus topology"): a NeuronLink torus, not an NVSwitch. Trap: the
Trainium2 chip page states "NeuronLink-v3 ... 1.28 TB/sec bandwidth per chip" while trn2-arch says
1,024 GB/s intra-instance per chip; they measure different things and both claims are kept. Neither
page says whether a figure is one-way or two-way; the claims say so.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from normalize.errors import LayoutError
from normalize.gpus import identify_gpu
from normalize.units import parse_bandwidth, parse_memory_gb, to_number
from normalize.vocab import Fabric, Link
from records.documents import DocumentSet
from records.offers import Claim, RawOffer
from scrapers.claims import bandwidth_claim, fact, gpu_model_claim

log = logging.getLogger(__name__)

DOCS = "https://raw.githubusercontent.com/aws-neuron/aws-neuron-sdk/master/about-neuron/arch/neuron-hardware/"
TRN2 = DOCS + "trn2-arch.rst"
TRN1 = DOCS + "trn1-arch.rst"
TRAINIUM2 = DOCS + "trainium2.rst"
URLS = (TRN2, TRN1, TRAINIUM2)
DIRECTION = "per chip; the page does not say one-way or two-way"
NOTE = "Trainium: chips counted as the row's GPUs (gpu_count), their NeuronLink torus as its link"


@dataclass(frozen=True)
class ListTable:
    """A reStructuredText list-table: its header cells and rows, each row's text as printed."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


def list_tables(text: str) -> list[ListTable]:
    """Every ``.. list-table::`` with ``:header-rows: 1`` in an .rst text."""
    tables = []
    for block in re.split(r"(?m)^\.\. list-table::", text)[1:]:
        body = re.split(r"(?m)^\S", block, maxsplit=1)[0]  # up to the next unindented line
        rows: list[list[str]] = []
        for line in body.splitlines():
            if m := re.match(r"^\s*\*\s+-\s*(.*)$", line):
                rows.append([m.group(1).strip()])
            elif (m := re.match(r"^\s+-\s*(.*)$", line)) and rows:
                rows[-1].append(m.group(1).strip())
        if len(rows) > 1:
            tables.append(ListTable(tuple(rows[0]), tuple(tuple(r) for r in rows[1:])))
    return tables


def _cell_quote(header: str, value: str) -> str:
    return f"- {header}\n- {value}"


def _rows_by_header(table: ListTable) -> dict[str, dict[str, str]]:
    """Column-per-instance table (trn2): {column header: {row label: cell}}."""
    columns = {}
    for at, header in enumerate(table.headers[1:], start=1):
        columns[header] = {row[0]: row[at] for row in table.rows if len(row) > at}
    return columns


def trn2_offers(text: str) -> list[RawOffer]:
    tables = list_tables(text)
    table = next((t for t in tables if "trn2.48xlarge / trn2u.48xlarge" in t.headers), None)
    if table is None:
        raise LayoutError(f"{TRN2}: no list-table with a 'trn2.48xlarge / trn2u.48xlarge' column")
    column = _rows_by_header(table)["trn2.48xlarge / trn2u.48xlarge"]
    flat = " ".join(text.split())
    claims: list[Claim] = []
    where = "Trn2 instance specifications"
    chips = column.get("# of Trainium2 chips")
    if chips is not None:
        quote = f"# of Trainium2 chips {chips}"
        claims += [
            fact("gpu_count", to_number(chips), quote=chips, source_url=TRN2, context=f"{where} › {quote}"),
            gpu_model_claim(identify_gpu("Trainium2"), quote="16 Trainium2 chips", source_url=TRN2),
        ]
        memory = column.get("Device Memory (GiB)")
        if memory is not None:
            per_chip = parse_memory_gb(f"{to_number(memory) / to_number(chips):g} GiB")
            claims.append(
                fact(
                    "gpu_memory_gb",
                    per_chip,
                    quote=memory,
                    source_url=TRN2,
                    context=f"{where} › Device Memory (GiB)",
                    qualifiers=f"per chip: {memory} GiB / {chips} chips",
                )
            )
    if torus := re.search(r"16 Trainium2 chips are connected using a 4x4, 2D Torus topology", flat):
        claims.append(
            fact("intra_node_link", Link.NEURONLINK_TORUS.value, quote=torus.group(0), source_url=TRN2)
        )
    link = column.get("Intra-instance NeuronLink-v3 bandwidth (GB/sec/chip)")
    if link is not None:
        bandwidth = parse_bandwidth(f"{link} GB/s")
        claim = bandwidth_claim(
            "intra_node_gbytes_per_s",
            bandwidth,
            quote=link,
            source_url=TRN2,
            context=f"{where} › Intra-instance NeuronLink-v3 bandwidth (GB/sec/chip)",
            extra_qualifiers=DIRECTION,
        )
        claims.append(claim)
    efa = column.get("EFAv3 bandwidth (Gbps)")
    if efa is not None:
        claims += [
            fact(
                "inter_node_fabric",
                Fabric.EFA.value,
                quote="EFAv3 bandwidth (Gbps)",
                source_url=TRN2,
                context=where,
            ),
            bandwidth_claim(
                "inter_node_gbits_per_s",
                parse_bandwidth(f"{efa} Gbps"),
                quote=efa,
                source_url=TRN2,
                context=f"{where} › EFAv3 bandwidth (Gbps)",
                extra_qualifiers="per instance",
            ),
        ]
    offers = [
        RawOffer("aws", name, TRN2, tuple(claims), (NOTE,)) for name in ("trn2.48xlarge", "trn2u.48xlarge")
    ]
    ultra = re.search(
        r"A Trn2 UltraServer comprises four trn2u\.48xlarge instances connected together via the "
        r"NeuronLink-v3 chip-to-chip interconnect\. This allows for a total of (?P<chips>\d+) Trainium2 "
        r"chips "
        r"to be interconnected",
        flat,
    )
    if ultra is not None:
        domain = fact(
            "scale_up_domain_gpus",
            int(ultra.group("chips")),
            quote=ultra.group(0),
            source_url=TRN2,
            context="Trn2 UltraServer",
            qualifiers="four trn2u.48xlarge joined by NeuronLink-v3 (a ring across instances)",
        )
        note = (
            "the Trn2 UltraServer (64 chips, four trn2u.48xlarge) is the NeuronLink domain; "
            "the Neuron pages name no instance type for it"
        )
        offers[1] = RawOffer("aws", "trn2u.48xlarge", TRN2, (*claims, domain), (NOTE, note))
    return offers


def trn1_offers(text: str) -> list[RawOffer]:
    table = next((t for t in list_tables(text) if t.headers[:1] == ("Instance size",)), None)
    if table is None:
        raise LayoutError(f"{TRN1}: no list-table headed 'Instance size'")
    flat = " ".join(text.split())
    torus = re.search(
        r"In a Trn1/Trn1n server, the Trainium chips are connected in a 2D Torus topology", flat
    )
    offers = []
    for row in table.rows:
        cells = dict(zip(table.headers[:-1], row[:-1], strict=False))
        cells[table.headers[-1]] = row[
            -1
        ]  # rows hold one unlabelled cell more: the last is the last header's
        name = row[0].lower()
        chips = to_number(cells["# of Trainium chips"])
        where = f"Trn1/Trn1n table › {row[0]}"
        claims = [
            fact("gpu_count", chips, quote=cells["# of Trainium chips"], source_url=TRN1, context=where),
            gpu_model_claim(identify_gpu("Trainium"), quote="Trainium chips", source_url=TRN1, context=where),
        ]
        if chips > 1 and torus is not None:
            claims.append(
                fact("intra_node_link", Link.NEURONLINK_TORUS.value, quote=torus.group(0), source_url=TRN1)
            )
        efa = cells.get("EFA bandwidth (Gbps)", "")
        if chips > 1 and re.fullmatch(r"[\d,]+", efa):
            claims += [
                fact(
                    "inter_node_fabric",
                    Fabric.EFA.value,
                    quote="EFA bandwidth (Gbps)",
                    source_url=TRN1,
                    context=where,
                ),
                bandwidth_claim(
                    "inter_node_gbits_per_s",
                    parse_bandwidth(f"{efa} Gbps"),
                    quote=efa,
                    source_url=TRN1,
                    context=f"{where} › EFA bandwidth (Gbps)",
                    extra_qualifiers="per instance",
                ),
            ]
        notes = (NOTE, "the Trn1 table's rows hold one cell under no header (ignored)")
        offers.append(RawOffer("aws", name, TRN1, tuple(claims), notes))
    return offers


def chip_claims(text: str) -> list[Claim]:
    """The Trainium2 chip page's NeuronLink figure (the chip's total), beside trn2-arch's per-chip one."""
    flat = " ".join(text.split())
    match = re.search(r"NeuronLink-v3[^.]{0,120}?(?P<bw>[\d.]+ TB/sec) bandwidth per chip", flat)
    if match is None:
        log.warning("aws: no NeuronLink-v3 figure on the Trainium2 chip page")
        return []
    bandwidth = parse_bandwidth(match.group("bw").replace("TB/sec", "TB/s"))
    return [
        bandwidth_claim(
            "intra_node_gbytes_per_s",
            bandwidth,
            quote=match.group(0),
            source_url=TRAINIUM2,
            context="Trainium2 chip page",
            extra_qualifiers=f"{DIRECTION}; the chip's NeuronLink total",
        )
    ]


def neuron_offers(documents: DocumentSet) -> list[RawOffer]:
    """The Trainium rows the Neuron pages give (trn2 with the chip page's NeuronLink claim)."""
    offers: list[RawOffer] = []
    trn2, trn1 = documents.optional_text(TRN2), documents.optional_text(TRN1)
    chip = documents.optional_text(TRAINIUM2)
    if trn2 is not None:
        extra = [] if chip is None else chip_claims(chip)
        offers += [
            RawOffer(o.provider, o.instance_type, o.source_url, (*o.claims, *extra), o.notes)
            for o in trn2_offers(trn2)
        ]
    if trn1 is not None:
        offers += trn1_offers(trn1)
    return offers


def add_to(offers: list[RawOffer], neuron: list[RawOffer]) -> list[RawOffer]:
    """``offers`` with the Neuron pages' claims after the first offer of each type they describe, and
    their types the offers lack; a type the page lists twice stays listed twice (a conflict to flag)."""
    pending = {offer.instance_type: offer for offer in neuron}
    result = []
    for offer in offers:
        extra = pending.pop(offer.instance_type, None)
        if extra is not None:
            notes = (*offer.notes, *(n for n in extra.notes if n not in offer.notes))
            offer = RawOffer(
                offer.provider,
                offer.instance_type,
                offer.source_url,
                (*offer.claims, *extra.claims),
                notes,
                offer.fabric_shares_frontend,
                offer.source_kind,
                offer.identity,
            )
        result.append(offer)
    return result + list(pending.values())
