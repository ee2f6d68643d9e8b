"""The one place the project does network I/O: a configured client and a fetcher around it.

``make_client`` builds the single ``httpx.AsyncClient`` a refresh uses: explicit timeouts, a
descriptive User-Agent, gzip, redirects, connect retries, and either the network or a mirror
directory as its transport. ``Fetcher`` adds what every provider needs and none should rewrite:
bounded concurrency (overall and per host), backoff on 429/5xx and timeouts (honouring
Retry-After), conditional GET with the validators of the previous refresh, and handing every
document to a sink that stores it raw before anything parses it. It also reads local copies: files in
a directory given for an offline refresh (``--copies``) that stand for documents with no fetchable URL,
such as a third-party copy of a newer revision of a provider's page; each is stored under
``copy:<path>`` like any fetched document.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from normalize.errors import FetchError, NotInMirror, OffLimits
from records.clock import utcnow
from records.documents import Document, body_sha256, copy_url

log = logging.getLogger(__name__)

USER_AGENT = (
    "interconnect-catalog/0.1 (GPU interconnect catalog; "
    "+https://github.com/interconnect-catalog/interconnect-catalog)"
)
DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=30.0, write=10.0, pool=60.0)
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
NOT_IN_MIRROR = "not in mirror"
MIRROR_MISSING_HEADER = "X-Mirror-Missing"
NO_COPIES = "no copies directory (only an offline refresh reads local copies)"


class MirrorTransport(httpx.AsyncBaseTransport):
    """Serve ``https://<host>/<path>`` from ``<root>/<host>/<path>``; a missing file is a 404."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()

    def path_for(self, url: httpx.URL | str) -> Path:
        parts = urlsplit(str(url))
        candidate = (self.root / parts.netloc / parts.path.lstrip("/")).resolve()
        if not candidate.is_relative_to(self.root):
            raise ValueError(f"{url} maps outside the mirror")
        return candidate

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            path = self.path_for(request.url)
        except ValueError:
            return httpx.Response(400, request=request)
        if not path.is_file():
            return httpx.Response(
                404, text=NOT_IN_MIRROR, headers={MIRROR_MISSING_HEADER: "1"}, request=request
            )
        return httpx.Response(200, content=path.read_bytes(), request=request)


class OriginTransport(httpx.AsyncBaseTransport):
    """Fetch ``https://<host>/<path>`` from ``<origin>/<host>/<path>``: a mirror served over HTTP.

    Everything else (retries, 304s, timeouts) is real HTTP, which is what makes a local mirror
    server useful for fault tests and benchmarks.
    """

    def __init__(self, origin: str, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self.origin = httpx.URL(origin.rstrip("/") + "/")
        self.inner = inner or httpx.AsyncHTTPTransport(retries=2)

    def rewrite(self, url: httpx.URL) -> httpx.URL:
        path = f"{self.origin.path}{url.host}{url.raw_path.decode('ascii')}"
        return self.origin.copy_with(raw_path=path.encode("ascii"))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.url = self.rewrite(request.url)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def mirror_transport(mirror: str | Path) -> httpx.AsyncBaseTransport:
    """A directory mirror, or an http(s):// origin serving the same layout."""
    text = str(mirror)
    if text.startswith(("http://", "https://")):
        return OriginTransport(text)
    return MirrorTransport(Path(text))


def make_client(
    *,
    mirror: str | Path | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    timeout: httpx.Timeout = DEFAULT_TIMEOUT,
) -> httpx.AsyncClient:
    """The refresh's one HTTP client: the network, a mirror (directory or origin), or a transport."""
    if transport is None:
        transport = mirror_transport(mirror) if mirror else httpx.AsyncHTTPTransport(retries=2)
    return httpx.AsyncClient(
        transport=transport,
        timeout=timeout,
        headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip"},
        follow_redirects=True,
    )


def retry_after_s(response: httpx.Response, *, now: datetime | None = None) -> float | None:
    """Seconds a 429/503 asks us to wait (delta-seconds or HTTP-date), or None."""
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _error_text(response: httpx.Response) -> str:
    if response.headers.get(MIRROR_MISSING_HEADER):
        return f"HTTP {response.status_code}: {NOT_IN_MIRROR}"
    return f"HTTP {response.status_code}"


class Fetcher:
    """Fetch documents through one client, politely and with retries, and store each one.

    ``previous`` holds the documents of the last refresh by URL; their ETag/Last-Modified make
    each request conditional and a 304 reuses their body. ``on_document`` sees every document, ok
    or not, as it arrives (progress output). ``sleep`` is injectable so tests never wait. ``copies``
    is the directory local copies are read from (None: none are read). Scrapers never call it
    directly: ``for_provider`` binds it to one provider and its declared URLs and copies.
    """

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        previous: Mapping[str, Document] | None = None,
        on_document: Callable[[Document], None] | None = None,
        max_attempts: int = 4,
        backoff_s: float = 0.5,
        max_wait_s: float = 60.0,
        concurrency: int = 32,
        per_host: int = 16,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], datetime] = utcnow,
        copies: Path | None = None,
    ) -> None:
        self.client = client
        self.copies = None if copies is None else Path(copies).resolve()
        self.previous = previous or {}
        self.on_document = on_document
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.max_wait_s = max_wait_s
        self.sleep = sleep
        self.clock = clock
        self._slots = asyncio.Semaphore(concurrency)
        self._per_host = per_host
        self._host_slots: dict[str, asyncio.Semaphore] = {}

    def _conditional_headers(self, url: str) -> dict[str, str]:
        prev = self.previous.get(url)
        if prev is None or not prev.ok:
            return {}
        headers = {}
        if prev.etag:
            headers["If-None-Match"] = prev.etag
        if prev.last_modified:
            headers["If-Modified-Since"] = prev.last_modified
        return headers

    def _wait_s(self, attempt: int, response: httpx.Response | None) -> float:
        asked = retry_after_s(response) if response is not None else None
        wait = asked if asked is not None else self.backoff_s * 2 ** (attempt - 1)
        return min(wait, self.max_wait_s)

    def _document(self, url: str, provider: str, response: httpx.Response, attempts: int) -> Document:
        prev = self.previous.get(url)
        if response.status_code == 304 and prev is not None and prev.ok:
            return Document(
                url=url,
                provider=provider,
                status=304,
                fetched_at=self.clock(),
                body=prev.body,
                sha256=prev.sha256,
                etag=response.headers.get("ETag", prev.etag),
                last_modified=response.headers.get("Last-Modified", prev.last_modified),
                from_cache=True,
                attempts=attempts,
                bytes_received=0,
            )
        body = response.text if response.status_code == 200 else None
        content = response.content
        return Document(
            url=url,
            provider=provider,
            status=response.status_code,
            fetched_at=self.clock(),
            body=body,
            sha256=body_sha256(body) if body is not None else None,
            etag=response.headers.get("ETag"),
            last_modified=response.headers.get("Last-Modified"),
            error=None if body is not None else _error_text(response),
            attempts=attempts,
            bytes_received=len(content),
        )

    async def _attempts(self, url: str, provider: str) -> Document:
        error = "no attempt made"
        for attempt in range(1, self.max_attempts + 1):
            response = None
            try:
                response = await self.client.get(url, headers=self._conditional_headers(url))
            except httpx.TransportError as exc:  # timeouts, refused, reset, truncated body
                error = f"{type(exc).__name__}: {exc}".rstrip(": ")
            else:
                if response.status_code not in RETRY_STATUSES:
                    return self._document(url, provider, response, attempt)
                error = f"HTTP {response.status_code}"
            if attempt < self.max_attempts:
                wait = self._wait_s(attempt, response)
                log.info("%s: %s, retry %d in %.1fs", url, error, attempt, wait)
                await self.sleep(wait)
        return Document(
            url=url,
            provider=provider,
            status=response.status_code if response else 0,
            fetched_at=self.clock(),
            error=error,
            attempts=self.max_attempts,
        )

    async def fetch(self, url: str, provider: str) -> Document:
        """Fetch one URL within the concurrency bounds (no checks: ``ProviderFetcher.get`` does them)."""
        host = urlsplit(url).netloc
        host_slots = self._host_slots.setdefault(host, asyncio.Semaphore(self._per_host))
        async with self._slots, host_slots:
            doc = await self._attempts(url, provider)
        if self.on_document is not None:
            self.on_document(doc)
        return doc

    def read_copy(self, path: str, provider: str) -> Document:
        """A local copy at ``path`` under the copies directory, as a stored document (status 0 with
        the reason when there is no copies directory, no such file, or a path leaving it)."""
        url = copy_url(path)
        error = NO_COPIES if self.copies is None else None
        if self.copies is not None:
            file = (self.copies / path).resolve()
            if not file.is_relative_to(self.copies):
                error = f"off limits: {path} is outside the copies directory"
            elif not file.is_file():
                error = f"no copy at {path} in {self.copies}"
            else:
                body = file.read_bytes().decode("utf-8")
                doc = Document(
                    url=url,
                    provider=provider,
                    status=200,
                    fetched_at=self.clock(),
                    body=body,
                    sha256=body_sha256(body),
                    bytes_received=len(body.encode("utf-8")),
                    required=False,
                )
        if error is not None:
            doc = Document(url, provider, 0, self.clock(), error=error, attempts=0, required=False)
        if self.on_document is not None:
            self.on_document(doc)
        return doc

    def for_provider(
        self,
        provider: str,
        url_prefixes: tuple[str, ...],
        *,
        copy_paths: tuple[str, ...] = (),
        max_documents: int = 200,
    ) -> ProviderFetcher:
        """This fetcher bound to one provider, the URLs it declares and the local copies it may read."""
        return ProviderFetcher(
            self, provider, url_prefixes, copy_paths=copy_paths, max_documents=max_documents
        )


def raise_for(doc: Document) -> None:
    """Raise the error a document that is not ok stands for: OffLimits, NotInMirror or FetchError."""
    if doc.error and doc.error.startswith("off limits"):
        raise OffLimits(doc.error)
    error = NotInMirror if doc.error and doc.error.endswith(NOT_IN_MIRROR) else FetchError
    raise error(f"{doc.url}: {doc.error or f'HTTP {doc.status}'}")


class ProviderFetcher:
    """A ``Fetcher`` bound to one provider: what a scraper's ``fetch`` is given.

    It requests only URLs under the provider's declared ``url_prefixes`` (scheme, host and path), at
    most ``max_documents`` of them, reads only the local copies it declares (``copy_paths``), and
    keeps every document it was asked for, ok or not, in ``documents``: the pipeline stores and
    parses exactly those.
    """

    def __init__(
        self,
        fetcher: Fetcher,
        provider: str,
        url_prefixes: tuple[str, ...],
        *,
        copy_paths: tuple[str, ...] = (),
        max_documents: int = 200,
    ) -> None:
        self.fetcher = fetcher
        self.provider = provider
        self.url_prefixes = url_prefixes
        self.copy_paths = copy_paths
        self.max_documents = max_documents
        self.documents: list[Document] = []
        self._requested = 0

    def _refusal(self, url: str) -> str | None:
        if not url.startswith(self.url_prefixes):
            return f"off limits: {url} is not under {self.provider}'s declared sources"
        self._requested += 1
        if self._requested > self.max_documents:
            return f"off limits: more than {self.max_documents} documents for {self.provider}"
        return None

    async def get(self, url: str, *, required: bool = True) -> Document:
        """Fetch one URL and keep the result. FetchError (OffLimits, NotInMirror) if it is required
        and not ok; an optional document's failure is kept as a note, not raised."""
        refusal = self._refusal(url)
        if refusal is None:
            doc = await self.fetcher.fetch(url, self.provider)
        else:
            doc = Document(
                url=url,
                provider=self.provider,
                status=0,
                fetched_at=self.fetcher.clock(),
                error=refusal,
                attempts=0,
            )
        doc = replace(doc, required=required)
        self.documents.append(doc)
        if required and not doc.ok:
            raise_for(doc)
        return doc

    def get_copy(self, path: str) -> Document:
        """The local copy at ``path`` (one the provider declares), kept like a fetched document.
        Never raises: a copy is optional, and without a copies directory it is simply not read."""
        if path not in self.copy_paths:
            doc = Document(
                copy_url(path),
                self.provider,
                0,
                self.fetcher.clock(),
                error=f"off limits: {path} is not among {self.provider}'s declared copies",
                attempts=0,
                required=False,
            )
        else:
            doc = self.fetcher.read_copy(path, self.provider)
        self.documents.append(doc)
        return doc

    async def get_all(self, urls: list[str], *, required: bool = True) -> list[Document]:
        """Fetch several URLs concurrently (within the fetcher's bounds), in the order given."""
        return list(await asyncio.gather(*(self.get(u, required=required) for u in urls)))
