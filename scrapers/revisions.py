"""One provider page read in more than one revision: the live page, a third-party copy of a newer one.

Rows from every revision read are merged per instance type. Each revision's claims are kept with
the document they come from, so where two revisions disagree the row carries both claims and
``catalog.offers`` flags the conflict: a newer revision never silently replaces an older one, nor the
reverse. The revision given first leads (its claim is the one the row shows). A copy's claims cite
the copy itself (``source_url``) and keep the page it copies in ``original_url``.
"""

from __future__ import annotations

from records.frozen import replaced
from records.offers import RawOffer


def cite_copy(offers: list[RawOffer], original_url: str, note: str) -> list[RawOffer]:
    """``offers`` parsed from a copy of ``original_url``: every claim keeps that URL as its original,
    and every row says where it comes from (``note``)."""
    return [
        replaced(
            offer,
            claims=tuple(replaced(c, original_url=original_url) for c in offer.claims),
            notes=(*offer.notes, note),
        )
        for offer in offers
    ]


def merge_revisions(*revisions: list[RawOffer]) -> list[RawOffer]:
    """One RawOffer per instance type across revisions, in first-seen order: the claims of every
    revision that lists it (the first revision's first), their notes without repeats."""
    merged: dict[str, RawOffer] = {}
    for offers in revisions:
        for offer in offers:
            seen = merged.get(offer.instance_type)
            if seen is None:
                merged[offer.instance_type] = offer
                continue
            merged[offer.instance_type] = replaced(
                seen,
                claims=(*seen.claims, *offer.claims),
                notes=(*seen.notes, *(n for n in offer.notes if n not in seen.notes)),
                fabric_shares_frontend=seen.fabric_shares_frontend or offer.fabric_shares_frontend,
            )
    return list(merged.values())
