"""What a shared link asks for that the app cannot show: every URL parameter is checked once per
session, before the widgets read it (a bound widget drops a value it does not offer without a word),
and each one the app ignores gets a one-line warning naming the parameter and the value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import streamlit as st

#: Where a session keeps the URL parameters it was opened with, and whether it has warned about them.
OPENED_KEY, WARNED_KEY = "opened_with", "opened_with_warned"
#: Parameters that hold free text (any value is a question).
FREE_TEXT = frozenset({"q"})
#: Parameters that hold a number from 0 to a cap: the ``plan`` option's cap where there is one
#: (catalog.cli_plan), else far past any real value. A link past it is warned about and ignored, and
#: the widgets take no more (``?nodes=1000000`` once planned a million instances without a word).
NUMBERS: dict[str, float] = {
    "min_fabric": 30_000, "max_price": 10_000, "target": 1e9, "batch": 10_000_000, "context": 10_000_000,
    "output": 10_000_000, "seq_len": 10_000_000, "seqs": 10_000_000, "nodes": 1024, "min_mem": 100_000,
    "min_total_mem": 10_000_000, "tpot": 1e9, "ttft": 1e9, "train_tokens": 1e7, "days": 10_000,
    "train_gpus": 65_536,
}  # fmt: skip
BOOLEANS = frozenset({"stale", "curated", "inferred", "claim_history"})

#: What a parameter may hold: a set of values, or a test on one value.
Allowed = Iterable[str] | Callable[[str], bool]


def opened_with() -> dict[str, list[str]]:
    """The URL parameters this session was opened with (read at its first run, kept after)."""
    if OPENED_KEY not in st.session_state:
        st.session_state[OPENED_KEY] = {k: st.query_params.get_all(k) for k in st.query_params}
    return dict(st.session_state[OPENED_KEY])


def _number(cap: float) -> Callable[[str], bool]:
    def within(text: str) -> bool:
        try:
            return 0 <= float(text) <= cap
        except ValueError:
            return False

    return within


#: Values a warning lists before it says how many more there are.
LISTED = 8


def _one_of(values: list[str]) -> str:
    more = len(values) - LISTED
    return "one of " + ", ".join(values[:LISTED]) + (f" and {more} more" if more > 0 else "")


def problems(params: Mapping[str, list[str]], allowed: Mapping[str, Allowed]) -> list[str]:
    """One sentence per value of ``params`` the app ignores: an unknown parameter, a value not offered,
    a number that is not one (``allowed`` gives the values each list parameter may hold)."""
    found = []
    for name, values in params.items():
        if name in FREE_TEXT:
            continue
        if name in NUMBERS:
            test: Allowed = _number(NUMBERS[name])
            wanted = f"a number from 0 to {NUMBERS[name]:,.0f}"
        elif name in BOOLEANS:
            test, wanted = {"true", "false"}, "true or false"
        elif name in allowed:
            test = allowed[name]
            wanted = "" if callable(test) else _one_of(list(test))
        else:
            found.append(f"The link's parameter '{name}' is not one the app knows: ignored.")
            continue
        ok: Callable[[str], bool] = test if callable(test) else set(test).__contains__
        for value in values:
            if not ok(value):
                why = f" (expected {wanted})" if wanted else ""
                found.append(f"The link's {name}={value!r} is not one the app can show{why}: ignored.")
    return found


def warn_once(params: Mapping[str, list[str]], allowed: Callable[[], Mapping[str, Allowed]]) -> None:
    """Warn, on the session's first run only, about what the link asked for and the app ignored
    (``allowed`` is asked for only then: the values a parameter may hold take a while on a large
    catalog)."""
    if st.session_state.get(WARNED_KEY):
        return
    st.session_state[WARNED_KEY] = True
    if not params:
        return
    from ui.text import show

    for line in problems(params, allowed()):
        show(line, "warning")
