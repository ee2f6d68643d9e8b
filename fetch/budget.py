"""What one provider's fetch may cost, and reading a response body within that budget.

Documents are untrusted: a 2 MB gzip bomb unpacks to 2 GiB, a server can stream forever or drip one
byte at a time just under the read timeout. Every provider therefore has a ``Budget`` (its
``Scraper.budget``): a cap on each document's decoded size, on the number of documents, and a
deadline per document and for the provider's whole fetch. ``read_capped`` reads a body as it
streams and stops at the cap, whether the bytes come from the network or from a mirror file.
"""

from __future__ import annotations

import codecs
import hashlib
import zlib
from dataclasses import astuple, dataclass

import httpx

from normalize.errors import FetchError, TooLarge
from records.documents import body_sha256


@dataclass(frozen=True)
class Budget:
    """What one provider's fetch may cost. The defaults are generous for the real pages: the largest
    instance page is 45 kB and the largest price file 3.1 MB (16 MB is 5x that); Azure, the provider
    that follows links, fetches 54 documents (200 is almost 4x); a refresh takes under 2 s."""

    max_document_bytes: int = 16_000_000  # decoded (decompressed) bytes of one document
    max_documents: int = 200  # URLs one provider may ask for, refused ones included
    document_deadline_s: float = 120.0  # one document: every attempt and every wait between them
    provider_deadline_s: float = 600.0  # the provider's whole fetch

    def within(self, cap: Budget | None) -> Budget:
        """This budget, each limit lowered to ``cap``'s where that is smaller (tests use small caps)."""
        if cap is None:
            return self
        return Budget(*(min(mine, theirs) for mine, theirs in zip(astuple(self), astuple(cap), strict=True)))


# Content-Encoding → zlib wbits. We ask for gzip only; one layer of gzip or deflate is decoded here,
# with a bound on the output of every step, rather than by httpx (which inflates each network chunk
# whole, and a second layer of gzip multiplies a bomb again).
_DECODERS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


def over_cap(max_bytes: int) -> TooLarge:
    """The error of a body past the cap on one document."""
    return TooLarge(f"body over the {max_bytes:,}-byte cap for one document (decoded)")


async def read_capped(response: httpx.Response, max_bytes: int) -> tuple[bytes, int]:
    """The body of a streamed response, decoded, and the bytes received on the wire.

    TooLarge as soon as the decoded body passes ``max_bytes``, however it arrives (a declared
    Content-Length, a chunked stream that never ends, a gzip bomb); FetchError for a Content-Encoding
    we did not ask for; httpx.DecodingError for a body that is not valid gzip (retried like a
    truncated one).
    """
    if response.is_stream_consumed:  # built whole in memory (a mock transport's reply), already decoded
        if len(response.content) > max_bytes:
            raise over_cap(max_bytes)
        return response.content, len(response.content)
    encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding not in ("", "identity", *_DECODERS):
        raise FetchError(f"unsupported Content-Encoding {encoding[:40]!r}")
    decoder = zlib.decompressobj(_DECODERS[encoding]) if encoding in _DECODERS else None
    declared = response.headers.get("Content-Length", "")
    if decoder is None and declared.isdigit() and int(declared) > max_bytes:
        raise over_cap(max_bytes)
    body, received = bytearray(), 0
    try:
        async for raw in response.aiter_raw():
            received += len(raw)
            # max_length bounds what one step may inflate: never more than one byte past the cap.
            body += raw if decoder is None else decoder.decompress(raw, max_bytes - len(body) + 1)
            if len(body) > max_bytes:
                raise over_cap(max_bytes)
        if decoder is not None:
            body += decoder.flush()
            if not decoder.eof:
                raise httpx.DecodingError("gzip body ends before its end marker", request=response.request)
    except zlib.error as exc:
        raise httpx.DecodingError(f"not valid {encoding}: {exc}", request=response.request) from None
    if len(body) > max_bytes:
        raise over_cap(max_bytes)
    return bytes(body), received


def decoded_with_sha256(body: bytes) -> tuple[str, str]:
    """``decode_text(body, None)`` and the SHA-256 of the text as stored (``body_sha256``): of the
    bytes themselves when they are valid UTF-8, which the text encodes back to exactly, so nothing
    is encoded again to hash it."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        text = decode_text(body, None)
        return text, body_sha256(text)
    return text, hashlib.sha256(body).hexdigest()


def decode_text(body: bytes, charset: str | None) -> str:
    """The body as text in its declared charset (UTF-8 when none or an unknown one is declared);
    undecodable bytes become U+FFFD, and the stored text is what gets hashed."""
    try:
        codec = codecs.lookup(charset or "utf-8").name
    except LookupError:
        codec = "utf-8"
    return body.decode(codec, errors="replace")
