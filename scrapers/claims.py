"""Small constructors that turn parsed figures into claims in the unit their field names."""

from __future__ import annotations

from normalize.errors import ParseError
from normalize.gpus import GpuMatch
from normalize.units import Bandwidth
from normalize.vocab import Basis
from records.documents import COPY_SCHEME
from records.offers import Claim


def _check_source(field: str, quote: object, source_url: object) -> None:
    """A claim needs text to quote and a page to cite: an empty cell is no evidence."""
    if not isinstance(quote, str) or not quote.strip():
        raise ParseError(f"no text to quote for {field}: {quote!r}")
    if not isinstance(source_url, str) or not source_url.startswith(("https://", "http://", COPY_SCHEME)):
        raise ParseError(f"no source URL for {field}: {source_url!r}")


def bandwidth_claim(
    field: str,
    bandwidth: Bandwidth,
    *,
    quote: str,
    source_url: str,
    context: str = "",
    basis: Basis = Basis.STATED,
    unit_suspect: bool = False,
    extra_qualifiers: str = "",
) -> Claim:
    """A claim for a ``*_gbits_per_s`` or ``*_gbytes_per_s`` field, converted through pint."""
    _check_source(field, quote, source_url)
    if field.endswith("_gbits_per_s"):
        value = bandwidth.gbits_per_s
    elif field.endswith("_gbytes_per_s"):
        value = bandwidth.gbytes_per_s
    else:
        raise ValueError(f"{field} is not a bandwidth field")
    qualifiers = "; ".join(q for q in (bandwidth.qualifiers, extra_qualifiers) if q)
    return Claim(
        field=field,
        value=value,
        quote=quote,
        source_url=source_url,
        context=context,
        basis=basis,
        qualifiers=qualifiers,
        unit_suspect=unit_suspect,
    )


def fact(
    field: str,
    value: float | str,
    *,
    quote: str,
    source_url: str,
    context: str = "",
    basis: Basis = Basis.STATED,
    qualifiers: str = "",
) -> Claim:
    """A claim for a count, size or vocabulary field."""
    _check_source(field, quote, source_url)
    return Claim(
        field=field,
        value=value if isinstance(value, str) else float(value),
        quote=quote,
        source_url=source_url,
        context=context,
        basis=basis,
        qualifiers=qualifiers,
    )


def gpu_model_claim(
    gpu: GpuMatch, *, quote: str, source_url: str, context: str = "", qualifiers: str = ""
) -> Claim:
    """The ``gpu_model`` claim of a resolved GPU: stated when the text names the part; inferred when
    its form factor came from the family's board (``normalize.boards``), the quote still the text."""
    if gpu.form_factor_inferred and gpu.spec is not None:
        board = f"form factor {gpu.spec.form_factor} inferred from the family's board"
        qualifiers = "; ".join(q for q in (qualifiers, board) if q)
        return fact(
            "gpu_model",
            gpu.id,
            quote=quote,
            source_url=source_url,
            context=context,
            basis=Basis.INFERRED,
            qualifiers=qualifiers,
        )
    return fact(
        "gpu_model", gpu.id, quote=quote, source_url=source_url, context=context, qualifiers=qualifiers
    )
