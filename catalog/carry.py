"""No row or field lost in silence: what a fresh parse lacks, the last good catalog supplies.

A cell the parser cannot read, a page cut short or an empty family page drops rows or fields from
a provider's fresh parse; a unit swapped in a table header multiplies every figure under it. Before
the fresh rows are built, ``reconcile`` holds them against the provider's last good catalog:

- a row the catalog had and the parse lacks is carried whole: the last good row and its claims,
  marked stale with the cause (the parser's own skip warning when it names the row);
- a field a row had and the fresh row lacks keeps its last good claims, and the row is marked stale
  with the cause;
- a figure that moved by ``JUMP_FACTOR`` or more (a count: ``COUNT_JUMP_FACTOR``) from its last
  good value or from its last accepted one (bits read as bytes, an SI prefix swapped, 8 GPUs read
  as 32, or a figure creeping up under the factor refresh after refresh) is held back as suspect:
  the last good claims stay and the cause names the figure that was not published;
- new rows, and figures that changed by less, are published as they are;
- a provider's prices, when the fresh ones are fewer than half of the last good ones, are the last
  good ones (``carry_prices``); the rest of the price rules are in ``catalog.price_gate``.

Only scraped claims are carried: a datasheet inference is recomputed from the GPU model, and a
curated fact removed from its file was removed by a person. With ``accept`` (``refresh
--accept-changes``, after a person has read the summary) the fresh parse is published as it is.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime

from normalize.vocab import Basis, Evidence
from records.offers import FIELD_UNITS, TEXT_FIELDS, Claim, InstanceOffer, RawOffer
from records.prices import Price

# 8x is a bits/bytes mix-up; 1000x an SI prefix. No provider revises one instance's figure that much.
JUMP_FACTOR = 8.0
# An instance type is defined by its counts: 8 GPUs read as 32 cut the price per GPU 4x.
COUNT_FIELDS = frozenset({"gpu_count", "nic_count", "frontend_nic_count", "scale_up_domain_gpus"})
COUNT_JUMP_FACTOR = 2.0
MAX_NAMED = 3  # how many rows or figures a cause names before "(+N more)"


@dataclass
class Reconciled:
    """A fresh parse held against the last good catalog: the offers to build (with carried and held
    claims added), the rows carried whole, and why each row is stale."""

    offers: list[RawOffer]
    carried_rows: list[InstanceOffer] = field(default_factory=list)
    row_causes: dict[str, str] = field(default_factory=dict)
    fields_carried: int = 0
    fields_held: int = 0
    carried: list[str] = field(default_factory=list)  # "p5.48xlarge: inter_node_gbits_per_s, nic_count"
    held: list[str] = field(default_factory=list)  # "g4dn.xlarge frontend_gbits_per_s 25 → 25000 Gbit/s"
    carried_claims: set[tuple[str, Claim]] = field(default_factory=set)  # (instance type, claim)

    @property
    def rows_carried(self) -> int:
        return len(self.carried_rows)

    def cause(self) -> str | None:
        """What the provider's outcome says: how much was carried or held, naming examples."""
        parts = []
        if self.carried_rows:
            names = _named([o.instance_type for o in self.carried_rows])
            parts.append(f"{self.rows_carried} rows not in this parse, carried: {names}")
        if self.fields_carried:
            parts.append(
                f"{self.fields_carried} fields not in this parse, carried: {_named(self.carried, '; ')}"
            )
        if self.fields_held:
            parts.append(f"{self.fields_held} figures held back as suspect: {_named(self.held, '; ')}")
        return "; ".join(parts) or None

    def mark(self, offer: InstanceOffer, now: datetime, previous: dict[str, InstanceOffer]) -> InstanceOffer:
        """A freshly built row, marked stale if some of its fields were carried or held."""
        cause = self.row_causes.get(offer.instance_type)
        if cause is None:
            return offer
        return replace(
            offer,
            stale=True,
            stale_since=_stale_since(previous.get(offer.instance_type), now),
            stale_cause=cause,
        )


def _named(items: list[str], separator: str = ", ") -> str:
    shown = separator.join(items[:MAX_NAMED])
    return shown + (f" (+{len(items) - MAX_NAMED} more)" if len(items) > MAX_NAMED else "")


def _stale_since(previous: InstanceOffer | None, now: datetime) -> datetime:
    return previous.stale_since if previous is not None and previous.stale and previous.stale_since else now


def _carriable(claim: Claim) -> bool:
    """A claim the scrape made: stated or inferred by the parser. Curated claims are not (they come from
    their reviewed file every time), nor are datasheet values: build_offer recomputes those from the GPU
    table whatever the field, so the claim's evidence decides, not a list of fields."""
    if claim.read_on is not None or claim.basis not in (Basis.STATED, Basis.INFERRED):
        return False
    return claim.evidence != Evidence.DATASHEET


def _by_field(claims: tuple[Claim, ...]) -> dict[str, list[Claim]]:
    grouped: dict[str, list[Claim]] = {}
    for claim in claims:
        grouped.setdefault(claim.field, []).append(claim)
    return grouped


def _factor(name: str) -> float:
    return COUNT_JUMP_FACTOR if name in COUNT_FIELDS else JUMP_FACTOR


def _moved(new: float, old: list[float], factor: float) -> bool:
    return bool(old) and all(o > 0 and max(new / o, o / new) >= factor for o in old)


def _jumped(claim: Claim, before: list[Claim], accepted: tuple[float, ...] = ()) -> tuple[float, str] | None:
    """The last good (or last accepted) figure a stated claim moved its field's factor or more from,
    and which it was; or None. A claim is held against the last good claims of its own document only:
    a second source that still agrees (a cross-check) does not hide a jump in the first, and a source
    new to this row disagreeing with an old one is a conflict, not a jump. The last accepted values
    (the first published, or those ``--accept-changes`` took) catch a figure that creeps up under the
    factor refresh after refresh (5 → 35 → 245)."""
    if claim.basis != Basis.STATED or float(claim.value) <= 0:
        return None
    old = [
        float(c.value)
        for c in before
        if c.source_url == claim.source_url and c.basis == Basis.STATED and float(c.value) > 0
    ]
    new, factor = float(claim.value), _factor(claim.field)
    if _moved(new, old, factor):
        return old[0], "last good"
    if old and _moved(new, list(accepted), factor):
        return accepted[0], "last accepted"
    return None


def _held(
    fresh: dict[str, list[Claim]],
    last_good: dict[str, list[Claim]],
    accepted: Mapping[tuple[str, str], tuple[float, ...]],
) -> dict[str, tuple[str, list[Claim]]]:
    """The numeric fields with fresh figures that jumped from their last good (or last accepted)
    ones: field → (what moved, the claims held back)."""
    held = {}
    for name, claims in fresh.items():
        if name in TEXT_FIELDS or name not in last_good:
            continue
        jumps = [
            (claim, moved)
            for claim in claims
            if (moved := _jumped(claim, last_good[name], accepted.get((name, claim.source_url), ())))
            is not None
        ]
        # A document that still states the last good figure beside a new one (a row listed twice)
        # is a conflict, flagged as such, not a jump.
        steady = {c.source_url for c in claims if c.basis == Basis.STATED and c not in {j for j, _ in jumps}}
        jumps = [(claim, moved) for claim, moved in jumps if claim.source_url not in steady]
        if jumps:
            claim, (reference, which) = jumps[0]
            new = float(claim.value)
            ratio = f"{max(new / reference, reference / new):.4g}x"
            if which == "last good":
                what = f"{name} {reference:g} → {new:g} {FIELD_UNITS[name]} ({ratio})"
            else:
                last = next(float(c.value) for c in last_good[name] if c.source_url == claim.source_url)
                what = f"{name} {last:g} → {new:g} {FIELD_UNITS[name]} ({ratio} the {which} {reference:g})"
            held[name] = (what, [c for c, _ in jumps])
    return held


def _reconcile_row(
    raw: RawOffer,
    before: InstanceOffer,
    result: Reconciled,
    accepted: Mapping[tuple[str, str], tuple[float, ...]],
) -> RawOffer:
    """One fresh row with its lost fields carried and its jumped figures held back."""
    fresh = _by_field(raw.claims)
    last_good = _by_field(tuple(c for c in before.claims if _carriable(c)))
    # A field is lost when the parse has no claim for it, or only inferred ones where the last good
    # catalog had the provider's own figure: a guess never replaces a stated value in silence.
    carried = [f for f in last_good if f not in fresh or (_stated(last_good[f]) and not _stated(fresh[f]))]
    held = _held(fresh, last_good, accepted)
    if not carried and not held:
        return raw
    dropped = [c for _, claims in held.values() for c in claims]
    sources = {(c.field, c.source_url) for c in dropped}
    restored = [c for f in carried for c in last_good[f]]
    restored += [c for f in held for c in last_good[f] if (f, c.source_url) in sources]
    causes = []
    if carried:
        causes.append(f"carried from the last good catalog (not in this parse): {', '.join(carried)}")
        result.carried.append(f"{raw.instance_type}: {', '.join(carried)}")
    if held:
        moved = [what for what, _ in held.values()]
        counts = f", a count {COUNT_JUMP_FACTOR:g}x" if COUNT_FIELDS & held.keys() else ""
        causes.append(f"held back as suspect (moved {JUMP_FACTOR:g}x{counts} or more): {'; '.join(moved)}")
        result.held += [f"{raw.instance_type} {what}" for what in moved]
    result.row_causes[raw.instance_type] = "; ".join(causes)
    result.fields_carried += len(carried)
    result.fields_held += len(held)
    result.carried_claims.update((raw.instance_type, c) for c in restored)
    kept = (c for c in raw.claims if c not in dropped and c.field not in carried)
    return replace(raw, claims=(*kept, *restored))


def _stated(claims: list[Claim]) -> bool:
    return any(c.basis == Basis.STATED for c in claims)


def reconcile(
    fresh: list[RawOffer],
    previous: Mapping[str, InstanceOffer],
    skipped: list[str],
    now: datetime,
    accepted: Mapping[str, Mapping[tuple[str, str], tuple[float, ...]]] | None = None,
) -> Reconciled:
    """The fresh offers held against the previous rows (by instance type) of the same provider, and
    against the values last accepted (per instance type, per (field, source URL))."""
    result = Reconciled(offers=[])
    listed = set()
    for raw in fresh:
        before = previous.get(raw.instance_type)
        if before is not None and _lost_its_own_page(raw, before):
            continue  # carried whole below: another document never stands in for the row's own page
        listed.add(raw.instance_type)
        kept = (accepted or {}).get(raw.instance_type, {})
        result.offers.append(raw if before is None else _reconcile_row(raw, before, result, kept))
    parsed = {raw.instance_type for raw in fresh}
    for name, before in previous.items():
        if name in listed or before.source_kind != "scraped":
            continue
        why = next((s for s in skipped if _names(s, name)), None)
        cause = "not in this refresh's parse" + (f" ({why})" if why else "")
        if name in parsed:
            cause = f"not in this refresh's parse of {before.source_url}" + (f" ({why})" if why else "")
        result.carried_rows.append(
            replace(before, stale=True, stale_since=_stale_since(before, now), stale_cause=cause)
        )
        result.carried_claims.update((name, c) for c in before.claims)
    return result


def _lost_its_own_page(raw: RawOffer, before: InstanceOffer) -> bool:
    """Whether the document a row was read from (its ``source_url``: the provider's own page) says
    nothing of it in this parse while another document (a third-party copy) still does."""
    own = before.source_url
    return (
        before.source_kind == "scraped"
        and raw.source_url != own
        and any(c.source_url == own for c in before.claims)
        and not any(c.source_url == own for c in raw.claims)
    )


def carry_prices(fresh: list[Price], before: tuple[Price, ...]) -> tuple[list[Price], str | None]:
    """The fresh prices, or, when they lost more than half of the last good ones (a price file that
    could not be fetched, or one that now reads as a handful), the last good ones and why: a price
    list is carried whole, as one document gives it, not price by price."""
    if not before or len(fresh) >= len(before) / 2:
        return fresh, None
    why = f"{len(fresh)} prices against {len(before)} before: the last good {len(before)} carried"
    return list(before), why


def _names(message: str, instance_type: str) -> bool:
    """Whether a skip warning is about this instance type (as a whole word)."""
    at = message.find(instance_type)
    while at != -1:
        end = at + len(instance_type)
        before_ok = at == 0 or not (message[at - 1].isalnum() or message[at - 1] in "._-")
        after_ok = end == len(message) or not (message[end].isalnum() or message[end] in "._-")
        if before_ok and after_ok:
            return True
        at = message.find(instance_type, at + 1)
    return False


MAX_SKIP_CHARS = 200


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("Skipping"):
            self.messages.append(
                message if len(message) <= MAX_SKIP_CHARS else message[:MAX_SKIP_CHARS] + "…"
            )


@contextmanager
def skipped_rows() -> Iterator[list[str]]:
    """The parsers' "Skipping <provider> row <name>: <why>" warnings (scrapers/ logs one per row it
    cannot read) while the block runs: the causes of the rows a parse lost."""
    handler = _Collect()
    logger = logging.getLogger("scrapers")
    logger.addHandler(handler)
    try:
        yield handler.messages
    finally:
        logger.removeHandler(handler)
