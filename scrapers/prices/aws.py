"""AWS on-demand prices: the price table the AWS Karpenter provider generates for us-east-1.

``aws/karpenter-provider-aws`` publishes ``zz_generated.pricing_aws.go``, a Go map literal of the
on-demand Linux price per instance type ("generated at ... for us-east-1"): one region, several
entries per line (``"p5.48xlarge": 55.040000, "p5.4xlarge": 6.880000,``). Only GPU families are kept
(P, G, GR and the Gaudi DL family: what the accelerated-computing page lists as GPU instances);
instance types the table does not list (p5e.48xlarge, p6e-gb200.36xlarge in the 2026-07-20 table) get
no price.
"""

from __future__ import annotations

import re

from records.documents import DocumentSet
from records.prices import Price
from scrapers.prices.tables import go_map_entries, map_prices, price_text

URL_PREFIX = "https://raw.githubusercontent.com/aws/karpenter-provider-aws/main/pkg/providers/pricing/"
PRICES_URL = URL_PREFIX + "zz_generated.pricing_aws.go"

# `"us-east-1": {` opens a region's block of the InitialOnDemandPricesAWS map.
_REGION = re.compile(r'(?m)^[ \t]*"([a-z]{2}(?:-[a-z]+)+-\d+)":[ \t]*\{')
# GPU instance types: p5.48xlarge, p6-b200.48xlarge, g5g.xlarge, gr6.4xlarge, dl1.24xlarge.
GPU_INSTANCE_TYPE = r"(?:p|gr?|dl)\d[a-z0-9-]*\.[a-z0-9-]+"
LAYOUT = 'Go map InitialOnDemandPricesAWS: a "<region>": { block of "<instance type>": <USD/h> entries'


def parse_prices(text: str, url: str = PRICES_URL) -> list[Price]:
    """One us-east-1 on-demand Price per GPU instance type of the generated table."""
    entries = go_map_entries(text, url, region=_REGION, key=GPU_INSTANCE_TYPE)
    return map_prices(entries, provider="aws", url=url, context='InitialOnDemandPricesAWS["{region}"]')


def prices_in(documents: DocumentSet) -> list[Price]:
    """The prices of the stored price table, or none if it could not be fetched."""
    text = price_text(documents, PRICES_URL, "aws")
    return [] if text is None else parse_prices(text)
