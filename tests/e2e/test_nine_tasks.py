"""The README's nine tasks in Chromium, each in at most two steps from a fresh page (the steps are
marked), on the catalog refreshed from ../shared (skipped without it). With INTERCONNECT_SCREENSHOTS=DIR
(``make screenshots``) each writes docs/screenshots/task-N.png; docs/app.md shows them."""

from __future__ import annotations

import json

import pytest

from devtools.browser import table_rows, wait_idle
from tests.e2e import test_e2e as e2e
from tests.e2e.test_e2e import caption, choose, csv_download, open_app, open_tab, screenshot, search, step

# The browser, the app on the real catalog and a fresh page per test: test_e2e.py's fixtures.
browser, real_app, page = e2e.browser, e2e.real_app, e2e.page

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.shared, pytest.mark.timeout(600)]


def ready(page, label: str, landed: str) -> None:
    """Pick a question in "Start from a question"; idempotent, as ``step``'s retry needs: once the
    question has landed (``landed`` is in the URL) it is not picked again (a second pick would start
    a second run)."""
    if landed in page.url:
        return
    box = page.locator(".st-key-ready [role=combobox]")
    box.click()
    page.locator("[role=listbox] [role=option]").filter(has_text=label).first.click()


def texts(page, kind: str) -> list[str]:
    return page.locator(f".ic-{kind}").all_inner_texts()


def test_task_1_cheapest_for_a_model_and_why(real_app, page):
    open_app(page, real_app)
    serve = "Serve Llama 3.1 70B: what to rent, what it costs"
    step(page, lambda: ready(page, serve, "by=cost"))  # step 1
    assert "by=cost" in page.url
    (why,) = [t for t in texts(page, "info") if t.startswith("Cheapest: ")]
    assert "because it rents at $" in why and "per GPU-hour" in why
    assert "a price that looks like a placeholder" in why  # Mithril's 1.0 USD leads, and it is said
    screenshot(page, "task-1")


def test_task_2_nvswitch_fabric_floor_priced_in_a_region(real_app, page):
    open_app(page, real_app)
    nvswitch = "8 GPUs, NVSwitch, fabric ≥ 3,200 Gb/s, cheapest first"
    step(page, lambda: ready(page, nvswitch, "min_fabric="))  # step 1
    step(page, lambda: choose(page, "region", "us-east-1"))  # step 2
    prices = page.get_by_text("Prices: USD as published, on-demand, in us-east-1.", exact=False)
    prices.wait_for()
    count = int(caption(page).split()[0])  # only the rows priced there
    page.wait_for_function(
        """(count) => document.querySelectorAll('[data-testid="stDataFrame"] table tr td:first-child').length
                      === count""",
        arg=count,
    )
    header, *rows = table_rows(page, showing="USD/GPU-hour")
    assert rows and {row[header.index("GPUs")] for row in rows} == {"8"}
    assert "region=us-east-1" in page.url and "min_fabric=3200" in page.url
    screenshot(page, "task-2")


def test_task_3_three_instances_side_by_side_with_price(real_app, page):
    open_app(page, real_app)
    names = ["p5.48xlarge", "a3-highgpu-8g", "Standard_ND96isr_H100_v5"]
    step(page, lambda: search(page, ", ".join(names)))  # step 1
    step(page, lambda: open_tab(page, "Compare"))  # step 2
    header, *rows = table_rows(page, 0, showing="on-demand (USD)")
    assert len([h for h in header if h.split(" (")[0] in names]) == 3
    prices = next(row for row in rows if row[0] == "on-demand (USD)")
    assert all("USD/hour in " in cell for cell in prices[1:])
    screenshot(page, "task-3")


def test_task_4_what_is_missing_for_a_provider_prices_included(real_app, page):
    open_app(page, real_app)
    step(page, lambda: choose(page, "provider", "runpod"))  # step 1
    step(page, lambda: open_tab(page, "What's missing"))  # step 2
    priced = page.locator('[data-testid="stMain"]').get_by_text("runpod 0 of", exact=False)
    priced.first.wait_for()
    assert "rows priced" in priced.first.inner_text()
    header, *rows = table_rows(page, showing="why")
    assert {row[header.index("provider")] for row in rows} == {"runpod"}
    screenshot(page, "task-4")


def test_task_5_claimed_expected_measured_like_for_like(real_app, page):
    open_app(page, real_app)
    step(page, lambda: search(page, "a3-highgpu-8g"))  # step 1
    step(page, lambda: open_tab(page, "Instance"))  # step 2
    wait_idle(page)
    assert page.locator(".ic-subheader").first.inner_text() == "a3-highgpu-8g (gcp)"
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="stDataFrame"] td')].some(
                     (c) => c.textContent.includes('claimed per direction (900 bidirectional'))""",
        timeout=60_000,
    )  # claimed, expected and measured, one way against one way
    screenshot(page, "task-5")


def test_task_6_share_the_view(real_app, browser, page):
    open_app(page, real_app, "?mode=Links+only&q=B200&unit=Gb/s&per=node&view=Compare")  # a view
    seen = table_rows(page, 1, showing="fabric")
    other = browser.new_page()  # step 1: the copied address, opened by a colleague
    try:
        open_app(other, real_app, page.url.removeprefix(real_app.url))
        assert other.get_by_role("tab", name="Compare", selected=True).count() == 1
        assert table_rows(other, 1, showing="fabric") == seen and caption(other) == caption(page)
        screenshot(other, "task-6")
    finally:
        other.close()


def test_task_7_download_what_is_shown_after_a_sort(real_app, page, tmp_path):
    open_app(page, real_app, "?mode=Links+only")
    before = table_rows(page, showing="USD/GPU-hour")
    step(page, lambda: choose(page, "sort", "price per GPU-hour, cheapest first"))  # step 1
    shown = e2e.rows_once_changed(page, before)  # the grid is updated, not built anew
    with page.expect_download() as download:  # step 2
        page.get_by_role("button", name="Download CSV").click()
    download.value.save_as(tmp_path / "links.csv")
    about, saved = csv_download(tmp_path / "links.csv")
    assert [r[0] for r in saved[1 : len(shown)]] == [r[0] for r in shown[1:]]
    assert "order: price per GPU-hour, cheapest first" in about[-1]
    screenshot(page, "task-7")


def test_task_8_train_405b_on_a_token_budget(real_app, page):
    open_app(page, real_app)
    train = "Train Llama 3.1 405B: what to rent, what it costs"
    step(page, lambda: ready(page, train, "train_tokens="))  # step 1
    header, first = table_rows(page, showing="days to train")[:2]
    assert first[header.index("days to train")] and first[header.index("USD to train")]
    assert page.get_by_role("heading", name="Training llama-3.1-405b", exact=False).is_visible()
    screenshot(page, "task-8")


def test_task_9_plan_your_own_model(real_app, page):
    from tests.unit.test_planner_serving import LLAMA_70B_CONFIG

    open_app(page, real_app)
    page.get_by_text("Your own model: a Hugging Face config.json").click()  # step 1
    box = page.locator(".st-key-hf_config textarea")
    box.fill(json.dumps(LLAMA_70B_CONFIG))
    step(page, lambda: box.press("Control+Enter"))  # step 2
    assert page.get_by_role("heading", name="Serving your model (config.json)", exact=False).is_visible()
    assert any(t.startswith("Read as: 70.6B parameters") for t in texts(page, "info"))
    screenshot(page, "task-9")
