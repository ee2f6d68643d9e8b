"""The one place the project does network I/O: a configured client and a fetcher around it.

``make_client`` builds the single ``httpx.AsyncClient`` a refresh uses: explicit timeouts, a
descriptive User-Agent, gzip, connect retries, and either the network (public addresses only) or a
mirror as its transport. ``Fetcher`` adds what every provider needs and none should rewrite:
bounded concurrency (overall and per host), backoff on 429/5xx and timeouts (honouring
Retry-After), conditional GET with the validators of the previous refresh, redirects followed one
hop at a time and only within the provider's declared sources, and each body read within the
provider's budget (``fetch.budget``). ``ProviderFetcher`` binds it to one provider. It also
reads local copies: files in a directory given for an offline refresh (``--copies``) that stand for
documents with no fetchable URL, such as a third-party copy of a newer revision of a provider's page;
each is stored under ``copy:<path>`` like any fetched document.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx

from fetch.budget import Budget, decode_text, decoded_with_sha256, read_capped
from fetch.files import FileRefused, FileTooLarge, read_capped_file
from fetch.slots import FairSlots, WorkClock
from fetch.transports import (
    MIRROR_MISSING_HEADER,
    NOT_IN_MIRROR,
    MirrorTransport,
    OriginTransport,
    PublicOnly,
    mirror_transport,
)
from fetch.urls import canonical, canonical_url, refusal
from normalize.errors import FetchError, NotInMirror, OffLimits, TooLarge, TooSlow
from records.clock import utcnow
from records.documents import Document, body_sha256, copy_url

# Re-exported: the transports lived here before fetch.transports.
__all__ = [
    "MIRROR_MISSING_HEADER",
    "NOT_IN_MIRROR",
    "Budget",
    "Fetcher",
    "MirrorTransport",
    "OriginTransport",
]

log = logging.getLogger(__name__)

USER_AGENT = (
    "interconnect-catalog/0.1 (GPU interconnect catalog; "
    "+https://github.com/interconnect-catalog/interconnect-catalog)"
)
DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=30.0, write=10.0, pool=60.0)
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_REDIRECTS = 5
NO_COPIES = "no copies directory (only an offline refresh reads local copies)"


def make_client(
    *,
    mirror: str | Path | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    timeout: httpx.Timeout = DEFAULT_TIMEOUT,
) -> httpx.AsyncClient:
    """The refresh's one HTTP client: the network (public addresses only), a mirror (directory or
    origin), or a given transport. It does not follow redirects: the Fetcher does, checking each hop."""
    if transport is None:
        transport = mirror_transport(mirror) if mirror else PublicOnly()
    return httpx.AsyncClient(
        transport=transport,
        timeout=timeout,
        headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip"},
        follow_redirects=False,
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


@dataclass(frozen=True)
class _Reply:
    """The last response of one attempt: its status and headers, and its body if it was 200."""

    response: httpx.Response
    body: bytes | None = None
    received: int = 0
    url: str = ""  # the URL this response answered (the last hop of any redirects)

    @property
    def status(self) -> int:
        return self.response.status_code


Check = Callable[[str], str | None]  # a URL → why it may not be fetched, or None


def _files_of(client: httpx.AsyncClient) -> MirrorTransport | None:
    """The client's mirror directory, when every request goes to one: an offline refresh reads its
    files directly (``Fetcher._from_mirror``), without the client's layers, the request and response
    objects, the slots and the deadlines, which cost a mirror document ten times reading it."""
    transport = getattr(client, "_transport", None)
    if isinstance(transport, MirrorTransport) and not getattr(client, "_mounts", None):
        return transport
    return None


class Fetcher:
    """Fetch documents through one client, politely and with retries, and store each one.

    ``previous`` holds the documents of the last refresh by URL; their ETag/Last-Modified make
    each request conditional and a 304 reuses their body. ``on_document`` sees every document, ok
    or not, as it arrives (progress output). ``sleep`` is injectable so tests never wait;
    ``budget_cap`` lowers every provider's budget (tests use small caps and deadlines). Scrapers
    never call it directly: ``for_provider`` binds it to one provider and its declared URLs.
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
        budget_cap: Budget | None = None,
        copies: Path | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.client = client
        self.previous = previous or {}
        self.on_document = on_document
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.max_wait_s = max_wait_s
        self.budget_cap = budget_cap
        self.copies = None if copies is None else Path(copies).resolve()
        self.sleep = sleep
        self.clock = clock
        # Fair per provider: one provider holds at most half of the slots, overall and per host.
        self._slots = FairSlots(concurrency, max(1, concurrency // 2))
        self._per_host = per_host
        self._host_slots: dict[str, FairSlots] = {}
        self._files = _files_of(client)

    @property
    def reads_files(self) -> bool:
        """Whether documents are read from a mirror directory (each read answers at once)."""
        return self._files is not None

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

    def failed(self, url: str, provider: str, error: str, *, status: int = 0, attempts: int = 1) -> Document:
        """A document that could not be had, with the reason."""
        return Document(
            url=url, provider=provider, status=status, fetched_at=self.clock(), error=error, attempts=attempts
        )

    def _document(self, url: str, provider: str, reply: _Reply, attempts: int) -> Document:
        prev = self.previous.get(url)
        headers = reply.response.headers
        if reply.status == 304 and prev is not None and prev.ok:
            return replace(
                prev,
                status=304,
                fetched_at=self.clock(),
                etag=headers.get("ETag", prev.etag),
                last_modified=headers.get("Last-Modified", prev.last_modified),
                from_cache=True,
                attempts=attempts,
                bytes_received=0,
            )
        if reply.body is None:
            error = f"HTTP {reply.status}" + (
                f": {NOT_IN_MIRROR}" if headers.get(MIRROR_MISSING_HEADER) else ""
            )
            return self.failed(url, provider, error, status=reply.status, attempts=attempts)
        body = decode_text(reply.body, reply.response.charset_encoding)
        return Document(
            url=url,
            provider=provider,
            status=200,
            fetched_at=self.clock(),
            body=body,
            sha256=body_sha256(body),
            etag=headers.get("ETag"),
            last_modified=headers.get("Last-Modified"),
            attempts=attempts,
            bytes_received=reply.received,
            fetched_url=reply.url or url,
        )

    async def _request(self, url: str, budget: Budget, check: Check) -> _Reply:
        """One attempt: GET ``url``, following redirects that ``check`` allows, body within budget."""
        sent = canonical_url(url)  # what the client sends, and what was checked
        for _ in range(MAX_REDIRECTS + 1):
            target = str(sent)
            request = self.client.build_request("GET", sent, headers=self._conditional_headers(url))
            response = await self.client.send(request, stream=True)
            try:
                if response.has_redirect_location:
                    target = urljoin(target, response.headers["Location"])
                    if (why := check(target)) is not None:
                        raise OffLimits(f"redirected to {target[:200]}: {why}")
                    sent = canonical_url(target)
                    continue
                if response.status_code != 200:
                    return _Reply(response, url=target)
                body, received = await read_capped(response, budget.max_document_bytes)
                return _Reply(response, body, received, target)
            finally:
                await response.aclose()
        raise FetchError(f"more than {MAX_REDIRECTS} redirects (last to {target[:200]})")

    async def _attempts(
        self, url: str, provider: str, budget: Budget, check: Check
    ) -> tuple[Document, type[FetchError]]:
        error, response = "no attempt made", None
        for attempt in range(1, self.max_attempts + 1):
            response = None
            try:
                reply = await self._request(url, budget, check)
            except FetchError as exc:  # refused, over the cap, a redirect loop: another try changes nothing
                return self.failed(url, provider, f"{type(exc).__name__}: {exc}", attempts=attempt), type(exc)
            except httpx.HTTPError as exc:  # timeouts, refused, reset, truncated or undecodable body
                error = f"{type(exc).__name__}: {exc}".rstrip(": ")
            else:
                response = reply.response
                if reply.status not in RETRY_STATUSES:
                    doc = self._document(url, provider, reply, attempt)
                    missing = doc.error is not None and doc.error.endswith(NOT_IN_MIRROR)
                    return doc, NotInMirror if missing else FetchError
                error = f"HTTP {reply.status}"
            if attempt < self.max_attempts:
                wait = self._wait_s(attempt, response)
                log.info("%s: %s, retry %d in %.1fs", url, error, attempt, wait)
                await self.sleep(wait)
        status = response.status_code if response is not None else 0
        return self.failed(url, provider, error, status=status, attempts=self.max_attempts), FetchError

    async def fetch_checked(
        self,
        url: str,
        provider: str,
        budget: Budget,
        check: Check,
        work: WorkClock | None = None,
        *,
        required: bool = True,
    ) -> tuple[Document, type[FetchError]]:
        """Fetch one URL within the concurrency bounds (fair per provider) and the per-document
        deadline; the document, and the error class to raise if it is required and not ok. The wait
        for a slot is marked on ``work``, the provider's clock, which does not charge it. A document
        read from a mirror directory is marked ``required`` as it is made (not copied to mark it)."""
        if self._files is not None:  # a mirror directory: a read that never waits, so no slot or deadline
            doc, kind = self._from_mirror(self._files, url, provider, budget, required)
            if self.on_document is not None:
                self.on_document(doc)
            return doc, kind
        host = urlsplit(url).netloc
        if (host_slots := self._host_slots.get(host)) is None:
            host_slots = self._host_slots[host] = FairSlots(self._per_host, max(1, self._per_host // 2))
        work = work or WorkClock()
        async with work.waiting():
            await host_slots.acquire(provider)
            try:
                await self._slots.acquire(provider)
            except BaseException:
                host_slots.release(provider)
                raise
        try:
            try:
                async with asyncio.timeout(budget.document_deadline_s):
                    doc, kind = await self._attempts(url, provider, budget, check)
            except TimeoutError:
                deadline = (
                    f"TooSlow: still arriving after {budget.document_deadline_s:g} s (per-document deadline)"
                )
                doc, kind = self.failed(url, provider, deadline), TooSlow
        finally:
            self._slots.release(provider)
            host_slots.release(provider)
        if self.on_document is not None:
            self.on_document(doc)
        return doc, kind

    def _from_mirror(
        self, files: MirrorTransport, url: str, provider: str, budget: Budget, required: bool = True
    ) -> tuple[Document, type[FetchError]]:
        """``url`` read from a mirror directory as one attempt of ``_attempts`` would read it through
        the client (same document, same error), without the request, the response and the stream:
        a file answers at once, never with a redirect, a retry or a validator."""
        sent = canonical(url)
        try:
            status, raw = files.read(sent, budget.max_document_bytes)
        except FetchError as exc:  # over the cap
            return self.failed(url, provider, f"{type(exc).__name__}: {exc}"), type(exc)
        if raw is None:
            missing = status == 404
            error = f"HTTP {status}" + (f": {NOT_IN_MIRROR}" if missing else "")
            return self.failed(url, provider, error, status=status), NotInMirror if missing else FetchError
        body, sha256 = decoded_with_sha256(raw)
        document = Document(
            url=url,
            provider=provider,
            status=200,
            fetched_at=self.clock(),
            body=body,
            sha256=sha256,
            bytes_received=len(raw),
            required=required,
            fetched_url=sent,
        )
        return document, FetchError

    def read_copy(self, path: str, provider: str, max_bytes: int = Budget.max_document_bytes) -> Document:
        """A local copy at ``path`` under the copies directory, as a stored document (status 0 with
        the reason when there is no copies directory, no such file, a path leaving it, not a regular
        file, or over ``max_bytes``, the cap on one document)."""
        url = copy_url(path)
        error = NO_COPIES if self.copies is None else None
        if self.copies is not None:
            file = (self.copies / path).resolve()
            if not file.is_relative_to(self.copies):
                error = f"off limits: {path} is outside the copies directory"
            elif not file.exists():
                error = f"no copy at {path} in {self.copies}"
            else:
                try:
                    raw = read_capped_file(file, max_bytes)
                except FileRefused as exc:
                    raw, error = b"", f"TooLarge: {exc}" if isinstance(exc, FileTooLarge) else str(exc)
            if error is None:
                body = decode_text(raw, "utf-8")
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
        budget: Budget | None = None,
        *,
        copy_paths: tuple[str, ...] = (),
    ) -> ProviderFetcher:
        """This fetcher bound to one provider, the URLs it declares, its budget and its local copies."""
        capped = (budget or Budget()).within(self.budget_cap)
        return ProviderFetcher(self, provider, url_prefixes, capped, copy_paths=copy_paths)


_ERRORS: tuple[type[FetchError], ...] = (OffLimits, TooLarge, TooSlow)


def under(url: str, prefixes: tuple[str, ...]) -> bool:
    """Whether ``url`` is one of ``prefixes``' sources: under a prefix that ends in ``/`` (a
    folder), or exactly a prefix that names a file (with a query at most). A file prefix is no
    folder: a redirect from ``.../vms.csv`` to ``.../vms.csv-pwn`` once published that file's rows."""
    return any(
        url.startswith(prefix) if prefix.endswith("/") else url == prefix or url.startswith(prefix + "?")
        for prefix in prefixes
    )


def raise_for(doc: Document) -> None:
    """Raise the error a document that is not ok stands for (OffLimits, TooLarge, TooSlow,
    NotInMirror, else FetchError), naming the URL and the cause."""
    error = doc.error or f"HTTP {doc.status}"
    kind = next((k for k in _ERRORS if error.startswith(f"{k.__name__}: ")), None)
    if kind is None:
        kind = NotInMirror if error.endswith(NOT_IN_MIRROR) else FetchError
    raise kind(f"{doc.url}: {error.removeprefix(f'{kind.__name__}: ')}")


class ProviderFetcher:
    """A ``Fetcher`` bound to one provider: what a scraper's ``fetch`` is given.

    It requests only URLs under the provider's declared ``url_prefixes`` (scheme, host and path), and
    follows redirects only there; past ``budget.max_documents`` asked-for URLs the provider's fetch
    fails (a page that links to thousands of documents is an attack or a broken page). It reads only
    the local copies it declares (``copy_paths``). It keeps every document it was asked for, ok or
    not, in ``documents``: the pipeline stores and parses exactly those.
    """

    def __init__(
        self,
        fetcher: Fetcher,
        provider: str,
        url_prefixes: tuple[str, ...],
        budget: Budget,
        *,
        copy_paths: tuple[str, ...] = (),
    ) -> None:
        self.fetcher = fetcher
        self.provider = provider
        self.url_prefixes = url_prefixes
        self.budget = budget
        self.copy_paths = copy_paths
        self.documents: list[Document] = []
        self.work = WorkClock()  # what its deadline counts: not the waits for another's slots
        self._asked = 0
        self._checked: dict[str, str | None] = {}  # off_limits by URL: each is checked before and as sent

    def off_limits(self, url: str) -> str | None:
        """Why ``url`` may not be fetched for this provider, or None: refused as written (dot
        segments and the like, see fetch.urls), or not under a declared prefix both as written and
        as the client will send it."""
        if url not in self._checked:
            self._checked[url] = self._off_limits(url)
        return self._checked[url]

    def _off_limits(self, url: str) -> str | None:
        if (why := refusal(url)) is not None:
            return f"{url[:200]} {why}"
        try:
            sent = canonical(url)
        except httpx.InvalidURL as exc:
            return f"{url[:200]} is not a URL ({exc})"
        if not (under(url, self.url_prefixes) and under(sent, self.url_prefixes)):
            return f"{url[:200]} is not under {self.provider}'s declared sources"
        return None

    def _over_budget(self, url: str) -> OffLimits | None:
        self._asked += 1
        if self._asked <= self.budget.max_documents:
            return None
        error = OffLimits(f"more than {self.budget.max_documents} documents for {self.provider} (its budget)")
        if self._asked == self.budget.max_documents + 1:  # one note, not thousands
            self.documents.append(self.fetcher.failed(url, self.provider, f"OffLimits: {error}", attempts=0))
        return error

    async def get(self, url: str, *, required: bool = True) -> Document:
        """Fetch one URL and keep the result. FetchError (OffLimits, NotInMirror, TooLarge, TooSlow)
        if it is required and not ok, and OffLimits past the document budget; an optional document's
        failure is kept as a note, not raised."""
        if (over := self._over_budget(url)) is not None:
            raise over
        kind: type[FetchError]
        if (refusal := self.off_limits(url)) is not None:
            doc, kind = (
                self.fetcher.failed(url, self.provider, f"OffLimits: {refusal}", attempts=0),
                OffLimits,
            )
        else:
            try:
                with self.work.request():
                    doc, kind = await self.fetcher.fetch_checked(
                        url, self.provider, self.budget, self.off_limits, self.work, required=required
                    )
            except asyncio.CancelledError:  # the provider's deadline passed while this one was running
                self.documents.append(self.fetcher.failed(url, self.provider, "cancelled: provider deadline"))
                raise
        doc = doc if doc.required == required else replace(doc, required=required)
        self.documents.append(doc)
        if required and not doc.ok:
            detail = (doc.error or f"HTTP {doc.status}").removeprefix(f"{kind.__name__}: ")
            raise kind(f"{url}: {detail}")
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
            doc = self.fetcher.read_copy(path, self.provider, self.budget.max_document_bytes)
        self.documents.append(doc)
        return doc

    async def get_all(self, urls: list[str], *, required: bool = True) -> list[Document]:
        """Fetch several URLs concurrently (within the fetcher's bounds), in the order given. Every one
        runs to its end before the first error, if any, is raised. From a mirror directory, where a
        read never waits, one after the other: a task each was most of what scheduling them cost."""
        results: list[Document | BaseException] = []
        if self.fetcher.reads_files:
            for url in urls:
                try:
                    results.append(await self.get(url, required=required))
                except Exception as exc:  # as gather's return_exceptions keeps it
                    results.append(exc)
        else:
            results = await asyncio.gather(
                *(self.get(u, required=required) for u in urls), return_exceptions=True
            )
        documents: list[Document] = []
        for result in results:
            if isinstance(result, BaseException):
                raise result
            documents.append(result)
        return documents
