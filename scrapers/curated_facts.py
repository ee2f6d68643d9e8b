"""Curated facts: a small reviewed data file per provider, for what no fetchable page states.

Some providers publish specs only in JavaScript-rendered pages, or not at all; some pages cannot be
fetched here. ``scrapers/curated/<provider>.toml`` holds facts a person read in a published source,
each with the URL where it was read, what it says and the date it was read. No stored copy of that
source backs the words, so a curated claim is a paraphrase (evidence ``paraphrase``, basis
``paraphrased``, or ``inferred`` where the fact derives a value, e.g. a GPU count from a machine-type
name), never ``stated``: the app says "paraphrased from" its URL. The text of each fact goes through
the same normalize/ parsers as scraped text, so units and GPU names are handled once. A live scrape
supersedes curated facts: scraped claims win field by field, curated rows stand alone only for
instance types the scrape does not list.

File layout::

    provider = "lambda"
    reviewed_on = 2026-12-02

    [defaults]                                 # optional: keys every fact takes unless it sets them
    url = "https://..."
    read_on = 2026-12-02

    [[instance]]
    instance_type = "gpu_8x_a100"
    source_url = "https://..."                 # the page the row mainly rests on
    fabric_shares_frontend = true              # optional: the fabric figure includes the front end

    [[instance.fact]]
    field = "inter_node_gbits_per_s"           # an instances column (catalog.models.FIELD_UNITS)
    text = "up to 200 Gbps"                    # parsed by normalize/
    quote = "... can be up to 200 Gbps."        # what the source says (a paraphrase unless stored)
    url = "https://..."                        # where it was read
    read_on = 2026-12-02
    basis = "inferred"                         # optional: a value derived, not read (default paraphrased)
    local_copy = "reference/lambda/..."        # optional: path under ../shared, checked by tests
    board_family = "A3 High"                   # gpu_model only: the family's board (normalize.boards)
    note = "..."                               # optional: becomes a row note
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import replace
from datetime import date
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from normalize.boards import BOARD_TABLE, Board, board_of
from normalize.errors import ParseError
from normalize.gpus import identify_gpu
from normalize.units import parse_bandwidth, parse_gpu_count, parse_memory_gb, to_number
from normalize.vocab import Basis, Evidence, Fabric, fabric_from_text, link_from_text
from records.offers import FIELD_UNITS, Claim, RawOffer
from scrapers.claims import bandwidth_claim, fact

COUNT_FIELDS = ("nic_count", "frontend_nic_count", "scale_up_domain_gpus")
REQUIRED_KEYS = ("field", "text", "quote", "url", "read_on")


def curated_file(provider: str) -> Traversable | None:
    """The provider's curated data file (a Traversable), or None."""
    path = resources.files("scrapers").joinpath("curated", f"{provider}.toml")
    return path if path.is_file() else None


def load(provider: str) -> list[RawOffer]:
    """The curated RawOffers of ``provider`` ([] when it has no file). ParseError on a bad file."""
    path = curated_file(provider)
    return [] if path is None else list(_parsed(path.read_text(encoding="utf-8"), provider))


@functools.lru_cache(maxsize=64)
def _parsed(text: str, provider: str) -> tuple[RawOffer, ...]:
    """A curated file is parsed once per content (refreshes in one process reuse it)."""
    return tuple(parse_curated(text, provider))


def parse_curated(text: str, provider: str) -> list[RawOffer]:
    """RawOffers from the text of a curated file (pure). ParseError naming what is wrong."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ParseError(f"curated/{provider}.toml: {exc}") from None
    if data.get("provider") != provider:
        raise ParseError(f"curated/{provider}.toml declares provider {data.get('provider')!r}")
    defaults, instances = data.get("defaults", {}), data.get("instance", [])
    if not isinstance(defaults, dict) or not isinstance(instances, list):
        raise ParseError(f"curated/{provider}.toml: [defaults] must be a table and [[instance]] a list")
    return [_offer(provider, entry, defaults) for entry in instances]


def _offer(provider: str, entry: Any, defaults: dict[str, Any]) -> RawOffer:
    where = f"curated/{provider}.toml"
    if not isinstance(entry, dict) or not isinstance(entry.get("fact", []), list):
        raise ParseError(f"{where}: an [[instance]] must be a table with a list of facts")
    name, source_url = entry.get("instance_type"), entry.get("source_url")
    if not isinstance(name, str) or not name or not isinstance(source_url, str) or not source_url:
        raise ParseError(f"{where}: an instance lacks instance_type or source_url")
    if not all(isinstance(item, dict) for item in entry.get("fact", [])):
        raise ParseError(f"{where} {name}: every fact must be a table")
    facts = [{**defaults, **item} for item in entry.get("fact", [])]
    claims, notes = [], []
    try:
        memory = next((f for f in facts if f.get("field") == "gpu_memory_gb"), None)
        memory_gb = parse_memory_gb(str(memory["text"])) if memory else None
        for index, item in enumerate(facts, 1):
            missing = [k for k in REQUIRED_KEYS if k not in item]
            if missing:
                raise ParseError(f"fact {index} lacks {', '.join(missing)}")
            claims.append(_claim(provider, item, memory_gb))
            if item.get("board_family"):
                notes.append(_board(provider, item).note(str(item["board_family"])))
            if item.get("note"):
                notes.append(str(item["note"]))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a value of the wrong kind
        raise ParseError(f"{where} {name}: {type(exc).__name__}: {exc}") from None
    return RawOffer(
        provider=provider,
        instance_type=name,
        source_url=source_url,
        claims=tuple(claims),
        notes=tuple(notes),
        fabric_shares_frontend=entry.get("fabric_shares_frontend") is True,
        source_kind="curated",
    )


def _board(provider: str, item: dict[str, Any]) -> Board:
    """The board of a gpu_model fact's ``board_family``; ParseError if the table has no such family."""
    board = board_of(provider, str(item["board_family"]))
    if board is None:
        raise ParseError(f"no {provider} family {item['board_family']!r} in {BOARD_TABLE}")
    return board


def _claim(provider: str, item: dict[str, Any], memory_gb: float | None) -> Claim:
    """One fact's text through normalize/, into a claim in the unit its field names."""
    field, text = item["field"], str(item["text"])
    if field not in FIELD_UNITS:
        raise ParseError(f"unknown field {field!r}")
    basis = Basis(item.get("basis", Basis.PARAPHRASED))
    if field == "gpu_model" and item.get("board_family"):
        basis = Basis.INFERRED  # the form factor is the family's board, not stated
    if basis not in (Basis.PARAPHRASED, Basis.INFERRED):
        raise ParseError(f"a curated fact is paraphrased or inferred, not {basis}")
    common = {
        "quote": item["quote"],
        "source_url": item["url"],
        "context": str(item.get("context", "curated")),
    }
    qualifiers = str(item.get("qualifiers", ""))
    if field.endswith(("_gbits_per_s", "_gbytes_per_s")):
        claim = bandwidth_claim(field, parse_bandwidth(text), extra_qualifiers=qualifiers, **common)
    else:
        claim = fact(field, _value(provider, field, text, item, memory_gb), qualifiers=qualifiers, **common)
    read_on = item["read_on"]
    return replace(
        claim,
        basis=basis,
        evidence=Evidence.PARAPHRASE,
        read_on=read_on if isinstance(read_on, date) else date.fromisoformat(str(read_on)),
    )


def _value(
    provider: str, field: str, text: str, item: dict[str, Any], memory_gb: float | None
) -> float | str:
    if field == "gpu_model":
        form = _board(provider, item).form_factor if item.get("board_family") else None
        return identify_gpu(text, memory_gb=memory_gb, form_factor=form).id
    if field == "gpu_count":
        return float(parse_gpu_count(text))
    if field == "gpu_memory_gb":
        return parse_memory_gb(text)
    if field == "intra_node_link":
        link = link_from_text(text)
        if link is None:
            raise ParseError(f"no link named in {text!r}")
        return link.value
    if field == "inter_node_fabric":
        fabric = Fabric(text) if text in {f.value for f in Fabric} else fabric_from_text(text)
        if fabric is None:
            raise ParseError(f"no fabric named in {text!r}")
        return fabric.value
    if field in COUNT_FIELDS:
        return to_number(text)
    raise ParseError(f"field {field!r} cannot be curated")


def merge(scraped: list[RawOffer], curated: list[RawOffer]) -> list[RawOffer]:
    """Scraped offers with curated claims for the fields the scrape leaves unstated, then the
    curated offers for instance types the scrape does not list. A curated offer that names no GPU
    only supplements a scraped row; without one it is dropped."""
    by_type = {offer.instance_type: offer for offer in curated}
    merged = []
    for offer in scraped:
        extra = by_type.pop(offer.instance_type, None)
        if extra is not None:
            stated = {c.field for c in offer.claims}
            offer = replace(
                offer,
                claims=(*offer.claims, *(c for c in extra.claims if c.field not in stated)),
                notes=tuple(dict.fromkeys((*offer.notes, *extra.notes))),
            )
        merged.append(offer)
    alone = [o for o in by_type.values() if any(c.field == "gpu_model" for c in o.claims)]
    return merged + alone
