"""Prices: what one offer costs per hour in one region, as its source publishes it."""

from __future__ import annotations

import math
from dataclasses import dataclass

from normalize.errors import InvalidOffer
from records.documents import COPY_SCHEME

# No GPU instance is sold for more than this per hour (a GB300 NVL72 rack is ~$700/h as one unit).
MAX_USD_PER_HOUR = 10_000.0


@dataclass(frozen=True)
class Price:
    """One published price of one instance type in one region; nothing averaged, nothing guessed.

    ``usd_per_hour`` is the on-demand price of the whole instance, ``spot_usd_per_hour`` the spot
    (preemptible) price; either may be None when the source leaves it empty, not both. ``quote`` is
    the source's own text the figures were read from (a CSV line, a JSON record) and ``context``
    where in the source it stands.
    """

    provider: str
    instance_type: str
    region: str
    usd_per_hour: float | None
    spot_usd_per_hour: float | None
    source_url: str
    quote: str
    context: str = ""
    notes: str = ""

    def __post_init__(self) -> None:
        where = f"{self.provider}/{self.instance_type} in {self.region!r}"
        if not self.provider or self.provider != self.provider.lower() or not self.instance_type:
            raise InvalidOffer(f"price without a provider id or instance type: {where}")
        if self.usd_per_hour is None and self.spot_usd_per_hour is None:
            raise InvalidOffer(f"{where}: a price row with neither an on-demand nor a spot price")
        for name in ("usd_per_hour", "spot_usd_per_hour"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and 0 < value <= MAX_USD_PER_HOUR):
                raise InvalidOffer(f"{where}: {name} {value!r} is not a plausible hourly price")
        # a price read from a local copy cites the copy ("copy:<path>"), as claims do
        if not self.quote.strip() or not self.source_url.startswith(("https://", "http://", COPY_SCHEME)):
            raise InvalidOffer(f"{where}: a price needs the source text and its URL")
