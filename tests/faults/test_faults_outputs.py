"""The fault matrix, round three: tool outputs, imported files and probe records a user or a document
controls (issue 23). One output is bounded in characters, lines and matrix size before a parser reads
it; JSON a parser cannot hold (5,000-digit numbers, 100,000 levels) is one line; a probe record's runs
and names are checked; a document whose readings a refresh's parse lost keeps them (exit 1)."""

from __future__ import annotations

import json
import shutil
import time
from datetime import timedelta

import pytest

from catalog.cli import main
from devtools.mirror_server import Reply
from measure import parse_output
from measure.common import MAX_MATRIX_GPUS, MAX_OUTPUT_CHARS, MAX_OUTPUT_LINES, Origin
from normalize.errors import ParseError
from records.clock import utcnow
from tests.helpers import Clock, query, run

ORIGIN = Origin("user", "file:///tmp/x.txt")
P2P_HEAD = "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n   D\\D     0      1\n"
NVB_TEXT_HEAD = (
    "Running device_to_device_memcpy_read_ce.\nmemcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n"
)
PROBE_HEAD = '{"format": "interconnect-catalog-probe", "version": 1, '
NVLINK_RUN = {
    "tool": "nvidia-smi nvlink -s",
    "stdout": "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n\t Link 0: 26.562 GB/s\n",
}
RUNS = json.dumps([NVLINK_RUN])  # one run with a reading: the record is read through
SPARE_CORES_DOC = (
    "/raw.githubusercontent.com/SpareCores/sc-inspector-data/main/data/aws/g4dn.12xlarge/nvbandwidth/stdout"
)


@pytest.fixture
def db(small_catalog_file, tmp_path):
    copy = tmp_path / "c.duckdb"
    shutil.copyfile(small_catalog_file, copy)
    return copy


def nvb_json(matrix) -> str:
    case = {
        "name": "device_to_device_memcpy_read_ce",
        "status": "Passed",
        "bandwidth_description": "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)",
        "bandwidth_matrix": matrix,
    }
    return json.dumps({"nvbandwidth": {"version": "v0.8", "testcases": [case]}})


def refused_quickly(text: str, message: str, budget_s: float = 2.0) -> None:
    started = time.perf_counter()
    with pytest.raises(ParseError, match=message):
        parse_output(text, ORIGIN)
    assert time.perf_counter() - started < budget_s


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        # 10 MB of empty lines once took 63 s and 1.7 GB to refuse; 60 MB passed 9 GB
        ("empty lines", "\n" * (MAX_OUTPUT_LINES + 1), f"over the {MAX_OUTPUT_LINES:,}-line cap"),
        ("carriage returns", "\r" * (MAX_OUTPUT_LINES + 1), f"over the {MAX_OUTPUT_LINES:,}-line cap"),
        (
            "8 MB",
            "x" * (MAX_OUTPUT_CHARS + 1),
            f"over the {MAX_OUTPUT_CHARS:,}-character cap on one tool output",
        ),
    ],
)
def test_an_output_past_its_line_or_character_cap_is_refused_before_parsing(name, text, message):
    refused_quickly(text, message)


def _wide(n: int) -> dict[str, str]:
    """Every matrix format with a row (or a header) of ``n`` GPUs."""
    cells = " ".join(["1.5"] * n)
    return {
        "p2p row": P2P_HEAD + f"     0 {cells}\n",
        "nvbandwidth text row": NVB_TEXT_HEAD + f"     0 {cells}\n",
        "nvbandwidth JSON row": nvb_json([[1.5] * n]),
        "nvbandwidth JSON rows": nvb_json([[1.5, 1.5]] * (3 * n)),
        "topo header": "        "
        + " ".join(f"GPU{i}" for i in range(n))
        + "\nGPU0 "
        + " ".join(["NV18"] * n)
        + "\n",
    }


@pytest.mark.parametrize("fmt", sorted(_wide(2)))
def test_a_matrix_wider_than_576_gpus_is_refused_naming_the_cap(fmt):
    """One nvbandwidth row of 2,500,000 cells once took 45 s and 1.3 GB in a refresh and published a
    reading of 2,500,000 GPUs; 3,900 p2p rows of 8,000 cells took 231 s and 5.8 GB."""
    text = _wide(MAX_MATRIX_GPUS + 1)[fmt]
    refused_quickly(
        text, f"over the cap of {3 * MAX_MATRIX_GPUS if fmt.endswith('rows') else MAX_MATRIX_GPUS:,}"
    )


def test_a_p2p_matrix_of_too_many_rows_is_refused():
    rows = "".join(f"     {r} 1.5 1.5\n" for r in range(MAX_MATRIX_GPUS + 1))
    refused_quickly(P2P_HEAD + rows, "rows, over the cap")


def test_a_72_gpu_matrix_is_still_read():
    """The control: an NVL72 domain's nvbandwidth matrix (72 x 72) is read as before."""
    matrix = [[0.0 if r == c else 700.0 for c in range(72)] for r in range(72)]
    (reading,) = parse_output(nvb_json(matrix), ORIGIN)
    assert (reading.gpus, reading.value) == (72, 700.0)


def test_a_topology_of_576_gpus_is_read_in_linear_time():
    """Each cell once looked its GPUs up in a list: 500 GPUs took 8 s, 1,500 took 148 s."""
    n = MAX_MATRIX_GPUS
    head = "        " + " ".join(f"GPU{i}" for i in range(n))
    rows = "\n".join(f"GPU{r} " + " ".join("X" if c == r else "NV18" for c in range(n)) for r in range(n))
    started = time.perf_counter()
    readings = parse_output(head + "\n" + rows + "\n", ORIGIN)
    assert time.perf_counter() - started < 3.0
    assert {r.value_text for r in readings} >= {"NV18"}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("5,000-digit cell", nvb_json([[0, 1]]).replace("[[0, 1]]", "[[0, " + "9" * 5000 + "]]")),
        ("probe record, 5,000-digit number", PROBE_HEAD + '"runs": [], "x": ' + "9" * 5000 + "}"),
        ("probe record nested 100,000 deep", PROBE_HEAD + '"runs": ' + "[" * 100_000 + "]" * 100_000 + "}"),
        ("probe record, provider an object", PROBE_HEAD + '"provider": {"a": 1}, "runs": ' + RUNS + "}"),
        (
            "probe record, 1 MB instance type",
            PROBE_HEAD + f'"instance_type": "{"p" * 1_000_000}", "runs": ' + RUNS + "}",
        ),
        (
            "probe record, escape in instance type",
            PROBE_HEAD + '"instance_type": "p5\\u001b[2J", "runs": ' + RUNS + "}",
        ),
        ("probe record of 200,000 runs", PROBE_HEAD + '"runs": ' + json.dumps([NVLINK_RUN] * 200_000) + "}"),
    ],
)
def test_an_import_a_parser_cannot_hold_is_one_line(db, tmp_path, capsys, name, text):
    """Each once a traceback (ValueError, RecursionError, a record field of another type), a 1 MB
    instance name stored as it came, or 200,000 lines of 'skipped' with exit 0."""
    path = tmp_path / "hostile.json"
    path.write_text(text)
    assert main(["measurements", "import", "--db", str(db), str(path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and err[0].startswith(f"error: {path}: line 1: "), err[:3]
    assert len(err[0]) < 400
    assert query(db, "SELECT count(*) FROM measurements WHERE source = 'user'") == [(0,)]


@pytest.mark.parametrize(
    ("flag", "value", "why"),
    [
        ("--instance", "p5\x1b[2J", "has control or invisible characters (\\x1b)"),
        ("--instance", "p" * 100_000, "is 100,000 characters long, at most 200"),
    ],
)
def test_an_import_flag_naming_an_impossible_instance_is_refused(db, tmp_path, capsys, flag, value, why):
    """Once stored raw as the readings' instance type (100,006 characters with an escape sequence)."""
    path = tmp_path / "nvlink.txt"
    path.write_text(NVLINK_RUN["stdout"])
    assert main(["measurements", "import", "--db", str(db), "--provider", "aws", flag, value, str(path)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: {flag} ") and why in line


def test_a_document_whose_readings_the_parse_lost_keeps_them_stale(
    real_catalog_file, mirror_server, tmp_path
):
    """A Spare Cores document replaced by garbage once lost its 7 readings with exit 0 (the source's
    gate only counts half of all its readings)."""
    db = tmp_path / "c.duckdb"
    shutil.copyfile(real_catalog_file, db)
    url = "https:/" + SPARE_CORES_DOC
    before = query(db, f"SELECT count(*) FROM measurements WHERE source_url = '{url}'")[0][0]
    assert before > 0
    clock = Clock()
    clock.now = utcnow() + timedelta(days=1)
    mirror_server.scripts.clear()
    mirror_server.script(SPARE_CORES_DOC, Reply(200, b"garbage\n"))
    try:
        report = run(db, mirror_server.base_url, clock, providers=["sparecores"])
    finally:
        mirror_server.scripts.clear()
    (outcome,) = report.outcomes
    assert (report.exit_code, outcome.outcome) == (1, "carried")
    assert outcome.cause == f"{before} readings of 1 documents not in this parse, carried: {url}"
    assert query(db, f"SELECT count(*), bool_and(stale) FROM measurements WHERE source_url = '{url}'") == [
        (before, True)
    ]
    total = query(real_catalog_file, "SELECT count(*) FROM measurements WHERE source = 'sparecores'")
    assert query(db, "SELECT count(*) FROM measurements WHERE source = 'sparecores'") == total
