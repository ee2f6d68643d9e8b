"""How aggregators name the clouds they resell, mapped to this catalog's provider ids.

Shadeform and Prime Intellect prefix each offer with the upstream cloud ("lambdalabs_H100-sxm5x8",
"datacrunch__8xH100_80GB__176__1480"). Where that cloud is a provider of this catalog the row's
``upstream_provider`` is its provider id, so ``resold_offers`` can put the two rows side by side;
any other cloud keeps the seller's own spelling.
"""

from __future__ import annotations

# Aggregator spelling → provider id in this catalog. DataCrunch renamed itself Verda (SkyPilot's
# v8 catalog carries it as "verda", Prime Intellect still as "datacrunch").
UPSTREAM_PROVIDER_IDS = {
    "lambdalabs": "lambda",
    "datacrunch": "verda",
    "hyperstack": "hyperstack",
    "nebius": "nebius",
    "scaleway": "scaleway",
    "paperspace": "paperspace",
    "fluidstack": "fluidstack",
    "runpod": "runpod",
    "coreweave": "coreweave",
}


def upstream_provider(spelling: str) -> str | None:
    """The provider id for an aggregator's name of a cloud (its own spelling if not one of ours)."""
    spelling = spelling.strip()
    return UPSTREAM_PROVIDER_IDS.get(spelling.lower(), spelling) if spelling else None
