"""The app in Chromium (Playwright driving Debian's chromium): load, the three questions in two steps
each, switching the workload, a shared URL, the CSV download, the dark theme, the layout at 1280x800,
and provider text that must stay text. Skipped, with the reason, where Chromium or Playwright is
missing; ``make e2e`` installs both and runs only these.

With INTERCONNECT_SCREENSHOTS=DIR (``make screenshots``) the question tests write the README's
screenshots there; a normal run writes nothing.
"""

from __future__ import annotations

import contextlib
import csv
import http.server
import os
import re
import shutil
import threading
from pathlib import Path
from urllib.parse import urlencode

import duckdb
import pytest

from devtools.browser import AppServer, chromium, table_rows, timed_run, wait_idle
from tests.helpers import MIRROR, SNAPSHOT_PROVIDERS, SNAPSHOT_ROWS

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(600)]

SCREENSHOTS = os.environ.get("INTERCONNECT_SCREENSHOTS")


@pytest.fixture(scope="module")
def browser(request, small_catalog_file):
    """One Chromium for the module. The catalogs are built first, the real one too where ../shared
    is: a refresh runs asyncio, which cannot start while Playwright's loop runs (a test on the real
    catalog run after one on the small catalog, as ``-k`` may pick them, once failed so)."""
    from playwright.sync_api import sync_playwright

    if MIRROR.is_dir():
        request.getfixturevalue("real_catalog_file")

    with sync_playwright() as playwright, chromium(playwright) as context:
        yield context


@pytest.fixture(scope="module")
def real_app(real_catalog_file):
    with AppServer(real_catalog_file) as server:
        yield server


@pytest.fixture(scope="module")
def small_app(small_catalog_file):
    with AppServer(small_catalog_file) as server:
        yield server


@pytest.fixture
def page(browser):
    page = browser.new_page()
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.console_errors = errors
    yield page
    page.close()


#: How long ``step`` waits for the run an action starts before it takes the action as lost and does
#: it again: long enough that a run merely started late (a loaded 2-core machine) is not doubled.
RETRY_AFTER_MS = 20_000


def step(page, action) -> None:
    """One user action, until the run it starts has ended (done again if a click was lost: so every
    action given must be idempotent, a no-op once it has landed)."""
    timed_run(page, action, retry_after_ms=RETRY_AFTER_MS)


def open_app(page, server: AppServer, query: str = "") -> None:
    page.goto(server.url + query)
    page.wait_for_selector('[data-testid="stDataFrame"], [data-testid="stAlert"]', timeout=60_000)
    wait_idle(page)


def caption(page) -> str:
    return page.locator('[data-testid="stMain"] [data-testid="stCaptionContainer"]').first.inner_text()


def search(page, text: str) -> None:
    box = page.locator(".st-key-q input")
    box.fill(text)
    box.press("Enter")


def choose(page, key: str, option: str) -> None:
    """Pick ``option`` in the select or multiselect whose key is ``key``. Idempotent, as ``step``'s
    retry needs: a multiselect whose pick already landed (its tag is shown) no longer lists the option,
    so it is left as it is."""
    exactly = re.compile(f"^{re.escape(option)}$")
    multiple = page.locator(f".st-key-{key} [data-testid=stMultiSelect]").count() > 0
    tag = page.locator(f".st-key-{key} [data-tag]").filter(has_text=exactly)
    if multiple and tag.count():
        return
    box = page.locator(f".st-key-{key} [role=combobox]")
    box.click()
    box.fill(option)  # the list filters as one types, and opens
    listed = page.locator("[role=listbox] [role=option]").filter(has_text=exactly)
    if not multiple:
        listed.click()  # a select's list closes itself
        return
    listed.or_(tag).first.wait_for()  # a pick landing late shows its tag, and the list drops it
    if not tag.count():
        listed.click()
    tag.wait_for()  # an Escape before the pick has landed closes the list and the pick is dropped
    page.keyboard.press("Escape")


def open_tab(page, name: str) -> None:
    page.get_by_role("tab", name=name, exact=True).click()


def screenshot(page, name: str) -> None:
    """Write docs/screenshots/<name>.png when asked (INTERCONNECT_SCREENSHOTS), small: at most 960 px
    wide, 256 colours."""
    if not SCREENSHOTS:
        return
    from PIL import Image

    page.wait_for_timeout(1500)  # let charts and tables paint
    target = Path(SCREENSHOTS) / f"{name}.png"
    target.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=target)
    image = Image.open(target).convert("RGB")
    if image.width > 960:  # a phone's screenshot stays at its own width
        image = image.resize((960, round(image.height * 960 / image.width)), Image.Resampling.LANCZOS)
    image.quantize(colors=256).save(target, optimize=True)


@pytest.mark.shared
def test_load_shows_the_ranking_with_a_clean_console_and_no_deploy_button(page, real_app):
    open_app(page, real_app)
    assert page.locator("h1").inner_text() == "GPU interconnect catalog"
    assert caption(page).startswith(
        f"{SNAPSHOT_ROWS} instance types from {SNAPSHOT_PROVIDERS} providers shown"
    )
    header, first = table_rows(page)[:2]
    assert header[:4] == ["instance", "rank", "provider", "nodes"]  # the planner's ranking: Llama 3.1 70B
    assert first[:3] == ["dc_wildebeest__8xB200_180GB__160__1792", "1", "primeintellect"]
    assert page.locator('[data-testid="stAppDeployButton"]').count() == 0
    assert page.console_errors == []


@pytest.mark.shared
def test_key_columns_fit_beside_the_sidebar_at_1280x800(page, real_app):
    open_app(page, real_app)
    frame = page.locator('[data-testid="stDataFrame"]').first.bounding_box()
    sidebar = page.locator('[data-testid="stSidebar"]').bounding_box()
    assert page.viewport_size == {"width": 1280, "height": 800}
    assert frame["x"] >= sidebar["x"] + sidebar["width"] - 1  # beside the sidebar, not under it
    # The key columns' configured widths (tests/app/test_app.py adds them up: at most 900 px) fit.
    assert frame["width"] >= 900 and frame["x"] + frame["width"] <= 1280
    assert frame["y"] < 800  # the table starts above the fold


@pytest.mark.shared
def test_question_one_in_two_steps(page, real_app):
    """'Which 8-GPU NVSwitch instances have the fastest fabric?': search, then Links only (by fabric)."""
    open_app(page, real_app)
    step(page, lambda: search(page, "8-GPU NVSwitch"))  # step 1
    step(page, lambda: page.locator(".st-key-mode").get_by_text("Links only", exact=True).click())  # step 2
    header, *rows = table_rows(page, showing="fabric GB/s/GPU one-way")
    at = {name: i for i, name in enumerate(header)}
    assert {row[at["GPUs"]] for row in rows} == {"8"} and {row[at["GPU-GPU link"]] for row in rows} == {
        "NVSwitch"
    }
    assert rows[0][at["fabric GB/s/GPU one-way"]] == "100"  # p6-b300.48xlarge: 6,400 Gb/s over 8 GPUs
    assert "q=8-GPU+NVSwitch" in page.url and "mode=Links+only" in page.url
    screenshot(page, "question-1")


@pytest.mark.shared
def test_question_two_in_two_steps(page, real_app):
    """'p5.48xlarge vs a3-highgpu-8g in the same units': search both, open Compare."""
    open_app(page, real_app)
    step(page, lambda: search(page, "p5.48xlarge, a3-highgpu-8g"))  # step 1
    step(page, lambda: open_tab(page, "Compare"))  # step 2
    header, *rows = table_rows(page, 1, showing="fabric")  # the links; the first table decides
    # one column per instance (in the table's order) and its source beside it
    assert header[0] == "level" and {"p5.48xlarge (aws)", "a3-highgpu-8g (gcp)"} <= set(header)
    assert header[header.index("p5.48xlarge (aws)") + 1] == "p5.48xlarge (aws) source"
    fabric = next(row for row in rows if row[0] == "fabric")
    p5, a3 = fabric[header.index("p5.48xlarge (aws)")], fabric[header.index("a3-highgpu-8g (gcp)")]
    assert p5 == "50 GB/s per GPU one-way · stated · EFA"
    assert a3.startswith("15.62 GB/s per GPU one-way · ") and a3.endswith(" · GPUDirect-TCPX")
    page.wait_for_selector('[data-testid="stVegaLiteChart"] canvas, [data-testid="stVegaLiteChart"] svg')
    screenshot(page, "question-2")


@pytest.mark.shared
def test_question_three_in_one_step(page, real_app):
    """'What is missing and why?': open What's missing."""
    open_app(page, real_app)
    step(page, lambda: open_tab(page, "What's missing"))  # step 1
    header, *rows = table_rows(page, showing="why")
    assert header[:4] == ["instance", "provider", "missing", "why"]
    reasons = {row[3] for row in rows}
    assert "not stated by the provider" in reasons
    screenshot(page, "question-3")


@pytest.mark.shared
def test_question_four_serve_llama_70b_and_its_cost(page, real_app):
    """'What should I rent to serve Llama 3.1 70B, and what will it cost?': the app opens on that model
    served (tokens/s, most first); one click ranks it by cost."""
    open_app(page, real_app)
    assert page.get_by_role(
        "heading", name="Serving llama-3.1-70b: every instance ranked by output tokens/s"
    ).is_visible()
    step(page, lambda: page.locator(".st-key-by").get_by_text("cost", exact=True).click())  # step 1
    assert page.get_by_role(
        "heading", name="Serving llama-3.1-70b: every instance ranked by USD per million output tokens"
    ).is_visible()
    header, first = table_rows(page, showing="ccs-h200.sxm.8x")[:2]
    # 1.00 USD per million output tokens with their prompts, at batch 32 under the kernel-by-kernel
    # model with the prompts riding whole in a share of the steps (planner/serving.py)
    assert first[0] == "ccs-h200.sxm.8x" and first[at_(header, "USD/M output tokens")] == "1"
    assert "by=cost" in page.url
    screenshot(page, "question-4")


@pytest.mark.shared
def test_picking_a_preset_model_and_filtering(page, real_app):
    open_app(page, real_app)
    step(page, lambda: choose(page, "model", "mixtral-8x7b"))
    assert page.get_by_role(
        "heading", name="Serving mixtral-8x7b: every instance ranked by output tokens/s, most first"
    ).is_visible()
    assert "model=mixtral-8x7b" in page.url
    header, first = table_rows(page)[:2]
    assert header[:5] == ["instance", "rank", "provider", "nodes", "layout (TP×PP×EP×DP)"] and first[1] == "1"
    step(page, lambda: choose(page, "provider", "azure"))
    assert caption(page).startswith("85 instance types from 1 provider shown")


@pytest.mark.shared
def test_the_measurements_tab(page, real_app):
    open_app(page, real_app)
    step(page, lambda: open_tab(page, "Measurements"))
    header, first = table_rows(page, 1, showing="measured readings")[:2]
    assert header[:4] == ["instance", "provider", "expected readings", "measured readings"]
    assert int(first[2]) + int(first[3]) > 0
    assert page.get_by_text("Spare Cores sc-inspector-data, CC BY-SA 4.0", exact=False).first.is_visible()
    screenshot(page, "measurements")


def at_(header: list[str], name: str) -> int:
    return header.index(name)


@pytest.mark.shared
def test_a_shared_url_gives_the_same_view(browser, page, real_app):
    open_app(page, real_app)
    step(page, lambda: page.locator(".st-key-unit").get_by_text("Gb/s", exact=True).click())
    step(page, lambda: search(page, "p5.48xlarge, Standard_ND96isr_H100_v5"))
    step(page, lambda: open_tab(page, "Compare"))
    shared_url, seen = page.url, table_rows(page, 1, showing="front-end")
    other = browser.new_page()  # a new session, as a colleague opening the link would have
    try:
        open_app(other, real_app, shared_url.removeprefix(real_app.url))
        assert other.get_by_role("tab", name="Compare", selected=True).count() == 1
        assert table_rows(other, 1, showing="front-end") == seen
        assert seen[0][1] == "p5.48xlarge (aws)" and seen[3][1] == "400 Gb/s per GPU one-way · stated · EFA"
        assert caption(other) == caption(page)
    finally:
        other.close()


@pytest.mark.shared
def test_a_shared_url_reproduces_the_planner_view(browser, page, real_app):
    open_app(page, real_app)
    step(page, lambda: choose(page, "model", "llama-3.1-405b"))
    step(page, lambda: page.locator(".st-key-task").get_by_text("Train", exact=True).click())
    shared_url, seen = page.url, table_rows(page, showing="trained tokens/s")
    assert "model=llama-3.1-405b" in shared_url and "task=Train" in shared_url
    other = browser.new_page()
    try:
        open_app(other, real_app, shared_url.removeprefix(real_app.url))
        assert table_rows(other, showing="trained tokens/s") == seen
        assert other.get_by_role("heading", name="Training llama-3.1-405b", exact=False).is_visible()
    finally:
        other.close()


@pytest.mark.shared
def test_download_csv_holds_exactly_the_table_shown(page, real_app, tmp_path):
    open_app(page, real_app, "?mode=Links+only&q=8-GPU+NVSwitch&unit=Gb/s&per=node")
    shown = table_rows(page, showing="fabric Gb/s/node one-way")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download CSV").click()
    path = tmp_path / "ranking.csv"
    download.value.save_as(path)
    about, rows = csv_download(path)
    # The page draws only the columns in view; the file has them first, then the rest.
    assert rows[0][: len(shown[0])] == shown[0] and rows[0][7] == "fabric Gb/s/node one-way"
    assert len(rows) - 1 == int(caption(page).split()[0])
    first = dict(zip(rows[0], rows[1], strict=True))
    assert first["instance"] == shown[1][0] and float(first["fabric Gb/s/node one-way"]) > 0
    assert about[0].startswith("interconnect-catalog, data as of 20") and about[1] == (
        "filter: search '8-GPU NVSwitch'"
    )


def csv_download(path: Path) -> tuple[list[str], list[list[str]]]:
    """A downloaded CSV: its '# ' lines (what it is), then its rows."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    about = [line[2:].rstrip("\n") for line in lines if line.startswith("# ")]
    return about, list(csv.reader([line for line in lines if not line.startswith("# ")]))


@pytest.mark.shared
def test_dark_theme_labels_are_light(browser, real_app):
    page = browser.new_page()
    page.emulate_media(color_scheme="dark")
    frames: list[bytes] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda data: frames.append(data)))
    try:
        open_app(page, real_app, "?view=Instance")
        background = page.evaluate(
            "getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor"
        )
        red, green, blue = (int(v) for v in background[4:-1].split(","))
        assert max(red, green, blue) < 60  # Streamlit follows the system's dark scheme
        frames.clear()
        step(page, lambda: page.locator(".st-key-per").get_by_text("node", exact=True).click())
        sent = b"".join(f if isinstance(f, bytes) else f.encode() for f in frames)
        assert b'"color": "#fafafa"' in sent and b"#31333f" not in sent
        screenshot(page, "dark-instance")
    finally:
        page.close()


@pytest.fixture(scope="module")
def pixel_server():
    """A loopback HTTP server that counts requests: an injected image must never reach it."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], hits
    server.shutdown()


@pytest.fixture(scope="module")
def hostile_app(small_catalog_file, tmp_path_factory, pixel_server):
    port, _ = pixel_server
    hostile = f"[click me](https://evil.example/x) ![pixel](http://127.0.0.1:{port}/pixel.png) <img src=x>"
    db = tmp_path_factory.mktemp("hostile") / "c.duckdb"
    shutil.copyfile(small_catalog_file, db)
    with duckdb.connect(str(db)) as con:
        con.execute(
            "UPDATE instances SET notes = ?, stale = true, stale_cause = ?, stale_since = now() "
            "WHERE instance_type = 'p5.48xlarge'",
            [[f"note {hostile}"], f"cause {hostile}"],
        )
        for table in ("instances", "claims"):
            con.execute(f"UPDATE {table} SET instance_type = ? WHERE instance_type = 'g5.xlarge'", [hostile])
    with AppServer(db) as server:
        yield server, hostile


def test_provider_text_stays_text_in_the_browser(page, hostile_app, pixel_server):
    """Issue 9: an injected link must not go live, an injected image must not be fetched."""
    server, hostile = hostile_app
    _, hits = pixel_server
    open_app(page, server, "?view=Instance")
    page.wait_for_timeout(500)
    text = page.locator('[data-testid="stMain"]').inner_text()
    assert f"note {hostile}" in text  # shown as the characters it is
    assert f"cause {hostile}" in text
    assert page.locator('a[href*="evil.example"]').count() == 0
    assert page.locator('img[src*="pixel.png"], img[src="x"]').count() == 0
    open_tab(page, "Catalog status")
    wait_idle(page)
    assert page.locator('a[href*="evil.example"]').count() == 0
    # A hostile instance name as the picked instance, a compared one, and an open list of options.
    query = urlencode({"view": "Instance", "instance": f"{hostile} (aws)", "compare": f"{hostile} (aws)"})
    open_app(page, server, f"?{query}")
    page.wait_for_timeout(500)
    assert f"{hostile} (aws)" in page.locator('[data-testid="stMain"]').inner_text()
    page.locator(".st-key-instance [role=combobox]").click()
    page.wait_for_selector("[role=listbox] [role=option]")
    assert page.locator('a[href*="evil.example"], img[src*="pixel.png"], img[src="x"]').count() == 0
    assert hits == []
    assert page.console_errors == []


def rows_once_changed(page, before: list[list[str]]) -> list[list[str]]:
    """The first table's header and rows once its first row is no longer ``before``'s: a grid that a
    run updates (rather than builds anew) redraws its rows a moment after the run has ended."""
    page.wait_for_function(
        """(first) => {
          const row = document.querySelectorAll('[data-testid="stDataFrame"] table tr')[1];
          return row && [...row.querySelectorAll('th,td')].map((c) => c.textContent).join('|') !== first;
        }""",
        arg="|".join(before[1]),
    )
    return table_rows(page)


def header_centre(page, columns: list[str], widths: dict[str, int], name: str) -> tuple[float, float]:
    """Where the header of column ``name`` is drawn (the grid is a canvas): its configured widths."""
    box = page.locator('[data-testid="stDataFrame"]').first.bounding_box()
    left = sum(widths[c] for c in columns[: columns.index(name)])
    return box["x"] + left + 20, box["y"] + 18


def test_a_header_click_orders_the_table_the_url_the_caption_and_the_download(page, small_app, tmp_path):
    """Issue 21: after a header click the download no longer equaled the screen, the caption kept
    "Ordered by fabric" and the URL lost the order; the grid's own CSV button sat beside the app's."""
    open_app(page, small_app, "?mode=Links+only")
    before = table_rows(page)
    header = before[0]
    widths = {"instance": 190, "provider": 80, "GPUs": 48}
    x, y = header_centre(page, header, widths, "GPU")
    step(page, lambda: page.mouse.click(x, y))
    # The click reruns the tabs (a fragment), which see a new order and rerun the page: the sidebar,
    # the URL and the caption follow in that second run, which may start after the first is done.
    page.wait_for_function("() => location.search.includes('sort=GPU')")
    wait_idle(page)
    assert "sort=GPU%2C+A+to+Z" in page.url
    assert page.get_by_text("Ordered by GPU, A to Z;", exact=False).is_visible()
    header, *rows = rows_once_changed(page, before)
    gpus = [row[header.index("GPU")] for row in rows]
    assert gpus == sorted(gpus)
    with page.expect_download() as download:
        page.get_by_role("button", name="Download CSV").click()
    download.value.save_as(tmp_path / "links.csv")
    about, saved = csv_download(tmp_path / "links.csv")
    assert [r[0] for r in saved[1:]] == [r[0] for r in rows] and "order: GPU, A to Z" in about[-1]
    assert saved[1][header.index("GPUs")] in {"8", "1", "4"}  # counts as counts, never "8.0"
    page.locator('[data-testid="stDataFrame"]').first.hover()
    assert not page.locator('button[aria-label="Download as CSV"]').first.is_visible()
    # A column's own menu (its icon fills the narrow GPUs header) offers no browser-side sort either.
    box = page.locator('[data-testid="stDataFrame"]').first.bounding_box()
    page.mouse.move(box["x"] + 190 + 80 + 24, box["y"] + 18)
    page.wait_for_timeout(800)
    page.mouse.down()
    page.mouse.up()
    page.get_by_text("Pin column").wait_for()
    assert not page.get_by_text("Sort ascending").is_visible()
    hide_item = page.locator("[role=menuitem]").filter(has_text="Hide column")
    assert not hide_item.is_visible()  # hiding is the "Hide columns" box, which the URL keeps
    assert page.console_errors == []


def test_escape_after_picking_an_instance_keeps_the_pick(page, small_app):
    """Issue 21: picking an instance and pressing Escape showed the table's first row instead."""
    open_app(page, small_app, "?mode=Links+only")
    box = page.locator(".st-key-instance [role=combobox]")
    box.click()
    box.fill("g5.xlarge")
    option = page.locator("[role=listbox] [role=option]").filter(has_text=re.compile("^g5.xlarge"))

    def pick() -> None:  # idempotent, as step's retry needs: a pick that landed closed the list
        if "instance=g5.xlarge" not in page.url:
            if not option.first.is_visible():
                box.click()
                box.fill("g5.xlarge")
            option.first.click()

    step(page, pick)
    step(page, lambda: page.keyboard.press("Escape"))
    wait_idle(page)
    assert page.locator(".ic-subheader").all_inner_texts() == ["g5.xlarge (aws)"]
    assert "instance=g5.xlarge" in page.url
    assert page.console_errors == []


def test_garbage_url_parameters_are_named_in_the_browser(page, small_app):
    open_app(page, small_app, "?instance=nonexistent&model=foo&gpus=banana")
    warnings = page.locator(".ic-warning").all_inner_texts()
    assert "The link's instance='nonexistent' is not one the app can show: ignored." in warnings
    assert any(w.startswith("The link's gpus='banana'") for w in warnings) and len(warnings) == 3


def test_the_title_is_not_under_streamlits_header(page, small_app):
    """Issue 21: the page title was clipped under Streamlit's header."""
    open_app(page, small_app)
    title = page.locator("h1").first.bounding_box()
    header = page.locator('[data-testid="stHeader"]').bounding_box()
    assert title["y"] >= header["y"] + header["height"] - 1


def test_the_workload_details_survive_a_shared_link_from_their_closed_box(browser, page, small_app):
    """Issue 21 (speed): "Workload details" is a popover, whose widgets the browser builds only while
    it is open (a closed expander's were redrawn on every rerun); a value set there still reaches the
    URL, and a link with it plans the same table, with the value in the box when it is opened."""
    open_app(page, small_app)
    assert page.locator(".st-key-output").count() == 0  # closed: not in the page at all
    first = table_rows(page)[1]
    page.get_by_text("Workload details", exact=True).click()
    box = page.locator(".st-key-output input")
    box.wait_for()
    box.fill("256")
    step(page, lambda: box.press("Enter"))
    assert "output=256" in page.url
    page.wait_for_function(  # the grid redraws its rows a moment after the run
        """(first) => {
          const row = document.querySelectorAll('[data-testid="stDataFrame"] table tr')[1];
          return row && [...row.querySelectorAll('th,td')].map((c) => c.textContent).join('|') !== first;
        }""",
        arg="|".join(first),
    )
    seen = table_rows(page)
    assert seen[1] != first  # fewer output tokens plan other figures
    other = browser.new_page()  # a colleague opening the link
    try:
        open_app(other, small_app, page.url.removeprefix(small_app.url))
        assert other.locator(".st-key-output").count() == 0
        assert table_rows(other) == seen
        other.get_by_text("Workload details", exact=True).click()
        assert other.locator(".st-key-output input").input_value() == "256"
    finally:
        other.close()
    assert page.console_errors == []


def test_hidden_columns_and_the_sort_survive_a_shared_link(browser, page, small_app):
    """Issue 21: the share link reproduced the filters but not the hidden columns."""
    open_app(page, small_app, "?mode=Links+only&sort=GPU%2C+A+to+Z")
    page.get_by_text("Columns: hide some", exact=False).click()
    page.locator(".st-key-hide [role=combobox]").wait_for()
    wait_idle(page)
    step(page, lambda: choose(page, "hide", "provider"))
    step(page, lambda: choose(page, "hide", "fabric"))
    assert "hide=provider" in page.url and "hide=fabric" in page.url and "sort=GPU" in page.url
    page.wait_for_function(
        """() => {
          const heads = [...document.querySelectorAll('[data-testid="stDataFrame"] table th')];
          return heads.length > 0 && !heads.some((h) => ['provider', 'fabric'].includes(h.textContent));
        }"""
    )
    seen = table_rows(page)
    assert seen[0][0] == "instance" and not {"provider", "fabric"} & set(seen[0])
    gpus = [row[seen[0].index("GPU")] for row in seen[1:]]
    assert gpus == sorted(gpus)
    other = browser.new_page()  # a colleague opening the link
    try:
        open_app(other, small_app, page.url.removeprefix(small_app.url))
        assert table_rows(other) == seen
        assert other.get_by_text("Ordered by GPU, A to Z;", exact=False).is_visible()
    finally:
        other.close()
    assert page.console_errors == []


@pytest.mark.shared
def test_long_names_and_headers_read_in_full_at_1280(real_app, page):
    """Issue 21: long instance names and headers were cut short at 1280 px with no way to read them:
    a header shows its full text on hover, a cell on a double click."""
    name = "NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 2g.48gb"
    open_app(page, real_app, "?mode=Links+only&q=" + name.replace(" ", "+"))
    assert page.viewport_size["width"] == 1280
    first = table_rows(page, showing=name)[1]
    assert first[0] == name
    box = page.locator('[data-testid="stDataFrame"]').first.bounding_box()
    page.mouse.move(box["x"] + 60, box["y"] + 18)  # the pinned instance header
    tooltip = page.locator('[data-testid="stDataFrameTooltipContent"]')
    tooltip.wait_for(timeout=10_000)
    assert tooltip.inner_text().strip()
    page.mouse.dblclick(box["x"] + 60, box["y"] + 35 + 17)  # the first row's instance cell
    overlay = page.locator(
        "#portal textarea, #portal [data-testid='glide-cell-editor'], .gdg-growing-entry textarea"
    )
    overlay.first.wait_for(timeout=10_000)
    assert name in (
        overlay.first.input_value()
        if overlay.first.evaluate("e => 'value' in e")
        else overlay.first.inner_text()
    )


def test_the_units_buttons_fit_in_the_sidebar_at_1280(page, small_app):
    """Issue 21 (text clipped): side by side, "Gb/s" and "node" were cut off at the sidebar's edge."""
    open_app(page, small_app)
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    # Measured once the sidebar's layout has settled (a box read mid-layout was once 16 px wide): each
    # widget as wide as the sidebar's content allows, or the wait ends and the asserts below say why.
    settled = """() => [...document.querySelectorAll('.st-key-unit, .st-key-per')].every(
        (w) => w.getBoundingClientRect().width >= 100)"""
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(settled, timeout=10_000)
    sidebar = page.locator('[data-testid="stSidebarContent"]').bounding_box()
    for key, labels in (("unit", ["GB/s", "Gb/s"]), ("per", ["GPU", "node"])):
        widget = page.locator(f".st-key-{key}").bounding_box()  # what is drawn past it is cut off
        assert widget["x"] + widget["width"] <= sidebar["x"] + sidebar["width"], key
        for label in labels:
            button = (
                page.locator(f".st-key-{key}").get_by_role("radio", name=label, exact=True).bounding_box()
            )
            assert button["x"] + button["width"] <= widget["x"] + widget["width"], (key, label)


#: A phone's screen (CSS pixels).
PHONE = {"width": 390, "height": 844}


@pytest.mark.shared
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_phone_sees_each_view_without_sideways_scroll(real_app, browser, scheme):
    """Issue 21: on a phone, in either theme, nothing runs past the screen: no sideways scroll, and
    Compare's chart keeps its legend (four long instance names) inside the screen."""
    page = browser.new_page()
    page.set_viewport_size(PHONE)
    page.emulate_media(color_scheme=scheme)
    try:
        names = "p5.48xlarge, a3-highgpu-8g, Standard_ND96isr_H100_v5, gpu-h100-sxm_8gpu-128vcpu-1600gb"
        for query in (
            "",
            "?view=Instance&instance=p5.48xlarge+%28aws%29",
            "?view=Compare&q=" + names.replace(" ", "+").replace(",", "%2C"),
        ):
            open_app(page, real_app, query)
            if "Compare" in query or "Instance" in query:
                drawn = '[data-testid="stVegaLiteChart"] canvas, [data-testid="stVegaLiteChart"] svg'
                page.wait_for_selector(drawn, state="attached")
                page.wait_for_timeout(500)
                for chart in page.locator(drawn).all():
                    box = chart.bounding_box()
                    assert box is not None and box["x"] >= 0, query
                    assert box["x"] + box["width"] <= PHONE["width"], query
            assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], query
            if "Compare" in query and scheme == "dark":  # make screenshots takes the dark tests
                page.locator('[data-testid="stVegaLiteChart"]').first.scroll_into_view_if_needed()
                screenshot(page, "phone-compare-dark")
    finally:
        page.close()


# Counts the received frames that hold a sidebar element: the domain filter's label is in the
# sidebar only, and every full run sends it again (a frame's bytes hold its labels as UTF-8).
SIDEBAR_SENT = """
window.__sidebarSent = 0;
const Counted = window.WebSocket;
window.WebSocket = class extends Counted {
  constructor(...args) {
    super(...args);
    this.addEventListener('message', (event) => {
      if (event.data instanceof ArrayBuffer
          && new TextDecoder().decode(event.data).includes('NVLink domain, at least')) window.__sidebarSent++;
    });
  }
};
"""


def test_a_filter_reruns_only_the_main_area_and_the_url_follows(page, small_app):
    """Issue 21 (speed): a filter's change reruns only the main area (a keyed fragment), so the server
    sends no sidebar element and the browser redraws none; the caption and the URL still follow, and
    the link opens the same view. The units change the sidebar (the fabric box's label): a full run."""
    page.add_init_script(SIDEBAR_SENT)
    open_app(page, small_app, "?mode=Links+only")
    sent = page.evaluate("window.__sidebarSent")
    assert sent >= 1
    step(page, lambda: choose(page, "provider", "azure"))
    page.wait_for_function("() => location.search.includes('provider=azure')")
    assert " from 1 provider shown" in caption(page)
    assert page.evaluate("window.__sidebarSent") == sent
    step(page, lambda: page.locator(".st-key-unit").get_by_text("Gb/s", exact=True).click())
    page.wait_for_function("() => location.search.includes('unit=Gb')")
    assert page.evaluate("window.__sidebarSent") > sent
