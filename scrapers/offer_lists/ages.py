"""How old each SkyPilot offer list is, as far as anything in hand says.

SkyPilot's catalog CSVs carry no date, and GitHub's raw host sends none, so no list has a known
"data as of" day: ``data_as_of`` stays missing and ``as_of_note`` says why and what is known instead.
What is known is the copy read (the commit ``../shared/MANIFEST.md`` names for it) and the list's
tree: SkyPilot reads ``catalogs/v8`` (its ``sky/skylet/constants.py``: ``CATALOG_SCHEMA_VERSION =
'v8'``), so a v8 list is the one its users are quoted; the ``v6`` lists (DigitalOcean, Paperspace,
Fluidstack, Scaleway, OVHcloud, and Oracle's older copy) are a tree no current SkyPilot release reads:
frozen, not regenerated, older than their v8 siblings by an unknown span. For Fluidstack a newer
``v9`` list exists and lists one offer (``H100_NVLINK_80GB::8``); the v6 list is still the one read,
and its rows say whether v9 still lists them (``scrapers.offer_lists.fluidstack``).

Each offer-list provider declares the copy it reads on its class (``SkyPilotCatalog.stored_commit``,
and ``newer_list`` where a newer list exists), and ``offer_list`` works out the rest from its URL;
``READ_BY_DOCUMENTS`` holds the lists document scrapers read (OCI's copies). Together they are written
to the catalog's ``offer_lists`` table at every refresh (``catalog.pricing``), and a row of a frozen
list carries ``age_note`` among its notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from scrapers.offer_lists.skypilot import CATALOGS

MANIFEST = "../shared/MANIFEST.md"
#: The tree SkyPilot reads (its ``sky/skylet/constants.py``: ``CATALOG_SCHEMA_VERSION = 'v8'``).
SKYPILOT_TREE = 8
FROZEN = "frozen"
CURRENT = "current"
NEWER = "newer"
UNDATED = (
    "undated: SkyPilot's CSV has no date column and the raw host sends no Last-Modified; "
    f"{MANIFEST} names the commit of the copy read, not its date"
)
_TREE = re.compile(r"/catalogs/v(\d+)/")


@dataclass(frozen=True)
class OfferList:
    """One offer list a provider reads: its tree, the copy read, and how old it is known to be."""

    provider: str
    url: str
    catalog_version: str
    status: str  # current (the tree SkyPilot reads) | frozen (an older one) | newer (one it reads not yet)
    stored_commit: str  # skypilot-org/skypilot-catalog commit of the copy in ../shared
    data_as_of: date | None = None
    as_of_note: str = UNDATED
    newer_list: str = ""  # a newer list of the same provider that exists, and what it holds


def offer_list(provider: str, url: str, stored_commit: str, newer_list: str = "") -> OfferList:
    """The list at ``url`` (a SkyPilot catalog URL), its tree and status read from the URL."""
    tree = _TREE.search(url)
    if tree is None:
        raise ValueError(f"{provider}: {url} is not under a SkyPilot catalog tree (catalogs/v<N>/)")
    version = int(tree.group(1))
    status = CURRENT if version == SKYPILOT_TREE else FROZEN if version < SKYPILOT_TREE else NEWER
    return OfferList(provider, url, f"v{version}", status, stored_commit, newer_list=newer_list)


#: The lists document scrapers read, not an offer-list provider: OCI's two local copies.
READ_BY_DOCUMENTS: tuple[OfferList, ...] = (
    offer_list("oci", f"{CATALOGS}v8/oci/vms.csv", "0588751183820cf2dab5c8a89447e8aac9f73fd5"),
    offer_list("oci", f"{CATALOGS}v6/oci/vms.csv", "6e3a02d25e04a22b358168a5f95f8ac620424683"),
)


def age_note(found: OfferList) -> str | None:
    """The note a row of a frozen list carries (None for a current or newer one)."""
    if found.status != FROZEN:
        return None
    return (
        f"offer list: SkyPilot's {found.catalog_version} list, a tree SkyPilot no longer reads: frozen, "
        f"its date unknown (the copy in ../shared is commit {found.stored_commit[:8]})"
    )
