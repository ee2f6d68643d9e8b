"""Oracle's shapes as SkyPilot's OCI offer lists publish them: rows for the shapes Oracle's shapes table
lacks, and every OCI GPU shape's price.

Two local copies, each a verbatim prefix of a SkyPilot OCI catalog (cited as the copies they are, with
SkyPilot's raw URL kept in their notes): the v6 file (5 GPU shapes priced) and the newer v8 file, whose
every availability-domain block repeats the same lines because OCI prices are global (BM.GPU.B300.8,
GB300.4, MI355X.8, RTXPRO.8 ...). Traps: AcceleratorName is ``GB200``/``GB300`` with count 4 per shape
(4 superchip GPUs, as Oracle's own "BM.GPU.GB200.4" says), and ``MemoryInfo.SizeInMiB`` is ONE GPU's
memory here (not the shape's). A price is per whole shape, in USD, as the file prints it; SpotPrice is
empty on bare-metal shapes (no spot price, never zero).
"""

from __future__ import annotations

import re
from dataclasses import replace

from normalize.boards import board_of
from normalize.gpus import family_of, identify_gpu
from normalize.vocab import Basis
from records.documents import DocumentSet, copy_url
from records.offers import RawOffer
from records.prices import Price
from scrapers.claims import fact
from scrapers.offer_lists.skypilot import CATALOGS
from scrapers.offer_lists.skypilot_catalog import MemoryReading, SkyPilotCatalog

V6_COPY = "reference/catalogs/skypilot-catalog/catalogs/v6/oci/vms.prefix.csv"
V8_COPY = (
    "reference/thirdparty-copies/raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/"
    "catalogs/v8/oci/vms.prefix.csv"
)
ORIGINALS = {V6_COPY: CATALOGS + "v6/oci/vms.csv", V8_COPY: CATALOGS + "v8/oci/vms.csv"}
# Newest first: the v8 list leads where both list a shape.
COPIES = (V8_COPY, V6_COPY)


def note_of(path: str) -> str:
    return (
        f"from a verbatim prefix of SkyPilot's OCI offer list {ORIGINALS[path]} (a local copy, cited as "
        "itself; the prefix holds the first availability-domain blocks only, and OCI prices are global)"
    )


def _reader(path: str) -> SkyPilotCatalog:
    """The offer-list reader for one copy (a local class: never a provider of the registry)."""

    class OciList(SkyPilotCatalog):
        name = "oci"
        title = "Oracle Cloud Infrastructure (SkyPilot offer list)"
        catalog_url = copy_url(path)
        memory_reading = MemoryReading.PER_GPU_MIB
        row_notes = (note_of(path),)

    return OciList()


_READERS = {path: _reader(path) for path in COPIES}


def offers_in(documents: DocumentSet) -> list[list[RawOffer]]:
    """The rows of every offer-list copy that was read, newest list first."""
    return [
        [with_board(offer) for offer in _READERS[path].read(text)[0]]
        for path in COPIES
        if (text := documents.optional_text(copy_url(path))) is not None
    ]


def prices_in(documents: DocumentSet) -> list[Price]:
    """Every OCI GPU price of the copies read; a shape and region both lists price is kept from v8."""
    seen: set[tuple[str, str]] = set()
    prices = []
    for path in COPIES:
        text = documents.optional_text(copy_url(path))
        if text is None:
            continue
        for price in _READERS[path].read(text)[1]:
            key = (price.instance_type, price.region)
            if key not in seen:
                seen.add(key)
                prices.append(price)
    return prices


def with_board(offer: RawOffer) -> RawOffer:
    """An offer-list row whose GPU gets the form factor of the shape's board (``normalize.boards``),
    inferred as every OCI row's is: the list names "H100", never "SXM"."""
    board = board_of("oci", offer.instance_type)
    model = next((c for c in offer.claims if c.field == "gpu_model"), None)
    memory = next((c for c in offer.claims if c.field == "gpu_memory_gb"), None)
    if board is None or model is None:
        return offer
    named = str(model.value).split("-")[0]
    gpu = identify_gpu(
        named, memory_gb=None if memory is None else float(memory.value), form_factor=board.form_factor
    )
    if gpu.id == model.value:
        return offer
    inferred = replace(
        model,
        value=gpu.id,
        basis=Basis.INFERRED,
        qualifiers=f"form factor {board.form_factor} from the board",
    )
    claims = tuple(inferred if c is model else c for c in offer.claims)
    return replace(offer, claims=claims, notes=(*offer.notes, board.note(offer.instance_type)))


_TEMPLATE_SHAPE = re.compile(r"'(?P<shape>BM\.GPU[\w.\-]*?\.(?P<count>\d+))' in nhc_node_shape")


def template_offers(text: str, url: str, listed: set[str]) -> list[RawOffer]:
    """Rows for the shapes only Oracle's health-check template names (``BM.GPU.GB200-v3.4``): GPU and
    count read from the shape's name (inferred, quoting the template line); a shape whose name names
    no GPU (``BM.GPU.B4.8``) is skipped, and so is one a shapes table or offer list already gives."""
    offers = []
    for line in text.splitlines():
        for match in _TEMPLATE_SHAPE.finditer(line):
            shape = match.group("shape")
            family = family_of(shape.replace("BM.GPU.", "").split(".")[0].split("-")[0])
            if shape in listed or family is None:
                continue
            listed.add(shape)
            board = board_of("oci", shape)
            gpu = identify_gpu(family, form_factor=board.form_factor if board else None)
            where = "oci.nhc.conf.j2 › shape branch"
            why = "read from the shape's name; the template names the shape, not its GPUs"
            claims = (
                fact(
                    "gpu_model",
                    gpu.id,
                    quote=line.strip(),
                    source_url=url,
                    context=where,
                    basis=Basis.INFERRED,
                    qualifiers=why,
                ),
                fact(
                    "gpu_count",
                    int(match.group("count")),
                    quote=line.strip(),
                    source_url=url,
                    context=where,
                    basis=Basis.INFERRED,
                    qualifiers="the shape name's trailing count",
                ),
            )
            note = (
                "listed only in Oracle's health-check template (no shapes table or offer list gives it): "
                "GPU and count inferred from its name"
            )
            offers.append(RawOffer("oci", shape, url, claims, (note,)))
    return offers


def supplement(leading: list[RawOffer], extra: list[list[RawOffer]]) -> list[RawOffer]:
    """Oracle's table leads; the offer lists add the claims of fields it leaves unstated, and rows for
    the shapes it lacks (as a live scrape's rows are supplemented by curated facts)."""
    rows = {offer.instance_type: offer for offer in leading}
    for offers in extra:
        for offer in offers:
            seen = rows.get(offer.instance_type)
            if seen is None:
                rows[offer.instance_type] = offer
                continue
            stated = {c.field for c in seen.claims}
            rows[offer.instance_type] = replace(
                seen, claims=(*seen.claims, *(c for c in offer.claims if c.field not in stated))
            )
    return list(rows.values())
