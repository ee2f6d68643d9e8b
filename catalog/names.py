"""Instance names as the catalog stores them: never a control character.

A document can name an instance ``p5.48xlarge\x00`` or ``gpu\x1b[2J``: a NUL or a terminal escape
that would reach ``query`` and ``plan`` output, CSV files and the app. The row is kept (its figures
are still the document's), its name stored with each such character written as its escape
(``gpu\\x1b[2J``), flagged (the ``name_escaped`` column) and noted; its prices take the same name, so
they still join.
"""

from __future__ import annotations

from dataclasses import replace

from normalize.safe_text import escaped, unsafe_characters
from records.offers import RawOffer
from records.prices import Price


def checked_offer(offer: RawOffer) -> RawOffer:
    """The offer with its instance name escaped and noted when it holds control characters."""
    found = unsafe_characters(offer.instance_type)
    if not found:
        return offer
    note = (
        f"the source names this instance with {len(found)} control or invisible characters "
        f"({', '.join(dict.fromkeys(found))}): stored escaped, as the text it is"
    )
    return replace(
        offer, instance_type=escaped(offer.instance_type), notes=(*offer.notes, note), name_escaped=True
    )


def checked_price(price: Price) -> Price:
    """The price under the instance name its row is stored with."""
    if not unsafe_characters(price.instance_type + price.region):
        return price
    return replace(price, instance_type=escaped(price.instance_type), region=escaped(price.region))
