"""CoreWeave: no fetchable spec page here; curated facts only.

The facts and their sources are in scrapers/curated/coreweave.toml. CoreWeave's documentation says
which instance types have InfiniBand only in general terms and publishes no per-node fabric
bandwidth in the sources read, so those fields stay missing: that is a finding too.
"""

from scrapers.base import CuratedOnly


class CoreWeave(CuratedOnly):
    name = "coreweave"
    title = "CoreWeave"
