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

``OFFER_LISTS`` is written to the catalog's ``offer_lists`` table at every refresh, and a row of a
frozen list carries ``age_note`` among its notes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from scrapers.offer_lists.skypilot import CATALOGS

MANIFEST = "../shared/MANIFEST.md"
FROZEN = "frozen"
CURRENT = "current"
UNDATED = (
    "undated: SkyPilot's CSV has no date column and the raw host sends no Last-Modified; "
    f"{MANIFEST} names the commit of the copy read, not its date"
)


@dataclass(frozen=True)
class OfferList:
    """One offer list a provider reads: its tree, the copy read, and how old it is known to be."""

    provider: str
    url: str
    catalog_version: str
    status: str  # current (the tree SkyPilot reads) | frozen (a tree it no longer reads)
    stored_commit: str  # skypilot-org/skypilot-catalog commit of the copy in ../shared
    data_as_of: date | None = None
    as_of_note: str = UNDATED
    newer_list: str = ""  # a newer list of the same provider that exists, and what it holds


def _v(version: str, provider_dir: str) -> str:
    return f"{CATALOGS}{version}/{provider_dir}/vms.csv"


def _frozen(provider: str, directory: str, commit: str, newer: str = "") -> OfferList:
    return OfferList(provider, _v("v6", directory), "v6", FROZEN, commit, newer_list=newer)


def _current(provider: str, directory: str, commit: str) -> OfferList:
    return OfferList(provider, _v("v8", directory), "v8", CURRENT, commit)


V9_FLUIDSTACK = _v("v9", "fluidstack")
OFFER_LISTS: tuple[OfferList, ...] = (
    _current("nebius", "nebius", "0082b0435f3912ae4c566856b272455cc78f4f61"),
    _current("lambda", "lambda", "0f4070387edc953d7004cff197940e1918a1d6aa"),
    _current("hyperstack", "hyperstack", "fdc9d908ab0b2af9f468f139fb3f662c8c6b3257"),
    _current("verda", "verda", "000c1d0bf24621f4ac37cfa585f0897c1aa1d9cf"),
    _current("hyperbolic", "hyperbolic", "0082b0435f3912ae4c566856b272455cc78f4f61"),
    _current("mithril", "mithril", "1f9eb0c264f9a6d78833766f4b18353ac7dfdde9"),
    _current("vast", "vast", "01b8cdda287814b30ff0acb49746cca19fbd4355"),
    _current("shadeform", "shadeform", "002363dac75913b446b2d3d564ae795678849dfd"),
    _current("primeintellect", "primeintellect", "d9a304ea01e96cd4a043159c60d9326d8de4cf0f"),
    _current("oci", "oci", "0588751183820cf2dab5c8a89447e8aac9f73fd5"),
    _frozen("digitalocean", "do", "1fbe7331dd1f13d70ac4f249bb7ee7a659fc6b6a"),
    _frozen("paperspace", "paperspace", "e520054145d1bce6748bcf18c9a25ddd6ea9a348"),
    _frozen(
        "fluidstack",
        "fluidstack",
        "002403bca05e2ab5110637448f3b1654c983d5d5",
        f"{V9_FLUIDSTACK} (commit 2c3d7ea7) lists one offer, H100_NVLINK_80GB::8 at 23.92 in FINLAND",
    ),
    _frozen("scaleway", "scaleway", "1fbe7331dd1f13d70ac4f249bb7ee7a659fc6b6a"),
    _frozen("ovhcloud", "ovhcloud", "8a258f54356e9a8c3a08083f1eebc169a4078d1c"),
    _frozen("oci", "oci", "6e3a02d25e04a22b358168a5f95f8ac620424683"),
)
BY_URL = {offer_list.url: offer_list for offer_list in OFFER_LISTS}


def age_note(url: str) -> str | None:
    """The note a row of a frozen list carries (None for a current or unlisted one)."""
    found = BY_URL.get(url)
    if found is None or found.status != FROZEN:
        return None
    return (
        f"offer list: SkyPilot's {found.catalog_version} list, a tree SkyPilot no longer reads: frozen, "
        f"its date unknown (the copy in ../shared is commit {found.stored_commit[:8]})"
    )
