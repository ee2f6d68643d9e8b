"""The fault matrix in docs/operations.md is what the tests attempt: every row names its tests (and
its ``make attacks`` cases), every named test exists, and the heading states the sum.

An attempt is one collected case of a named test (a parametrized test counts each of its cases; a
property test counts once, however many examples it draws) or one named ``make attacks`` case; a test
named by two rows counts once.
"""

from __future__ import annotations

import ast
import importlib
import math
import re
from pathlib import Path

from tests.helpers import ROOT

OPERATIONS = ROOT / "docs" / "operations.md"
TESTS = ROOT / "tests"
ATTACKS = "attacks: "
HEADER = "| fault | outcome | exit | tests |"


def matrix() -> str:
    text = OPERATIONS.read_text()
    return text.split("\n## Fault matrix", 1)[1].split("\n## ", 1)[0]


def rows() -> list[tuple[str, list[str]]]:
    """Every row of the matrix's fault tables: (its fault, the tests and attacks cases it names)."""
    found, inside = [], False
    for line in matrix().splitlines():
        if line.startswith("| fault |"):
            assert line == HEADER, f"a fault table without a tests column: {line}"
            inside = True
        elif inside and line.startswith("| --- "):
            continue
        elif inside and line.startswith("| "):
            cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
            found.append((cells[0].strip(), re.findall(r"`([^`]+)`", cells[-1])))
        else:
            inside = False
    return found


def _definitions() -> dict[str, list[Path]]:
    """Every test function name in tests/, with the files defining it."""
    names: dict[str, list[Path]] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_"):
                names.setdefault(node.name, []).append(path)
    return names


def resolve(reference: str, definitions: dict[str, list[Path]]) -> tuple[Path, str]:
    """``test_name`` (defined once under tests/) or ``tests/.../test_file.py::test_name``."""
    if "::" in reference:
        file, name = reference.split("::", 1)
        path = ROOT / file
        assert path in definitions.get(name, []), f"the fault table names {reference}, which does not exist"
        return path, name
    paths = definitions.get(reference, [])
    assert paths, f"the fault table names {reference}, which no test defines"
    assert len(paths) == 1, f"{reference} is defined in {len(paths)} files: name it as FILE::{reference}"
    return paths[0], reference


def cases_of(path: Path, name: str) -> int:
    """How many cases pytest collects for the test: the product of its parametrize marks' values."""
    module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
    marks = [m for m in getattr(getattr(module, name), "pytestmark", []) if m.name == "parametrize"]
    return math.prod(len(m.args[1]) for m in marks)


def counted() -> tuple[int, int, set[str]]:
    """(test cases, distinct tests) over the whole matrix, and the attacks cases it names."""
    definitions = _definitions()
    tests, attacks = set(), set()
    for _, references in rows():
        for reference in references:
            if reference.startswith(ATTACKS):
                attacks.add(reference.removeprefix(ATTACKS))
            else:
                tests.add(resolve(reference, definitions))
    return sum(cases_of(path, name) for path, name in tests), len(tests), attacks


def test_every_fault_row_names_a_test_that_exists():
    found = rows()
    assert len(found) > 100
    for fault, references in found:
        assert any(not r.startswith(ATTACKS) for r in references), f"row names no test: {fault[:80]}"
    counted()  # every reference resolves


def test_the_heading_states_the_sum_of_the_matrix():
    cases, tests, attacks = counted()
    sum_line = (
        r"\*\*([\d,]+) attempts\*\*: ([\d,]+) test cases \(of ([\d,]+) tests\) and ([\d,]+) `make attacks`"
    )
    stated = re.search(sum_line, matrix())
    assert stated, "the fault matrix states no sum"
    figures = [int(group.replace(",", "")) for group in stated.groups()]
    assert figures == [cases + len(attacks), cases, tests, len(attacks)], (
        f"the matrix holds {cases + len(attacks)} attempts: {cases} test cases (of {tests} tests) and "
        f"{len(attacks)} attacks cases"
    )
    assert cases >= 250, "the issue asks for at least 250 attempts, each a test"


def attacks_cases() -> set[str]:
    """The case names ``make attacks`` runs: the keys of the dict each runner's ``cases`` returns (read
    from the source: building the cases makes a 2 GiB gzip bomb)."""
    names = set()
    for module in ("attacks.py", "attacks_gates.py", "attacks_inputs.py"):
        tree = ast.parse((ROOT / "devtools" / module).read_text())
        function = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "cases")
        returned = [n.value for n in ast.walk(function) if isinstance(n, ast.Return)]
        for value in returned:
            if isinstance(value, ast.Dict):
                names |= {k.value for k in value.keys if isinstance(k, ast.Constant)}
    return names


def test_every_attacks_case_the_table_names_exists():
    known = attacks_cases()
    assert len(known) >= 40
    _, _, named = counted()
    assert named <= known, f"the fault table names attacks cases that do not exist: {sorted(named - known)}"
