"""``python -m catalog probe``: on a GPU instance, find out what it is and run the tools on PATH that
show what it delivers, into one JSON record ``catalog measurements import`` reads.

The instance comes from the cloud's metadata service (AWS IMDSv2, GCP, Azure IMDS, OCI IMDSv2, each
asked once with a short timeout, all at once through the project's one HTTP client factory), unless
``--provider``/``--instance`` say it. Each tool runs with a timeout; a tool that is missing, fails or
hangs is recorded as such and never stops the others. Nothing is parsed here: the record keeps each
tool's output verbatim, so the import can quote it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

import httpx

from measure.probe_record import FORMAT, VERSION
from normalize.errors import FetchError
from records.clock import utcnow

METADATA = "http://169.254.169.254"
GCP_METADATA = "http://metadata.google.internal"
# A tool's standard output is kept up to this (nvbandwidth -j, the largest, writes about 100 kB);
# past it the tool is stopped and the run recorded as cut.
MAX_STDOUT_BYTES = 8_000_000
STDERR_TAIL_CHARS = 2000


class OutputTooLarge(Exception):
    """A tool wrote more than the cap to its standard output: it was stopped."""

    def __init__(self, stdout: bytes, max_bytes: int) -> None:
        super().__init__(f"stdout over the {max_bytes:,}-byte cap: stopped")
        self.stdout = stdout


@dataclass(frozen=True)
class Tool:
    """One tool the probe runs: its record name, command (``{gpus}`` is filled in) and timeout."""

    name: str
    command: tuple[str, ...]
    timeout_s: float


TOOLS = (
    Tool("nvidia-smi topo -m", ("nvidia-smi", "topo", "-m"), 60),
    Tool("nvidia-smi nvlink -s", ("nvidia-smi", "nvlink", "-s"), 60),
    Tool("nvbandwidth", ("nvbandwidth", "-j"), 1800),
    Tool("all_reduce_perf", ("all_reduce_perf", "-b", "8M", "-e", "1G", "-f", "2", "-g", "{gpus}"), 900),
    Tool("ibv_devinfo", ("ibv_devinfo", "-v"), 60),
    Tool("fi_info -p efa", ("fi_info", "-p", "efa"), 60),
)


def capped_run(
    command: list[str], *, timeout: float, env: dict[str, str] | None, max_bytes: int = MAX_STDOUT_BYTES
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run`` with output captured as text, but standard output read at most
    ``max_bytes`` deep (OutputTooLarge past it, the tool killed) and only standard error's tail kept.
    TimeoutExpired (with what came out) past ``timeout``."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    stdout, stderr, over = bytearray(), bytearray(), threading.Event()

    def read_out() -> None:
        assert process.stdout is not None
        while chunk := os.read(process.stdout.fileno(), 65536):
            stdout.extend(chunk[: max_bytes + 1 - len(stdout)])
            if len(stdout) > max_bytes:
                over.set()
                process.kill()
                return

    def read_err() -> None:
        assert process.stderr is not None
        while chunk := os.read(process.stderr.fileno(), 65536):
            stderr.extend(chunk)
            del stderr[: max(0, len(stderr) - 4 * STDERR_TAIL_CHARS)]

    readers = [threading.Thread(target=read_out, daemon=True), threading.Thread(target=read_err, daemon=True)]
    for reader in readers:
        reader.start()
    try:
        returncode = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise subprocess.TimeoutExpired(command, timeout, output=bytes(stdout[:max_bytes])) from None
    finally:
        for reader in readers:
            reader.join(timeout=5)
    if over.is_set():
        raise OutputTooLarge(bytes(stdout[:max_bytes]), max_bytes)
    text = stdout.decode(errors="replace")
    return subprocess.CompletedProcess(command, returncode, text, stderr.decode(errors="replace"))


def run_tool(tool: Tool, *, path: str | None, gpus: int, runner: Callable = capped_run) -> dict:
    """One tool's run as a record entry: status ok, 'not on PATH', 'exit N' or 'timed out after Ns'."""
    command = [part.replace("{gpus}", str(gpus)) for part in tool.command]
    entry = {
        "tool": tool.name,
        "command": command,
        "status": "not on PATH",
        "exit_code": None,
        "seconds": 0.0,
    }
    executable = shutil.which(command[0], path=path)
    if executable is None:
        return entry
    env = None if path is None else {"PATH": path}
    started = time.monotonic()
    try:
        done = runner([executable, *command[1:]], timeout=tool.timeout_s, env=env)
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout
        entry.update(status=f"timed out after {tool.timeout_s:g}s", stdout=stdout or "")
    except OutputTooLarge as exc:
        entry.update(status=str(exc), stdout=exc.stdout.decode(errors="replace"))
    except OSError as exc:
        entry.update(status=f"could not run: {exc}")
    else:
        status = "ok" if done.returncode == 0 else f"exit {done.returncode}"
        entry.update(
            status=status,
            exit_code=done.returncode,
            stdout=done.stdout,
            stderr_tail=done.stderr[-STDERR_TAIL_CHARS:],
        )
    entry["seconds"] = round(time.monotonic() - started, 3)
    return entry


def gpu_count(topo_stdout: str | None) -> int:
    """GPUs in ``nvidia-smi topo -m``'s header (1 when it did not run)."""
    for line in (topo_stdout or "").splitlines():
        tokens = line.split()
        if tokens and tokens[0] == "GPU0":
            return sum(1 for t in tokens if t.startswith("GPU") and t[3:].isdigit())
    return 1


def run_tools(
    *, path: str | None = None, runner: Callable = capped_run, timeout_s: float | None = None
) -> list[dict]:
    """Every tool in order; all_reduce_perf gets one rank per GPU the topology shows."""
    runs: list[dict] = []
    for tool in TOOLS:
        if timeout_s is not None:
            tool = Tool(tool.name, tool.command, timeout_s)
        topo = next((r.get("stdout") for r in runs if r["tool"] == "nvidia-smi topo -m"), None)
        runs.append(run_tool(tool, path=path, gpus=gpu_count(topo), runner=runner))
    return runs


async def _aws(client: httpx.AsyncClient) -> str:
    token = await client.put(
        f"{METADATA}/latest/api/token", headers={"X-aws-ec2-metadata-token-ttl-seconds": "60"}
    )
    token.raise_for_status()
    reply = await client.get(
        f"{METADATA}/latest/meta-data/instance-type", headers={"X-aws-ec2-metadata-token": token.text}
    )
    reply.raise_for_status()
    return reply.text.strip()


async def _gcp(client: httpx.AsyncClient) -> str:
    reply = await client.get(
        f"{GCP_METADATA}/computeMetadata/v1/instance/machine-type", headers={"Metadata-Flavor": "Google"}
    )
    reply.raise_for_status()
    if reply.headers.get("Metadata-Flavor") != "Google":
        raise ValueError("not Google's metadata server")
    return reply.text.strip().rsplit("/", 1)[-1]


async def _azure(client: httpx.AsyncClient) -> str:
    reply = await client.get(
        f"{METADATA}/metadata/instance/compute/vmSize",
        params={"api-version": "2021-02-01", "format": "text"},
        headers={"Metadata": "true"},
    )
    reply.raise_for_status()
    return reply.text.strip()


async def _oci(client: httpx.AsyncClient) -> str:
    reply = await client.get(f"{METADATA}/opc/v2/instance/shape", headers={"Authorization": "Bearer Oracle"})
    reply.raise_for_status()
    return reply.text.strip()


# Exactly what the four services above are asked, and the only URLs probe's client may reach.
ENDPOINTS = frozenset(
    {
        f"{METADATA}/latest/api/token",
        f"{METADATA}/latest/meta-data/instance-type",
        f"{GCP_METADATA}/computeMetadata/v1/instance/machine-type",
        f"{METADATA}/metadata/instance/compute/vmSize",
        f"{METADATA}/opc/v2/instance/shape",
    }
)

# Asked in this order of trust: GCP's answer carries its own header, the others answer on one address.
ASK = (("gcp", _gcp), ("azure", _azure), ("oci", _oci), ("aws", _aws))


async def detect_instance(
    client: httpx.AsyncClient, deadline_s: float | None = None
) -> tuple[str | None, str | None, str]:
    """(provider, instance type, how) from the first metadata service that answers sensibly, all of
    them asked within ``deadline_s`` (a service dripping its answer under the read timeout is cut)."""

    async def ask(call: Callable[[httpx.AsyncClient], Awaitable[str]]) -> str | None:
        try:
            answer = await call(client)
        except (httpx.HTTPError, FetchError, ValueError):  # FetchError: refused (not a metadata URL)
            return None
        return answer if answer and len(answer) < 200 and "\n" not in answer else None

    try:
        async with asyncio.timeout(deadline_s):
            answers = await asyncio.gather(*(ask(call) for _, call in ASK))
    except TimeoutError:
        return (
            None,
            None,
            f"no metadata service answered within {deadline_s:g} s (pass --provider and --instance)",
        )
    for (name, _), answer in zip(ASK, answers, strict=True):
        if answer:
            return name, answer, f"{name} metadata service"
    return None, None, "no metadata service answered (pass --provider and --instance)"


def record(
    provider: str | None,
    instance_type: str | None,
    how: str,
    runs: list[dict],
    collected_at: datetime | None = None,
) -> dict:
    """The probe record ``measurements import`` reads."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "provider": provider,
        "instance_type": instance_type,
        "instance_source": how,
        "collected_at": (collected_at or utcnow()).isoformat(timespec="seconds"),
        "runs": runs,
    }
