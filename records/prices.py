"""Prices: what one offer costs per hour in one region, as its source publishes it."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from normalize.currency import USD, rate
from normalize.errors import InvalidOffer
from records.documents import COPY_SCHEME
from records.frozen import direct_init

# No GPU instance is sold for more than this per hour (a GB300 NVL72 rack is ~$700/h as one unit).
MAX_USD_PER_HOUR = 10_000.0


@direct_init
@dataclass(frozen=True)
class Price:
    """One published price of one instance type in one region; nothing averaged, nothing guessed.

    ``usd_per_hour`` is the on-demand price of the whole instance, ``spot_usd_per_hour`` the spot
    (preemptible) price; either may be None when the source leaves it empty, not both. ``quote`` is
    the source's own text the figures were read from (a CSV line, a JSON record) and ``context``
    where in the source it stands.

    ``currency`` is the one the source publishes in (ISO 4217); ``published_per_hour`` and
    ``published_spot_per_hour`` are the figures in it, as published. For a USD price they equal the
    USD fields; for any other (``in_currency``), the USD fields are the published figures times
    ``usd_per_unit``, the catalog's stated, dated rate (normalize/exchange_rates.csv).
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
    currency: str = USD
    published_per_hour: float | None = None
    published_spot_per_hour: float | None = None
    usd_per_unit: float = 1.0

    def __post_init__(self) -> None:
        usd, spot = self.usd_per_hour, self.spot_usd_per_hour
        if self.currency == USD and self.published_per_hour is None and self.published_spot_per_hour is None:
            object.__setattr__(self, "published_per_hour", usd)
            object.__setattr__(self, "published_spot_per_hour", spot)
        as_published = usd == self.published_per_hour and spot == self.published_spot_per_hour
        if not (as_published and self.usd_per_unit == 1.0):  # else nothing to work out
            self._check_published()
        if not self.provider or self.provider != self.provider.lower() or not self.instance_type:
            raise InvalidOffer(f"price without a provider id or instance type: {self._where()}")
        if usd is None and spot is None:
            raise InvalidOffer(f"{self._where()}: a price row with neither an on-demand nor a spot price")
        if usd is not None and not (math.isfinite(usd) and 0 < usd <= MAX_USD_PER_HOUR):
            raise InvalidOffer(f"{self._where()}: usd_per_hour {usd!r} is not a plausible hourly price")
        if spot is not None and not (math.isfinite(spot) and 0 < spot <= MAX_USD_PER_HOUR):
            raise InvalidOffer(f"{self._where()}: spot_usd_per_hour {spot!r} is not a plausible hourly price")
        # a price read from a local copy cites the copy ("copy:<path>"), as claims do
        if not self.quote.strip() or not self.source_url.startswith(("https://", "http://", COPY_SCHEME)):
            raise InvalidOffer(f"{self._where()}: a price needs the source text and its URL")

    def _check_published(self) -> None:
        """InvalidOffer when a USD figure is not its published figure times ``usd_per_unit``."""
        for usd, published in (
            (self.usd_per_hour, self.published_per_hour),
            (self.spot_usd_per_hour, self.published_spot_per_hour),
        ):
            if (usd is None) != (published is None) or (
                usd is not None
                and (usd != published or self.usd_per_unit != 1.0)  # as published: nothing to work out
                and not math.isclose(usd, (published or 0.0) * self.usd_per_unit, rel_tol=1e-9)
            ):
                raise InvalidOffer(
                    f"{self._where()}: {usd} USD is not {published} {self.currency} x {self.usd_per_unit}"
                )

    def _where(self) -> str:
        """The price named in a refusal (made only then: most prices are never refused)."""
        return f"{self.provider}/{self.instance_type} in {self.region!r}"


def in_currency(price: Price, currency: str) -> Price:
    """``price`` whose figures were read as published in ``currency`` (not USD): the published figures
    kept, the USD fields converted at the catalog's rate, and the notes saying so."""
    if currency == USD:
        return price
    found = rate(currency)
    when = f" of {found.rate_date.isoformat()}" if found.rate_date else ""
    note = f"published in {currency}; USD at {found.usd_per_unit:g} USD per {currency}{when}"
    note += f" ({found.source_url})"
    return replace(
        price,
        usd_per_hour=None if price.usd_per_hour is None else price.usd_per_hour * found.usd_per_unit,
        spot_usd_per_hour=None
        if price.spot_usd_per_hour is None
        else price.spot_usd_per_hour * found.usd_per_unit,
        notes="; ".join(n for n in (price.notes, note) if n),
        currency=currency,
        published_per_hour=price.usd_per_hour,
        published_spot_per_hour=price.spot_usd_per_hour,
        usd_per_unit=found.usd_per_unit,
    )
