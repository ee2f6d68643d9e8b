"""What tests share: where the real documents and fixtures are, and a small mirror, clock and refresh.

Fixtures and hooks live in conftest.py; plain helpers live here, so test modules import them from
one place and never from each other.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import httpx

from catalog import pipeline
from fetch.budget import Budget
from fetch.http import make_client
from fetch.transports import OriginTransport
from scrapers.documents.azure import FAMILY_PAGES, SIZES
from scrapers.prices import aws as aws_prices
from scrapers.prices import azure as azure_prices

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


def snapshot_records(table: str) -> list[dict]:
    """The records of one table of the shipped snapshot (data/snapshot/<table>.jsonl): tests that count
    the shipped catalog derive their totals from it, so adding a provider or a row breaks no unrelated
    test (``test_shipped_snapshot_matches_a_rebuild_from_the_mirror`` holds the snapshot to the mirror)."""
    return [
        json.loads(line) for line in (ROOT / "data" / "snapshot" / f"{table}.jsonl").read_text().splitlines()
    ]


def snapshot_totals() -> tuple[int, int]:
    """Rows and providers of the shipped snapshot."""
    rows = snapshot_records("instances")
    return len(rows), len({row["provider"] for row in rows})


SNAPSHOT_ROWS, SNAPSHOT_PROVIDERS = snapshot_totals()


def mirror_text(host_path: str) -> str:
    """The real document published at https://<host_path>, read in place from ../shared/mirror."""
    return (MIRROR / host_path).read_text(encoding="utf-8")


def fetch_from_mirror(scraper) -> list:
    """The documents a scraper fetches from the real mirror, through the real fetch code."""
    from fetch.http import Fetcher, make_client

    async def fetch() -> list:
        async with make_client(mirror=MIRROR) as client:
            fetcher = Fetcher(client).for_provider(
                scraper.name, scraper.url_prefixes, scraper.budget, copy_paths=scraper.copy_paths
            )
            await scraper.fetch(fetcher)
        return fetcher.documents

    return asyncio.run(fetch())


def url_to_mirror_path(url: str) -> Path:
    return url_to_path(MIRROR, url)


def url_to_path(mirror: Path, url: str) -> Path:
    """Where a mirror directory holds the document published at ``url``."""
    return mirror / url.split("://", 1)[1]


AWS_PAGE = "docs.aws.amazon.com/ec2/latest/instancetypes/ac.md"
AZURE_DIR = SIZES.split("://", 1)[1]


GCP_PAGES = {
    "cloud.google.com/compute/docs/gpus/gpu-network-bandwidth": "gcp/gpu-network-bandwidth.html",
    "docs.cloud.google.com/compute/docs/accelerator-optimized-machines": (
        "gcp/accelerator-optimized-machines.html"
    ),
}


def add_gcp(root: Path) -> None:
    for path, fixture in GCP_PAGES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / fixture, root / path)


PRICE_FIXTURES = {
    aws_prices.PRICES_URL: "aws/pricing-small.go",
    azure_prices.PRICES_URL: "azure/pricing-small.go",
}


def build_mirror(root: Path) -> Path:
    """A mirror with the AWS fixture page, one Azure series reachable from the ND family page, and
    both providers' price tables (fixtures)."""
    (root / AWS_PAGE).parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "aws/ac-small.md", root / AWS_PAGE)
    for url, fixture in PRICE_FIXTURES.items():
        (path := url_to_path(root, url)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / fixture, path)
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


def reprice(con: duckdb.DuckDBPyConnection) -> None:
    """Join the price columns of a written catalog's rows again from its current prices, as a refresh
    finishes a row (catalog.finish), after a test changed the prices."""
    from catalog.pricing import PRICE_COLUMNS, PRICE_JOIN, prepare_prices

    prepare_prices(con, "instances")
    con.execute("CREATE OR REPLACE TEMP TABLE unpriced AS SELECT * FROM instances")
    con.execute("DELETE FROM instances")
    priced = ", ".join(f"{expr} AS {name}" for name, expr in PRICE_COLUMNS.items())
    con.execute(f"INSERT INTO instances BY NAME SELECT r.* REPLACE ({priced}) FROM unpriced r {PRICE_JOIN}")
    con.execute("DROP TABLE unpriced")


def query(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


SMALL = ["--provider", "aws", "--provider", "azure"]  # the providers the small mirror holds


def cli_refresh(mirror: Path, db: Path, *args: str) -> int:
    """``python -m catalog refresh --mirror MIRROR --db DB --quiet ARGS``; the exit code."""
    from catalog.cli import main

    return main(["refresh", "--mirror", str(mirror), *args, "--db", str(db), "--quiet"])


def planner_node(
    gpu: str,
    gpus: int,
    *,
    fabric: str = "efa",
    fabric_gbits_per_s: float | None = 3200.0,
    memory_gb: float | None = None,
    usd_per_hour: float | None = None,
    instance_type: str = "test-instance",
):
    """A planner node made by ``catalog.read.plan_inputs.node_from_row`` from an ``instances`` row
    whose GPU figures are the datasheet table's (normalize/gpus.csv), inferred as the catalog infers
    them: the scale-up link's two-way figure, or PCIe x16 for a PCIe card; the fabric in Gb/s per node."""
    from catalog.read.plan_inputs import node_from_row
    from normalize.gpus import BY_ID

    spec = BY_ID[gpu]
    link = (
        "single-gpu"
        if gpus == 1
        else ("pcie" if spec.link in ("pcie", "pcie-or-nvlink-bridge") else spec.link)
    )
    intra = spec.link_gbytes_per_s if link not in ("pcie", "single-gpu") else spec.pcie_gbytes_per_s
    row = {
        "provider": "test",
        "instance_type": instance_type,
        "gpu_model": gpu,
        "gpu_count": float(gpus),
        "gpu_memory_gb": memory_gb or spec.memory_gb,
        "gpu_memory_gbytes_per_s": spec.memory_gbytes_per_s,
        "gpu_memory_bw_basis": "inferred",
        "intra_node_link": link,
        "intra_node_gbytes_per_s": None if link == "single-gpu" else intra,
        "intra_node_basis": "not-applicable" if link == "single-gpu" else "inferred",
        "scale_up_domain_gpus": spec.scale_up_domain_gpus if link != "pcie" else 1,
        "inter_node_fabric": fabric,
        "inter_node_gbits_per_s": fabric_gbits_per_s,
        "inter_node_basis": "stated" if fabric_gbits_per_s else "missing",
    }
    node = node_from_row(row, (usd_per_hour, "test-region") if usd_per_hour else None)
    assert not isinstance(node, str), node
    return node


def parse_real(scraper) -> tuple[dict[str, str], dict, list]:
    """A provider's real documents fetched from ../shared/mirror and parsed the way a refresh does
    (curated facts merged): (body by URL, row by instance type, prices)."""
    documents = fetch_from_mirror(scraper)
    parsed = pipeline.parse_documents(scraper, documents, datetime(2026, 12, 3))
    bodies = {d.url: d.body for d in documents if d.ok and d.body is not None}
    return bodies, {offer.instance_type: offer for offer in parsed.offers}, parsed.prices


def unquoted(bodies: dict[str, str], rows, prices) -> list[str]:
    """Every claim and price whose quote is not in the fetched document it cites (should be none);
    datasheet claims and claims citing documents the provider did not fetch are not checked."""
    bad = []
    for row in rows:
        for claim in row.claims:
            body = bodies.get(claim.source_url)
            if body is not None and claim.quote not in body:
                bad.append(f"{row.instance_type} {claim.field}: {claim.quote[:60]!r}")
    bad += [
        f"price {p.instance_type}: {p.quote[:60]!r}" for p in prices if p.quote not in bodies[p.source_url]
    ]
    return bad


# ------------------------------------------------------------------------------------------------
# The fault matrix (tests/faults/test_faults*.py): the real pipeline against the real mirror served over
# loopback by devtools.mirror_server, one fault per URL; the other providers must refresh normally.

FAULT_PROVIDERS = ["aws", "azure", "runpod", "gcp"]
AWS_PATH = "/" + AWS_PAGE
AZURE_H100_PATH = "/" + AZURE_DIR + "ndh100v5-series.md"
AZURE_SUMMARY_PATH = "/" + AZURE_DIR + "includes/ndh100v5-series-summary.md"
AZURE_ND_FAMILY_PATH = "/" + AZURE_DIR + "nd-family.md"
# Loopback answers in milliseconds, but a loaded 2-core machine can stall a read for a second: faults
# that are not about timeouts get a generous timeout, so exact counts do not depend on the load.
LOOPBACK_TIMEOUT = httpx.Timeout(connect=5.0, read=5.0, write=5.0, pool=10.0)
SHORT_TIMEOUT = httpx.Timeout(connect=0.3, read=0.3, write=1.0, pool=5.0)  # the timeout faults
T0 = datetime(2026, 12, 1, 6)
T1 = datetime(2026, 12, 2, 6)


class Waits:
    """An injected sleep that records the waits between retries and never waits."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)


class PerHost(httpx.AsyncBaseTransport):
    """Send some hosts to their own origin (a closed or black-holed port), the rest to the server."""

    def __init__(self, default: str, overrides: dict[str, str]) -> None:
        self.default = OriginTransport(default)
        # No connect retries inside the transport: the fetcher's own retries are what is under test.
        self.overrides = {
            host: OriginTransport(origin, httpx.AsyncHTTPTransport(retries=0))
            for host, origin in overrides.items()
        }

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        transport = self.overrides.get(request.url.host, self.default)
        return await transport.handle_async_request(request)


def fault_refresh(
    db: Path,
    origin: str,
    *,
    overrides: dict[str, str] | None = None,
    waits: Waits | None = None,
    now: datetime = T1,
    budget: Budget | None = None,
    providers: list[str] | None = None,
    timeout: httpx.Timeout = LOOPBACK_TIMEOUT,
    **kw,
) -> pipeline.RefreshReport:
    """Refresh the fault providers from the loopback ``origin`` with small timeouts, recorded waits
    and, if given, ``budget`` as the cap of every provider's budget."""

    async def go():
        transport = PerHost(origin, overrides or {})
        async with make_client(transport=transport, timeout=timeout) as client:
            options = {"sleep": waits or Waits(), "max_attempts": 3, "budget_cap": budget}
            return await pipeline.refresh(
                db,
                client,
                providers=providers or FAULT_PROVIDERS,
                mode="mirror",
                now=lambda: now,
                fetcher_options=options,
                **kw,
            )

    return asyncio.run(go())


def outcomes(report: pipeline.RefreshReport) -> dict[str, pipeline.ProviderOutcome]:
    return {o.provider: o for o in report.outcomes}


def provider_rows(db: Path, provider: str) -> tuple[int, bool, datetime]:
    """(rows, any stale, latest scraped_at) of one provider."""
    return query(
        db,
        f"SELECT count(*), bool_or(stale), max(scraped_at) FROM instances WHERE provider = '{provider}'",
    )[0]


def assert_others_fresh(db: Path, failed: str, providers: list[str] = FAULT_PROVIDERS) -> None:
    for provider in providers:
        if provider != failed:
            count, stale, scraped = provider_rows(db, provider)
            assert count > 0 and not stale and scraped == T1, provider


def assert_stale(db: Path, report: pipeline.RefreshReport, provider: str, cause: str) -> None:
    """The provider kept its last good rows (stale, with their own time) and names ``cause``."""
    outcome = outcomes(report)[provider]
    assert outcome.outcome == "stale" and cause in outcome.cause, outcome.cause
    assert report.exit_code == pipeline.EXIT_PROVIDER_FAILED
    count, stale, scraped = provider_rows(db, provider)
    assert count > 0 and stale and scraped == T0
    assert_others_fresh(db, provider)


# --- the app (AppTest) -----------------------------------------------------------------------------

APP_TABS = ["Ranking", "Compare", "Instance", "Measurements", "What's missing", "Conflicts", "Catalog status"]


def run_app(monkeypatch, db: Path, **query: str | list[str]):
    """The app on the catalog ``db``, opened at a URL with ``query`` (e.g. ``view="Compare"``).

    ``monkeypatch`` (pytest's) points $INTERCONNECT_CATALOG_DB at ``db`` for the test's duration.
    """
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("INTERCONNECT_CATALOG_DB", str(db))
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for key, value in query.items():
        app.query_params[key] = value
    app.run()
    assert not app.exception, app.exception
    return app


def with_sidebar(app):
    """``app`` with its sidebar drawn. After a run of the main area alone (a filter's change:
    ``ui.sidebar.main_only``) AppTest's tree holds only that fragment, where the browser keeps the
    sidebar it drew; a run with the same values draws it again."""
    if not app.sidebar.children:
        app.run()
    return app


def app_tab(app, label: str):
    """One tab of the app (only the open one has content: tabs run lazily)."""
    return app.tabs[APP_TABS.index(label)]


def rendered(markdown: str) -> str:
    """What a reader sees of escaped markdown: backslash escapes removed, ** bold marks dropped."""
    import re

    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown.replace("**", ""))


def shown_texts(container, kind: str | None = None) -> list[str]:
    """The provider-text blocks (``ui.text.show``) in an AppTest container, as a reader sees them;
    only those of ``kind`` (caption, subheader, warning, info, error) if given."""
    import html
    import re

    texts = []
    for element in container.get("html"):  # one block each, or several (``ui.text.show_all``)
        if not re.fullmatch(r'(<div class="ic-text ic-\w+">[^<]*</div>)+', element.value):
            continue
        for found in re.finditer(r'<div class="ic-text ic-(\w+)">([^<]*)</div>', element.value):
            if kind in (None, found.group(1)):
                texts.append(html.unescape(found.group(2)))
    return texts


def said(container, start: str) -> str:
    """The one caption block (``shown_texts``) in ``container`` that starts with ``start``."""
    (found,) = [text for text in shown_texts(container, "caption") if text.startswith(start)]
    return found


#: DuckDB's storage version numbers: 64 is what v0.10.x to v1.1.x write and every later one reads.
STORAGE_NUMBER = 64


def storage_number(path: Path) -> int:
    """The storage version in a DuckDB file's main header (after 8 checksum bytes and b"DUCK")."""
    head = path.read_bytes()[:20]
    assert head[8:12] == b"DUCK", f"{path} is not a DuckDB file"
    return int.from_bytes(head[12:20], "little")
