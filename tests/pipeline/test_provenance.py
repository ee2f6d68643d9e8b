"""Every quote is what it says it is: verbatim quotes are in their stored documents (checked when the
catalog is built, and walked here over the catalog built from ../shared), paraphrases say where and
when they were read, datasheet claims quote the GPU table row they came from."""

from __future__ import annotations

from datetime import date, datetime

import duckdb
import pytest

from catalog import pipeline
from catalog.offers import build_offer
from catalog.provenance import check_quotes, quote_in, unverified_quotes
from normalize.errors import ValidationError
from normalize.gpus import BY_ID
from records.documents import Document, DocumentSet, copy_url
from records.offers import RawOffer
from scrapers.base import Scraper
from scrapers.claims import fact
from tests.helpers import Clock, cli_refresh, query, run

URL = "https://docs.example.test/specs.md"
NOW = datetime(2026, 12, 1)
COPY = "reference/example/specs-copy.md"
PAGE = "| Instance | GPUs |\n| --- | --- |\n| box.8x | 8 x   NVIDIA H100 GPU |\n"


def documents(body: str, url: str = URL) -> DocumentSet:
    return DocumentSet([Document(url=url, provider="test", status=200, fetched_at=NOW, body=body)])


def offer(*claims) -> object:
    return build_offer(RawOffer("test", "box.8x", URL, claims), scraped_at=NOW)


def test_a_quote_is_found_whatever_the_spacing_and_in_an_html_page_s_text():
    assert quote_in("8 x NVIDIA H100 GPU", PAGE)  # three spaces in the document, one in the quote
    html = "<table><tr><td>1 x 100 Gbps<br>8 x 2 x <b>200</b> Gbps RDMA</td></tr></table>"
    assert quote_in("1 x 100 Gbps\n8 x 2 x 200 Gbps RDMA", html)  # a cell's text, not its markup
    assert not quote_in("8 x 400 Gbps RDMA", html)
    assert not quote_in("16 x NVIDIA H100 GPU", PAGE)


def test_a_verbatim_quote_missing_from_its_document_fails_the_provider_naming_the_claim():
    good = fact("gpu_model", "H100-SXM-80GB", quote="8 x   NVIDIA H100 GPU", source_url=URL)
    made_up = fact("gpu_count", 8, quote="eight H100s", source_url=URL)
    elsewhere = fact("nic_count", 8, quote="8 NICs", source_url="https://docs.example.test/other.md")
    assert unverified_quotes([offer(good)], documents(PAGE)) == []
    problems = unverified_quotes([offer(good, made_up, elsewhere)], documents(PAGE))
    assert problems == [
        f"box.8x gpu_count: quote not found in {URL}: 'eight H100s'",
        "box.8x nic_count: cites a document that was not stored https://docs.example.test/other.md: '8 NICs'",
    ]
    with pytest.raises(
        ValidationError, match=r"test: verbatim quotes not in their documents: box\.8x gpu_count"
    ):
        check_quotes("test", [offer(good, made_up)], documents(PAGE))


def test_paraphrases_and_datasheet_claims_cite_no_stored_document():
    from dataclasses import replace

    from normalize.vocab import Basis, Evidence

    paraphrase = replace(
        fact("gpu_count", 8, quote="eight GPUs per node", source_url=URL),
        basis=Basis.PARAPHRASED,
        evidence=Evidence.PARAPHRASE,
        read_on=date(2026, 12, 3),
    )
    row = offer(fact("gpu_model", "H100-SXM-80GB", quote="8 x NVIDIA H100 GPU", source_url=URL), paraphrase)
    assert any(c.evidence == Evidence.DATASHEET for c in row.claims)  # inferred from the datasheet
    assert unverified_quotes([row], documents(PAGE)) == []


class CopySource(Scraper):
    """A provider whose one document is a local copy, quoting it well or (``quote``) badly."""

    name = "copytest"
    title = "Copy test"
    copy_paths = (COPY,)
    quote = "8 x   NVIDIA H100 GPU"

    async def fetch(self, fetcher) -> None:
        if not fetcher.get_copy(COPY).ok:
            raise ValidationError("no copy")

    def parse(self, documents):
        url = copy_url(COPY)
        documents.text(url)
        claims = (
            fact("gpu_model", "H100-SXM-80GB", quote=self.quote, source_url=url),
            fact("gpu_count", 8, quote="| box.8x |", source_url=url),
        )
        return [RawOffer(self.name, "box.8x", url, claims)]


@pytest.fixture
def copies(tmp_path, monkeypatch):
    monkeypatch.setitem(pipeline.REGISTRY, "copytest", CopySource)
    root = tmp_path / "shared"
    (root / COPY).parent.mkdir(parents=True)
    (root / COPY).write_text(PAGE)
    (tmp_path / "mirror").mkdir()
    return root, tmp_path / "mirror", tmp_path / "c.duckdb"


def test_a_local_copy_is_stored_and_cited_as_itself(copies):
    root, mirror, db = copies
    assert run(db, mirror, Clock(), providers=["copytest"], copies=root).exit_code == 0
    assert query(db, "SELECT url, status FROM fetches") == [(f"copy:{COPY}", 200)]
    assert query(db, "SELECT DISTINCT source_url, evidence FROM claims WHERE basis = 'stated'") == [
        (f"copy:{COPY}", "verbatim")
    ]


def test_without_a_copies_directory_a_copy_is_not_read(copies):
    _, mirror, db = copies
    report = run(db, mirror, Clock(), providers=["copytest"])
    assert report.exit_code == 1 and report.outcomes[0].outcome == "failed"
    assert query(db, "SELECT error FROM fetches") == [
        ("no copies directory (only an offline refresh reads local copies)",)
    ]


def test_a_parser_that_misquotes_its_document_leaves_the_provider_stale(copies, monkeypatch):
    root, mirror, db = copies
    clock = Clock()
    assert run(db, mirror, clock, providers=["copytest"], copies=root).exit_code == 0
    monkeypatch.setattr(CopySource, "quote", "8 x NVIDIA H100 SXM GPU")  # a parser bug: not the text
    clock.advance()
    report = run(db, mirror, clock, providers=["copytest"], copies=root)
    outcome = report.outcomes[0]
    assert report.exit_code == 1 and outcome.outcome == "stale"
    assert outcome.cause.startswith("ValidationError: copytest: verbatim quotes not in their documents")
    assert query(db, "SELECT count(*), bool_and(stale) FROM instances") == [(1, True)]


def test_copies_are_for_an_offline_refresh_only(tmp_path, capsys):
    assert cli_refresh_live(tmp_path) == 2
    assert "--copies needs --mirror" in capsys.readouterr().err
    assert cli_refresh(tmp_path, tmp_path / "c.duckdb", "--copies", str(tmp_path / "absent")) == 2


def cli_refresh_live(tmp_path) -> int:
    from catalog.cli import main

    return main(["refresh", "--copies", str(tmp_path), "--db", str(tmp_path / "c.duckdb"), "--quiet"])


# ---------------------------------------------------------------------------------------------
# The claim walk: every claim of the catalog built from ../shared


@pytest.fixture(scope="module")
def walk(real_catalog_file):
    with duckdb.connect(str(real_catalog_file), read_only=True) as con:
        claims = con.execute(
            "SELECT provider, instance_type, field, basis, evidence, quote, source_url, original_url, "
            "read_on FROM current_claims"
        ).fetchall()
        bodies = dict(
            con.execute(
                """SELECT f.url, d.body FROM fetches f JOIN documents d USING (sha256)
                   WHERE f.status IN (200, 304)"""
            ).fetchall()
        )
    return claims, bodies


def test_walk_every_verbatim_quote_occurs_in_its_stored_document(walk):
    claims, bodies = walk
    verbatim = [c for c in claims if c[4] == "verbatim"]
    assert len(verbatim) > 500
    for provider, name, field, _, _, quote, url, _, _ in verbatim:
        assert url in bodies, (provider, name, field, url)
        assert " ".join(quote.split()) in " ".join(bodies[url].split()), (provider, name, field, quote)


def test_walk_every_stated_claim_is_verbatim(walk):
    claims, _ = walk
    assert {c[4] for c in claims if c[3] == "stated"} == {"verbatim"}


def test_walk_every_paraphrase_says_where_and_when_it_was_read(walk):
    claims, _ = walk
    paraphrases = [c for c in claims if c[4] == "paraphrase"]
    assert paraphrases
    for provider, name, field, basis, _, _, url, _, read_on in paraphrases:
        assert url.startswith("https://") and isinstance(read_on, date), (provider, name, field)
        assert basis in ("paraphrased", "inferred", "upstream")  # upstream: a resold row carries it


def test_walk_every_datasheet_claim_quotes_cells_of_its_gpu_table_row(walk):
    """A datasheet claim quotes the cells it used ("id=...; column=cell"), each as the table writes it."""
    claims, _ = walk
    datasheet = [c for c in claims if c[4] == "datasheet"]
    assert datasheet
    for provider, name, field, basis, _, quote, url, _, _ in datasheet:
        cells = dict(part.split("=", 1) for part in quote.split("; "))
        spec = BY_ID[cells["id"]]
        assert basis == "inferred" and spec.datasheet_url == url, (provider, name, field)
        assert set(cells.items()) <= set(spec.cells) and len(cells) >= 2, (provider, name, quote)


def test_only_declared_copies_inside_the_copies_directory_are_read(tmp_path):
    import asyncio

    from fetch.http import Fetcher, make_client

    (tmp_path / "secret.txt").write_text("not a copy")
    (tmp_path / "copies").mkdir()

    async def read() -> list[Document]:
        async with make_client(mirror=tmp_path) as client:
            bound = Fetcher(client, copies=tmp_path / "copies").for_provider(
                "test", (), copy_paths=("../secret.txt",)
            )
            return [bound.get_copy("../secret.txt"), bound.get_copy("other.md")]

    outside, undeclared = asyncio.run(read())
    assert not outside.ok and outside.error == "off limits: ../secret.txt is outside the copies directory"
    assert (
        not undeclared.ok and undeclared.error == "off limits: other.md is not among test's declared copies"
    )
