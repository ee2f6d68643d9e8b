"""Property tests of the price parsers (scrapers/prices/aws.py, azure_prices.py, gcp_prices.py): random
Go maps and JSON, the fixtures and the real files, mutated. Every parse gives well-formed prices whose
quotes are in the text, or raises ParseError."""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records.prices import MAX_USD_PER_HOUR, Price
from scrapers.prices import aws as aws_prices
from scrapers.prices import azure as azure_prices
from scrapers.prices import gcp as gcp_prices
from tests.properties.property_checks import MARKS, expect, run_parser
from tests.properties.property_inputs import NUMBER, TEXT, fixtures, mutated, or_noise

pytestmark = MARKS

PRICE = st.one_of(
    NUMBER,
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["0.000000", "-1.5", "1e999", "10000.000001", "55.040000", ""]),
)
AWS_NAME = st.sampled_from(["p5.48xlarge", "g5.xlarge", "p6-b200.48xlarge", "gr6.4xlarge", "c5.large", "p5."])
AZURE_NAME = st.sampled_from(
    [
        "Standard_ND96isr_H100_v5",
        "Standard_NC6_Promo",
        "Standard_NV6  ",
        "Standard_D2s_v3",
        "Ddsv4_Type 1",
        "",
    ]
)
GCP_NAME = st.sampled_from(
    ["a3-highgpu-8g", "a2-highgpu-1g", "g2-standard-96", "g1-small", "n1-standard-8", "a-"]
)


def check_prices(prices: list[Price], provider: str, text: str) -> list[Price]:
    """Every price well-formed, attributed to ``provider``, and quoting the text it came from."""
    expect(isinstance(prices, list) and bool(prices), "not a non-empty list (an empty parse must raise)")
    for price in prices:
        expect(isinstance(price, Price) and price.provider == provider, f"{price!r}")
        expect(bool(price.instance_type) and price.instance_type == price.instance_type.strip(), "name")
        expect(bool(price.region.strip()), f"empty region in {price!r}")
        for value in (price.usd_per_hour, price.spot_usd_per_hour):
            expect(value is None or (math.isfinite(value) and 0 < value <= MAX_USD_PER_HOUR), f"{value!r}")
        expect(price.quote in text, f"quote {price.quote!r} is not in the text")
    return prices


def go_map(regions: list[tuple[str, list[tuple[str, str]]]], *, aws: bool) -> str:
    blocks = []
    for region, entries in regions:
        body = "\n".join(f'\t\t"{name}": {value},' for name, value in entries)
        opening = (
            f'\t"{region}": {{' if aws else f'\tinitialOnDemandPrices["{region}"] = map[string]float64{{'
        )
        blocks.append(f"{opening}\n{body}\n\t}}")
    return "var prices = map[string]float64{\n" + "\n".join(blocks) + "\n}\n"


def go_maps(names: st.SearchStrategy[str], *, aws: bool) -> st.SearchStrategy[str]:
    region = or_noise(st.sampled_from(["us-east-1", "eastus", "eu-west-2", ""]), 2)
    entry = st.tuples(or_noise(names, 2), PRICE)
    return st.lists(st.tuples(region, st.lists(entry, max_size=4)), max_size=3).map(
        lambda r: go_map(r, aws=aws)
    )


def aws_parse(text: str) -> list[Price]:
    return check_prices(aws_prices.parse_prices(text), "aws", text)


def azure_parse(text: str) -> list[Price]:
    return check_prices(azure_prices.parse_prices(text), "azure", text)


def gcp_parse(text: str) -> list[Price]:
    return check_prices(gcp_prices.parse_prices(text), "gcp", text)


JSON_SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5)
)
JSON_VALUE = st.recursive(
    JSON_SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
)
GCP_LIST = st.dictionaries(
    or_noise(GCP_NAME, 1), st.one_of(st.floats(-1, 2e4), st.integers(-5, 10**6), JSON_VALUE)
)
GCP_DOC = st.dictionaries(
    or_noise(st.sampled_from(["us-central1", "asia-northeast1", ""]), 1),
    st.one_of(st.fixed_dictionaries({"on_demand": GCP_LIST, "spot": GCP_LIST}), JSON_VALUE),
    max_size=3,
).map(lambda regions: json.dumps({"prices": regions}, separators=(",", ":")))


@given(text=st.one_of(go_maps(AWS_NAME, aws=True), fixtures("aws/pricing-*.go").flatmap(mutated), TEXT))
def test_aws_prices(text):
    run_parser(lambda: aws_parse(text), text)


@given(text=st.one_of(go_maps(AZURE_NAME, aws=False), fixtures("azure/pricing-*.go").flatmap(mutated), TEXT))
def test_azure_prices(text):
    run_parser(lambda: azure_parse(text), text)


@given(text=st.one_of(GCP_DOC, fixtures("gcp/initial-prices-*.json").flatmap(mutated), TEXT))
def test_gcp_prices(text):
    run_parser(lambda: gcp_parse(text), text)


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_price_files_real_mutated(real_document, data):
    aws = data.draw(mutated(real_document(aws_prices.PRICES_URL)))
    run_parser(lambda: aws_parse(aws), aws)
    azure_full = real_document(azure_prices.PRICES_URL)
    azure = data.draw(mutated(azure_full[: azure_full.index("// australiaeast")]))  # two regions of 57
    run_parser(lambda: azure_parse(azure), azure)
    gcp_full = real_document(gcp_prices.PRICES_URL)
    gcp = data.draw(mutated(gcp_full[: gcp_full.index(',"asia-northeast1":')] + "}}"))  # three regions of 43
    run_parser(lambda: gcp_parse(gcp), gcp)
