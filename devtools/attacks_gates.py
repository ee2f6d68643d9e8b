"""The second half of ``make attacks`` (issue 23): prices, copies, jump gates, names, app search,
refusals and a catalog's life, each measured like the first half's cases (devtools/attacks.py).

A case that damages a refresh's input first builds a good AWS catalog from ``../shared/mirror`` in
its setup (not measured), then refreshes it against a loopback server that serves the mirror with one
document damaged, so the gates compare with a real last good catalog. The CLI's refusals run the
command itself; the app's search runs the app (Streamlit's AppTest) on a catalog of AWS's rows.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import duckdb

from catalog.lock import refresh_lock
from devtools.mirror_server import MirrorServer, Reply

ROOT = Path(__file__).resolve().parent.parent
AWS = "docs.aws.amazon.com/ec2/latest/instancetypes/ac.md"
PRICES = "raw.githubusercontent.com/aws/karpenter-provider-aws/main/pkg/providers/pricing/" + (
    "zz_generated.pricing_aws.go"
)
P5_PRICE = '"p5.48xlarge": 55.040000'
G5_PRICE = '"g5.xlarge": 1.006000'
P5_NETWORK = "| p5.48xlarge        | 3200 Gigabit                      |"
G5_NETWORK = "| g5.12xlarge        | 40 Gigabit                        |"
P5_GPUS = "| 8 x NVIDIA H100 GPU "
P2P = (
    "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)\n   D\\D     0      1\n"
    "     0 770.00 800.00\n     1 800.00 770.00\n"
)
BLOCK_BYTES = 256 * 1024
FORMULA = '\'=HYPERLINK("http://evil.example","\''  # SQL text: every name becomes a link formula

Setup = Callable[[Path, contextlib.ExitStack], tuple[list[str], dict[str, str]]]


def refresh(mirror: str, db: Path, *more: str) -> list[str]:
    return ["refresh", "--mirror", mirror, "--provider", "aws", "--db", str(db), "--quiet", *more]


def catalog_run(args: list[str], env: dict[str, str] | None = None) -> int:
    """``python -m catalog ARGS`` in a child process, unmeasured (a case's setup); its exit code."""
    done = subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        cwd=ROOT,
        capture_output=True,
        env={**os.environ, **(env or {})},
        check=False,
    )
    return done.returncode


def damage_blocks(db: Path) -> None:
    """512 bytes of 0xff in every 256 KB block after the header: every table's data fails its checksum."""
    with open(db, "r+b") as handle:
        for offset in range(BLOCK_BYTES, db.stat().st_size - BLOCK_BYTES, BLOCK_BYTES):
            handle.seek(offset + 100)
            handle.write(b"\xff" * 512)


def cases(shared: Path) -> dict[str, Setup]:
    """Each case sets up its fault and returns the command to measure (``-c`` code runs as Python)."""
    mirror = shared / "mirror"
    page = (mirror / AWS).read_text()
    prices = (mirror / PRICES).read_text()

    def good(scratch: Path) -> Path:
        db = scratch / "c.duckdb"
        assert catalog_run(refresh(str(mirror), db)) == 0, "the good AWS catalog did not build"
        return db

    def served(path: str, body: str | bytes, *more: str, first: str | None = None) -> Setup:
        """A good catalog, then a refresh against the mirror with ``path`` served as ``body`` (after
        one accepted refresh with ``first`` served, when given)."""

        def start(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
            db = good(scratch)
            server = stack.enter_context(MirrorServer(mirror))
            if first is not None:
                server.script("/" + path, Reply(200, first.encode()))
                assert catalog_run(refresh(server.base_url, db)) == 0
            data = body.encode() if isinstance(body, str) else body
            server.script("/" + path, Reply(200, data))
            return refresh(server.base_url, db, *more), {}

        return start

    def price(new: str, old: str = P5_PRICE) -> str:
        assert old in prices
        return prices.replace(old, new)

    def on_page(old: str, new: str) -> str:
        assert old in page, old
        return page.replace(old, new)

    def grown(rows: int) -> str:
        row = next(line for line in page.splitlines() if line.startswith("| p5.48xlarge        | 2048.00"))
        extra = "\n".join(row.replace("p5.48xlarge", f"p9.{n}xlarge", 1) for n in range(rows))
        return page.replace(row, row + "\n" + extra)

    def with_catalog(command: Callable[[Path, Path], list[str]], damage=None, imported=False) -> Setup:
        def start(scratch: Path, _: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
            db = good(scratch)
            if imported:
                reading = scratch / "p2p.txt"
                reading.write_text(P2P)
                args = [
                    "measurements",
                    "import",
                    str(reading),
                    "--provider",
                    "aws",
                    "--instance",
                    "p5.48xlarge",
                ]
                assert catalog_run([*args, "--db", str(db)]) == 0
            if damage is not None:
                damage(db)
            return command(scratch, db), {}

        return start

    def formula_names(db: Path) -> None:
        with duckdb.connect(str(db)) as con:
            for table in ("instances", "claims", "prices"):
                con.execute(f"UPDATE {table} SET instance_type = {FORMULA} || instance_type || '\")'")

    def user_readings_kept(db: Path) -> None:
        """Damage a block whose loss leaves the user's readings readable (a refresh then keeps them)."""
        from catalog.read.connect import check_catalog
        from normalize.errors import CorruptCatalog

        original = db.read_bytes()
        for offset in range(len(original) - BLOCK_BYTES, BLOCK_BYTES, -BLOCK_BYTES):
            db.write_bytes(original)
            with open(db, "r+b") as handle:
                handle.seek(offset + 100)
                handle.write(b"\xff" * 512)
            try:
                check_catalog(db)
                continue  # the damage is in free space
            except (CorruptCatalog, duckdb.Error):
                pass
            try:
                with duckdb.connect(str(db), read_only=True) as con:
                    con.execute("SELECT * FROM measurements WHERE source = 'user'").fetchall()
                return
            except duckdb.Error:
                continue
        raise AssertionError("no damaged block leaves the imported readings readable")

    def snapshot(change: Callable[[dict], None], file: str) -> Setup:
        def start(scratch: Path, _: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
            from catalog.snapshot import DEFAULT_DIR

            copy = scratch / "snapshot"
            shutil.copytree(DEFAULT_DIR, copy)
            lines = (copy / file).read_text().splitlines()
            at = next(i for i, line in enumerate(lines) if '"p5.48xlarge"' in line)
            row = json.loads(lines[at])
            change(row)
            lines[at] = json.dumps(row)
            (copy / file).write_text("\n".join(lines) + "\n")
            return ["seed", "--from", str(copy), "--db", str(scratch / "seeded.duckdb")], {}

        return start

    def model_file(name: str, text: str) -> Setup:
        def start(scratch: Path, _: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
            db = good(scratch)
            (scratch / name).write_text(text)
            return ["plan", "--model", str(scratch / name), "--workload", "serve", "--db", str(db)], {}

        return start

    def app_search(scratch: Path, _: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
        db = good(scratch)
        link = scratch / "link.txt"  # 10,500 alternatives: too long for a command line
        link.write_text(", ".join(f"p{n}.48xlarge" for n in range(10_500)))
        code = (
            "import sys\nfrom pathlib import Path\nfrom streamlit.testing.v1 import AppTest\n"
            f"app = AppTest.from_file({str(ROOT / 'app.py')!r}, default_timeout=120)\n"
            f"app.query_params['q'] = Path({str(link)!r}).read_text()\n"
            "app.query_params['mode'] = 'Links only'\napp.run()\n"
            "assert not app.exception, app.exception\n"
            "print('error: ' + ' / '.join(e.value for e in app.sidebar.error), file=sys.stderr)\n"
        )
        return ["-c", code], {"INTERCONNECT_CATALOG_DB": str(db)}

    def clock_back(scratch: Path, _: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
        db = good(scratch)
        reading = scratch / "p2p.txt"
        reading.write_text(P2P)
        args = ["measurements", "import", str(reading), "--provider", "aws", "--instance", "p5.48xlarge"]
        code = (
            "import datetime, sys\nfrom records import clock\n"
            "clock.utcnow = lambda: datetime.datetime(2025, 12, 3, 6)\n"
            "from catalog.cli import main\n"
            f"sys.exit(main({[*args, '--db', str(db)]!r}))\n"
        )
        return ["-c", code], {}

    def hard_link(scratch: Path, stack: contextlib.ExitStack) -> tuple[list[str], dict[str, str]]:
        db = good(scratch)
        alias = scratch / "alias.duckdb"
        os.link(db, alias)
        stack.enter_context(refresh_lock(db))  # a refresh of the catalog under its own name runs
        return refresh(str(mirror), alias), {}

    deep_json = '{"a":' * 100_000 + "1" + "}" * 100_000
    nested_arrays = '{"nvbandwidth": {"testcases": ' + "[" * 100_000 + "]" * 100_000 + "}}"
    import_args = ["--provider", "aws", "--instance", "p5.48xlarge"]
    return {
        "price: p5.48xlarge NaN": served(PRICES, price('"p5.48xlarge": NaN')),
        "price: p5.48xlarge 1e308": served(PRICES, price('"p5.48xlarge": 1e308')),
        "price: p5.48xlarge 100x (5,504 USD/h)": served(PRICES, price('"p5.48xlarge": 5504.000000')),
        "price: g5.xlarge 10x inside the bounds": served(PRICES, price('"g5.xlarge": 10.060000', G5_PRICE)),
        "price: g5.xlarge creeping 7x per refresh (second step)": served(
            PRICES, price('"g5.xlarge": 49.294000', G5_PRICE), first=price('"g5.xlarge": 7.042000', G5_PRICE)
        ),
        "price: the price file cut to 60 %": served(PRICES, prices[: len(prices) * 6 // 10]),
        "price: p5.48xlarge listed twice": served(PRICES, price(P5_PRICE + ', "p5.48xlarge": 0.550400')),
        "copies: a NaN cell on AWS's page, --copies": served(
            AWS, on_page(P5_NETWORK, "| p5.48xlarge        | NaN Gigabit |"), "--copies", str(shared)
        ),
        "jump: g5.12xlarge fabric 40 → 280 → 1,960 Gb/s": served(
            AWS,
            on_page(G5_NETWORK, G5_NETWORK.replace("40 Gigabit", "1960 Gigabit")),
            first=on_page(G5_NETWORK, G5_NETWORK.replace("40 Gigabit", "280 Gigabit")),
        ),
        "jump: p5.48xlarge GPU count 8 → 32": served(AWS, on_page(P5_GPUS, P5_GPUS.replace("8 x", "32 x"))),
        "rows: 600 new rows on AWS's page (over 8x)": served(AWS, grown(600)),
        "rows: 30,000 new rows on AWS's page": served(AWS, grown(30_000)),
        "names: an escape sequence in a name on AWS's page": served(
            AWS, page.replace("g5.12xlarge", "g5.12xl\x1b[2Jarge")
        ),
        "names: every name a formula, export --format csv": with_catalog(
            lambda scratch, db: [
                "export",
                "--db",
                str(db),
                "--format",
                "csv",
                "--out",
                str(scratch / "x.csv"),
            ],
            damage=formula_names,
        ),
        "names: 100,000 NULs and an escape sequence printed by query": with_catalog(
            lambda _, db: ["query", "SELECT chr(27) || '[2J' || repeat(chr(0), 100000) AS x", "--db", str(db)]
        ),
        "app search: a link with 10,500 alternatives (167 KB)": app_search,
        "refusal: nvbandwidth JSON of 100,000 nested arrays": with_catalog(
            lambda scratch, db: [
                "measurements",
                "import",
                str(_written(scratch / "nv.json", nested_arrays)),
                *import_args,
                "--db",
                str(db),
            ]
        ),
        "refusal: seed, 99,000 GB/s per GPU in the snapshot": snapshot(
            lambda row: row.update(intra_node_gbytes_per_s=99_000.0), "instances.jsonl"
        ),
        "refusal: seed, an imported 9,000 Gb/s reading in the snapshot": snapshot(
            lambda row: row.update(source="user", value=9_000.0), "measurements.jsonl"
        ),
        "refusal: plan, a model file with a 5,000-digit layer count": model_file(
            "digits.json", '{"layers": 1' + "0" * 5000 + "}"
        ),
        "refusal: plan, a model file nested 100,000 deep": model_file("deep.json", deep_json),
        "refusal: plan --nodes 1000000000": with_catalog(
            lambda _, db: [
                "plan",
                "--model",
                "llama-3.1-70b",
                "--workload",
                "train",
                "--nodes",
                "1000000000",
                "--db",
                str(db),
            ]
        ),
        "refusal: cheapest --limit -1": with_catalog(
            lambda _, db: ["cheapest", "--limit", "-1", "--db", str(db)]
        ),
        "refusal: export of a corrupt catalog": with_catalog(
            lambda scratch, db: [
                "export",
                "--db",
                str(db),
                "--table",
                "claims",
                "--format",
                "csv",
                "--out",
                str(scratch / "x.csv"),
            ],
            damage=damage_blocks,
        ),
        "lifecycle: refresh of a corrupt catalog holding imported readings": with_catalog(
            lambda _, db: refresh(str(mirror), db), damage=user_readings_kept, imported=True
        ),
        "lifecycle: measurements import into a corrupt catalog": with_catalog(
            lambda scratch, db: [
                "measurements",
                "import",
                str(_written(scratch / "more.txt", P2P)),
                *import_args,
                "--db",
                str(db),
            ],
            damage=damage_blocks,
            imported=True,
        ),
        "lifecycle: the clock set back a year, measurements import": clock_back,
        "lifecycle: a hard link to --db while a refresh holds the lock": hard_link,
    }


def _written(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
