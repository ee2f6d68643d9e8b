"""Oracle's own expectation per GPU shape: the Node Health Check template of oracle-quickstart/oci-hpc
(``playbooks/roles/nhc/templates/oci.nhc.conf.j2``), a Jinja2 template with one branch per shape
(``{% elif 'BM.GPU.H100.8' in nhc_node_shape %}``) listing the RDMA ports that must be up and their
rate: ``*||check_hw_ib 200 mlx5_0:1``.

Oracle's shapes page counts NICs; the template counts ports, and they differ (BM.GPU.H100.8: "8 x 2 x
200 Gbps RDMA" on the page, 16 ports of 200 Gbit/s here): both sum to the same per-node total, so only
totals are ever compared. A line inside a further condition (``nhc_rdma_planes``) holds only when it
does; its note starts with "only when". Some shapes also check one port at another rate (mlx5_0 at
50 Gbit/s beside sixteen 100 Gbit/s RDMA ports): it is kept as its own reading.
"""

from __future__ import annotations

from collections import defaultdict

from fetch.http import ProviderFetcher
from measure.common import Origin, measurement
from normalize.errors import LayoutError
from records.documents import DocumentSet
from records.measurements import CONDITIONAL, Measurement
from records.offers import RawOffer
from scrapers.base import Scraper
from scrapers.measurements import nhc

TEMPLATE = "https://raw.githubusercontent.com/oracle-quickstart/oci-hpc/master/playbooks/roles/nhc/templates/oci.nhc.conf.j2"


class OciHpc(Scraper):
    name = "ocihpc"
    title = "Oracle oci-hpc Node Health Check template (expected RDMA ports per shape)"
    kind = "measurements"
    url_prefixes = (
        "https://raw.githubusercontent.com/oracle-quickstart/oci-hpc/master/playbooks/roles/nhc/",
    )

    async def fetch(self, fetcher: ProviderFetcher) -> None:
        await fetcher.get(TEMPLATE)

    def parse(self, documents: DocumentSet) -> list[RawOffer]:
        return []

    def parse_measurements(self, documents: DocumentSet) -> list[Measurement]:
        return template_readings(documents.text(TEMPLATE), TEMPLATE, self.name)


def template_readings(text: str, url: str, source: str) -> list[Measurement]:
    """Per shape and condition, its check_hw_ib ports grouped by rate. LayoutError when no shape
    branch has one."""
    branches: dict[tuple[str, tuple[str, ...]], list[nhc.Check]] = defaultdict(list)
    for check in nhc.checks(text):
        for shape in check.shapes:
            branches[(shape, check.conditions)].append(check)
    readings = []
    for (shape, conditions), found in branches.items():
        origin = Origin(source, url, "expected", "oci", shape)
        when = f"{CONDITIONAL}{' and '.join(conditions)}; " if conditions else ""
        for group in nhc.port_groups(found, text):
            readings.append(
                measurement(
                    origin,
                    "nic_gbits_per_s" if group.frontend else "ib_port_gbits_per_s",
                    group.gbits_per_s,
                    locator=group.locator,
                    quote=group.quote,
                    tool="oci-hpc NHC check_hw_ib",
                    port_count=len(group.checks),
                    notes=f"{when}{_ports(group)}",
                )
            )
    if not readings:
        raise LayoutError("oci.nhc.conf.j2: no check_hw_ib line inside a shape branch")
    return readings


def _ports(group: nhc.PortGroup) -> str:
    devices = ", ".join(c.args[1] for c in group.checks if len(c.args) > 1)
    if group.frontend:
        return (
            f"front-end NIC ({devices}), {group.gbits_per_s:g} Gbit/s: the one port apart from the RDMA rails"
        )
    return f"{len(group.checks)} RDMA ports must be up at {group.gbits_per_s:g} Gbit/s each ({devices})"
