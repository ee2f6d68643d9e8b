"""The fault matrix, prices: every price guarded like a fabric figure (catalog/price_gate.py).

A negative, NaN, 1e308 or 1000x price once left p5.48xlarge unpriced with exit 0; 100x and 1/1000
were published; Azure's price file cut to 60 % lost 627 prices with exit 0; a key listed twice
resolved first-wins (Azure) or last-wins (GCP). Each case refreshes a good catalog with one price
damaged: the price is refused with its reason or held back, the last good one stays, exit 1.
"""

from __future__ import annotations

import pytest

from catalog.price_gate import gate_prices
from devtools.mirror_server import Reply
from records.prices import Price
from scrapers.prices import aws as aws_prices
from scrapers.prices import azure as azure_prices
from tests.helpers import (
    Clock,
    build_mirror,
    fault_refresh,
    outcomes,
    query,
    run,
    url_to_mirror_path,
    url_to_path,
)

P5 = '"p5.48xlarge": 55.040000'
G5 = '"g5.xlarge": 1.006000'


@pytest.fixture
def priced(tmp_path):
    """The small mirror refreshed once: (mirror, db, AWS price table, clock a day later)."""
    mirror, db, clock = build_mirror(tmp_path / "m"), tmp_path / "c.duckdb", Clock()
    assert run(db, mirror, clock).exit_code == 0
    clock.advance()
    return mirror, db, url_to_path(mirror, aws_prices.PRICES_URL), clock


def price_of(db, instance_type: str) -> tuple:
    return query(
        db,
        f"SELECT min_usd_per_hour, usd_per_gpu_hour FROM instances WHERE instance_type = '{instance_type}'",
    )[0]


@pytest.mark.parametrize(
    ("printed", "why"),
    [
        ("-55.040000", "price '-55.040000' is negative"),
        ("NaN", "price 'NaN' is not a number"),
        ("Inf", "price 'Inf' is not a number"),
        ("1e308", "price '1e308' is above 10,000 USD/h"),
        ("55040.000000", "price '55040.000000' is above 10,000 USD/h"),  # 1000x
        ("5504.000000", "on-demand 5504 USD/h is 688 USD per GPU-hour for 8 GPUs, outside 0.01-200"),  # 100x
        ("0.055040", "on-demand 0.05504 USD/h is 0.00688 USD per GPU-hour for 8 GPUs, outside 0.01-200"),
    ],
)
def test_an_implausible_price_is_refused_and_the_last_good_one_kept(priced, printed, why):
    mirror, db, table, clock = priced
    table.write_text(table.read_text().replace(P5, f'"p5.48xlarge": {printed}'))
    report = run(db, mirror, clock)
    aws = report.outcomes[0]
    assert (report.exit_code, aws.outcome) == (1, "carried")
    assert aws.cause.startswith("1 prices refused: ") and why in aws.cause
    assert "1 prices not in this parse, carried: p5.48xlarge in us-east-1" in aws.cause
    assert price_of(db, "p5.48xlarge") == (55.04, 6.88)


def test_a_price_that_jumped_8x_is_held_back_and_accept_changes_takes_it(priced):
    mirror, db, table, clock = priced
    table.write_text(table.read_text().replace(G5, '"g5.xlarge": 10.060000'))  # 10x, inside the bounds
    report = run(db, mirror, clock)
    aws = report.outcomes[0]
    assert (report.exit_code, aws.outcome) == (1, "carried")
    assert aws.cause == "1 prices held back as suspect: g5.xlarge in us-east-1 1.006 → 10.06 USD/h (10x)"
    assert price_of(db, "g5.xlarge") == (1.006, 1.006)
    clock.advance()
    accepted = run(db, mirror, clock, accept_changes=True)
    assert (accepted.exit_code, accepted.outcomes[0].outcome) == (0, "ok")
    assert price_of(db, "g5.xlarge") == (10.06, 10.06)


def test_a_price_creeping_up_7x_per_refresh_is_held_at_the_second_step(priced):
    mirror, db, table, clock = priced
    text = table.read_text()
    table.write_text(text.replace(G5, '"g5.xlarge": 7.042000'))  # 7x: under the factor
    assert run(db, mirror, clock).exit_code == 0
    assert price_of(db, "g5.xlarge") == (7.042, 7.042)
    clock.advance()
    table.write_text(text.replace(G5, '"g5.xlarge": 49.294000'))  # 7x again: 49x the accepted 1.006
    report = run(db, mirror, clock)
    assert report.exit_code == 1
    assert (
        "g5.xlarge in us-east-1 7.042 → 49.294 USD/h (49x the last accepted 1.006)"
        in report.outcomes[0].cause
    )
    assert price_of(db, "g5.xlarge") == (7.042, 7.042)  # the last good price, not the new one
    clock.advance()
    assert run(db, mirror, clock, accept_changes=True).exit_code == 0  # a person accepts 49.294
    clock.advance()
    table.write_text(text.replace(G5, '"g5.xlarge": 50.000000'))
    assert run(db, mirror, clock).exit_code == 0  # held against 49.294 now, not 1.006
    assert price_of(db, "g5.xlarge") == (50.0, 50.0)


def test_a_price_the_file_no_longer_lists_is_carried_not_gone(priced):
    mirror, db, table, clock = priced
    table.write_text(table.read_text().replace(G5, ""))  # 3 of 4 prices left: more than half
    report = run(db, mirror, clock)
    assert (report.exit_code, report.outcomes[0].cause) == (
        1,
        "1 prices not in this parse, carried: g5.xlarge in us-east-1",
    )
    assert price_of(db, "g5.xlarge") == (1.006, 1.006)


def test_a_type_listed_twice_in_the_aws_table_is_refused_with_its_lines(priced):
    mirror, db, table, clock = priced
    table.write_text(table.read_text().replace(P5, P5 + ', "p5.48xlarge": 0.550400'))
    report = run(db, mirror, clock)
    cause = report.outcomes[0].cause
    assert report.exit_code == 1
    assert "p5.48xlarge is listed 2 times in us-east-1 (lines 22, 22)" in cause
    assert price_of(db, "p5.48xlarge") == (55.04, 6.88)


def test_the_gate_states_its_bounds_per_gpu_hour_and_per_instance():
    def price(usd: float) -> Price:
        return Price("t", "box", "r", usd, None, "https://t.test/p", "box r")

    gated = gate_prices([price(0.005)], (), gpu_counts={"box": None})
    assert gated.refused == ["box in r: on-demand 0.005 USD/h is outside 0.01-10000 USD/h"]
    assert gated.prices == []
    eight = gate_prices([price(2000.0)], (), gpu_counts={"box": 8.0})
    assert eight.refused == [
        "box in r: on-demand 2000 USD/h is 250 USD per GPU-hour for 8 GPUs, outside 0.01-200"
    ]
    fraction = gate_prices([price(0.25)], (), gpu_counts={"box": 0.125})  # 2 USD per whole GPU-hour
    assert fraction.refused == [] and fraction.prices == [price(0.25)]


# -- the real Azure price file, over loopback -------------------------------------------------------

AZURE_PRICES_PATH = "/" + azure_prices.PRICES_URL.split("://", 1)[1]


@pytest.mark.slow
def test_the_real_azure_price_file_cut_to_60_percent_is_a_failure_not_exit_0(fault_db, mirror_server):
    text = url_to_mirror_path(azure_prices.PRICES_URL).read_bytes()
    mirror_server.script(AZURE_PRICES_PATH, Reply(200, text[: len(text) * 6 // 10]))
    before = query(fault_db, "SELECT count(*) FROM current_prices WHERE provider = 'azure'")[0][0]
    report = fault_refresh(fault_db, mirror_server.base_url, providers=["azure"])
    azure = outcomes(report)["azure"]
    assert (report.exit_code, azure.outcome) == (1, "carried")
    lost = int(azure.cause.split(" prices not in this parse")[0].rsplit(" ", 1)[-1])
    assert lost > 300, azure.cause
    after = query(fault_db, "SELECT count(*) FROM current_prices WHERE provider = 'azure'")[0][0]
    assert after == before  # every price kept


@pytest.mark.slow
def test_a_size_listed_twice_in_the_real_azure_file_is_refused_with_its_lines(fault_db, mirror_server):
    text = url_to_mirror_path(azure_prices.PRICES_URL).read_text()
    entry = '"Standard_ND96isr_H100_v5":              98.320000,'
    assert entry in text
    mirror_server.script(
        AZURE_PRICES_PATH,
        Reply(200, text.replace(entry, entry + '\n\t\t"Standard_ND96isr_H100_v5": 0.010000,', 1).encode()),
    )
    report = fault_refresh(fault_db, mirror_server.base_url, providers=["azure"])
    azure = outcomes(report)["azure"]
    assert report.exit_code == 1
    assert "Standard_ND96isr_H100_v5 is listed 2 times in eastus (lines " in azure.cause
    eastus = query(
        fault_db,
        "SELECT usd_per_hour FROM current_prices "
        "WHERE instance_type = 'Standard_ND96isr_H100_v5' AND region = 'eastus'",
    )
    assert eastus == [(98.32,)]


@pytest.mark.slow
def test_a_carried_offer_list_row_keeps_its_prices(tmp_path, mirror_server):
    from scrapers.documents.lambdalabs import VMS_URL

    db, path = tmp_path / "c.duckdb", "/" + VMS_URL.split("://", 1)[1]
    mirror_server.scripts.clear()
    from tests.helpers import T0

    assert fault_refresh(db, mirror_server.base_url, providers=["lambda"], now=T0).exit_code == 0
    good = "SELECT count(*) FROM current_prices WHERE instance_type = 'gpu_8x_h100_sxm5'"
    before = query(db, good)[0][0]
    text = url_to_mirror_path(VMS_URL).read_text()
    lines = text.splitlines(keepends=True)
    damaged = "".join(ln.replace(",8.0,", ",-8.0,", 1) if "gpu_8x_h100_sxm5" in ln else ln for ln in lines)
    assert damaged != text
    mirror_server.script(path, Reply(200, damaged.encode()))
    report = fault_refresh(db, mirror_server.base_url, providers=["lambda"])
    lam = outcomes(report)["lambda"]
    assert (report.exit_code, lam.outcome, lam.rows_carried) == (1, "carried", 1)
    assert before > 1 and query(db, good) == [(before,)]  # none of its prices "(gone)"
    assert query(db, "SELECT min_usd_per_hour IS NOT NULL FROM instances "
                     "WHERE instance_type = 'gpu_8x_h100_sxm5'") == [(True,)]  # fmt: skip
