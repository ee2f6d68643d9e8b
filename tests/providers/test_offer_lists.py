"""The offer lists in the catalog built from ../shared/mirror: every provider priced, resold offers beside
their upstream rows, the done-when rows present under their providers' own names."""

from __future__ import annotations

import pytest

from records.documents import DocumentSet
from scrapers import PROVIDER_NAMES, REGISTRY
from scrapers.offer_lists.skypilot import csv_rows, is_gpu_row
from scrapers.offer_lists.skypilot_catalog import SkyPilotCatalog
from tests.conftest import shared_fixture
from tests.helpers import SHARED, fetch_from_mirror, query

pytestmark = pytest.mark.shared


def test_real_at_least_15_providers_and_every_offer_list_priced(real_catalog_file):
    rows = dict(query(real_catalog_file, "SELECT provider, count(*) FROM instances GROUP BY 1"))
    priced = dict(
        query(
            real_catalog_file, "SELECT provider, count(DISTINCT instance_type) FROM current_prices GROUP BY 1"
        )
    )
    assert len(rows) == len(PROVIDER_NAMES) >= 15  # the measurement sources have no rows
    for name, cls in REGISTRY.items():
        if issubclass(cls, SkyPilotCatalog):
            assert priced.get(name, 0) > 0, name
    orphans = query(
        real_catalog_file,
        "SELECT provider, instance_type FROM current_prices "
        "EXCEPT SELECT provider, instance_type FROM instances",
    )
    offer_lists = {name for name, cls in REGISTRY.items() if issubclass(cls, SkyPilotCatalog)}
    # every price of an offer list is about a row (AWS/Azure/GCP price files list more types than
    # their docs describe: catalog.read.prices.unlisted_prices lists those as a finding)
    assert [o for o in orphans if o[0] in offer_lists] == []


@pytest.mark.parametrize(
    ("provider", "instance_type", "usd_per_hour"),
    [
        ("lambda", "gpu_8x_h100_sxm5", 31.92),
        ("hyperstack", "n3-H100-SXM5x8", 19.2),
        ("nebius", "gpu-h100-sxm_8gpu-128vcpu-1600gb", 23.6),
        ("verda", "8B200.240V", None),  # only a spot price is published
    ],
)
def test_real_done_when_rows_have_prices(real_catalog_file, provider, instance_type, usd_per_hour):
    cheapest = query(
        real_catalog_file,
        f"SELECT min(usd_per_hour), count(*) FROM current_prices WHERE provider = '{provider}' "
        f"AND instance_type = '{instance_type}'",
    )
    assert cheapest[0][0] == usd_per_hour and cheapest[0][1] > 0


def test_real_scaleway_h100_sxm_8_is_a_row_without_a_price(real_catalog_file):
    row = query(
        real_catalog_file,
        "SELECT gpu_model, gpu_count, intra_node_link, intra_node_gbytes_per_s, frontend_gbits_per_s "
        "FROM instances WHERE provider = 'scaleway' AND instance_type = 'H100-SXM-8-80G'",
    )
    assert row == [("H100-SXM-80GB", 8.0, "nvswitch", 900.0, 20.0)]
    assert (
        query(real_catalog_file, "SELECT * FROM current_prices WHERE instance_type = 'H100-SXM-8-80G'") == []
    )


def test_real_resold_offers_beside_their_upstream_rows(real_catalog_file):
    resold = query(
        real_catalog_file,
        "SELECT seller, seller_kind, upstream_provider, upstream_instance_type, upstream_listed, gpu_model, "
        "upstream_gpu_model, min_usd_per_hour, upstream_min_usd_per_hour FROM resold_offers "
        "WHERE instance_type = 'lambdalabs__8xH100_80GB__208__1800'",
    )
    assert resold == [
        (
            "primeintellect",
            "aggregator",
            "lambda",
            "gpu_8x_h100_sxm5",
            True,
            "H100-SXM-80GB",
            "H100-SXM-80GB",
            23.92,
            31.92,
        )
    ]
    kinds = dict(
        query(real_catalog_file, "SELECT seller, any_value(seller_kind) FROM resold_offers GROUP BY 1")
    )
    assert kinds == {"vast": "marketplace", "shadeform": "aggregator", "primeintellect": "aggregator"}
    clouds = query(real_catalog_file, "SELECT DISTINCT seller_kind FROM instances WHERE provider = 'lambda'")
    assert clouds == [("cloud",)]
    listed = query(
        real_catalog_file,
        "SELECT count(*) FILTER (upstream_listed), count(*) FROM resold_offers "
        "WHERE seller = 'primeintellect'",
    )
    assert listed[0][0] >= 10 and listed[0][1] == 79


def test_real_nebius_found_by_platform_or_preset(real_catalog_file):
    by_platform = query(
        real_catalog_file,
        "SELECT instance_type FROM instances WHERE platform = 'gpu-h100-sxm' ORDER BY preset",
    )
    assert by_platform == [("gpu-h100-sxm_1gpu-16vcpu-200gb",), ("gpu-h100-sxm_8gpu-128vcpu-1600gb",)]
    by_preset = query(
        real_catalog_file, "SELECT platform FROM instances WHERE preset = '8gpu-128vcpu-1600gb'"
    )
    assert sorted(by_preset) == [("gpu-h100-sxm",), ("gpu-h200-sxm",)]


@pytest.mark.parametrize("name", sorted(n for n, c in REGISTRY.items() if issubclass(c, SkyPilotCatalog)))
def test_real_every_gpu_instance_type_of_the_list_is_a_row(name):
    """No GPU line of a real offer list is dropped: each instance type it names is a row."""
    scraper = REGISTRY[name]()
    documents = DocumentSet(fetch_from_mirror(scraper))
    listed = {
        scraper.type_name(r) for r in csv_rows(documents.text(scraper.catalog_url), name) if is_gpu_row(r)
    }
    rows = {offer.instance_type for offer in scraper.parse(documents)}
    assert listed and listed <= rows


@shared_fixture()
def manifest() -> str:
    return (SHARED / "MANIFEST.md").read_text(encoding="utf-8")


def test_real_every_skypilot_list_a_provider_reads_has_its_age_declared(manifest):
    """Each SkyPilot catalog a registered provider reads declares the commit ../shared/MANIFEST.md
    names for its copy (``stored_commit`` on its class; OCI's copies in scrapers.offer_lists.ages);
    the v6 ones are frozen, the v8 ones current, a newer tree's newer, and their date unknown."""
    from catalog.pricing import offer_lists
    from scrapers.offer_lists.ages import CURRENT, FROZEN, NEWER
    from scrapers.offer_lists.skypilot import CATALOGS

    read = {getattr(REGISTRY[name], "catalog_url", None) for name in PROVIDER_NAMES} | {
        CATALOGS + "v8/oci/vms.csv",
        CATALOGS + "v6/oci/vms.csv",
    }
    read.discard(None)
    lists = offer_lists()
    assert read == {o.url for o in lists} and len(lists) == len(read)
    for offer_list in lists:
        assert len(offer_list.stored_commit) == 40 and offer_list.stored_commit in manifest, offer_list.url
        assert offer_list.data_as_of is None and "undated" in offer_list.as_of_note
        trees = {FROZEN: ("/v6/",), CURRENT: ("/v8/",), NEWER: ("/v9/", "/v10/")}  # SkyPilot reads v8
        assert any(tree in offer_list.url for tree in trees[offer_list.status]), offer_list.url


def test_a_list_s_tree_decides_its_status():
    from scrapers.offer_lists.ages import CURRENT, FROZEN, NEWER, offer_list
    from scrapers.offer_lists.skypilot import CATALOGS

    status = {v: offer_list("p", f"{CATALOGS}{v}/p/vms.csv", "c").status for v in ("v6", "v8", "v9", "v10")}
    assert status == {"v6": FROZEN, "v8": CURRENT, "v9": NEWER, "v10": NEWER}
    with pytest.raises(ValueError, match="not under a SkyPilot catalog tree"):
        offer_list("p", "https://example.com/vms.csv", "c")
