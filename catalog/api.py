"""The Python API: ``from catalog import Catalog; cat = Catalog.open()``, then questions that return
DataFrames. Each method asks the same function the CLI and the app ask (``catalog.read``), with the
CLI's option names, so the three never disagree:

- ``instances(gpus=8, link="nvswitch", min_fabric_gbits=3200, region="us-east-1")``: ``cheapest``'s
  question (``catalog.read.prices``), cheapest on-demand first.
- ``plan(model="llama-3.1-70b", workload="serve", ...)``: ``plan``'s ranking
  (``catalog.cli_plan.plan_ranking``);
  every keyword is the CLI option of that name (``--tokens-per-s`` is ``tokens_per_s``), passed through
  as it is, so an option the CLI gains the API has too.
- ``query(sql)``: ``catalog query``'s sandbox (read-only, no file or network access, a time limit).

A value that is wrong (an unknown link, a bad model) is a ValueError naming it; an option that does not
exist is a TypeError listing the ones that do. docs/api.md walks through it, and a test runs that page.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

#: Values one repeatable ``plan`` option may list (repeated values are passed once): argparse's
#: parse time grows with the square of the options, 10,000 providers once took 37 s.
MAX_OPTION_VALUES = 100

#: ``plan`` options that are not questions: where the catalog is and how the CLI prints.
_NOT_PLAN_OPTIONS = frozenset({"command", "func", "db", "model", "workload", "format", "instance", "top"})


def _many(value: Any) -> tuple:
    """One value or several, as a tuple (``gpus=8`` and ``gpus=[4, 8]`` alike); None is none."""
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Iterable):
        return (value,)
    return tuple(value)


def _number(field: str, value: Any) -> float:
    """``value`` as a float; ValueError naming the field when it is none."""
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{field}={value!r}: not a number") from None


def _check_words(field: str, given: tuple, allowed: Iterable[str]) -> None:
    choices = list(allowed)
    for word in given:
        if word not in choices:
            raise ValueError(f"{field}={word!r}: choose from {', '.join(choices)}")


class Catalog:
    """One catalog file, opened read-only for each question (a refresh may swap it in between)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @classmethod
    def open(cls, path: str | Path | None = None) -> Catalog:
        """The catalog at ``path``, by default ``$INTERCONNECT_CATALOG_DB`` or ``data/catalog.duckdb``.
        FileNotFoundError, with the command that builds one, if there is none."""
        from catalog.paths import default_db

        found = Path(path) if path is not None else default_db()
        if not found.is_file():
            raise FileNotFoundError(f"no catalog at {found}; run `make seed` or `python -m catalog seed`")
        return cls(found)

    def __repr__(self) -> str:
        return f"Catalog.open({str(self.path)!r})"

    def instances(
        self,
        *,
        gpus: float | Iterable[float] | None = None,
        link: str | Iterable[str] | None = None,
        fabric: str | Iterable[str] | None = None,
        provider: str | Iterable[str] | None = None,
        region: str | None = None,
        spot: bool = False,
        min_fabric_gbits: float = 0,
        stated_only: bool = False,
        priced_only: bool = False,
        include_stale: bool = True,
        by: str = "usd_per_hour",
    ) -> pd.DataFrame:
        """Instances matching the filter, cheapest first (``python -m catalog cheapest``'s rows).

        ``gpus`` GPUs per instance, ``link`` the intra-node link (``nvswitch``, ``pcie``, ...),
        ``fabric`` the inter-node fabric (``efa``, ``infiniband``, ...), ``provider``: one value or a
        list. ``region``: priced there, as the price source names it (``us-east-1``, ``eastus``); ``spot``:
        at the spot price (``cheapest --region R --spot``). ``min_fabric_gbits``: fabric per node, Gbit/s.
        ``stated_only`` ignores datasheet-inferred fabric figures; ``by``: ``usd_per_hour``,
        ``usd_per_gpu_hour`` or ``usd_per_fabric_gbytes_per_s``.
        """
        from catalog.read.connect import connect_readonly
        from catalog.read.prices import ORDERS, PriceQuestion, cheapest
        from normalize.vocab import Fabric, Link

        links, fabrics = _many(link), _many(fabric)
        _check_words("link", links, (v.value for v in Link))
        _check_words("fabric", fabrics, (v.value for v in Fabric))
        _check_words("by", (by,), ORDERS)
        question = PriceQuestion(
            gpu_counts=tuple(_number("gpus", g) for g in _many(gpus)),
            intra_links=links,
            fabrics=fabrics,
            providers=_many(provider),
            region=region,
            spot=spot,
            min_fabric_gbits_per_s_per_node=_number("min_fabric_gbits", min_fabric_gbits),
            include_inferred=not stated_only,
            include_stale=include_stale,
            priced_only=priced_only,
            order_by=by,
        )
        with connect_readonly(self.path) as con:
            return cheapest(con, question)

    def plan(self, model: str, workload: str, *, top: int = 0, **options: Any) -> pd.DataFrame:
        """Every instance ranked for ``model`` (a preset name or a TOML/JSON file) and ``workload``
        (``serve`` or ``train``), as ``python -m catalog plan`` ranks them; ``top`` > 0 keeps that many
        rows. ``options`` are the CLI's ``plan`` options by name (``batch``, ``context``, ``output``,
        ``tokens_per_s``, ``nodes``, ``by``, ``provider``, ``region``, ``spot``, ``efficiency``, ...),
        passed through as given: ``region="us-east-1", spot=True`` costs every row at its spot price
        there (``price_region``, ``price_kind`` and ``currency`` say which price).
        """
        from catalog.cli import build_parser
        from catalog.cli_plan import plan_ranking
        from catalog.read.plan import ranking_frame
        from normalize.errors import ParseError

        parser = build_parser()
        subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        plan_parser = subcommands.choices["plan"]
        actions = {a.dest: a for a in plan_parser._actions if a.option_strings}
        known = sorted(set(actions) - _NOT_PLAN_OPTIONS)
        if isinstance(top, bool) or not isinstance(top, int) or top < 0:
            raise ValueError(f"top={top!r}: a whole number of rows, 0 for all")
        argv = ["plan", "--model", model, "--workload", workload]
        for name, value in options.items():
            if name not in known:
                raise TypeError(f"plan() has no option {name!r}; options: {', '.join(known)}")
            flag = actions[name].option_strings[-1]
            if actions[name].nargs == 0:  # a switch: given when true
                argv += [flag] if value else []
            else:  # as the command line gives it: text, one value per repeat, each once
                values = list(dict.fromkeys(str(item) for item in _many(value)))
                if len(values) > MAX_OPTION_VALUES:
                    raise ValueError(f"{name}: {len(values):,} values, at most {MAX_OPTION_VALUES}")
                argv += [part for item in values for part in (flag, item)]
        try:
            args = parser.parse_args(argv)
        except SystemExit:
            raise ValueError(f"plan() options do not parse: {' '.join(argv[5:])}") from None
        args.db = self.path
        try:
            rows, _, _ = plan_ranking(args)
        except ParseError as exc:
            raise ValueError(str(exc)) from None
        frame = ranking_frame(rows)
        return frame.head(top) if top > 0 else frame

    def query(self, sql: str, *, timeout_s: float = 30.0) -> pd.DataFrame:
        """Read-only SQL in ``catalog query``'s sandbox, as a DataFrame. ValueError for SQL the
        sandbox refuses or that fails, and for a result past the sandbox's caps; QueryStopped past
        ``timeout_s`` (0: no limit)."""
        import duckdb
        import pandas as pd

        from catalog.read.connect import QUERY_TIME_LIMIT_MAX_S, connect_sandboxed, execute_limited

        if (
            isinstance(timeout_s, bool)
            or not isinstance(timeout_s, int | float)
            or not (math.isfinite(timeout_s) and 0 <= timeout_s <= QUERY_TIME_LIMIT_MAX_S)
        ):  # NaN, a negative or an infinite limit once disabled it
            most = f"{QUERY_TIME_LIMIT_MAX_S:,.0f}"
            raise ValueError(f"timeout_s={timeout_s!r}: a number of seconds from 0 (no limit) to {most}")

        try:
            with connect_sandboxed(self.path) as con:
                columns, rows, cut = execute_limited(con, sql, timeout_s)
        except duckdb.Error as exc:
            raise ValueError(str(exc).splitlines()[0]) from None
        if cut is not None:  # as the CLI: a cut result is not the answer, so none is returned
            raise ValueError(f"result {cut}; narrow the query (WHERE, LIMIT) to see the rest")
        return pd.DataFrame(rows, columns=columns)
