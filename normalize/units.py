"""The project's one pint registry, and parsers for the vendor spellings of bandwidth and memory.

pint alone misreads vendor text: ``ureg("Gb")`` is the gilbert, ``ureg("Mb")`` the megabarn and
``ureg("Gbps")`` the gigabaud. So every spelling met in provider documents is mapped explicitly to a
pint unit here, and only the mapped unit is handed to pint. All conversions go through the one
registry, built on first use (importing pint and building it takes about half a second, which a
command that converts nothing never pays): ``factor`` asks it once per pair of units, and every
figure is converted with that factor.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from normalize.errors import ParseError

if TYPE_CHECKING:
    import pint


@functools.cache
def registry() -> pint.UnitRegistry:
    """The project's one pint registry, built on first use."""
    import pint

    return pint.UnitRegistry()


def __getattr__(name: str) -> Any:
    """``ureg`` and ``Quantity`` on demand, for callers that need pint's own objects."""
    if name == "ureg":
        return registry()
    if name == "Quantity":
        return registry().Quantity
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def factor(unit: str, target: str) -> float:
    """How many ``target`` one ``unit`` is ('terabit / second' → 'gigabit / second' is 1000), as the
    registry computes it; asked once per pair of units."""
    return registry().Quantity(1, unit).to(target).magnitude


def convert(value: float, unit: str, target: str) -> float:
    """``value`` in ``unit`` expressed in ``target``, through the registry's factor."""
    return _clean_float(value * factor(unit, target))


@functools.cache
def unit_symbol(unit: str) -> str:
    """'gigabit / second' → 'Gbit/s', 'terabyte / second' → 'TB/s'."""
    return f"{registry().Unit(unit):~}".replace(" / ", "/")


GBIT_PER_S = "gigabit / second"
GBYTE_PER_S = "gigabyte / second"
GB = "gigabyte"

_BIT_PREFIX = {"K": "kilobit", "M": "megabit", "G": "gigabit", "T": "terabit"}
_BYTE_PREFIX = {"K": "kilobyte", "M": "megabyte", "G": "gigabyte", "T": "terabyte"}


def _rate_symbols() -> dict[str, str]:
    """Case-sensitive rate symbols: the case of b/B is the whole difference between bits and bytes."""
    table: dict[str, str] = {}
    for p, bit in _BIT_PREFIX.items():
        rate = f"{bit} / second"
        for tail in ("bps", "b/s", "bit/s", "bits/s", "b/sec", "bit/sec", "bits/sec", "bit", "b"):
            table[p + tail] = rate
    for p, byte in _BYTE_PREFIX.items():
        rate = f"{byte} / second"
        for tail in ("B/s", "Bps", "B/sec", "byte/s", "bytes/s", "Byte/s", "Bytes/s"):
            table[p + tail] = rate
    return table


def _rate_words() -> dict[str, str]:
    """Case-insensitive word spellings ("Gigabit", "gigabits per second", "terabytes per second")."""
    table: dict[str, str] = {}
    for words, prefixes in (("bit", _BIT_PREFIX), ("byte", _BYTE_PREFIX)):
        for p, unit in prefixes.items():
            word = {"K": "kilo", "M": "mega", "G": "giga", "T": "tera"}[p] + words
            for tail in ("s per second", " per second", "s/s", "/s", "s", ""):
                table[word + tail] = f"{unit} / second"
    return table


RATE_SYMBOLS = _rate_symbols()
RATE_WORDS = _rate_words()

MEMORY_SYMBOLS = {
    "MB": "megabyte",
    "GB": "gigabyte",
    "TB": "terabyte",
    "MiB": "mebibyte",
    "GiB": "gibibyte",
    "TiB": "tebibyte",
}

_NUM = r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]+(?:\.[0-9]+)?|\.[0-9]+"
_NUMBER = re.compile(rf"(?:{_NUM})")
# No figure in a spec sheet comes near this; bigger numbers are noise (and past 1e308, not floats).
MAX_NUMBER = 1e12
MAX_COUNT = 100_000
# One bandwidth figure fits in a table cell; the longest real one is 21 characters ("8 x 2 x 200 Gbps
# RDMA"). Longer text is refused before any pattern runs on it.
MAX_FIGURE_CHARS = 500
# A sentence that long is a page without full stops (or an attack), not prose to read figures from.
MAX_SENTENCE_CHARS = 10_000
_TIMES = r"\s*[x×X*]\s*"


def _alternation(spellings: list[str]) -> str:
    return "|".join(re.escape(s) for s in sorted(spellings, key=len, reverse=True))


_UNIT = (
    rf"(?P<sym>{_alternation(list(RATE_SYMBOLS))})(?![A-Za-z])"
    rf"|(?i:(?P<word>{_alternation(list(RATE_WORDS))}))(?![A-Za-z])"
)
_FIGURE = re.compile(
    rf"(?P<up_to>(?i:up\s+to)\s+)?(?<![\w.\-])"
    rf"(?P<counts>(?:(?:{_NUM}){_TIMES})*)"
    rf"(?P<value>{_NUM})"
    rf"(?:\s*/\s*(?P<burst>{_NUM}))?"
    rf"(?:\s*(?:-\s*)?(?:{_UNIT}))?"  # not \s*-?\s*: two adjacent \s* split a run n² ways
)
# A number never starts inside another ("1,000,000" holds no "000,000"): without this look-behind,
# searching a long run of digits tries every suffix of it, which is quadratic.
_NUM_START = r"(?<![0-9])(?<![0-9],)"
_RANGE = re.compile(rf"{_NUM_START}(?:{_NUM})\s*[-–]\s*(?:{_NUM})")
_PER = re.compile(r"(?i)\b(?:per|each|for each|every)[\s-]+(gpu|vm|node|nic|instance|port|link|host)s?\b")
_PER_WORDS = {
    "gpu": "gpu",
    "vm": "node",
    "node": "node",
    "instance": "node",
    "host": "node",
    "nic": "nic",
    "port": "nic",
    "link": "nic",
}
_BIDIRECTIONAL = re.compile(r"(?i)\bbi-?directional\b")
_UNIDIRECTIONAL = re.compile(r"(?i)\b(?:uni-?directional|each direction|per direction|one direction)\b")


def to_number(text: str) -> float:
    """'1,600' → 1600.0, '3.2' → 3.2. ParseError for anything but one plain decimal number
    ('nan', 'inf', '1e9' and numbers past MAX_NUMBER included)."""
    cleaned = text.strip()
    if not _NUMBER.fullmatch(cleaned):
        raise ParseError(f"not a number: {text!r}")
    value = float(cleaned.replace(",", ""))
    if value > MAX_NUMBER:
        raise ParseError(f"implausibly large number: {text!r}")
    return value


_PLAIN_COUNT = re.compile(r"\s*([0-9]{1,6})\s*")


def parse_count(text: str) -> int:
    """A positive whole count such as a number of GPUs or NICs ('8'); ParseError otherwise."""
    match = _PLAIN_COUNT.fullmatch(text)
    if match is None or not 0 < int(match.group(1)) <= MAX_COUNT:
        raise ParseError(f"not a positive count: {text!r}")
    return int(match.group(1))


def _clean_float(x: float) -> float:
    """Drop binary noise from unit arithmetic (3.2 Tb/s → 3200.0000000000005 Gb/s → 3200.0)."""
    return float(f"{x:.12g}")


@dataclass(frozen=True)
class Bandwidth:
    """One bandwidth figure as a provider wrote it, with its qualifiers.

    ``magnitude`` in ``unit`` (a pint unit expression) is one link's rate; ``count`` multiplies it
    ("4x 100 Gigabit" is 4 x 100 Gbit/s). ``burst`` is the second figure of a "baseline / burst"
    pair, in the same unit. ``per`` says what the figure is for
    (gpu, nic, node) and ``direction`` whether it is bidirectional, each only where the text says so.
    """

    text: str
    magnitude: float
    unit: str
    count: int = 1
    up_to: bool = False
    burst: float | None = None
    per: str | None = None
    direction: str | None = None
    span: tuple[int, int] = (0, 0)

    @property
    def each(self) -> pint.Quantity:
        """One link's rate as a pint quantity."""
        return registry().Quantity(self.magnitude, self.unit)

    @property
    def is_bytes(self) -> bool:
        """Whether the figure is printed in bytes (not bits) per second."""
        return "byte" in self.unit

    @property
    def gbits_per_s(self) -> float:
        """Total rate in Gbit/s."""
        return convert(self.magnitude * self.count, self.unit, GBIT_PER_S)

    @property
    def gbytes_per_s(self) -> float:
        """Total rate in GB/s."""
        return convert(self.magnitude * self.count, self.unit, GBYTE_PER_S)

    @property
    def each_gbits_per_s(self) -> float:
        """One link's rate in Gbit/s."""
        return convert(self.magnitude, self.unit, GBIT_PER_S)

    @property
    def burst_gbits_per_s(self) -> float | None:
        """The burst figure in Gbit/s, when the text gives one."""
        return None if self.burst is None else convert(self.burst, self.unit, GBIT_PER_S)

    @property
    def qualifiers(self) -> str:
        """What the text says about the figure besides its number, e.g. 'up to; 4 x 100 Gbit/s'."""
        parts = []
        if self.up_to:
            parts.append("up to")
        if self.count > 1:
            parts.append(f"{self.count} x {self.magnitude:g} {unit_symbol(self.unit)}")
        if self.burst is not None:
            parts.append(f"baseline; burst {self.burst:g} {unit_symbol(self.unit)}")
        if self.per:
            parts.append(f"per {self.per}")
        if self.direction:
            parts.append(self.direction)
        return "; ".join(parts)

    def reread_in(self, unit: str) -> Bandwidth:
        """The same numbers in another unit (for pages whose printed unit is wrong)."""
        return replace(self, unit=str(unit))

    def reread_as_bits(self) -> Bandwidth:
        """The same figure with its byte unit read as bits (for pages that print GB/s for Gb/s)."""
        return self.reread_in(self.unit.replace("byte", "bit"))


def _unit_of(match: re.Match[str], default_unit: str | None) -> str | None:
    if match.group("sym"):
        return RATE_SYMBOLS[match.group("sym")]
    if match.group("word"):
        return RATE_WORDS[match.group("word").lower()]
    glued_to_word = match.string[match.end() : match.end() + 1].isalpha()  # "80GB", "v5"
    return None if glued_to_word else default_unit


def _qualifiers(text: str) -> tuple[str | None, str | None]:
    per_match = _PER.search(text)
    per = _PER_WORDS[per_match.group(1).lower()] if per_match else None
    direction = None
    if _BIDIRECTIONAL.search(text):
        direction = "bidirectional"
    elif _UNIDIRECTIONAL.search(text):
        direction = "unidirectional"
    return per, direction


def _figure(
    match: re.Match[str], unit: str, text: str, qualifiers: tuple[str | None, str | None]
) -> Bandwidth:
    count = 1
    for part in re.split(_TIMES, match.group("counts")):
        if part.strip():
            count *= parse_count(part)
    if count > MAX_COUNT:
        raise ParseError(f"implausible link count {count} in {text!r}")
    value = to_number(match.group("value"))
    if value <= 0:
        raise ParseError(f"a zero bandwidth is not a figure: {text!r}")
    burst = match.group("burst")
    per, direction = qualifiers
    return Bandwidth(
        text=text,
        magnitude=value,
        unit=unit,
        count=count,
        up_to=bool(match.group("up_to")),
        burst=None if burst is None else to_number(burst),
        per=per,
        direction=direction,
        span=match.span(),
    )


def find_bandwidths(text: str) -> list[Bandwidth]:
    """Every figure in running text that carries a rate unit ("3.2 Tbps", "4× 400 Gb/s").

    Qualifiers are read from the whole ``text``; pass a sentence, not a page, when they matter.
    ParseError if ``text`` is longer than MAX_SENTENCE_CHARS.
    """
    if len(text) > MAX_SENTENCE_CHARS:
        raise ParseError(f"{len(text):,} characters is not one sentence: {text[:40]!r}...")
    found = []
    qualifiers = _qualifiers(text)  # once: searching the whole text per figure would be quadratic
    for match in _FIGURE.finditer(text):
        unit = _unit_of(match, None)
        if unit is None:
            continue
        try:
            found.append(_figure(match, unit, text, qualifiers))
        except ParseError:
            continue  # "0 Gbps" or a garbled count in prose is not a figure
    return found


@functools.lru_cache(maxsize=4096)  # a Bandwidth is immutable; Karpenter's 1,400 lines hold ~50 figures
def parse_bandwidth(text: str, *, default_unit: str | None = None) -> Bandwidth:
    """Parse one bandwidth figure such as '4x 100 Gigabit', '3.2Tb/s', 'Up to 25 Gigabit' or '2.5 / 10.0'.

    ``default_unit`` (a key of RATE_SYMBOLS, e.g. "Gbps", as a table header states it) applies when
    the cell has no unit of its own. Raises ParseError when the text holds no figure, more than one,
    a range, or a bare number with no unit to give it, or is longer than MAX_FIGURE_CHARS.
    """
    if not text or not text.strip():
        raise ParseError("empty bandwidth text")
    if len(text) > MAX_FIGURE_CHARS:
        raise ParseError(f"{len(text):,} characters is not one bandwidth figure: {text[:40]!r}...")
    if _RANGE.search(text) and not re.search(r"\d\s*/\s*\d", text):
        raise ParseError(f"a range, not one bandwidth: {text!r}")
    default = None
    if default_unit is not None:
        default = RATE_SYMBOLS.get(default_unit) or RATE_WORDS.get(default_unit.lower())
        if default is None:
            raise ParseError(f"unknown default unit {default_unit!r}")
    matches = [(m, unit) for m in _FIGURE.finditer(text) if (unit := _unit_of(m, default)) is not None]
    if not matches:
        raise ParseError(f"no bandwidth figure with a unit in {text!r}")
    if len(matches) > 1:
        raise ParseError(f"{len(matches)} bandwidth figures in {text!r}; expected one")
    match, unit = matches[0]
    return _figure(match, unit, text, _qualifiers(text))


def gbits_to_gbytes(gbits_per_s: float) -> float:
    """Gbit/s → GB/s (÷ 8), through pint."""
    return convert(gbits_per_s, GBIT_PER_S, GBYTE_PER_S)


def gbytes_to_gbits(gbytes_per_s: float) -> float:
    """GB/s → Gbit/s (× 8), through pint."""
    return convert(gbytes_per_s, GBYTE_PER_S, GBIT_PER_S)


_MEMORY = re.compile(
    rf"{_NUM_START}(?P<value>{_NUM})\s*(?P<unit>{_alternation(list(MEMORY_SYMBOLS))})(?![A-Za-z/])"
)


def find_memory_gb(text: str) -> list[float]:
    """Every memory size in ``text`` ('80 GiB', '(141GB)') converted to GB (10^9 bytes); zero or
    implausibly large figures are not sizes and are left out."""
    sizes = []
    for match in _MEMORY.finditer(text):
        try:
            value = to_number(match.group("value"))
        except ParseError:
            continue
        if value > 0:
            sizes.append(convert(value, MEMORY_SYMBOLS[match.group("unit")], GB))
    return sizes


def memory_gb(value: float, symbol: str) -> float:
    """A memory size given as a number and a symbol of MEMORY_SYMBOLS ('MiB', 'GB'), in GB."""
    if symbol not in MEMORY_SYMBOLS:
        raise ParseError(f"unknown memory unit {symbol!r}")
    return convert(value, MEMORY_SYMBOLS[symbol], GB)


def parse_memory_gb(text: str) -> float:
    """One memory size in GB: '22 GiB' → 23.622320128, '(80GB)' → 80.0. ParseError otherwise."""
    sizes = find_memory_gb(text)
    if len(sizes) != 1:
        raise ParseError(f"expected one memory size in {text!r}, found {len(sizes)}")
    return sizes[0]


_COUNT = re.compile(
    r"^\s*(?:(?P<num>[0-9]{1,6})\s*/\s*(?P<den>[0-9]{1,6})|(?P<dec>[0-9]{1,6}(?:\.[0-9]{1,6})?|\.[0-9]{1,6}))\s*$"
)


@functools.lru_cache(maxsize=1024)  # pure, and a Fraction is immutable: an offer list repeats a few counts
def parse_gpu_count(text: str) -> Fraction:
    """A GPU count as written: '8', '8.0', '1/6' or '0.125', kept exact (never rounded to 1)."""
    match = _COUNT.match(text)
    if not match:
        raise ParseError(f"not a GPU count: {text!r}")
    if match.group("dec") is not None:
        value = Fraction(match.group("dec"))
    else:
        if int(match.group("den")) == 0:
            raise ParseError(f"zero denominator in GPU count {text!r}")
        value = Fraction(int(match.group("num")), int(match.group("den")))
    if not 0 < value <= MAX_COUNT:
        raise ParseError(f"GPU count must be positive and plausible: {text!r}")
    return value
