"""Names for offers a provider gives no identifier of its own (instant clusters, 1-click clusters).

Such an offer is named by a slug built from what the provider states, so it stays the same from one
refresh to the next: the offer's kind, the GPU as the provider names it, and the GPUs per node when
stated, lower-case, with every run of other characters turned into one hyphen
("instant-cluster-b200-8gpu", "1-click-cluster-h100-sxm"). The row's notes say it is a slug.
"""

from __future__ import annotations

import re


def cluster_slug(kind: str, gpu: str, gpus_per_node: int | None = None) -> str:
    """The stable name of an offer with no identifier of its own (see the module docstring)."""
    parts = [kind, gpu, f"{gpus_per_node}gpu" if gpus_per_node else ""]
    return re.sub(r"[^a-z0-9]+", "-", " ".join(parts).lower()).strip("-")


def slug_note(provider_title: str, slug: str) -> str:
    """The row note that says the name is this catalog's slug, not the provider's."""
    return (
        f"{provider_title} names no instance type for this offer: {slug!r} is this catalog's stable slug "
        "(offer kind, GPU as the provider names it, GPUs per node where stated)"
    )
