"""measure/: every one of the 120 real tool outputs in ../shared/reference/measurements is read (or
refused with the line and the reason), traps included; small fixtures pin the edge cases."""

from __future__ import annotations

import math
import re
import time

import pytest

from measure import detect, parse_output
from measure.common import MAX_LINE_CHARS, Origin, Output, binary_size_bytes, clean
from measure.instances import find_instance
from normalize.errors import ParseError
from records.measurements import METRICS
from tests.helpers import COLLECTIVE_NEEDED, NO_RESULT, SHARED

MEASUREMENTS = SHARED / "reference" / "measurements"
ORIGIN = Origin("user", "file:///tmp/output.txt")


def real(name: str) -> str:
    return (MEASUREMENTS / name).read_bytes().decode("utf-8")


def read(name: str, **kw):
    return parse_output(real(name), ORIGIN, collective=COLLECTIVE_NEEDED.get(name), **kw)


def one(readings, metric, **match):
    found = [m for m in readings if m.metric == metric and all(getattr(m, k) == v for k, v in match.items())]
    assert len(found) == 1, f"{metric} {match}: {found}"
    return found[0]


def all_outputs() -> list[str]:
    return sorted(p.relative_to(MEASUREMENTS).as_posix() for p in MEASUREMENTS.rglob("*.txt"))


@pytest.mark.shared
def test_real_there_are_120_outputs_and_each_is_read_or_refused_with_its_line():
    names = all_outputs()
    assert len(names) == 120
    counts = {}
    for name in names:
        text = real(name)
        if name in NO_RESULT:
            with pytest.raises(ParseError, match=NO_RESULT[name]):
                parse_output(text, ORIGIN)
            continue
        readings = read(name)
        assert readings, name
        for m in readings:
            assert m.quote in text, (name, m.quote)  # the source's own words
            assert m.metric in METRICS and m.source == "user" and m.kind == "measured"
            assert m.value is None or (math.isfinite(m.value) and m.value > 0)
            assert m.locator.startswith(("line ", "$.nvbandwidth")), m.locator
        counts[name.split("/")[0]] = counts.get(name.split("/")[0], 0) + 1
    assert counts == {"topo": 11, "nvlink": 4, "nccl-tests": 50, "nvbandwidth": 44, "ib": 7, "efa": 3}


@pytest.mark.shared
@pytest.mark.parametrize("name", sorted(COLLECTIVE_NEEDED))
def test_real_a_log_that_does_not_name_its_collective_is_refused_until_the_user_says(name):
    with pytest.raises(ParseError, match=r"^line \d+: .*(say which one ran|say which one)"):
        parse_output(real(name), ORIGIN)
    (reading,) = [m for m in read(name) if m.metric.startswith("nccl_")][:1]
    assert "given by the user" in reading.notes


@pytest.mark.shared
def test_real_nccl_tests_tables_give_busbw_at_the_largest_size_with_ranks_and_nodes():
    p5 = one(read("nccl-tests/aws-p5-48xlarge-2node-efa-allreduce.txt"), "nccl_allreduce_busbw_gbytes_per_s")
    assert (p5.value, p5.message_bytes, p5.quote[:3]) == (487.09, 17179869184, "0: ")
    assert "busbw/algbw = 1.875" in p5.notes and "inferred" in p5.notes  # srun-prefixed, unnamed
    g5 = read("nccl-tests/aws-g5-2xlarge-a10g-2node-socket-allreduce.txt")
    allreduce = one(g5, "nccl_allreduce_busbw_gbytes_per_s")
    assert (allreduce.value, allreduce.nodes, allreduce.gpus) == (0.73, 2, 2)  # old format, no root
    assert "peak 0.82 GB/s at 16,777,216 B" in allreduce.notes and "named in the log" in allreduce.notes
    assert one(g5, "nccl_transport").value_text == "NET/Socket"
    gb200 = one(
        read("nccl-tests/coreweave-gb200-nvl72-1rack-allreduce.txt"), "nccl_allreduce_busbw_gbytes_per_s"
    )
    assert (gb200.value, gb200.gpus, gb200.nodes) == (834.57, 72, None)  # one 'Rank 71' line: no node count
    assert "rank list abridged (1 of 72 ranks shown)" in gb200.notes
    eks = one(
        read("nccl-tests/aws-p5-48xlarge-2node-eks-efa-allreduce-excerpt.txt"),
        "nccl_allreduce_busbw_gbytes_per_s",
    )
    assert (eks.value, eks.message_bytes) == (437.79, 2147483648)  # '...' elision and [1,0]<stdout>: prefix
    rccl = one(
        read("nccl-tests/oci-bm-gpu-mi300x-8-2node-oke-rccl-allreduce.txt"),
        "nccl_allreduce_busbw_gbytes_per_s",
    )
    assert (rccl.tool, rccl.tool_version, rccl.value) == ("rccl-tests", "develop:a52452e", 358.37)


@pytest.mark.shared
def test_real_one_log_with_five_collectives_gives_five_readings():
    readings = read("nccl-tests/h100-cluster-10node-8gpu-5collectives-xxrjun.txt")
    values = {m.metric: (m.value, m.nodes, m.gpus) for m in readings}
    assert values == {
        "nccl_allreduce_busbw_gbytes_per_s": (320.54, 10, 80),
        "nccl_allgather_busbw_gbytes_per_s": (324.29, 10, 80),
        "nccl_reducescatter_busbw_gbytes_per_s": (323.4, 10, 80),
        "nccl_alltoall_busbw_gbytes_per_s": (50.38, 10, 80),
        "nccl_sendrecv_busbw_gbytes_per_s": (15.22, 10, 80),
    }
    assert all(m.tool_version == "2.17.8" for m in readings)


@pytest.mark.shared
def test_real_user_named_collective_that_the_figures_contradict_is_noted():
    (gb300,) = read("nccl-tests/azure-gb300-mnnvl-allreduce-excerpt.txt")
    assert gb300.value == 936.93
    assert "busbw/algbw = 0.997" in gb300.notes and "not self-consistent" in gb300.notes
    with pytest.raises(ParseError, match="the log says all_reduce_perf ran, not all_gather"):
        parse_output(
            real("nccl-tests/lambda-1cc-b200-2node-ib-allreduce-dstack.txt"), ORIGIN, collective="all_gather"
        )


@pytest.mark.shared
def test_real_transport_lines_say_socket_rdma_and_gpudirect():
    p4d = read("nccl-tests/aws-p4d-24xlarge-2node-eks-efa-allreduce-debuginfo.txt")
    net = one(p4d, "nccl_transport")
    assert net.value_text == "NET/AWS Libfabric" and net.tool_version == "2.9.9+cuda11.2"
    assert "GPUDirect RDMA (GDRDMA) on 64 of 64 channel lines" in net.notes and "provider efa" in net.notes
    assert one(p4d, "nccl_intra_node_transport").value_text == "P2P/IPC"
    p3dn = one(read("nccl-tests/aws-p3dn-24xlarge-2node-efa-allreduce-2019-raw.txt"), "nccl_transport")
    assert p3dn.value_text == "NET/AWS Libfabric" and "no GPUDirect RDMA" in p3dn.notes  # 2019: no GDRDMA
    gcp = read("nccl-tests/gcp-a3-h100-2node-socket-nccl-info-transport-hypercomputer-deepdive.txt")
    socket = one(gcp, "nccl_transport")
    assert socket.value_text == "NET/Socket" and "No device found" in socket.notes
    assert one(gcp, "nccl_intra_node_transport").value_text == "P2P/CUMEM"
    fastrak = one(
        read("nccl-tests/gcp-a3-megagpu-8g-2node-tcpxo-nccl-info-fastrak-grep-hypercomputer-deepdive.txt"),
        "nccl_transport",
    )
    assert fastrak.value_text == "NET/FasTrak" and "on 16 ranks" in fastrak.notes
    nebius = one(
        read("nccl-tests/nebius-soperator-h100-2node-nccl-debug-info-transport-mlperf-excerpt.txt"),
        "nccl_transport",
    )
    assert nebius.value_text == "NET/IBext" and "GDRDMA) on 323 of 355 channel lines" in nebius.notes


@pytest.mark.shared
def test_real_torch_benchmark_and_ncclscout():
    (tcpx,) = read("nccl-tests/gcp-a3-highgpu-8g-2node-tcpx-torch-allreduce-hypercomputer-deepdive.txt")
    assert (tcpx.metric, tcpx.value, tcpx.message_bytes, tcpx.gpus) == (
        "nccl_allreduce_busbw_gbytes_per_s",
        83.27,
        2 * 1024**3,
        None,
    )
    assert tcpx.run_at.isoformat() == "2026-07-31T05:36:28"
    (eth0,) = read("nccl-tests/gcp-a3-h100-2node-socket-eth0-torch-allreduce-hypercomputer-deepdive.txt")
    assert (eth0.value, eth0.gpus, eth0.message_bytes) == (28.6, 16, 1024**3)
    pairs = read("nccl-tests/oci-bm-gpu-h100-8-ncclscout-pairs.txt")
    assert [(m.value, m.nodes) for m in pairs] == [(448.35, 2), (450.33, 2)]
    assert pairs[0].run_at.isoformat() == "2026-01-16T19:43:27"


@pytest.mark.shared
def test_real_nvbandwidth_v05_reports_each_way_and_v08_the_total():
    v05 = read("nvbandwidth/gcp-a3-highgpu-8g-nvbandwidth-json-sparecores.txt")
    assert {m.tool_version for m in v05} == {"v0.5"}
    read_ce = one(v05, "gpu_to_gpu_gbytes_per_s", direction="one-way", quote='"370.895"')
    assert read_ce.locator.startswith("$.nvbandwidth.testcases[4].bandwidth_matrix[") and read_ce.gpus == 8
    assert "median of 56 GPU pairs (min 369.746, max 372.052)" in read_ce.notes
    each = [m for m in v05 if m.metric == "gpu_to_gpu_each_way_gbytes_per_s"]
    assert [m.value for m in each] == [365.716, 383.479]  # CE read, write; SM ones (670, 725) not read
    assert not [m for m in v05 if m.metric == "gpu_to_gpu_gbytes_per_s" and m.direction == "two-way"]
    v08 = read("nvbandwidth/gcp-a3-edgegpu-8g-nolssd-nvbandwidth-json-sparecores.txt")
    totals = [m for m in v08 if m.metric == "gpu_to_gpu_gbytes_per_s" and m.direction == "two-way"]
    assert [m.value for m in totals][:2] == [781.258, 786.048]
    assert (
        totals[0].locator.startswith("$.nvbandwidth.testcases[6].bandwidth_matrix[")
        and "total" in totals[0].notes
    )
    each08 = [m for m in v08 if m.metric == "gpu_to_gpu_each_way_gbytes_per_s"]
    # CE read, CE write, SM read, SM write: v0.8 labels them all "Total" and stacks the directions
    assert [m.value for m in each08] == [390.611, 393.006, 338.991, 364.877]
    assert "v0.8 direction matrices" in each08[0].notes and "median of 112 GPU pairs" in each08[0].notes


@pytest.mark.shared
def test_real_waived_single_gpu_runs_give_host_copies_only():
    readings = read("nvbandwidth/gcp-a3-highgpu-1g-nvbandwidth-json-sparecores.txt")
    assert not [m for m in readings if m.metric.startswith("gpu_to_gpu")]
    h2d = one(readings, "host_to_gpu_gbytes_per_s", direction="one-way", quote='"27.6631"')
    assert h2d.gpus == 1 and "17 test cases waived" in h2d.notes


@pytest.mark.shared
def test_real_nvbandwidth_text_multinode_and_abridged():
    (gb200,) = read("nvbandwidth/oci-bm-gpu-gb200-4-2node-mnnvl-multinode-nvbandwidth.txt")
    assert (gb200.value, gb200.nodes, gb200.gpus, gb200.tool_version) == (797.95, 2, 8, "v0.7")
    station = read("nvbandwidth/dgx-station-gb300-nvbandwidth-c2c-abridged-mlengineering.txt")
    assert one(station, "host_to_gpu_gbytes_per_s", direction="one-way").value == 359.05
    assert one(station, "gpu_to_host_gbytes_per_s", direction="one-way").value == 377.15
    (write,) = read("nvbandwidth/nvbandwidth-readme-8gpu-d2d-write-ce.txt")
    assert write.value == 276.33 and write.gpus == 8  # the 0.00 diagonal is not a pair


@pytest.mark.shared
def test_real_p2p_bandwidth_latency_test_reads_enabled_matrices_only():
    readings = read("nvbandwidth/onprem-asus-esc8000a-e12-4x-rtx6000ada-p2pBandwidthLatencyTest.txt")
    assert [(m.direction, m.value, m.gpus) for m in readings] == [
        ("one-way", 26.32, 4),
        ("two-way", 52.11, 4),
    ]
    (h100,) = read("nvbandwidth/h100-8gpu-p2pBandwidthLatencyTest-unidir-mlengineering.txt")
    assert (h100.value, h100.gpus) == (376.19, 8)


@pytest.mark.shared
def test_real_topology_nvlink_and_fabric_outputs():
    a3 = read("topo/gcp-a3-h100-8gpu-gke-topo-hypercomputer-deepdive.txt")
    assert one(a3, "gpu_link").value_text == "NV18" and "28 of 28 GPU pairs" in one(a3, "gpu_link").notes
    assert one(a3, "nvlink_count").value == 18
    asus = read("topo/onprem-asus-esc8000a-e12-4x-rtx6000ada-4nic-pcie-topo.txt")
    assert sorted((m.value_text, m.notes.split("; ")[1][:10]) for m in asus) == [
        ("NODE", "2 of 6 GPU"),
        ("SYS", "4 of 6 GPU"),
    ]
    assert one(read("topo/l4-2gpu-topo-p2p-r-cns-mlengineering.txt"), "gpu_p2p_status").value_text == "CNS"
    link = one(
        read("nvlink/gcp-a3-h100-gpu0-nvlink-status-hypercomputer-deepdive.txt"), "nvlink_gbytes_per_s"
    )
    assert (link.value, link.port_count, link.direction) == (26.562, 18, "one-way")
    dead = one(read("nvlink/azure-a100-sxm4-80gb-gpu6-nvlink-status-all-inactive-azhc.txt"), "nvlink_status")
    assert dead.value_text == "inactive" and "GPU 6" in dead.notes
    assert one(read("efa/aws-p4d-24xlarge-fi_info-p-efa-t-rdm-awsdocs.txt"), "nic_count").value == 4
    assert one(read("efa/aws-hpc6a-fi_info-p-efa.txt"), "nic_count").value == 1  # -rdm and -dgrm: one device
    eth0 = one(read("ib/gcp-a3-h100-gke-node-nic-speed-sysfs-hypercomputer-deepdive.txt"), "nic_gbits_per_s")
    assert (eth0.value, eth0.port_count) == (200.0, 1)  # the gke* veths have no driver


@pytest.mark.shared
def test_real_perftest_units_mib_per_second_and_launcher_prefixes():
    write = one(read("ib/azure-nd96asr-v4-aks-ib_write_bw-mlx5_0.txt"), "ib_write_gbits_per_s")
    assert (write.value, write.message_bytes) == (196.64, 4194304)
    loopback = one(read("ib/superbench-fixture-ib_write_bw-loopback-all-sizes.txt"), "ib_write_gbits_per_s")
    # the best average, 23,277.91 MB/sec at 4 MiB; perftest's MB/sec is MiB/s: 195.27 Gbit/s, not 186.2
    assert (loopback.value, loopback.message_bytes) == (195.269262049, 4194304)
    assert "perftest's MB is 2^20 bytes" in loopback.notes
    send = one(read("ib/nebius-gpu-h100-sxm-8gpu-2node-ib_send_bw-skypilot.txt"), "ib_send_gbits_per_s")
    assert send.value == 361.67 and send.quote.startswith("(worker1, rank=1")
    roce = one(read("ib/oci-oke-rdma-ib_write_bw-roce.txt"), "ib_write_gbits_per_s")
    assert roce.value == 98.01 and "Link type Ethernet" in roce.notes and "Number of qps 4" in roce.notes


def test_fixture_launcher_prefix_and_elision(fixture_text):
    (reading,) = parse_output(fixture_text("measure/nccl-srun-elided.txt"), ORIGIN)
    assert (reading.metric, reading.value, reading.nodes, reading.gpus) == (
        "nccl_allgather_busbw_gbytes_per_s",
        24.86,
        2,
        2,
    )
    assert reading.locator == "line 9" and reading.quote.startswith("0:   1073741824")


def test_fixture_a_short_row_is_refused_with_its_line(fixture_text):
    with pytest.raises(ParseError, match=r"^line 3: a result row has 7 columns"):
        parse_output(fixture_text("measure/nccl-bad-row.txt"), ORIGIN)


def test_fixture_ibv_devinfo_counts_active_ports_and_their_rate(fixture_text):
    readings = parse_output(fixture_text("measure/ibv_devinfo-v.txt"), ORIGIN)
    assert one(readings, "nic_count").value == 2  # mlx5_2 is down
    port = one(readings, "ib_port_gbits_per_s")
    assert (port.value, port.port_count) == (400.0, 2) and "link layer InfiniBand" in port.notes


def test_fixture_nvbandwidth_text_total_is_two_way_and_latency_is_not_read(fixture_text):
    (total,) = parse_output(fixture_text("measure/nvbandwidth-total-text.txt"), ORIGIN)
    assert (total.metric, total.direction, total.value, total.tool_version) == (
        "gpu_to_gpu_gbytes_per_s",
        "two-way",
        781.1,
        "v0.8",
    )


def test_not_a_tool_output_is_refused():
    with pytest.raises(ParseError, match=r"^line 1: not the output of a tool this importer reads"):
        parse_output("hello\nworld\n", ORIGIN)
    assert detect("hello") == []


def test_cleaning_and_sizes():
    assert clean("[1,0]<stdout>:#  size") == "#  size"
    assert clean("0:     8    2  float") == "    8    2  float"
    assert clean("\x1b[4mGPU0\x1b[0m") == "GPU0"
    assert clean("10: not a launcher") == "10: not a launcher"
    assert binary_size_bytes("16G", "x") == 17179869184 and binary_size_bytes("512MB", "x") == 536870912
    with pytest.raises(ParseError, match="x: not a message size"):
        binary_size_bytes("16 G", "x")
    assert [line.number for line in Output("a\r\nb\n")] == [1, 2]


@pytest.mark.shared
def test_real_a_collective_the_figures_contradict_is_refused():
    with pytest.raises(
        ParseError, match=r"busbw/algbw = 1\.875 > 1 .* can only be an all_reduce, not all_gather"
    ):
        parse_output(
            real("nccl-tests/aws-p5-48xlarge-2node-efa-allreduce.txt"), ORIGIN, collective="all_gather"
        )
    torch = "nccl-tests/gcp-a3-h100-2node-socket-eth0-torch-allreduce-hypercomputer-deepdive.txt"
    with pytest.raises(ParseError, match="busbw > algbw can only be an all_reduce, not alltoall"):
        parse_output(real(torch), ORIGIN, collective="alltoall")


def test_the_instance_a_file_names_whole_and_never_a_gpu_name():
    known = {("gcp", "a3-highgpu-8g"), ("gcp", "a3-highgpu-8g-nolssd"), ("runpod", "NVIDIA H100 80GB HBM3")}
    found = find_instance(
        "# cluster: 2x a3-highgpu-8g (H100-80GB)\n#  Rank 0 ... NVIDIA H100 80GB HBM3", known
    )
    assert (found.provider, found.instance_type, found.how) == (
        "gcp",
        "a3-highgpu-8g",
        "the file names a3-highgpu-8g",
    )
    assert find_instance("a3-highgpu-8g-nolssd", known).instance_type == "a3-highgpu-8g-nolssd"
    several = find_instance("a3-highgpu-8g vs a3-highgpu-8g-nolssd", known)
    assert several.instance_type is None and "several catalog instances" in several.how
    assert find_instance("NVIDIA H100 80GB HBM3", known).how == "the file names no catalog instance"


SPACES = " " * (MAX_LINE_CHARS - 100)  # the longest line a parser sees (longer: refused)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        # a digit run a nested quantifier could split in exponentially many ways (found by fuzzing)
        (
            "Running device_to_device_memcpy_read_ce.\n"
            "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n 0 " + "1" * 60 + "x\n",
            "line 1: no nvbandwidth test case with a bandwidth result",
        ),
        # a lazy tail before a long run of spaces that does not end the line: quadratic
        ("x NCCL INFO Using network a" + SPACES + "!\n", "line 1: not the output of a tool"),
        ("x NCCL INFO Channel 00 via P2P/a" + SPACES + "!\n", "line 1: not the output of a tool"),
        ("GPU 0: X (UUID: 1)\n Link 0: " + SPACES + "x\n", "line 2: no bandwidth figure with a unit in 'x'"),
        ("#  size count type\n1 2 float x" + SPACES + "!\n", "line 1: not the output of a tool"),
        ("hca_id: mlx5_0\n\tport: 1\n\t\tstate: x" + SPACES + "!\n", "ibv_devinfo lists no active port"),
    ],
)
def test_adversarial_lines_are_refused_in_linear_time(text, error):
    started = time.perf_counter()
    with pytest.raises(ParseError, match=re.escape(error)):
        parse_output(text, ORIGIN)
    # milliseconds in linear time; the old patterns needed minutes for these lengths
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize(
    ("cell", "value"),
    [
        ("412.5", 412.5),
        (".5", 0.5),
        ("7", 7.0),
        (388.25, 388.25),
        (12, 12.0),
        ("N/A", None),
        (None, None),
    ],
)
def test_a_json_matrix_cell_reads_to_its_figure(cell, value):
    from measure.nvbandwidth import Matrix

    assert Matrix("device_to_device_memcpy_read_ce", "", [[cell]], json_path="$.t[0]").value(0, 0) == value


@pytest.mark.parametrize("cell", ["1.2.3", "1.", "12 GB/s", "-4", "1e3"])
def test_a_json_matrix_cell_that_is_no_plain_number_is_refused_with_its_locator(cell):
    from measure.nvbandwidth import Matrix

    with pytest.raises(ParseError, match=r"\$\.t\[0\]\.bandwidth_matrix\[0\]\[0\]: not a number"):
        Matrix("device_to_device_memcpy_read_ce", "", [[cell]], json_path="$.t[0]").value(0, 0)


@pytest.mark.parametrize("rows", ["[]", "[[], []]"])
def test_a_json_test_case_whose_rows_hold_no_cell_is_no_result(rows):
    text = (
        '{"nvbandwidth": {"testcases": [{"name": "device_to_device_memcpy_read_ce", "status": "Passed", '
        '"bandwidth_description": "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)", '
        f'"bandwidth_matrix": {rows}}}]}}}}'
    )
    with pytest.raises(ParseError, match="line 1: no nvbandwidth test case with a bandwidth result"):
        parse_output(text, ORIGIN)
