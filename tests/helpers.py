"""What tests share: where the real documents and fixtures are, and a small mirror, clock and refresh.

Fixtures and hooks live in conftest.py; plain helpers live here, so test modules import them from
one place and never from each other.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import httpx

from catalog import pipeline
from scrapers.azure import FAMILY_PAGES, SIZES
from scrapers.http import make_client

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED = Path(os.environ.get("INTERCONNECT_SHARED", ROOT.parent / "shared")).resolve()
MIRROR = SHARED / "mirror"

SHARED_MISSING = (
    f"real provider documents not found at {MIRROR} (set INTERCONNECT_SHARED); CI always has them"
)


# The real tool outputs of ../shared/reference/measurements that need the user to say more:
# logs that do not say which collective ran: the user says it (as `--collective` on import).
COLLECTIVE_NEEDED = {
    "nccl-tests/gcp-a3-highgpu-8g-2node-tcpx-allgather-dstack.txt": "all_gather",
    "nccl-tests/gcp-a3-highgpu-8g-2node-tcpx-allgather.txt": "all_gather",
    "nccl-tests/gcp-a3-megagpu-8g-2node-tcpxo-allgather-dstack.txt": "all_gather",
    "nccl-tests/gcp-a3-megagpu-8g-2node-tcpxo-allgather.txt": "all_gather",
    "nccl-tests/gcp-a3-ultragpu-8g-2node-gib-allgather.txt": "all_gather",
    "nccl-tests/gcp-a4-highgpu-8g-b200-2node-rdma-allgather.txt": "all_gather",
    "nccl-tests/superbench-fixture-a100-40gb-1node-8gpu-nccl_alltoall.txt": "alltoall",
    "nccl-tests/azure-gb300-mnnvl-allreduce-excerpt.txt": "all_reduce",
    "nccl-tests/oci-bm-gpu-h100-8-ncclscout-pairs.txt": "all_reduce",
}
# A run that failed: a tool output with no result in it, refused with the line.
NO_RESULT = {
    "nvbandwidth/aws-p4d.24xlarge-nvbandwidth-json-sparecores.txt": "line 4: nvbandwidth reported an error"
}


def mirror_text(host_path: str) -> str:
    """The real document published at https://<host_path>, read in place from ../shared/mirror."""
    return (MIRROR / host_path).read_text(encoding="utf-8")


def fetch_from_mirror(scraper) -> list:
    """The documents a scraper fetches from the real mirror, through the real fetch code."""
    from scrapers.http import Fetcher, make_client

    async def fetch() -> list:
        async with make_client(mirror=MIRROR) as client:
            fetcher = Fetcher(client).for_provider(
                scraper.name, scraper.url_prefixes, max_documents=scraper.max_documents
            )
            await scraper.fetch(fetcher)
        return fetcher.documents

    return asyncio.run(fetch())


def url_to_mirror_path(url: str) -> Path:
    return MIRROR / url.split("://", 1)[1]


AWS_PAGE = "docs.aws.amazon.com/ec2/latest/instancetypes/ac.md"
AZURE_DIR = SIZES.split("://", 1)[1]


GCP_PAGES = {
    "cloud.google.com/compute/docs/gpus/gpu-network-bandwidth": "gcp/gpu-network-bandwidth.html",
    "cloud.google.com/compute/docs/accelerator-optimized-machines": "gcp/accelerator-optimized-machines.html",
}


def add_gcp(root: Path) -> None:
    for path, fixture in GCP_PAGES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / fixture, root / path)


def build_mirror(root: Path) -> Path:
    """A mirror with the AWS fixture page and one Azure series reachable from the ND family page."""
    (root / AWS_PAGE).parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "aws/ac-small.md", root / AWS_PAGE)
    azure = root / AZURE_DIR
    (azure / "includes").mkdir(parents=True)
    for family in FAMILY_PAGES:
        (root / family.split("://", 1)[1]).write_text("# family\n")
    (azure / "nd-family.md").write_text("### ND-Test-v9\n[View the full page](./nd-test-v9-series.md)\n")
    shutil.copy(FIXTURES / "azure/nd-test-v9-series.md", azure / "nd-test-v9-series.md")
    for name in ("nd-test-v9-series-summary.md", "nd-test-v9-series-specs.md"):
        shutil.copy(FIXTURES / "azure/includes" / name, azure / "includes" / name)
    return root


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 1, 6, 0)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, hours: int = 24) -> None:
        self.now += timedelta(hours=hours)


def run(db: Path, mirror: Path | None, clock: Clock, **kw) -> pipeline.RefreshReport:
    kw.setdefault("providers", ["aws", "azure"])

    async def go():
        transport = None if mirror else httpx.MockTransport(lambda r: httpx.Response(599))
        async with make_client(mirror=mirror, transport=transport) as client:
            return await pipeline.refresh(
                db, client, mode="mirror", now=clock, fetcher_options={"sleep": no_sleep}, **kw
            )

    return asyncio.run(go())


async def no_sleep(_: float) -> None:
    return None


def query(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


SMALL = ["--provider", "aws", "--provider", "azure"]  # the providers the small mirror holds


def cli_refresh(mirror: Path, db: Path, *args: str) -> int:
    """``python -m catalog refresh --mirror MIRROR --db DB --quiet ARGS``; the exit code."""
    from catalog.cli import main

    return main(["refresh", "--mirror", str(mirror), *args, "--db", str(db), "--quiet"])
