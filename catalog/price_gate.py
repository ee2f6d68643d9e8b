"""Prices guarded like fabric figures: no price lost, refused or jumped with exit 0.

A provider's fresh prices are held against its last good ones, per (instance type, region), before
they replace them:

- a price outside the plausible range is refused with its reason and never published: below
  ``MIN_USD_PER_GPU_HOUR`` or above ``MAX_USD_PER_GPU_HOUR`` per GPU-hour, for a row whose GPU count is
  known (the price / ``gpu_count``, so a fraction of a GPU is priced per whole GPU), or outside
  ``MIN_USD_PER_HOUR``-``MAX_USD_PER_HOUR`` for the instance as a whole; a price the parser could not
  read (negative, NaN, inf, 1e308, a key listed twice) is refused by the parser with its reason;
- a price the last good catalog had and the fresh parse lacks (refused, cut from a truncated file,
  or its row carried because the row could not be read) is carried: the last good price stays;
- a price that moved ``JUMP_FACTOR`` or more from its last good value, or from the value last
  accepted (the first one seen, or the one ``--accept-changes`` published), is held back: the last
  good price stays and the cause names the move (5 -> 35 -> 245 is caught at the second step);
- a price list that lost more than half of its prices is carried whole (``carry.carry_prices``).

Anything carried, held or refused makes the outcome ``carried`` and the refresh exit 1. With
``accept`` (``--accept-changes``) the fresh prices that pass the bounds are published as they are.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from catalog.carry import JUMP_FACTOR, MAX_NAMED, carry_prices
from records.prices import MAX_USD_PER_HOUR, Price

# Per GPU-hour, the real catalog runs from 0.05 (a V100 spot price) to 54 USD (a GB200 in brazilsouth).
MIN_USD_PER_GPU_HOUR = 0.01
MAX_USD_PER_GPU_HOUR = 200.0
# An instance whose GPU count is not known: the cheapest real one is 0.13 USD/h.
MIN_USD_PER_HOUR = 0.01

Key = tuple[str, str]  # (instance type, region)


@dataclass
class GatedPrices:
    """The prices to publish and what the gate did: refused (with the reason), carried, held back."""

    prices: list[Price]
    refused: list[str] = field(default_factory=list)  # "p5.48xlarge in us-east-1: ... (why)"
    carried: list[str] = field(default_factory=list)  # "p5.48xlarge in us-east-1"
    held: list[str] = field(default_factory=list)  # "p5.48xlarge in us-east-1 55.04 → 5504 USD/h (100x)"
    whole: str | None = None  # the list carried whole, and why

    def cause(self) -> str | None:
        """What the provider's outcome says about its prices, or None when they passed untouched."""
        if self.whole:
            return self.whole
        parts = []
        if self.refused:
            parts.append(f"{len(self.refused)} prices refused: {_named(self.refused, '; ')}")
        if self.carried:
            parts.append(f"{len(self.carried)} prices not in this parse, carried: {_named(self.carried)}")
        if self.held:
            parts.append(f"{len(self.held)} prices held back as suspect: {_named(self.held, '; ')}")
        return "; ".join(parts) or None


def _named(items: list[str], separator: str = ", ") -> str:
    shown = separator.join(items[:MAX_NAMED])
    return shown + (f" (+{len(items) - MAX_NAMED} more)" if len(items) > MAX_NAMED else "")


def implausible(price: Price, gpu_count: float | None) -> str | None:
    """Why a price is outside the plausible range (bounds stated), or None."""
    for kind, usd in (("on-demand", price.usd_per_hour), ("spot", price.spot_usd_per_hour)):
        if usd is None:
            continue
        if not math.isfinite(usd):
            return f"{kind} {usd!r} USD/h is not a number"
        if gpu_count is not None and gpu_count > 0:
            per_gpu = usd / gpu_count
            if not MIN_USD_PER_GPU_HOUR <= per_gpu <= MAX_USD_PER_GPU_HOUR:
                return (
                    f"{kind} {usd:g} USD/h is {per_gpu:.4g} USD per GPU-hour for {gpu_count:g} GPUs, "
                    f"outside {MIN_USD_PER_GPU_HOUR:g}-{MAX_USD_PER_GPU_HOUR:g}"
                )
        elif not MIN_USD_PER_HOUR <= usd <= MAX_USD_PER_HOUR:
            return f"{kind} {usd:g} USD/h is outside {MIN_USD_PER_HOUR:g}-{MAX_USD_PER_HOUR:g} USD/h"
    return None


def _group(prices: Iterable[Price]) -> dict[Key, list[Price]]:
    grouped: dict[Key, list[Price]] = {}
    for price in prices:
        grouped.setdefault((price.instance_type, price.region), []).append(price)
    return grouped


def _cheapest(prices: Iterable[Price], spot: bool) -> float | None:
    values = [p.spot_usd_per_hour if spot else p.usd_per_hour for p in prices]
    known = [v for v in values if v is not None and v > 0]
    return min(known) if known else None


def _jump(
    fresh: list[Price], last_good: list[Price], accepted: tuple[float | None, float | None] | None
) -> str | None:
    """How the fresh cheapest on-demand (or spot) price moved JUMP_FACTOR or more from the last good
    one, or from the one last accepted; None if it did not."""
    for spot, kind in ((False, "USD/h"), (True, "USD/h spot")):
        new, old = _cheapest(fresh, spot), _cheapest(last_good, spot)
        if new is None or old is None:
            continue
        if (ratio := max(new / old, old / new)) >= JUMP_FACTOR:
            return f"{old:g} → {new:g} {kind} ({ratio:.4g}x)"
        first = None if accepted is None else accepted[1 if spot else 0]
        if first and (ratio := max(new / first, first / new)) >= JUMP_FACTOR:
            return f"{old:g} → {new:g} {kind} ({ratio:.4g}x the last accepted {first:g})"
    return None


def gate_prices(
    fresh: list[Price],
    before: tuple[Price, ...],
    *,
    gpu_counts: Mapping[str, float | None],
    refused: Iterable[str] = (),
    carried_rows: Iterable[str] = (),
    accepted: Mapping[Key, tuple[float | None, float | None]] | None = None,
    accept: bool = False,
) -> GatedPrices:
    """The prices to publish from the ``fresh`` parse against the last good ``before`` prices.

    ``gpu_counts`` is each instance type's GPU count (the per-GPU bounds), ``refused`` the parser's
    own refusals (its skip warnings), ``carried_rows`` the rows carried whole (their prices go with
    them), ``accepted`` the (on-demand, spot) price last accepted per key.
    """
    result = GatedPrices([], refused=[r.removeprefix("Skipping ") for r in refused])
    plausible = []
    for price in fresh:
        why = implausible(price, gpu_counts.get(price.instance_type))
        if why is None:
            plausible.append(price)
        else:
            result.refused.append(f"{price.instance_type} in {price.region}: {why}")
    if accept:
        result.prices = plausible
        return result
    kept, whole = carry_prices(plausible, before)
    if whole:
        return GatedPrices(kept, whole=whole)
    carried_types = set(carried_rows)
    new = _group(p for p in plausible if p.instance_type not in carried_types)
    old = _group(before)
    for key, prices in new.items():
        last_good = old.get(key)
        moved = None if last_good is None else _jump(prices, last_good, (accepted or {}).get(key))
        if moved is not None and last_good is not None:
            result.held.append(f"{key[0]} in {key[1]} {moved}")
            result.prices += last_good
        else:
            result.prices += prices
    for key, prices in old.items():
        if key not in new:
            if key[0] not in carried_types:  # a carried row's prices go with it: its cause says so
                result.carried.append(f"{key[0]} in {key[1]}")
            result.prices += prices
    return result
