"""OCI: the parser on an HTML fixture written in the style of Oracle's Compute Shapes page, and that
fixture checked against the real third-party excerpt of the page's bare-metal GPU table."""

from __future__ import annotations

import asyncio
import html
from datetime import datetime

import pytest
from bs4 import BeautifulSoup

from catalog.offers import build_offer
from fetch.http import Fetcher, make_client
from normalize.errors import LayoutError, NotInMirror
from normalize.vocab import Basis, Evidence, Fabric, Link
from records.documents import Document, DocumentSet
from scrapers.documents import oci_offers
from scrapers.documents.oci import EXCERPT as EXCERPT_PATH
from scrapers.documents.oci import EXCERPT_NOTE, SHAPES_URL, Oci, parse_excerpt, parse_shapes
from scrapers.markdown import markdown_tables
from scrapers.tables import clean, find_table
from tests.conftest import shared_fixture
from tests.helpers import SHARED

NOW = datetime(2026, 12, 1)
FIXTURE = "oci/computeshapes-gpu.html"
EXCERPT = SHARED / EXCERPT_PATH


def rows(text: str) -> dict:
    return {o.instance_type: build_offer(o, scraped_at=NOW) for o in parse_shapes(text, SHAPES_URL)}


def claim(offer, field: str):
    return next(c for c in offer.claims if c.field == field and c.evidence == Evidence.VERBATIM)


@pytest.fixture
def html_text(fixture_text) -> str:
    return fixture_text(FIXTURE)


@pytest.fixture
def offers(html_text) -> dict:
    return rows(html_text)


def test_fixture_yields_every_shape_in_page_order(html_text):
    names = [o.instance_type for o in parse_shapes(html_text, SHAPES_URL)]
    assert names == [
        "BM.GPU2.2",
        "BM.GPU3.8",
        "BM.GPU4.8",
        "BM.GPU.A10.4",
        "BM.GPU.A100-v2.8",
        "BM.GPU.MI300X.8",
        "BM.GPU.L40S.4",
        "BM.GPU.H100.8",
        "BM.GPU.H200.8",
        "BM.GPU.B200.8",
        "BM.GPU.GB200.4",
    ]


@pytest.mark.parametrize(
    ("name", "model", "count", "memory_gb", "fabric", "gbits", "nics", "frontend", "frontend_nics"),
    [
        ("BM.GPU.H100.8", "H100-SXM-80GB", 8, 80, Fabric.ROCE, 3200, 8, 100, 1),  # 8 x 2 x 200 RDMA
        ("BM.GPU.A100-v2.8", "A100-SXM-80GB", 8, 80, Fabric.ROCE, 1600, 16, 100, 2),  # 2 x 50 front-end
        ("BM.GPU4.8", "A100-SXM-40GB", 8, 40, Fabric.ROCE, 1600, 8, 50, 1),  # 320 GB / 8
        ("BM.GPU.L40S.4", "L40S-48GB", 4, 48, Fabric.ROCE, 800, None, 200, 1),  # RDMA total, no NICs
        ("BM.GPU.GB200.4", "GB200-186GB", 4, 192, Fabric.ROCE, 1600, 4, 400, 2),  # "(4xB200)"
        ("BM.GPU.MI300X.8", "MI300X-192GB", 8, 192, Fabric.ROCE, 3200, 8, 100, 1),  # no parenthesis
        ("BM.GPU.H200.8", "H200-SXM-141GB", 8, 141, Fabric.ROCE, 3200, 8, 200, 1),
        ("BM.GPU.B200.8", "B200-SXM-180GB", 8, 180, Fabric.ROCE, 3200, 8, 400, 2),
        ("BM.GPU2.2", "P100-16GB", 2, 16, Fabric.ETHERNET, 50, 2, 50, 2),  # no RDMA part
        ("BM.GPU3.8", "V100-SXM2-16GB", 8, 16, Fabric.ETHERNET, 50, 2, 50, 2),
        ("BM.GPU.A10.4", "A10-24GB", 4, 24, Fabric.ETHERNET, 100, 2, 100, 2),
    ],
)
def test_fixture_facts(offers, name, model, count, memory_gb, fabric, gbits, nics, frontend, frontend_nics):
    offer = offers[name]
    assert (offer.gpu_model, offer.gpu_count, offer.gpu_memory_gb) == (model, count, memory_gb)
    assert (offer.inter_node_fabric, offer.inter_node_gbits_per_s, offer.nic_count) == (fabric, gbits, nics)
    assert offer.inter_node_gbytes_per_s == gbits / 8 and offer.inter_node_basis == Basis.STATED
    assert (offer.frontend_gbits_per_s, offer.frontend_nic_count) == (frontend, frontend_nics)
    assert offer.fabric_shares_frontend is (fabric == Fabric.ETHERNET)


def test_h100_rdma_is_eight_dual_port_nics_apart_from_the_front_end(offers):
    h100 = offers["BM.GPU.H100.8"]
    assert (h100.inter_node_gbits_per_s, h100.inter_node_gbytes_per_s) == (3200, 400)
    rdma = claim(h100, "inter_node_gbits_per_s")
    assert rdma.quote == "8 x 2 x 200 Gbps RDMA"
    assert rdma.qualifiers == "16 x 200 Gbit/s; total per node; 8 NICs x 2 ports"
    assert claim(h100, "nic_count").qualifiers == "8 NICs x 2 ports"
    assert claim(h100, "inter_node_fabric").quote == "8 x 2 x 200 Gbps RDMA"
    assert claim(h100, "frontend_gbits_per_s").quote == "1 x 100 Gbps"
    assert claim(h100, "gpu_model").quote == "BM.GPU.H100.8 (8xH100)"


def test_gpu_memory_is_per_shape_and_divided_by_the_gpu_count(offers):
    memory = claim(offers["BM.GPU.A100-v2.8"], "gpu_memory_gb")
    assert (memory.value, memory.quote) == (80, "640")
    assert memory.qualifiers == "per GPU: 640 GB per shape / 8 GPUs"


def test_l40s_rdma_figure_is_a_node_total_with_no_nic_count(offers):
    l40s = offers["BM.GPU.L40S.4"]
    rdma = claim(l40s, "inter_node_gbits_per_s")
    assert (rdma.value, rdma.quote) == (800, "800 Gbps RDMA")
    assert "NIC count not stated" in rdma.qualifiers
    assert not any(c.field == "nic_count" for c in l40s.claims)
    assert "GPU count 4 taken from the shape name's trailing '.4'" in l40s.notes_text
    assert claim(l40s, "gpu_count").quote == "BM.GPU.L40S.4"


def test_gb200_shape_name_wins_over_the_b200_in_parentheses(offers):
    gb200 = offers["BM.GPU.GB200.4"]
    assert gb200.gpu_model == "GB200-186GB"
    assert gb200.scale_up_domain_gpus == 72  # rack-scale NVLink domain, inferred from the GPU
    assert gb200.intra_node_link == Link.NVSWITCH and gb200.intra_node_basis == Basis.INFERRED
    assert "the shape name says GB200 while the GPU text says B200" in gb200.notes_text


def test_hgx_shapes_get_their_form_factor_by_the_one_rule_and_others_stay_family_level(offers):
    h100 = offers["BM.GPU.H100.8"]  # sold only as HGX boards (normalize/board_families.csv), like AWS P5
    assert (h100.gpu_model, h100.intra_node_link, h100.intra_node_gbytes_per_s) == (
        "H100-SXM-80GB",
        Link.NVSWITCH,
        900,
    )
    assert "form factor SXM inferred: BM.GPU.H100.8 is sold only as HGX (SXM) boards" in h100.notes_text
    model = claim(h100, "gpu_model")
    assert (model.basis, model.quote) == (Basis.INFERRED, "BM.GPU.H100.8 (8xH100)")  # Oracle never says SXM
    p100 = offers["BM.GPU2.2"]  # not in the table: its form factor is not guessed
    assert p100.intra_node_link == Link.UNKNOWN and p100.intra_node_basis == Basis.MISSING
    assert "OCI states no P100 form factor (SXM or PCIe)" in p100.notes_text
    a10 = offers["BM.GPU.A10.4"]
    assert (a10.intra_node_link, a10.intra_node_gbytes_per_s, a10.intra_node_basis) == (
        Link.PCIE,
        64,
        Basis.INFERRED,
    )


def test_shape_without_rdma_uses_its_only_network_as_fabric(offers):
    p100 = offers["BM.GPU2.2"]
    fabric = claim(p100, "inter_node_fabric")
    assert (fabric.value, fabric.quote) == ("ethernet", "2 x 25 Gbps")
    assert "no RDMA cluster network stated" in p100.notes_text


def test_single_and_double_counted_rdma_spellings(html_text):
    text = html_text.replace("1 x 200 Gbps<br>8 x 400 Gbps RDMA", "1 x 200 Gbps<br>8 x 1 x 400 Gbps RDMA")
    h200 = rows(text)["BM.GPU.H200.8"]
    assert (h200.inter_node_gbits_per_s, h200.nic_count) == (3200, 8)
    assert claim(h200, "nic_count").qualifiers == "8 NICs x 1 ports"


def test_paragraphs_and_whitespace_inside_cells(html_text):
    text = html_text.replace(
        '<td class="entry" valign="top">1 x 100 Gbps<br>8 x 2 x 200 Gbps RDMA</td>',
        '<td class="entry">\n  <p>1 x 100 Gbps</p>\n  <p>8 x 2 x 200\n Gbps RDMA</p>\n</td>',
    ).replace(">BM.GPU.H100.8 (8xH100)<", ">\n  BM.GPU.H100.8&nbsp;(8xH100)\n<")
    h100 = rows(text)["BM.GPU.H100.8"]
    assert (h100.inter_node_gbits_per_s, h100.frontend_gbits_per_s, h100.gpu_count) == (3200, 100, 8)
    assert claim(h100, "inter_node_gbits_per_s").quote == "8 x 2 x 200 Gbps RDMA"


def test_tables_are_chosen_by_header_text_not_position(html_text):
    other = (
        "<table><tr><th>Shape</th><th>OCPU</th><th>Memory (GB)</th><th>Max Network Bandwidth</th></tr>"
        "<tr><td>TEST.Standard.1</td><td>1</td><td>16</td><td>1 x 1 Gbps</td></tr></table>"
    )
    offers = rows(html_text.replace("<main>", "<main>" + other))
    assert len(offers) == 11 and "TEST.Standard.1" not in offers


@pytest.mark.parametrize(
    ("old", "new", "named"),
    [
        (">Max Network Bandwidth<", ">Network Bandwidth<", "'Max Network Bandwidth'"),
        (">Shape<", ">Shape Name<", "'Shape'"),
        (">GPU Memory (GB)<", ">GPU RAM (GB)<", r"'GPU Memory \(GB\)'"),
    ],
)
def test_renamed_header_is_a_layout_error_naming_it(html_text, old, new, named):
    assert old in html_text
    with pytest.raises(LayoutError, match=named):
        parse_shapes(html_text.replace(old, new), SHAPES_URL)


def test_table_without_rows_is_a_layout_error(html_text):
    head, _, rest = html_text.partition('<tbody class="tbody">')
    with pytest.raises(LayoutError, match="no rows"):
        parse_shapes(head + rest.split("</tbody>", 1)[1], SHAPES_URL)


def test_unknown_gpu_row_is_skipped_and_logged(html_text, caplog):
    offers = rows(html_text.replace("(2xP100)", "(2xZ999)"))
    assert len(offers) == 10 and "BM.GPU2.2" not in offers
    assert "Skipping oci row BM.GPU2.2 (2xZ999): unknown GPU" in caplog.text


def test_every_stated_quote_is_in_the_fixture_text(html_text, offers):
    page_text = " ".join(BeautifulSoup(html_text, "lxml").get_text("\n").split())
    stated = [c for o in offers.values() for c in o.claims if c.evidence == Evidence.VERBATIM]
    assert len(stated) == 11 * 3 + 7 * 5 + 4 + 3 * 5  # GPU 3 each; 7 RDMA rows 5, L40S 4; 3 Ethernet 5
    inferred = {
        (o.instance_type, c.field) for o in offers.values() for c in o.claims if c.basis == Basis.INFERRED
    }
    assert ("BM.GPU.L40S.4", "gpu_count") in inferred  # the '.4' of a shape's name: read, not stated
    for c in stated:
        assert c.quote in page_text and html.escape(c.quote, quote=False) in html_text, c.quote
        assert c.source_url == SHAPES_URL and c.context.startswith("Bare Metal Shapes › GPU Shapes › ")


def fetch(scraper, mirror, copies=None) -> list[Document]:
    async def go() -> list[Document]:
        async with make_client(mirror=mirror) as client:
            bound = Fetcher(client, copies=copies).for_provider(
                scraper.name, scraper.url_prefixes, copy_paths=scraper.copy_paths
            )
            await scraper.fetch(bound)
            return bound.documents

    return asyncio.run(go())


SMALL_EXCERPT = """# OCI BM GPU  Shapes
| **Shape** | **GPU Memory (GB)** | **Max Network Bandwidth** |
|---|---:|---|
| BM.GPU.H100.8 (8xH100) | 640 | 1 x 100 Gbps<br>8 x 2 x 200 Gbps RDMA |
"""


def test_scraper_reads_the_page_or_the_excerpt_and_fails_without_either(html_text, tmp_path):
    assert set(Oci.expected_layout) == {SHAPES_URL}
    assert Oci.copy_paths == (EXCERPT_PATH, *oci_offers.COPIES)
    mirror, copies = tmp_path / "mirror", tmp_path / "copies"
    (copies / EXCERPT_PATH).parent.mkdir(parents=True)
    (copies / EXCERPT_PATH).write_text(SMALL_EXCERPT)
    mirror.mkdir()
    only_excerpt = fetch(Oci(), mirror, copies)
    read = [(d.url, d.ok) for d in only_excerpt]
    assert read[:2] == [(SHAPES_URL, False), (f"copy:{EXCERPT_PATH}", True)]
    assert not any(ok for _, ok in read[2:])  # the offer lists and the template are optional
    (offer,) = Oci().parse(DocumentSet(only_excerpt))
    assert offer.instance_type == "BM.GPU.H100.8" and offer.source_url == f"copy:{EXCERPT_PATH}"
    page = mirror / SHAPES_URL.split("://", 1)[1]
    page.parent.mkdir(parents=True)
    page.write_text(html_text)
    assert len(Oci().parse(DocumentSet(fetch(Oci(), mirror)))) == 11  # live: no copies read
    page.unlink()
    with pytest.raises(NotInMirror, match=r"computeshapes\.htm"):
        fetch(Oci(), mirror)
    with pytest.raises(LayoutError, match="unavailable"):
        Oci().parse(DocumentSet([]))


def test_page_and_excerpt_together_keep_both_claims_and_flag_a_disagreement(html_text):
    page = Document(
        SHAPES_URL, "oci", 200, NOW, body=html_text.replace("8 x 2 x 200 Gbps", "8 x 2 x 100 Gbps")
    )
    excerpt = Document(f"copy:{EXCERPT_PATH}", "oci", 200, NOW, body=SMALL_EXCERPT)
    offers = {o.instance_type: o for o in Oci().parse(DocumentSet([page, excerpt]))}
    assert len(offers) == 11
    h100 = build_offer(offers["BM.GPU.H100.8"], scraped_at=NOW)
    assert h100.conflict and h100.inter_node_gbits_per_s == 1600  # Oracle's own page leads
    figures = {
        (c.value, c.source_url, c.original_url) for c in h100.claims if c.field == "inter_node_gbits_per_s"
    }
    assert figures == {(1600, SHAPES_URL, None), (3200, f"copy:{EXCERPT_PATH}", SHAPES_URL)}
    assert "conflicting claims for inter_node_gbits_per_s: 1600 vs 3200" in h100.notes_text


@shared_fixture(scope="module")
def excerpt():
    text = EXCERPT.read_text(encoding="utf-8")
    return find_table(markdown_tables(text), r"^Shape$", r"^GPU Memory", r"^Max Network Bandwidth$")


def test_real_excerpt_cells_are_in_the_fixture(excerpt, fixture_text):
    """Every shape, GPU memory and network cell of the real excerpt is in the fixture, exactly."""
    html_text = fixture_text(FIXTURE)
    assert len(excerpt.rows) == 11
    for row in excerpt.rows:
        for pattern in (r"^Shape$", r"^GPU Memory", r"^Max Network Bandwidth$"):
            cell = excerpt.cell(row, pattern)
            assert f">{cell}</td>" in html_text, cell
    fixture_shapes = [o.instance_type for o in parse_shapes(html_text, SHAPES_URL)]
    assert fixture_shapes == [clean(r[0]).split(" (")[0] for r in excerpt.rows]


def test_real_excerpt_cells_parse_like_the_fixture(excerpt, fixture_text):
    """The real excerpt's cells, put into an HTML table as they are, give the fixture's claims."""
    head = "".join(f"<th>{h}</th>" for h in excerpt.clean_headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in excerpt.rows)
    real = parse_shapes(
        f"<h2>Bare Metal Shapes</h2><h3>GPU Shapes</h3><table><tr>{head}</tr>{body}</table>", SHAPES_URL
    )
    fixture = parse_shapes(fixture_text(FIXTURE), SHAPES_URL)
    assert [o.claims for o in real] == [o.claims for o in fixture]
    h100 = rows(f"<table><tr>{head}</tr>{body}</table>")["BM.GPU.H100.8"]
    assert (h100.inter_node_gbits_per_s, h100.frontend_gbits_per_s, h100.nic_count) == (3200, 100, 8)


def test_real_excerpt_is_read_offline_and_cited_as_itself(excerpt, fixture_text):
    """The excerpt parsed as what it is gives the fixture's figures, every claim citing the excerpt."""
    offers = parse_excerpt(EXCERPT.read_text(encoding="utf-8"))
    fixture = {o.instance_type: o for o in parse_shapes(fixture_text(FIXTURE), SHAPES_URL)}
    assert [o.instance_type for o in offers] == list(fixture)
    for offer in offers:
        assert EXCERPT_NOTE in offer.notes and offer.source_url == f"copy:{EXCERPT_PATH}"
        assert {(c.source_url, c.original_url) for c in offer.claims} == {
            (f"copy:{EXCERPT_PATH}", SHAPES_URL)
        }
        values = [(c.field, c.value, c.quote, c.qualifiers) for c in offer.claims]
        assert values == [
            (c.field, c.value, c.quote, c.qualifiers) for c in fixture[offer.instance_type].claims
        ]
    h100 = build_offer(next(o for o in offers if o.instance_type == "BM.GPU.H100.8"), scraped_at=NOW)
    assert (h100.inter_node_gbits_per_s, h100.frontend_gbits_per_s, h100.nic_count) == (3200, 100, 8)
    assert claim(h100, "gpu_memory_gb").context == "OCI BM GPU Shapes › GPU Memory (GB)"
