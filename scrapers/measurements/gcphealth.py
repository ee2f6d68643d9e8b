"""Google's own expectation per GPU machine type: the NCCL health check of cluster-health-scanner
(``deploy/helm/health_checks/nccl_healthcheck/<family>.yaml``), whose Helm values give the machine
type, the two-node test and ``BANDWIDTH_THRESHOLD``, the bus bandwidth a healthy pair must reach.

The threshold is compared with nccl-tests' "# Avg bus bandwidth" (GB/s, an integer) of a run over
``NHOSTS`` nodes x ``nr`` GPUs and START..END message sizes. The YAML does not name the benchmark;
nccl_startup.py runs ``os.environ.get("BENCHMARK", "all_gather_perf")``, so without a BENCHMARK value
the figure is an all_gather floor, and the note says where that comes from. Only the ``env:`` block's
``KEY: "value"`` lines are read (no YAML library: nothing else in the file matters here).
"""

from __future__ import annotations

import re

from fetch.http import ProviderFetcher
from measure.common import Origin, measurement
from normalize.errors import LayoutError, ParseError
from normalize.units import to_number
from records.documents import DocumentSet
from records.measurements import NCCL_METRICS, Measurement
from records.offers import RawOffer
from scrapers.base import Scraper

BASE = (
    "https://raw.githubusercontent.com/GoogleCloudPlatform/cluster-health-scanner/main/"
    "deploy/helm/health_checks/nccl_healthcheck/"
)
# GitHub's raw host has no listing: the Helm values files there are known by name.
FILES = tuple(
    BASE + name for name in ("a3.yaml", "a3plus.yaml", "a3ultra.yaml", "a4.yaml", "a4-8lssd.yaml", "a4x.yaml")
)
DEFAULT_BENCHMARK = "all_gather_perf"  # nccl_startup.py: os.environ.get("BENCHMARK", "all_gather_perf")
_ENV = re.compile(r'^\s+(?P<key>[A-Za-z_]+):\s*"(?P<value>[^"]*)"\s*(?:#.*)?$')


class GcpHealth(Scraper):
    name = "gcphealth"
    title = "Google cluster-health-scanner NCCL health check (expected bus bandwidth per machine type)"
    kind = "measurements"
    url_prefixes = (BASE,)

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        await fetcher.get_all(list(FILES), required=False)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        return []

    def parse_measurements(self, documents: DocumentSet) -> list[Measurement]:
        readings = [
            threshold_reading(text, url, self.name)
            for url in FILES
            if (text := documents.optional_text(url)) is not None
        ]
        if not readings:
            raise LayoutError("no cluster-health-scanner NCCL health check values file")
        return readings


def env_values(text: str) -> dict[str, tuple[int, str, str]]:
    """``KEY: "value"`` lines: key → (line number, value, the line)."""
    found: dict[str, tuple[int, str, str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = _ENV.match(line)
        if match:
            found.setdefault(match.group("key"), (number, match.group("value"), line))
    return found


def threshold_reading(text: str, url: str, source: str) -> Measurement:
    """The expected NCCL bus bandwidth of one values file; LayoutError when a key is missing."""
    env = env_values(text)
    missing = [k for k in ("INSTANCE_TYPE", "BANDWIDTH_THRESHOLD", "NHOSTS", "nr") if k not in env]
    if missing:
        raise LayoutError(f"{url.rsplit('/', 1)[-1]}: no {', '.join(missing)} in its env block")
    number, threshold, line = env["BANDWIDTH_THRESHOLD"]
    try:
        value, nodes, per_node = to_number(threshold), to_number(env["NHOSTS"][1]), to_number(env["nr"][1])
    except ParseError as exc:
        raise ParseError(f"line {number}: {exc}") from None
    benchmark = env.get("BENCHMARK", (0, DEFAULT_BENCHMARK, ""))[1]
    collective = benchmark.removesuffix("_perf")
    if collective not in NCCL_METRICS:
        raise ParseError(f"line {env['BENCHMARK'][0]}: no metric for benchmark {benchmark!r}")
    sizes = f"{env.get('START_MESSAGE_SIZE', (0, '?'))[1]}..{env.get('END_MESSAGE_SIZE', (0, '?'))[1]}"
    how = "BENCHMARK not set: nccl_startup.py's default" if "BENCHMARK" not in env else "BENCHMARK"
    return measurement(
        Origin(source, url, "expected", "gcp", env["INSTANCE_TYPE"][1]),
        NCCL_METRICS[collective],
        value,
        locator=f"line {number}",
        quote=line,
        tool="cluster-health-scanner nccl_healthcheck",
        nodes=int(nodes),
        gpus=int(nodes * per_node),
        notes=(
            f"{benchmark} ({how}) over {int(nodes)} nodes x {int(per_node)} GPUs, {sizes} messages: its "
            f"'Avg bus bandwidth' (GB/s) must reach {threshold}; {env['INSTANCE_TYPE'][2].strip()}"
        ),
    )
