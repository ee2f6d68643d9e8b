"""The fault matrix: the real pipeline against the real mirror served over loopback HTTP, with one
fault injected per URL. Each fault has a documented outcome: retried and recovered, provider kept
stale with its cause, or document skipped with a warning; other providers never lose rows.

Waits between retries are recorded, not slept; server-side delays are kept well under a second.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time

import duckdb
import pytest

from catalog.cli import main
from devtools.mirror_server import MirrorServer, Reply
from tests.helpers import (
    AWS_PATH,
    AZURE_SUMMARY_PATH,
    MIRROR,
    ROOT,
    SHORT_TIMEOUT,
    T0,
    T1,
    Waits,
    assert_others_fresh,
    assert_stale,
    outcomes,
)
from tests.helpers import fault_refresh as refresh

pytestmark = pytest.mark.slow  # runs refreshes or the app: left out of `make test-fast`


@pytest.fixture
def db(fault_db):
    return fault_db


@pytest.fixture
def server(mirror_server):
    return mirror_server


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def blackhole():
    """A listener whose backlog is full, so a new connection's SYN is never answered."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(4):
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    yield port
    for sock in (*fillers, listener):
        sock.close()


def test_connect_timeout_keeps_the_provider_stale(db, server, blackhole):
    blackholed = {"docs.aws.amazon.com": f"http://127.0.0.1:{blackhole}"}
    report = refresh(db, server.base_url, overrides=blackholed, timeout=SHORT_TIMEOUT)
    assert_stale(db, report, "aws", "ConnectTimeout")


def test_read_timeout_on_a_slow_drip(db, server):
    # Slower than the 0.3 s read timeout by a margin that survives a loaded machine.
    server.script(AWS_PATH, Reply(200, b"x" * 512, drip_s=1.0))
    report = refresh(db, server.base_url, timeout=SHORT_TIMEOUT)
    assert_stale(db, report, "aws", "ReadTimeout")


def test_connection_refused(db, server):
    report = refresh(
        db, server.base_url, overrides={"docs.aws.amazon.com": f"http://127.0.0.1:{closed_port()}"}
    )
    assert_stale(db, report, "aws", "ConnectError")


def test_persistent_500_is_retried_then_stale(db, server):
    server.script(AWS_PATH, Reply(500))
    waits = Waits()
    report = refresh(db, server.base_url, waits=waits)
    assert_stale(db, report, "aws", "HTTP 500")
    assert waits.seconds == [0.5, 1.0]
    assert [p for p, _ in server.requests].count(AWS_PATH) == 3


def test_503_then_success_recovers(db, server):
    page = (MIRROR / AWS_PATH.lstrip("/")).read_bytes()
    server.script(AWS_PATH, Reply(503), Reply(200, page))
    waits = Waits()
    report = refresh(db, server.base_url, waits=waits)
    assert report.exit_code == 0 and outcomes(report)["aws"].outcome == "ok"
    assert waits.seconds == [0.5]
    assert_others_fresh(db, "")


def test_429_honours_retry_after(db, server):
    page = (MIRROR / AWS_PATH.lstrip("/")).read_bytes()
    server.script(AWS_PATH, Reply(429, headers={"Retry-After": "7"}), Reply(200, page))
    waits = Waits()
    report = refresh(db, server.base_url, waits=waits)
    assert report.exit_code == 0 and waits.seconds == [7.0]


def test_404_for_an_include_on_a_first_refresh_leaves_its_figures_missing(tmp_path, server):
    server.scripts.clear()
    server.script(AZURE_SUMMARY_PATH, Reply(404))
    db = tmp_path / "first.duckdb"
    report = refresh(db, server.base_url, providers=["azure"])
    assert report.exit_code == 0 and outcomes(report)["azure"].outcome == "ok"
    with duckdb.connect(str(db), read_only=True) as con:
        notes, gbits, basis, stale = con.execute(
            "SELECT array_to_string(notes, '; '), inter_node_gbits_per_s, inter_node_basis, stale "
            "FROM instances "
            "WHERE instance_type = 'Standard_ND96isr_H100_v5'"
        ).fetchone()
    assert "missing includes: ndh100v5-series-summary.md" in notes
    # The 3,200 Gb/s lived in that include: it is not kept or guessed from memory. What remains is the
    # one rule every silent 'r' size gets (setup-infiniband.md's catch-all), inferred, and said so.
    assert (gbits, basis, stale) == (56, "inferred", False)
    assert "the series summary, which may state its own, was not read" in notes


def test_404_for_an_include_after_a_good_refresh_carries_its_figures(db, server):
    server.script(AZURE_SUMMARY_PATH, Reply(404))
    report = refresh(db, server.base_url)
    azure = outcomes(report)["azure"]
    # the page's size loses 4 fields; the six sizes only the price table or a health check names, placed
    # in the same series, lose the NVLink its summary states (their other facts come from elsewhere)
    assert (report.exit_code, azure.outcome, azure.fields_carried, azure.rows_carried) == (
        1,
        "carried",
        10,
        0,
    )
    assert azure.cause.startswith(
        "10 fields not in this parse, carried: "
        "Standard_ND96isr_H100_v5: intra_node_link, inter_node_gbits_per_s, nic_count, inter_node_fabric; "
        "Standard_ND96is_H100_v5: intra_node_link; "
    )
    with duckdb.connect(str(db), read_only=True) as con:
        gbits, stale, since, cause = con.execute(
            "SELECT inter_node_gbits_per_s, stale, stale_since, stale_cause FROM instances "
            "WHERE instance_type = 'Standard_ND96isr_H100_v5'"
        ).fetchone()
        quote, valid_from = con.execute(
            "SELECT quote, valid_from FROM current_claims "
            "WHERE instance_type = 'Standard_ND96isr_H100_v5' AND field = 'inter_node_gbits_per_s'"
        ).fetchone()
    assert (gbits, stale, since) == (3200.0, True, T1)  # the last good figure, marked stale
    assert cause == (
        "carried from the last good catalog (not in this parse): "
        "intra_node_link, inter_node_gbits_per_s, nic_count, inter_node_fabric"
    )
    assert "3.2 Tbps of interconnect bandwidth per VM" in quote and valid_from == T0  # the same claim, kept


def test_truncated_body_is_retried_then_stale(db, server):
    page = (MIRROR / AWS_PATH.lstrip("/")).read_bytes()
    server.script(AWS_PATH, Reply(200, page, truncate_to=1000))
    report = refresh(db, server.base_url)
    assert_stale(db, report, "aws", "RemoteProtocolError")


def test_truncated_once_then_whole_recovers(db, server):
    page = (MIRROR / AWS_PATH.lstrip("/")).read_bytes()
    server.script(AWS_PATH, Reply(200, page, truncate_to=1000), Reply(200, page))
    assert refresh(db, server.base_url).exit_code == 0


def test_renamed_headers_fail_loudly_naming_the_header(db, server):
    page = (MIRROR / AWS_PATH.lstrip("/")).read_text().replace("| Instance type ", "| Type          ")
    server.script(AWS_PATH, Reply(200, page.encode()))
    report = refresh(db, server.base_url)
    assert_stale(db, report, "aws", "LayoutError: no table with columns ['^Instance type$'")


@pytest.mark.shared
def test_sigkill_mid_write_leaves_the_old_catalog_intact_and_the_next_refresh_succeeds(db, tmp_path):
    before = db.read_bytes()
    with MirrorServer(MIRROR, latency_s=0.3) as slow:
        command = [
            sys.executable,
            "-m",
            "catalog",
            "refresh",
            "--mirror",
            slow.base_url,
            "--db",
            str(db),
            "--provider",
            "azure",
            "--quiet",
        ]
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while not list(db.parent.glob(f"{db.name}.tmp-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # well inside the fetch phase: documents are being written to the new file
        assert process.poll() is None, "the refresh finished before it could be killed"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    assert process.returncode == -signal.SIGKILL
    assert db.read_bytes() == before  # readers never saw the half-written file
    assert list(db.parent.glob(f"{db.name}.tmp-*"))  # the half-built file is left behind ...
    offline = ["refresh", "--mirror", str(MIRROR), "--copies", str(MIRROR.parent), "--db", str(db), "--quiet"]
    assert main(offline) == 0  # ... lock released
    assert not list(db.parent.glob(f"{db.name}.tmp-*"))  # ... and cleaned up by the next refresh
