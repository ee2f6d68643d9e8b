"""No row or field lost in silence: what a fresh parse lacks, the last good catalog supplies.

A cell the parser cannot read, a page cut short or an empty family page drops rows or fields from
a provider's fresh parse; a unit swapped in a table header multiplies every figure under it. Before
the fresh rows are built, ``reconcile`` holds them against the provider's last good catalog:

- a row the catalog had and the parse lacks is carried whole: the last good row and its claims,
  marked stale with the cause (the parser's own skip warning when it names the row);
- a field a row had and the fresh row lacks keeps its last good claims, and the row is marked stale
  with the cause;
- a figure that moved by ``JUMP_FACTOR`` or more from its last good value (bits read as bytes, an
  SI prefix swapped) is held back as suspect: the last good claims stay and the cause names the
  figure that was not published;
- new rows, and figures that changed by less, are published as they are;
- a provider's prices, when the fresh ones are fewer than half of the last good ones, are the last
  good ones (``carry_prices``).

Only scraped claims are carried: a datasheet inference is recomputed from the GPU model, and a
curated fact removed from its file was removed by a person. With ``accept`` (``refresh
--accept-changes``, after a person has read the summary) the fresh parse is published as it is.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime

from normalize.vocab import Basis, Evidence
from records.offers import FIELD_UNITS, TEXT_FIELDS, Claim, InstanceOffer, RawOffer
from records.prices import Price

# 8x is a bits/bytes mix-up; 1000x an SI prefix. No provider revises one instance's figure that much.
JUMP_FACTOR = 8.0
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


def _jumped(claim: Claim, before: list[Claim]) -> float | None:
    """The last good figure a stated claim moved JUMP_FACTOR or more from, or None. A claim is held
    against the last good claims of its own document only: a second source that still agrees (a
    cross-check) does not hide a jump in the first, and a source new to this row disagreeing with an
    old one is a conflict, not a jump."""
    if claim.basis != Basis.STATED or float(claim.value) <= 0:
        return None
    old = [
        float(c.value)
        for c in before
        if c.source_url == claim.source_url and c.basis == Basis.STATED and float(c.value) > 0
    ]
    new = float(claim.value)
    if old and all(max(new / o, o / new) >= JUMP_FACTOR for o in old):
        return old[0]
    return None


def _held(
    fresh: dict[str, list[Claim]], last_good: dict[str, list[Claim]]
) -> dict[str, tuple[str, list[Claim]]]:
    """The numeric fields with fresh figures that jumped from their last good ones: field → (what
    moved, the claims held back)."""
    held = {}
    for name, claims in fresh.items():
        if name in TEXT_FIELDS or name not in last_good:
            continue
        jumps = [(claim, old) for claim in claims if (old := _jumped(claim, last_good[name])) is not None]
        if jumps:
            claim, old = jumps[0]
            new = float(claim.value)
            what = f"{name} {old:g} → {new:g} {FIELD_UNITS[name]} ({max(new / old, old / new):.4g}x)"
            held[name] = (what, [c for c, _ in jumps])
    return held


def _reconcile_row(raw: RawOffer, before: InstanceOffer, result: Reconciled) -> RawOffer:
    """One fresh row with its lost fields carried and its jumped figures held back."""
    fresh = _by_field(raw.claims)
    last_good = _by_field(tuple(c for c in before.claims if _carriable(c)))
    # A field is lost when the parse has no claim for it, or only inferred ones where the last good
    # catalog had the provider's own figure: a guess never replaces a stated value in silence.
    carried = [f for f in last_good if f not in fresh or (_stated(last_good[f]) and not _stated(fresh[f]))]
    held = _held(fresh, last_good)
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
        causes.append(f"held back as suspect (moved {JUMP_FACTOR:g}x or more): {'; '.join(moved)}")
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
    fresh: list[RawOffer], previous: dict[str, InstanceOffer], skipped: list[str], now: datetime
) -> Reconciled:
    """The fresh offers held against the previous rows (by instance type) of the same provider."""
    result = Reconciled(offers=[])
    for raw in fresh:
        before = previous.get(raw.instance_type)
        result.offers.append(raw if before is None else _reconcile_row(raw, before, result))
    listed = {raw.instance_type for raw in fresh}
    for name, before in previous.items():
        if name in listed or before.source_kind != "scraped":
            continue
        why = next((s for s in skipped if _names(s, name)), None)
        cause = "not in this refresh's parse" + (f" ({why})" if why else "")
        result.carried_rows.append(
            replace(before, stale=True, stale_since=_stale_since(before, now), stale_cause=cause)
        )
        result.carried_claims.update((name, c) for c in before.claims)
    return result


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
