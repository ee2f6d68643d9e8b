"""Google Cloud prices: a THIRD-PARTY price file, not Google's, cited as what it is.

``cloudpilot-ai/karpenter-provider-gcp`` (a Karpenter provider for GKE by CloudPilot AI) ships
``initial-prices.json``: ``{"prices": {region: {"on_demand": {machine type: USD/h}, "spot": {...}}}}``,
one line, 43 regions. Its accelerator-optimized machine prices are whole-machine prices, the VM and
its attached GPUs together: a3-highgpu-8g is 88.49 USD/h in us-central1, 7.6 times a
c3-highmem-176 (176 vCPUs, 1,408 GB, no GPU) in the same file, so the eight H100s are in it. Google's
own SKUs price A2/A3/A4 hosts and their GPUs on separate rows; the file has no GPU rows, and a key
that names a GPU ("nvidia-...") would mean it started to, so it is refused (LayoutError) rather than a
host-only price ever standing as the machine's price. Machine types the file does not list
(a3-ultragpu-8g, a4-highgpu-8g, a4x-highgpu-4g) get no price.
"""

from __future__ import annotations

import json
import re

from normalize.errors import LayoutError, ParseError
from records.documents import DocumentSet
from records.prices import Price
from scrapers.prices.tables import price_text, usd_per_hour
from scrapers.tables import collect

URL_PREFIX = (
    "https://raw.githubusercontent.com/cloudpilot-ai/karpenter-provider-gcp/main/pkg/providers/pricing/"
)
PRICES_URL = URL_PREFIX + "initial-prices.json"
NOTE = "third-party file (cloudpilot-ai/karpenter-provider-gcp), not Google's; VM and GPUs together"

# Accelerator-optimized machine types: a2-highgpu-8g, a3-megagpu-8g, a4x-highgpu-4g, g2-standard-96.
# (g1-small is a shared-core CPU machine.)
_MACHINE = r"(?:a\d+x?|g[2-9]\d*)-[a-z0-9-]+"
GPU_MACHINE_TYPE = re.compile(f"^{_MACHINE}$")
GPU_PRICE_PREFIX = "nvidia-"  # how Google names a GPU (nvidia-h100-80gb), never a machine type
# Every "machine":price pair as the file prints it: each quote, rebuilt from the parsed JSON, must be one.
_PRINTED = re.compile(f'"{_MACHINE}":[^,}}{{\\s]+')
LAYOUT = 'JSON {"prices": {"<region>": {"on_demand": {"<machine type>": <USD/h>}, "spot": {...}}}}'


class _Object(dict):
    """A JSON object that remembers the keys it saw more than once, with every value printed for
    them: json.loads alone keeps the last (1.00 or 0.01 USD/h, whichever comes second)."""

    def __init__(self, pairs: list[tuple[str, object]]) -> None:
        super().__init__(pairs)
        self.repeated: dict[str, list[object]] = {}
        if len(self) < len(pairs):
            seen: dict[str, list[object]] = {}
            for key, value in pairs:
                seen.setdefault(key, []).append(value)
            self.repeated = {key: values for key, values in seen.items() if len(values) > 1}


def _repeated(parent: object, key: str, text: str) -> str | None:
    """Why ``key`` of a JSON object is refused (listed more than once, with where), or None."""
    values = parent.repeated.get(key) if isinstance(parent, _Object) else None
    if not values:
        return None
    printed = [f"{json.dumps(key)}:{v}" if isinstance(v, str) else json.dumps(key) for v in values]
    lines = sorted({text.count("\n", 0, at) + 1 for p in printed if (at := text.find(p)) >= 0})
    where = f" (line {', '.join(map(str, lines))})" if lines else ""
    return f"{key} is listed {len(values)} times{where}: {', '.join(printed[:4])}; neither is taken"


def parse_prices(text: str, url: str = PRICES_URL) -> list[Price]:
    """One Price (on-demand and spot) per accelerator-optimized machine type per region; a region or
    a machine type listed twice is refused (every entry of it), not resolved last-wins."""
    try:
        # keep the printed numbers, and every repeated key
        regions = json.loads(text, parse_float=str, parse_int=str, object_pairs_hook=_Object)["prices"]
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise LayoutError(f"{url} is not a {{'prices': {{region: ...}}}} JSON document: {exc}") from None
    if not isinstance(regions, dict):
        raise LayoutError(f"{url}: 'prices' is not an object of regions")
    if f'"{GPU_PRICE_PREFIX}' in text:
        raise LayoutError(f"{url} prices GPUs on rows of their own: its machine prices may be host-only")
    items = [(region, machine) for region, kinds in regions.items() for machine in _machines(region, kinds)]
    printed = set(_PRINTED.findall(text))
    refused = {region: _repeated(regions, region, text) for region in regions}  # once, not per machine

    def build(item: tuple[str, str]) -> Price | None:
        region, machine = item
        why = refused[region]
        for kind in ("on_demand", "spot"):
            why = why or _repeated(regions[region].get(kind), machine, text)
        if why:
            raise ParseError(why)
        return _price(regions[region], region, machine, url, printed)

    return collect(
        items,
        build,
        provider="gcp price",
        name=lambda item: f"{item[1]} in {item[0]}",
        empty=f"no accelerator-optimized machine prices in {url}",
    )


def _machines(region: str, kinds: object) -> list[str]:
    if not isinstance(kinds, dict):
        raise LayoutError(f"region {region!r} is not an object of price lists")
    names = {name for prices in kinds.values() if isinstance(prices, dict) for name in prices}
    return sorted(name for name in names if name.startswith(("a", "g")) and GPU_MACHINE_TYPE.match(name))


def _printed(kinds: dict, kind: str, machine: str, printed: set[str]) -> tuple[float | None, str]:
    """The price of ``machine`` in one list ("on_demand", "spot") and its text in the file, or (None, "")."""
    listed = kinds.get(kind)
    raw = listed.get(machine) if isinstance(listed, dict) else None
    if raw is None:
        return None, ""
    if not isinstance(raw, str):
        raise ParseError(f"{kind} price {raw!r} is not a number")
    text = f"{json.dumps(machine)}:{raw}"
    if text not in printed:
        raise ParseError(f"{text!r} is not printed so in the file (not compact JSON?)")
    return usd_per_hour(raw), text


def _price(kinds: dict, region: str, machine: str, url: str, printed: set[str]) -> Price | None:
    if not region.strip():
        raise ParseError("a price list under an empty region name")
    on_demand, on_demand_text = _printed(kinds, "on_demand", machine, printed)
    spot, spot_text = _printed(kinds, "spot", machine, printed)
    if on_demand is None and spot is None:
        return None
    where = f'prices["{region}"]'
    context = f'{where}["on_demand"]' if on_demand is not None else f'{where}["spot"]'
    if on_demand is not None and spot is not None:
        context += f'; spot {spot_text} at {where}["spot"]'
    quote = on_demand_text or spot_text
    return Price("gcp", machine, region, on_demand, spot, url, quote, context, NOTE)


def prices_in(documents: DocumentSet) -> list[Price]:
    """The prices of the stored price file, or none if it could not be fetched."""
    text = price_text(documents, PRICES_URL, "gcp")
    return [] if text is None else parse_prices(text)
