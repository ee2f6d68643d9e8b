"""The third part of ``make attacks`` (issue 23, round three): tool outputs of 10 to 62 MB built to
be slow or huge within the import's 64 MB cap, a probe record of 200,000 runs, a Spare Cores document
with a 2,500,000-cell row, a metadata service that never stops answering, 20,000 command-line
options, an API list of 100,000 repeats and a link planning a million instances; each measured like
the first half's cases (devtools/attacks.py). Before the caps each took minutes or gigabytes."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path

from devtools.attacks_gates import catalog_run, refresh
from devtools.mirror_server import MirrorServer, Reply

ROOT = Path(__file__).resolve().parent.parent
Setup = Callable[[Path, contextlib.ExitStack], tuple[list[str], dict[str, str]]]

NCCL_HEAD = (
    "#  size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw  busbw #wrong\n"
    "  8388608  2097152  float  sum  -1  123.4  67.98  118.97  0  122.1  68.70  120.23  0\n"
)
P2P_HEAD = "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n   D\\D     0      1\n"
NVB_TEXT_HEAD = (
    "Running device_to_device_memcpy_read_ce.\nmemcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n"
)
NVLINK_RUN = {
    "tool": "nvidia-smi nvlink -s",
    "stdout": "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n\t Link 0: 26.562 GB/s\n",
}
SPARE_CORES = (
    "raw.githubusercontent.com/SpareCores/sc-inspector-data/main/data/aws/g4dn.12xlarge/nvbandwidth/stdout"
)


def nvbandwidth_json(row_cells: int) -> str:
    case = {
        "name": "device_to_device_memcpy_read_ce",
        "status": "Passed",
        "bandwidth_description": "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)",
        "bandwidth_matrix": [[1.5] * row_cells],
    }
    return json.dumps({"nvbandwidth": {"version": "v0.8", "testcases": [case]}})


def topology(gpus: int) -> str:
    head = "        " + " ".join(f"GPU{i}" for i in range(gpus))
    rows = (f"GPU{r} " + " ".join("X" if c == r else "NV18" for c in range(gpus)) for r in range(gpus))
    return head + "\n" + "\n".join(rows) + "\n"


def cases(shared: Path) -> dict[str, Setup]:
    """Each case sets up its fault and returns the command to measure (``-c`` code runs as Python)."""
    mirror = shared / "mirror"

    def good(scratch: Path, *providers: str) -> Path:
        db = scratch / "c.duckdb"
        args = refresh(str(mirror), db)
        for provider in providers:  # another provider than aws: the --provider options add up
            args += ["--provider", provider]
        assert catalog_run(args) == 0, "the good catalog did not build"
        return db

    def imported(content: Callable[[], str]) -> Setup:
        def start(scratch: Path, _: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
            db, path = good(scratch), scratch / "output.txt"
            path.write_text(content())
            return ["measurements", "import", str(path), "--db", str(db)], {}

        return start

    def spare_cores_row(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
        db = good(scratch, "sparecores")
        server = stack.enter_context(MirrorServer(mirror))
        server.script("/" + SPARE_CORES, Reply(200, nvbandwidth_json(2_500_000).encode()))
        return [
            "refresh",
            "--mirror",
            server.base_url,
            "--provider",
            "sparecores",
            "--db",
            str(db),
            "--quiet",
        ], {}

    def python(code: str, db: Callable[[Path], Path] | None = None) -> Setup:
        def start(scratch: Path, _: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
            env = {"INTERCONNECT_CATALOG_DB": str(db(scratch))} if db else {}
            return ["-c", code], env

        return start

    endless_metadata = (
        "import asyncio, sys, httpx\nfrom catalog import probe\nfrom fetch.transports import MetadataOnly\n"
        "def endless(request):\n"
        "    async def body():\n        while True:\n            yield b'p5.48xlarge' * 6000\n"
        "    return httpx.Response(200, content=body())\n"
        "async def detect():\n"
        "    transport = MetadataOnly(probe.ENDPOINTS, inner=httpx.MockTransport(endless))\n"
        "    async with httpx.AsyncClient(transport=transport, timeout=1.0) as client:\n"
        "        return await probe.detect_instance(client, deadline_s=4.0)\n"
        "print('error: ' + asyncio.run(detect())[2], file=sys.stderr)\n"
    )
    api_repeats = (
        "import os, sys\nfrom catalog import Catalog\n"
        "frame = Catalog.open(os.environ['INTERCONNECT_CATALOG_DB']).plan("
        "'llama-3.1-8b', 'serve', provider=['aws'] * 100_000)\n"
        "print(f'error: {len(frame)} rows, providers {sorted(set(frame.provider))}', file=sys.stderr)\n"
    )
    app_nodes = (
        "import sys, re\nfrom streamlit.testing.v1 import AppTest\n"
        f"app = AppTest.from_file({str(ROOT / 'app.py')!r}, default_timeout=300)\n"
        "app.query_params['nodes'] = '1000000'\napp.run()\nassert not app.exception, app.exception\n"
        "said = [h.value for h in app.get('html') if 'ic-warning' in h.value and 'nodes' in h.value]\n"
        "print('error: ' + re.sub('<[^>]+>', '', said[0]).replace('&#x27;', \"'\"), file=sys.stderr)\n"
    )
    options = ["--provider", "aws"] * 20_000
    return {
        "import: 10 MB of empty lines (once 63 s, 1.7 GB)": imported(lambda: "\n" * 10_000_000),
        "import: 62 MB of nccl-tests lines of 16,000 tabs (once 134 s)": imported(
            lambda: NCCL_HEAD + "\n".join(["\t" * 15_990 + " GB/s"] * 3_900) + "\n"
        ),
        "import: a p2p matrix of 3,900 rows of 8,000 cells (once 231 s, 5.8 GB)": imported(
            lambda: P2P_HEAD + "\n".join(["0 " * 7_995] * 3_900) + "\n"
        ),
        "import: nvbandwidth JSON, one row of 10,000,000 cells (once 189 s, 4.7 GB)": imported(
            lambda: nvbandwidth_json(10_000_000)
        ),
        "import: nvbandwidth text, 3,900 rows of 4,000 cells (once 177 s, 5.1 GB)": imported(
            lambda: NVB_TEXT_HEAD + "\n".join(["0" + " 1.5" * 4_000] * 3_900) + "\n"
        ),
        "import: nvidia-smi topo of 1,500 GPUs (once 148 s)": imported(lambda: topology(1_500)),
        "import: a probe record of 200,000 runs (once 200,002 lines)": imported(
            lambda: json.dumps(
                {"format": "interconnect-catalog-probe", "version": 1, "runs": [NVLINK_RUN] * 200_000}
            )
        ),
        "refresh: a Spare Cores document with a 2,500,000-cell row (once 45 s, 1.3 GB)": spare_cores_row,
        "probe: a metadata service answering without end (once 19 GB, never ending)": python(
            endless_metadata
        ),
        "plan: 20,000 --provider options (once 62 s)": lambda scratch, _: (
            ["plan", "--db", str(good(scratch)), "--model", "llama-3.1-8b", "--workload", "serve", *options],
            {},
        ),
        "API: plan(provider=['aws'] * 100,000) (once > 120 s)": python(api_repeats, good),
        "app: a link with nodes=1000000 (once a million instances planned)": python(app_nodes, good),
    }
