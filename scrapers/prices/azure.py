"""Azure on-demand prices: the price table the Azure Karpenter provider generates for every region.

``Azure/karpenter-provider-azure`` publishes ``zz_generated.pricing.go`` (3 MB): one
``initialOnDemandPrices["<region>"] = map[string]float64{...}`` block per region, one aligned entry per
line (``"Standard_ND96isr_H100_v5":              142.600000,``). It is read once, in one pass
(``go_map_entries``). Only GPU sizes are kept: the NC, ND, NG and NV series (N-series "GPU-enabled";
NP is FPGA, NM a media accelerator). Traps, each tested on the real file: 0.000000 is a placeholder
(68 of them, on M-series sizes) and never a price; a few keys carry trailing spaces
("Standard_NM16ads_MA35D  ") or are dedicated-host SKUs ("Ddsv4_Type 1"), not VM sizes; the same size
costs differently per region (ND96isr_H100_v5: 98.32 in eastus, 142.60 in australiaeast).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from records.documents import DocumentSet
from records.prices import Price
from scrapers.prices.tables import go_map_entries, map_prices, price_text

URL_PREFIX = "https://raw.githubusercontent.com/Azure/karpenter-provider-azure/main/pkg/providers/pricing/"
PRICES_URL = URL_PREFIX + "zz_generated.pricing.go"

_REGION = re.compile(r'initialOnDemandPrices\["([^"\n]+)"\][ \t]*=')
GPU_SIZE = r'Standard_N[CDGV][^"\n]*'
LAYOUT = 'Go: initialOnDemandPrices["<region>"] = map[string]float64{ "<size>": <USD/h>, ... } per region'


def parse_prices(text: str, url: str = PRICES_URL) -> list[Price]:
    """One on-demand Price per GPU size per region of the generated table."""
    entries = go_map_entries(text, url, region=_REGION, key=GPU_SIZE)
    return map_prices(entries, provider="azure", url=url, context='initialOnDemandPrices["{region}"]')


def prices_in(documents: DocumentSet, parse: Callable[[str], list[Price]] = parse_prices) -> list[Price]:
    """The prices of the stored price table (read by ``parse``), or none if it could not be fetched."""
    text = price_text(documents, PRICES_URL, "azure")
    return [] if text is None else parse(text)
