"""Coverage: every GPU instance type a document in ../shared lists is a catalog row, or is on the one
exclusion list (catalog/not_rows.toml) with its reason, which docs/providers.md's table is rendered
from ("Instance types the documents list that are not rows").

Each document (or kind of document) that lists instance types has a reader here, independent of the
scrapers' row building (it uses only their small readers: a table finder, a CSV reader, a price
parser), so a type a scraper drops still shows up; each is checked on its own.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable

import pytest

from catalog.coverage import EVERY_TYPE, excluded, exclusions, markdown_table
from scrapers import PROVIDER_ENTRIES, load
from scrapers.documents import coreweave, lambdalabs, oci_offers, runpod, scaleway
from scrapers.documents.aws import AC_URL, NEWER, _instance_rows
from scrapers.documents.aws_karpenter import BANDWIDTH_URL, parse_bandwidths
from scrapers.documents.aws_neuron import URLS as NEURON_URLS
from scrapers.documents.azure import FAMILY_PAGES, KNOWN_SERIES, series_urls
from scrapers.documents.gcp import capture
from scrapers.documents.oci import EXCERPT, TEMPLATE
from scrapers.markdown import markdown_tables
from scrapers.measurements import azurehpc, gcphealth, sparecores
from scrapers.offer_lists import primeintellect
from scrapers.offer_lists.skypilot import csv_rows, is_gpu_row
from scrapers.offer_lists.skypilot_catalog import SkyPilotCatalog
from scrapers.prices import aws as aws_prices
from scrapers.prices import azure as azure_prices
from scrapers.prices import gcp as gcp_prices
from scrapers.resale import upstream_provider
from scrapers.tables import clean, find_table, html_tables
from tests.helpers import MIRROR, ROOT, SHARED, query

pytestmark = pytest.mark.shared
SECTION = "## Instance types the documents list that are not rows"

Listed = dict[str, set[str]]
AWS_GPU = re.compile(rf"^(?:{aws_prices.GPU_INSTANCE_TYPE}|trn\d[a-z]*\.[a-z0-9]+)$")


def mirrored(url: str) -> str:
    return (MIRROR / url.removeprefix("https://")).read_text(encoding="utf-8")


def mirrored_or_none(url: str) -> str | None:
    path = MIRROR / url.removeprefix("https://")
    return path.read_text(encoding="utf-8") if path.is_file() else None


def copy(path: str) -> str:
    return (SHARED / path).read_text(encoding="utf-8")


# --- AWS ------------------------------------------------------------------------------------------


def aws_page() -> Listed:
    """AWS's accelerated-computing page (the mirror's revision): its performance table."""
    table = find_table(markdown_tables(mirrored(AC_URL)), r"^Instance type$", r"^Accelerators$")
    return {"aws": {name for _, name, _ in _instance_rows(table)}}


def aws_newer_revision() -> Listed:
    """The third-party copy of a newer revision of that page (HTML tables)."""
    table = find_table(html_tables(copy(NEWER)), r"^Instance type$", r"^Accelerators$")
    return {"aws": {name for _, name, _ in _instance_rows(table)}}


def aws_prices_file() -> Listed:
    """Karpenter's AWS price file: the GPU families the price parser keeps (P, G, GR, DL)."""
    return {"aws": {p.instance_type for p in aws_prices.parse_prices(mirrored(aws_prices.PRICES_URL))}}


def aws_bandwidth_file() -> Listed:
    """Karpenter's bandwidth table lists every EC2 type: its GPU and Trainium ones."""
    return {"aws": {name for name in parse_bandwidths(mirrored(BANDWIDTH_URL)) if AWS_GPU.match(name)}}


def aws_neuron_pages() -> Listed:
    """AWS's Neuron architecture pages: the trn instance types their spec tables name."""
    names = set()
    for url in NEURON_URLS:
        names |= set(re.findall(r"\btrn\d[a-z]*\.\d*x?large\b", mirrored(url)))
    return {"aws": names}


def aws_health_profiles() -> Listed:
    """AWS's sample health-check profile table (awsome-distributed-training instance-profiles.conf)."""
    url = (
        "https://raw.githubusercontent.com/aws-samples/awsome-distributed-training/main/"
        "4.validation_and_observability/2.gpu-cluster-healthcheck/instance-profiles.conf"
    )
    lines = [line for line in mirrored(url).splitlines() if line and not line.startswith("#")]
    return {"aws": {line.split("|", 1)[0] for line in lines}}


# --- Azure ----------------------------------------------------------------------------------------


def azure_series_pages() -> Listed:
    """Every size in the first column of a table on a mirrored Azure series page."""
    families = [(url, mirrored_or_none(url) or "") for url in FAMILY_PAGES]
    sizes = set()
    for url in series_urls(families):
        text = mirrored_or_none(url)
        for table in markdown_tables(text or ""):
            sizes |= {clean(row[0]) for row in table.rows if row and clean(row[0]).startswith("Standard_")}
    assert set(KNOWN_SERIES) <= set(series_urls(families))
    return {"azure": sizes}


def azure_prices_file() -> Listed:
    """Azure's price table (Azure/karpenter-provider-azure): every GPU size it prices, in any region."""
    return {"azure": {p.instance_type for p in azure_prices.parse_prices(mirrored(azure_prices.PRICES_URL))}}


def azure_health_checks() -> Listed:
    """Microsoft's health-check confs, one per size (the N-series ones: GPU sizes)."""
    return {"azure": {size for size in azurehpc.CONFS.values() if size.startswith("Standard_N")}}


# --- Google Cloud ---------------------------------------------------------------------------------


def gcp_captures() -> Listed:
    """The machine-type tables of the three text captures of Google's pages."""
    return {
        "gcp": {row.instance_type for path in capture.COPIES for row in capture.machine_tables(copy(path))}
    }


def gcp_prices_file() -> Listed:
    """The third-party GCP price file: the accelerator-optimized machine types it prices."""
    return {"gcp": {p.instance_type for p in gcp_prices.parse_prices(mirrored(gcp_prices.PRICES_URL))}}


def gcp_health_checks() -> Listed:
    """Google's cluster-health-scanner NCCL checks: the INSTANCE_TYPE each is for."""
    return {"gcp": {gcphealth.env_values(mirrored(url))["INSTANCE_TYPE"][1] for url in gcphealth.FILES}}


# --- Oracle ---------------------------------------------------------------------------------------


def oci_offer_lists() -> Listed:
    """SkyPilot's v8 and v6 OCI lists (local copies): every GPU line's shape."""
    shapes = set()
    for path in oci_offers.COPIES:
        shapes |= {r["InstanceType"] for r in csv.DictReader(io.StringIO(copy(path))) if r["AcceleratorName"]}
    return {"oci": shapes}


def oci_template() -> Listed:
    """Oracle's health-check template: the GPU shapes its branches name."""
    return {"oci": set(re.findall(r"'(BM\.GPU[\w.\-]*?\.\d+)' in nhc_node_shape", mirrored(TEMPLATE)))}


def oci_excerpt() -> Listed:
    """The third-party excerpt of Oracle's GPU shapes table: the shape in each row's first cell."""
    shapes = set()
    for table in markdown_tables(copy(EXCERPT)):
        for row in table.rows:
            match = re.match(r"^(?P<shape>(?:BM|VM)\.GPU[\w.\-]*?\.\d+)", clean(row[0]) if row else "")
            if match:
                shapes.add(match.group("shape"))
    return {"oci": shapes}


# --- CoreWeave ------------------------------------------------------------------------------------


def coreweave_index() -> Listed:
    """CoreWeave's docs index (third-party copy): its per-instance spec pages."""
    return {"coreweave": set(re.findall(r"platform/instances/gpu/([\w.-]+)\.md", copy(coreweave.INDEX)))}


def coreweave_jobs() -> Listed:
    """CoreWeave's NCCL job files: the node type each selects."""
    names = set()
    for url in coreweave.JOBS:
        names |= set(re.findall(r"values:\s+- ([\w.-]+)", mirrored(url)))
    return {"coreweave": names}


def coreweave_pricing() -> Listed:
    """CoreWeave's pricing transcription (third-party copy): its GPU plans, by the instance ID each is
    (a GPU plan with no ID is listed by its name, so it shows up)."""
    names = set()
    for block in re.split(r"(?m)^- name: ", copy(coreweave.PRICING))[1:]:
        name = block.split("\n", 1)[0].strip().strip("'")
        if re.search(r"\bNVIDIA\b|\bAMD Instinct\b", name):
            names.add(coreweave.PLAN_IDS.get(name, name))
    return {"coreweave": names}


# --- Offer lists, neoclouds' docs, resellers' upstream IDs ---------------------------------------


def offer_lists() -> Listed:
    """Every SkyPilot offer list a provider of the registry reads: each GPU line's type, named as that
    provider names its rows (``type_name``)."""
    listed: Listed = {}
    for provider, entry in PROVIDER_ENTRIES.items():
        cls = load(entry)
        if not issubclass(cls, SkyPilotCatalog):
            continue
        reader = cls()
        text = mirrored(reader.catalog_url)
        rows = [row for row in csv_rows(text, reader.catalog_url) if is_gpu_row(row)]
        listed.setdefault(provider, set()).update(reader.type_name(row) for row in rows)
    for provider, url in (("lambda", lambdalabs.VMS_URL), ("scaleway", scaleway.VMS_URL)):
        listed.setdefault(provider, set()).update(
            row.cell("InstanceType") for row in csv_rows(mirrored(url), url) if is_gpu_row(row)
        )
    return listed


def scaleway_docs() -> Listed:
    """Scaleway's bandwidth overview: the GPU Instance types of its table."""
    return {"scaleway": set(scaleway.internet_bandwidths(mirrored(scaleway.BANDWIDTH_URL)))}


def runpod_docs() -> Listed:
    """RunPod's GPU types reference: the GPU IDs its table names (RunPod's pods are sold per GPU type)."""
    text = mirrored(runpod.GPU_TYPES_URL)
    table = find_table(markdown_tables(text), r"GPU ?ID")
    column = table.column(r"GPU ?ID")
    return {"runpod": {clean(row[column]).strip("`") for row in table.rows if column < len(row)}}


def resold_upstream_ids() -> Listed:
    """Prime Intellect's offer list names the upstream cloud's own type for each resold offer: those of
    clouds that are providers here (Shadeform names none; other clouds' are rows under the reseller)."""
    listed: Listed = {}
    for row in csv_rows(mirrored(primeintellect.VMS_URL), primeintellect.VMS_URL):
        cloud, sep, _ = row.cell("InstanceType").partition("__")
        provider = upstream_provider(cloud) if sep else None
        upstream = row.cell("UpstreamCloudId").removesuffix("_SPOT")
        if provider in PROVIDER_ENTRIES and upstream and is_gpu_row(row):
            listed.setdefault(provider, set()).add(upstream)
    return listed


def sparecores_runs() -> Listed:
    """Spare Cores' measured runs (nvbandwidth), for the clouds this catalog covers and the others."""
    listed: Listed = {}
    for run in sparecores.known_runs():
        vendor, instance = run.split("/", 1)
        listed.setdefault(sparecores.CATALOG_PROVIDER.get(vendor, vendor), set()).add(instance)
    return listed


LISTINGS: dict[str, Callable[[], Listed]] = {
    "aws page": aws_page,
    "aws newer revision (copy)": aws_newer_revision,
    "aws prices (Karpenter)": aws_prices_file,
    "aws bandwidth (Karpenter)": aws_bandwidth_file,
    "aws Neuron pages": aws_neuron_pages,
    "aws health-check profiles": aws_health_profiles,
    "azure series pages": azure_series_pages,
    "azure prices (Karpenter)": azure_prices_file,
    "azure health checks": azure_health_checks,
    "gcp captures": gcp_captures,
    "gcp prices (third-party)": gcp_prices_file,
    "gcp health checks": gcp_health_checks,
    "oci offer lists (copies)": oci_offer_lists,
    "oci health-check template": oci_template,
    "oci shapes table (excerpt)": oci_excerpt,
    "coreweave docs index (copy)": coreweave_index,
    "coreweave NCCL jobs": coreweave_jobs,
    "coreweave pricing (copy)": coreweave_pricing,
    "offer lists": offer_lists,
    "scaleway docs": scaleway_docs,
    "runpod docs": runpod_docs,
    "primeintellect upstream IDs": resold_upstream_ids,
    "sparecores runs": sparecores_runs,
}


@pytest.fixture(scope="module")
def rows(real_catalog_file) -> set[tuple[str, str]]:
    return set(query(real_catalog_file, "SELECT provider, instance_type FROM instances"))


@pytest.mark.parametrize("listing", list(LISTINGS))
def test_every_type_a_document_lists_is_a_row_or_excluded_with_its_reason(rows, listing):
    listed = LISTINGS[listing]()
    assert any(listed.values()), f"{listing} names nothing: its reader no longer fits the document"
    unexplained = sorted(
        (provider, name)
        for provider, names in listed.items()
        for name in names
        if (provider, name) not in rows and excluded(provider, name) is None
    )
    assert unexplained == [], f"listed by {listing}, neither a row nor in catalog/not_rows.toml"


def test_nothing_excluded_is_a_row(rows):
    """An exclusion outlives its reason when the type becomes a row: the list must say only true things."""
    stale = sorted(
        (e.provider, name)
        for e in exclusions()
        for name in e.types
        if (e.provider, name) in rows or (e.whole_provider and any(p == e.provider for p, _ in rows))
    )
    assert stale == []


def test_every_excluded_type_is_listed_by_a_document_or_says_none_is():
    listed: dict[str, set[str]] = {}
    for read in LISTINGS.values():
        for provider, names in read().items():
            listed.setdefault(provider, set()).update(names)
    unlisted = sorted(
        (e.provider, name)
        for e in exclusions()
        if not e.named_by.startswith("no document in ../shared")
        for name in e.types
        if (name == EVERY_TYPE and not listed.get(e.provider))
        or (name != EVERY_TYPE and name not in listed.get(e.provider, set()))
    )
    assert unlisted == []


def test_the_docs_table_is_rendered_from_the_exclusion_list():
    doc = (ROOT / "docs/providers.md").read_text(encoding="utf-8")
    section = doc[doc.index(SECTION) :]
    table = markdown_table()
    assert table in section, (
        "docs/providers.md's table differs from catalog/not_rows.toml; it should read:\n" + table
    )
    for e in exclusions():
        assert e.reason.strip() and e.named_by.strip()


def test_a_type_listed_many_times_is_one_row_priced_in_each_place(real_catalog_file):
    """Trap: SkyPilot's OCI list repeats every shape once per availability-domain block (9 in the v8
    prefix) and Azure's price table lists a size once per region: each is one row, priced once per
    region as published."""
    oci = [
        r
        for path in oci_offers.COPIES
        for r in csv.DictReader(io.StringIO(copy(path)))
        if r["InstanceType"] == "BM.GPU.H100.8" and r["Price"]
    ]
    assert len(oci) >= 9
    azure = [
        p
        for p in azure_prices.parse_prices(mirrored(azure_prices.PRICES_URL))
        if p.instance_type == "Standard_ND96is_H100_v5"
    ]
    assert len(azure) > 1
    found = query(
        real_catalog_file,
        "SELECT provider, instance_type, regions FROM instances WHERE instance_type IN "
        "('BM.GPU.H100.8', 'Standard_ND96is_H100_v5') ORDER BY provider",
    )
    assert found == [
        ("azure", "Standard_ND96is_H100_v5", len({p.region for p in azure})),
        ("oci", "BM.GPU.H100.8", len({r["Region"] for r in oci})),
    ]


def test_a_machine_total_is_no_row_s_fabric_or_front_end(real_catalog_file):
    """Trap: the captures' "Maximum network bandwidth" is the machine's total (GPU NICs and gVNIC): for
    the RoCE machine types it is neither the GPU fabric's figure nor the front end's. And the A3 Edge
    cell that spans two lines ("600: for asia-south1 ..." / "400: for all other ...") names no type."""
    totals = {r.instance_type: r for r in capture.machine_tables(copy(capture.MACHINES_COPY))}
    assert all(re.fullmatch(r"[a-z]\d[a-z]?-[a-z]+-\d+[a-z]?(?:-metal)?", name) for name in totals)
    found = query(
        real_catalog_file,
        "SELECT instance_type, inter_node_gbits_per_s, frontend_gbits_per_s FROM instances WHERE "
        "provider = 'gcp' AND instance_type IN ('a3-ultragpu-8g', 'a4-highgpu-8g', 'a4x-maxgpu-4g-metal')",
    )
    assert len(found) == 3
    for name, fabric, frontend in found:
        assert 3600 not in (fabric, frontend), name
