"""`catalog probe` and `catalog measurements import`: the recorded real tool outputs play the tools
(small scripts on PATH), the metadata services answer through httpx.MockTransport, and the record
the probe writes is what the import reads."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess

import duckdb
import httpx
import pytest

from catalog import probe
from catalog.cli import main
from catalog.read.measurements import comparisons
from fetch import http
from tests.conftest import shared_fixture
from tests.helpers import COLLECTIVE_NEEDED, NO_RESULT, SHARED, query

OUTPUTS = SHARED / "reference" / "measurements"
A3_RUN = SHARED / "mirror/raw.githubusercontent.com/SpareCores/sc-inspector-data/main/data/gcp/a3-highgpu-8g"


def metadata(answers: dict[str, tuple[int, str, dict]]) -> httpx.MockTransport:
    """Each metadata URL path answers (status, body, headers); anything else is a 404."""

    def handle(request: httpx.Request) -> httpx.Response:
        status, body, headers = answers.get(request.url.path, (404, "not found", {}))
        return httpx.Response(status, text=body, headers=headers)

    return httpx.MockTransport(handle)


GCP = {
    "/computeMetadata/v1/instance/machine-type": (
        200,
        "projects/1/machineTypes/a3-highgpu-8g",
        {"Metadata-Flavor": "Google"},
    )
}
AWS = {"/latest/api/token": (200, "tok", {}), "/latest/meta-data/instance-type": (200, "p5.48xlarge", {})}
AZURE = {"/metadata/instance/compute/vmSize": (200, "Standard_ND96isr_H100_v5", {})}
OCI = {"/opc/v2/instance/shape": (200, "BM.GPU.H100.8", {})}


@pytest.mark.parametrize(
    "answers, expected",
    [
        (GCP, ("gcp", "a3-highgpu-8g", "gcp metadata service")),
        (AWS, ("aws", "p5.48xlarge", "aws metadata service")),
        (AZURE, ("azure", "Standard_ND96isr_H100_v5", "azure metadata service")),
        (OCI, ("oci", "BM.GPU.H100.8", "oci metadata service")),
        ({}, (None, None, "no metadata service answered (pass --provider and --instance)")),
    ],
)
def test_the_instance_comes_from_whichever_metadata_service_answers(answers, expected):
    async def go():
        async with http.make_client(transport=metadata(answers)) as client:
            return await probe.detect_instance(client)

    assert asyncio.run(go()) == expected


def test_a_google_answer_without_googles_header_is_not_believed():
    fake = {"/computeMetadata/v1/instance/machine-type": (200, "projects/1/machineTypes/a3-highgpu-8g", {})}

    async def go():
        async with http.make_client(transport=metadata(fake)) as client:
            return await probe.detect_instance(client)

    assert asyncio.run(go())[0] is None


def test_a_hanging_tool_is_recorded_and_never_stops_the_others(tmp_path):
    def hang(command, **kw):
        raise subprocess.TimeoutExpired(command, kw["timeout"], output=b"partial")

    (tmp_path / "ibv_devinfo").write_text("#!/bin/sh\n")
    (tmp_path / "ibv_devinfo").chmod(0o755)
    entry = probe.run_tool(probe.TOOLS[4], path=str(tmp_path), gpus=1, runner=hang)
    assert (entry["status"], entry["stdout"], entry["command"]) == (
        "timed out after 60s",
        "partial",
        ["ibv_devinfo", "-v"],
    )
    assert probe.run_tool(probe.TOOLS[5], path=str(tmp_path), gpus=1)["status"] == "not on PATH"


def tool(bin_dir, name: str, script: str) -> None:
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)


@shared_fixture()
def fake_gpu_node(tmp_path, monkeypatch):
    """A PATH whose tools print the recorded outputs of a GCP a3-highgpu-8g, and GCP's metadata."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    cat = shutil.which("cat")
    topo = OUTPUTS / "topo/gcp-a3-h100-8gpu-gke-topo-hypercomputer-deepdive.txt"
    nvlink = OUTPUTS / "nvlink/gcp-a3-h100-gpu0-nvlink-status-hypercomputer-deepdive.txt"
    tool(bin_dir, "nvidia-smi", f'case "$1" in topo) {cat} "{topo}";; nvlink) {cat} "{nvlink}";; esac\n')
    tool(bin_dir, "nvbandwidth", f'{cat} "{A3_RUN}/nvbandwidth/stdout"\n')
    allreduce = OUTPUTS / "nccl-tests/gcp-a3-h100-1node-8gpu-allreduce-hypercomputer-deepdive.txt"
    tool(bin_dir, "all_reduce_perf", f'{cat} "{allreduce}"\n')
    tool(bin_dir, "ibv_devinfo", "echo 'Failed to get IB devices list' >&2\nexit 1\n")  # fi_info: absent
    monkeypatch.setenv("PATH", str(bin_dir))
    real = http.make_client
    monkeypatch.setattr(http, "make_client", lambda **kw: real(**{**kw, "transport": metadata(GCP)}))
    return tmp_path


def test_real_probe_then_import_round_trip(fake_gpu_node, real_catalog_file, tmp_path, capsys):
    out = tmp_path / "probe.json"
    assert main(["probe", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert (record["provider"], record["instance_type"], record["instance_source"]) == (
        "gcp",
        "a3-highgpu-8g",
        "gcp metadata service",
    )
    runs = {run["tool"]: run for run in record["runs"]}
    assert {name: run["status"] for name, run in runs.items()} == {
        "nvidia-smi topo -m": "ok",
        "nvidia-smi nvlink -s": "ok",
        "nvbandwidth": "ok",
        "all_reduce_perf": "ok",
        "ibv_devinfo": "exit 1",
        "fi_info -p efa": "not on PATH",
    }
    assert runs["all_reduce_perf"]["command"][-2:] == ["-g", "8"]  # one rank per GPU the topology shows
    db = tmp_path / "c.duckdb"
    shutil.copyfile(real_catalog_file, db)
    assert main(["measurements", "import", str(out), "--db", str(db)]) == 0
    rows = query(
        db,
        "SELECT metric, value, value_text, provider, instance_type, source_url FROM measurements "
        "WHERE source = 'user' ORDER BY source_url, metric, locator",
    )
    assert {(r[3], r[4]) for r in rows} == {("gcp", "a3-highgpu-8g")}
    by_run = {r[5].rsplit("#", 1)[1] for r in rows}
    assert by_run == {"/runs/0/stdout", "/runs/1/stdout", "/runs/2/stdout", "/runs/3/stdout"}
    assert ("nccl_allreduce_busbw_gbytes_per_s", 479.93) in {(r[0], r[1]) for r in rows}
    assert ("gpu_link", "NV18") in {(r[0], r[2]) for r in rows}
    assert ("nvlink_gbytes_per_s", 26.562) in {(r[0], r[1]) for r in rows}
    assert "skipped ibv_devinfo: exit 1" in capsys.readouterr().err
    assert main(["measurements", "import", str(out), "--db", str(db)]) == 0
    assert f"imported 0 readings into {db} ({len(rows)} already there)" in capsys.readouterr().err


def test_real_import_detects_the_instance_or_takes_the_flags_and_refuses_a_file_with_its_line(
    real_catalog_file, tmp_path, capsys
):
    db = tmp_path / "c.duckdb"
    shutil.copyfile(real_catalog_file, db)
    before = query(db, "SELECT count(*) FROM measurements")[0][0]
    torch = OUTPUTS / "nccl-tests/gcp-a3-highgpu-8g-2node-tcpx-torch-allreduce-hypercomputer-deepdive.txt"
    allgather = OUTPUTS / "nccl-tests/gcp-a3-highgpu-8g-2node-tcpx-allgather.txt"
    assert main(["measurements", "import", str(torch), str(allgather), "--db", str(db)]) == 1
    err = capsys.readouterr().err
    assert f"error: {allgather}: line 4: the log does not name the collective" in err
    assert "nothing imported" in err and query(db, "SELECT count(*) FROM measurements")[0][0] == before
    assert main(["measurements", "import", str(torch), "--db", str(db)]) == 0
    assert "a3-highgpu-8g (the file names a3-highgpu-8g)" in capsys.readouterr().err
    flags = ["--provider", "gcp", "--instance", "a3-highgpu-8g", "--collective", "all_gather"]
    assert main(["measurements", "import", str(allgather), *flags, "--db", str(db)]) == 0
    rows = query(
        db,
        "SELECT metric, value, instance_type FROM measurements WHERE source = 'user' ORDER BY metric",
    )
    assert rows == [
        ("nccl_allgather_busbw_gbytes_per_s", 70.9, "a3-highgpu-8g"),
        ("nccl_allreduce_busbw_gbytes_per_s", 83.27, "a3-highgpu-8g"),
    ]
    with duckdb.connect(str(db), read_only=True) as con:
        compared = comparisons(con, "gcp", "a3-highgpu-8g")
    measured = compared[(compared["kind"] == "measured") & compared["metric"].str.startswith("nccl_")]
    assert list(measured["verdict"]) == [
        "nccl-tests allgather busbw 70.9 GB/s (nodes not stated) vs the provider's floor 60 GB/s for 2 nodes "
        "(the log does not say its node count): 118%",
        "torch.distributed benchmark allreduce busbw 83.3 GB/s (nodes not stated); no expected floor for "
        "this test; busbw is not a link rate: compare it with the same test, not with the NICs",
    ]


def test_import_needs_a_catalog_and_a_readable_file(tmp_path, capsys):
    assert (
        main(["measurements", "import", str(tmp_path / "x.txt"), "--db", str(tmp_path / "none.duckdb")]) == 1
    )
    assert "no catalog at" in capsys.readouterr().err


def test_real_the_importer_reads_all_120_outputs_and_refuses_only_the_failed_run(real_catalog_file):
    from catalog import importer

    known = importer.known_instances(real_catalog_file)
    paths = sorted(OUTPUTS.rglob("*.txt"))
    plain = [p for p in paths if p.relative_to(OUTPUTS).as_posix() not in COLLECTIVE_NEEDED]
    results, errors = importer.read_files(plain, known)
    (failed,) = NO_RESULT
    (error,) = errors
    assert error.startswith(f"{OUTPUTS / failed}: line 4: nvbandwidth reported an error, no result: ")
    assert error.endswith(
        "[CUDA_ERROR_SYSTEM_NOT_READY] system not yet initialized in expression cuInit(0) in "
        "int main(int, char**)() : /tmp/nvbandwidth/nvbandwidth.cpp:270"
    )
    for name, collective in COLLECTIVE_NEEDED.items():
        more, none = importer.read_files([OUTPUTS / name], known, collective=collective)
        assert none == [] and more[0].readings
        results += more
    assert len(results) == 119 and all(r.readings for r in results)
    # 466 bandwidth readings, and 8 "Waived" peer statuses of multi-GPU runs with no peer access (issue 20)
    assert sum(len(r.readings) for r in results) == 474
