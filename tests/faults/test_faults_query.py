"""The fault matrix: ``query`` is bounded in time and in what it hands back (issue 23). A time limit
that is not a number of seconds from 0 to a day is refused in one line; a result is fetched in
batches and cut at 100,000 rows or 64 MB of values, saying so (exit 2, like a query past its limit).

A test that connects takes a copy of the small catalog: an app test run earlier in the same process
may still hold the shared file open read-only (``ui.data.reader``), and DuckDB refuses a second
connection to one file with another configuration, as the sandbox's is."""

from __future__ import annotations

import pytest

from catalog.cli import main
from catalog.read import connect


@pytest.mark.parametrize("value", ["nan", "-1", "inf", "-inf", "1e9"])
def test_a_time_limit_that_disables_the_limit_is_refused_in_one_line(small_catalog_file, capsys, value):
    assert main(["query", "SELECT 1", "--db", str(small_catalog_file), f"--timeout={value}"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip().splitlines() == [
        f"error: --timeout {float(value):g}: must be a number of seconds from 0 (no limit) to 86,400"
    ]


def test_zero_still_means_no_limit(small_catalog, capsys):
    _, small_catalog_file = small_catalog  # a copy of its own: see the module's docstring
    assert main(["query", "SELECT 1 AS one", "--db", str(small_catalog_file), "--timeout", "0"]) == 0
    assert "one" in capsys.readouterr().out


def test_a_result_past_the_row_cap_is_cut_and_says_so(small_catalog, capsys):
    _, small_catalog_file = small_catalog  # a copy of its own: see the module's docstring
    sql = "SELECT range AS n FROM range(250000)"
    assert main(["query", sql, "--db", str(small_catalog_file), "--format", "csv"]) == 2
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 1 + connect.QUERY_MAX_ROWS
    assert err.strip().splitlines() == [
        "error: result cut at 100,000 rows (the cap on one query's result); "
        "narrow the query (WHERE, LIMIT) to see the rest"
    ]


def test_a_result_past_the_byte_cap_is_cut_and_says_so(small_catalog, capsys):
    _, small_catalog_file = small_catalog  # a copy of its own: see the module's docstring
    sql = "SELECT repeat('x', 1000000) AS big FROM range(80)"  # 80 MB of values
    assert main(["query", sql, "--db", str(small_catalog_file), "--format", "csv"]) == 2
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 1 + 63
    assert "cut at 63 rows: past 64,000,000 bytes of values (the cap)" in err


def test_fetching_stops_at_the_cap_rather_than_reading_everything():
    class Endless:
        fetched = 0

        def fetchmany(self, n: int) -> list[tuple]:
            self.fetched += n
            return [(1,)] * n

    result = Endless()
    rows, cut = connect.fetch_capped(result, max_rows=10_000)  # type: ignore[arg-type]
    assert len(rows) == 10_000 and cut is not None and result.fetched < 20_000


def test_duckdb_own_memory_for_huge_values_is_capped_in_one_line(small_catalog, capsys):
    _, small_catalog_file = small_catalog  # a copy of its own: see the module's docstring
    """DuckDB builds a chunk of up to 2,048 values in full before Python reads a row, outside its own
    memory_limit (1,000 values of 1 MB once peaked at 1,982 MB): the command's growth is capped, the
    allocation fails cleanly, one line says so, and the cap is lifted again afterwards."""
    import resource

    before = resource.getrlimit(resource.RLIMIT_DATA)
    sql = "SELECT repeat('x', 1000000) AS big FROM range(2000)"  # 2 GB in one chunk
    assert main(["query", sql, "--db", str(small_catalog_file), "--format", "csv"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    [line] = err.strip().splitlines()
    assert line.startswith("error: Out of Memory Error: ") and line.endswith(
        ": the query needs more than the 1,000,000,000 bytes one query may take; narrow it (WHERE, LIMIT, "
        "shorter values)"
    ), line
    assert resource.getrlimit(resource.RLIMIT_DATA) == before
    assert main(["query", "SELECT 1 AS one", "--db", str(small_catalog_file)]) == 0


def test_the_growth_cap_leaves_a_tighter_limit_alone():
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    with connect.growth_capped(100_000_000):
        now, capped = connect._data_segment_bytes(), resource.getrlimit(resource.RLIMIT_DATA)
        assert now is not None and now < capped[0] <= now + 100_000_000
        with connect.growth_capped(10**15):  # looser than the cap in force: nothing set
            assert resource.getrlimit(resource.RLIMIT_DATA) == capped
        assert resource.getrlimit(resource.RLIMIT_DATA) == capped
    assert resource.getrlimit(resource.RLIMIT_DATA) == (soft, hard)
