"""The fault matrix: local files and the probe (issue 23). Local copies (``--copies``) and
``measurements import`` read only regular files within a cap, refusing FIFOs, devices and huge
files unread, in one line; ``probe`` keeps at most 8 MB of a tool's output and reaches exactly the
metadata endpoints it asks, for that command only."""

from __future__ import annotations

import asyncio
import os
import shutil
from functools import partial

import httpx
import pytest

from catalog import probe
from catalog.cli import main
from fetch import http
from fetch.budget import Budget, decoded_with_sha256
from fetch.files import FileRefused, read_capped_file
from fetch.transports import MetadataOnly
from normalize.errors import OffLimits
from records.documents import body_sha256
from tests.helpers import no_sleep

AWS_ANSWERS = {"/latest/api/token": "tok", "/latest/meta-data/instance-type": "p5.48xlarge"}


def _copy(tmp_path, make) -> object:
    """The document a provider gets for its declared copy ``page.md``, made by ``make(path)``."""
    copies = tmp_path / "copies"
    copies.mkdir()
    make(copies / "page.md")

    async def go():
        async with http.make_client(transport=httpx.MockTransport(lambda r: httpx.Response(404))) as client:
            fetcher = http.Fetcher(client, sleep=no_sleep, copies=copies)
            bound = fetcher.for_provider("t", ("https://a.example/",), Budget(), copy_paths=("page.md",))
            return bound.get_copy("page.md")

    return asyncio.run(go())


def sparse(size: int):
    def make(path):
        with open(path, "wb") as handle:
            handle.truncate(size)

    return make


def test_a_local_copy_over_the_16_mb_cap_is_refused_unread(tmp_path):
    doc = _copy(tmp_path, sparse(200_000_000))
    assert not doc.ok and doc.error.startswith("TooLarge: ") and "over the 16,000,000-byte cap" in doc.error


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (os.mkfifo, "not a regular file (a FIFO)"),
        (lambda p: p.symlink_to("/dev/zero"), "page.md is outside the copies directory"),
        (lambda p: p.mkdir(), "not a regular file (a directory)"),
    ],
)
def test_a_local_copy_that_is_not_a_regular_file_is_refused(tmp_path, make, expected):
    doc = _copy(tmp_path, make)
    assert not doc.ok and expected in doc.error


def test_a_local_copy_within_the_cap_is_read(tmp_path):
    doc = _copy(tmp_path, lambda p: p.write_text("# copy\n"))
    assert doc.ok and doc.body == "# copy\n"


@pytest.mark.parametrize("size", [0, 1, 999, 1000])
def test_a_regular_file_within_the_cap_is_read_whole(tmp_path, size):
    path = tmp_path / "f"
    path.write_bytes((bytes(range(256)) * 4)[:size])
    assert read_capped_file(str(path), 1000) == (bytes(range(256)) * 4)[:size]


@pytest.mark.parametrize(
    "raw", [b"", b"plain", "\u00e9\u20ac".encode(), "\ufeffbom".encode(), b"\xff\xfe nv", b"a\xed\xa0\x80b"]
)
def test_a_mirror_file_is_stored_and_hashed_as_its_decoded_text(raw):
    body, sha256 = decoded_with_sha256(raw)  # hashed from the bytes when they are valid UTF-8
    assert body == raw.decode("utf-8", errors="replace") and sha256 == body_sha256(body)


def test_reading_a_file_that_grows_past_the_cap_stops_at_the_cap(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 1001)
    with pytest.raises(FileRefused, match="over the 1,000-byte cap"):
        read_capped_file(path, 1000)


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (os.mkfifo, "not a regular file (a FIFO); refused unread"),
        (lambda p: p.symlink_to("/dev/zero"), "not a regular file (a character device); refused unread"),
        (lambda p: p.mkdir(), "not a regular file (a directory)"),
        (sparse(500_000_000), "500,000,000 bytes, over the 64,000,000-byte cap"),
        (lambda p: p.write_bytes(b"\xff\xfe nvbandwidth"), "cannot read it: not UTF-8"),
    ],
)
def test_measurements_import_refuses_what_it_cannot_read_in_one_line(
    small_catalog_file, tmp_path, capsys, make, expected
):
    path = tmp_path / "output.txt"
    make(path)
    assert main(["measurements", "import", str(path), "--db", str(small_catalog_file)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == f"error: {path}: {expected}" or (
        err[0].startswith(f"error: {path}: ") and expected in err[0]
    )
    assert err[1:] == ["nothing imported: fix or leave out the files above"]


def test_a_flooding_tool_is_stopped_at_the_output_cap_and_recorded(tmp_path):
    script = tmp_path / "ibv_devinfo"
    script.write_text(f"#!/bin/sh\nexec {shutil.which('yes')} flood\n")
    script.chmod(0o755)
    runner = partial(probe.capped_run, max_bytes=100_000)
    entry = probe.run_tool(probe.TOOLS[4], path=str(tmp_path), gpus=1, runner=runner)
    assert entry["status"] == "stdout over the 100,000-byte cap: stopped"
    assert len(entry["stdout"]) == 100_000 and entry["seconds"] < 30


def test_the_probe_keeps_8_mb_of_output_at_most_by_default():
    assert probe.MAX_STDOUT_BYTES == 8_000_000
    assert probe.capped_run.__kwdefaults__["max_bytes"] == probe.MAX_STDOUT_BYTES


def _answers(request: httpx.Request) -> httpx.Response:
    return (
        httpx.Response(200, text=AWS_ANSWERS.get(request.url.path, ""))
        if request.url.path in AWS_ANSWERS
        else httpx.Response(404)
    )


def test_the_metadata_transport_reaches_exactly_the_endpoints_probe_asks():
    transport = MetadataOnly(probe.ENDPOINTS, inner=httpx.MockTransport(_answers))

    async def get(url: str) -> httpx.Response:
        async with httpx.AsyncClient(transport=transport) as client:
            return await client.get(url)

    assert asyncio.run(get("http://169.254.169.254/latest/meta-data/instance-type")).text == "p5.48xlarge"
    for url in (
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "http://169.254.169.254:8080/latest/meta-data/instance-type",
        "https://docs.aws.amazon.com/latest/meta-data/instance-type",
        "http://10.0.0.1/latest/api/token",
    ):
        with pytest.raises(OffLimits, match="not one of the metadata endpoints"):
            asyncio.run(get(url))


def test_probe_reaches_the_metadata_service_with_no_traceback(tmp_path, monkeypatch, capsys):
    """The documented ``probe --out probe.json`` on AWS: the link-local service answers."""
    monkeypatch.setenv("PATH", str(tmp_path))  # no tools at all
    monkeypatch.setattr(httpx, "AsyncHTTPTransport", lambda **kw: httpx.MockTransport(_answers))
    out = tmp_path / "probe.json"
    assert main(["probe", "--out", str(out)]) == 0
    assert "instance: p5.48xlarge (aws metadata service)" in capsys.readouterr().err
