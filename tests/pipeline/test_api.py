"""The Python API (catalog/api.py): docs/api.md runs as written; each method gives what the CLI gives;
plan options pass through to the CLI's own function; `import catalog` stays light."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pandas as pd
import pytest

from catalog.cli import main
from tests.helpers import ROOT

API_DOC = ROOT / "docs" / "api.md"


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    db = tmp_path_factory.mktemp("api") / "catalog.duckdb"
    assert main(["seed", "--db", str(db)]) == 0
    return db


@pytest.fixture
def cat(seeded):
    from catalog import Catalog

    return Catalog.open(seeded)


def test_the_api_page_runs_as_written(seeded, monkeypatch):
    """Every ```python block of docs/api.md, in order, in one namespace, like a notebook."""
    monkeypatch.setenv("INTERCONNECT_CATALOG_DB", str(seeded))
    blocks = re.findall(r"```python\n(.*?)```", API_DOC.read_text(), re.S)
    assert len(blocks) >= 5
    space: dict = {}
    for block in blocks:
        exec(compile(block, str(API_DOC), "exec"), space)
    boxes, plans = space["boxes"], space["plans"]
    assert isinstance(boxes, pd.DataFrame) and isinstance(plans, pd.DataFrame)
    assert "p5.48xlarge" in set(boxes["instance_type"]) and set(boxes["price_region"]) == {"us-east-1"}
    assert (boxes["gpu_count"] == 8).all() and (boxes["inter_node_gbits_per_s"] >= 3200).all()
    assert len(plans) == 5 and list(plans["rank"]) == [1, 2, 3, 4, 5]
    assert set(space["training"]["provider"]) <= {"aws", "azure"} and len(space["conflicts"]) > 0


def cli_json(capsys, *args: str) -> list[dict]:
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def test_instances_are_the_cli_cheapest_rows(cat, seeded, capsys):
    rows = cli_json(
        capsys, "cheapest", "--db", str(seeded), "--gpus", "8", "--link", "nvswitch",
        "--min-fabric-gbits", "3200", "--region", "us-east-1", "--limit", "1000", "--format", "json",
    )  # fmt: skip
    frame = cat.instances(gpus=8, link="nvswitch", min_fabric_gbits=3200, region="us-east-1")
    assert list(frame["instance_type"]) == [r["instance_type"] for r in rows]
    prices = [None if pd.isna(p) else p for p in frame["min_usd_per_hour"]]
    assert prices == [r["min_usd_per_hour"] for r in rows]


def test_a_region_keeps_rows_priced_there_at_that_region_s_price(cat, seeded):
    import duckdb

    frame = cat.instances(provider="aws", region="us-east-1", priced_only=True)
    with duckdb.connect(str(seeded), read_only=True) as con:
        expected = dict(
            con.execute(
                "SELECT instance_type, min(usd_per_hour) FROM current_prices "
                "WHERE provider = 'aws' AND region = 'us-east-1' AND usd_per_hour IS NOT NULL "
                "AND instance_type IN (SELECT instance_type FROM instances WHERE provider = 'aws') "
                "GROUP BY ALL"
            ).fetchall()
        )
    assert dict(zip(frame["instance_type"], frame["min_usd_per_hour"], strict=True)) == expected
    assert set(frame["price_region"]) == {"us-east-1"}
    assert cat.instances(region="nowhere-1", priced_only=True).empty


def test_wrong_values_and_options_name_themselves(cat):
    with pytest.raises(ValueError, match="link='nvlnk': choose from nvswitch"):
        cat.instances(link="nvlnk")
    with pytest.raises(TypeError, match="plan\\(\\) has no option 'tpot'; options: batch, by"):
        cat.plan(model="llama-3.1-70b", workload="serve", tpot=50)
    with pytest.raises(ValueError, match="no preset or file 'llama-9'"):
        cat.plan(model="llama-9", workload="serve")


def test_plan_is_the_cli_plan_ranking(cat, seeded, capsys):
    rows = cli_json(
        capsys, "plan", "--db", str(seeded), "--model", "llama-3.1-70b", "--workload", "serve",
        "--batch", "16", "--top", "5", "--format", "json",
    )  # fmt: skip
    frame = cat.plan(model="llama-3.1-70b", workload="serve", batch=16, top=5)
    assert list(frame["instance_type"]) == [r["instance_type"] for r in rows]


def test_plan_options_reach_the_cli_s_function_unchanged(cat, monkeypatch):
    """The API passes `plan`'s options (a latency target, say) through to the function the CLI calls,
    with no list of its own to update."""
    import catalog.cli_plan as cli_plan

    seen = {}

    def ranking(args):
        seen.update(vars(args))
        return [{"rank": 1}], None, None

    monkeypatch.setattr(cli_plan, "plan_ranking", ranking)
    cat.plan(model="llama-3.1-70b", workload="serve", tpot_ms=50, provider="aws")
    assert seen["tpot_ms"] in (50, "50") and seen["provider"] == ["aws"] and seen["db"] == cat.path


def test_open_without_a_catalog_says_how_to_build_one(tmp_path):
    from catalog import Catalog

    with pytest.raises(FileNotFoundError, match=r"no catalog at .*python -m catalog seed"):
        Catalog.open(tmp_path / "none.duckdb")


def test_importing_catalog_loads_neither_pandas_nor_duckdb():
    code = (
        "import sys, catalog; from catalog import Catalog; "
        "print([m for m in ('pandas', 'duckdb', 'pyarrow') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_plan_takes_the_cli_s_region_and_spot(cat, seeded, capsys):
    """Issue 21: `Catalog.plan(region=..., spot=...)` costs rows as `plan --region R --spot` does."""
    rows = cli_json(
        capsys, "plan", "--db", str(seeded), "--model", "llama-3.1-70b", "--workload", "serve",
        "--region", "us-east-1", "--top", "0", "--format", "json",
    )  # fmt: skip
    frame = cat.plan(model="llama-3.1-70b", workload="serve", region="us-east-1")
    assert list(frame["instance_type"]) == [r["instance_type"] for r in rows]
    priced = frame[frame["usd_per_hour"].notna()]
    assert not priced.empty and set(priced["price_region"]) == {"us-east-1"}
    spot = cat.plan(model="llama-3.1-70b", workload="serve", spot=True, by="cost", top=3)
    assert set(spot["price_kind"]) == {"spot"} and spot["usd_per_hour"].notna().all()
    with pytest.raises(ValueError, match="unknown region us-eats-1; did you mean us-east-1"):
        cat.plan(model="llama-3.1-70b", workload="serve", region="us-eats-1")
