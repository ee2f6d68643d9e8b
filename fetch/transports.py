"""Where the one HTTP client's requests go: a mirror directory, a mirror served over HTTP, or the
network, and in that last case only to public addresses.

``MirrorTransport`` serves ``https://<host>/<path>`` from ``<root>/<host>/<path>``, streamed so that
a huge file is cut off at the budget's cap like a huge response. ``OriginTransport`` reads the same
layout from an HTTP origin (the loopback mirror server the fault tests and benchmarks use).
``PublicOnly`` is the live mode's guard: it resolves each host itself, refuses private, loopback,
link-local and other non-public addresses, and connects to the address it checked.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from fetch.budget import over_cap
from fetch.files import FileMissing, FileTooLarge, read_capped_file
from normalize.errors import OffLimits, TooLarge

NOT_IN_MIRROR = "not in mirror"
MIRROR_MISSING_HEADER = "X-Mirror-Missing"
FILE_CHUNK_BYTES = 64 * 1024
# A metadata service's answer (an instance type, a token): a few dozen bytes.
METADATA_MAX_BYTES = 4096


class _FileStream(httpx.AsyncByteStream):
    """A file read in chunks as the body is consumed: never whole in memory."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with open(self.path, "rb") as handle:
            while chunk := handle.read(FILE_CHUNK_BYTES):
                yield chunk


class MirrorTransport(httpx.AsyncBaseTransport):
    """Serve ``https://<host>/<path>`` from ``<root>/<host>/<path>``; a missing file is a 404.

    ``read`` is the same answer without a request or a response: what an offline refresh asks."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self._top = str(self.root).rstrip("/")  # '' for the file system's root
        # (host, URL directory) → that directory resolved, for this transport's life, each resolved
        # from its parent's: resolving a path whole stats every component, a dozen system calls.
        self._real_dirs: dict[tuple[str, str], str] = {}

    def path_for(self, url: httpx.URL | str) -> Path:
        """The file ``url`` maps to; ValueError if that is outside the mirror."""
        return Path(self.file_for(url))

    def file_for(self, url: httpx.URL | str) -> str:
        """``path_for`` as a string: what ``read`` opens, with no Path made and turned back."""
        parts = urlsplit(str(url))
        folder, _, name = parts.path.rpartition("/")
        segments = (parts.netloc, *folder.split("/")[1:], name)
        if not parts.path.startswith("/") or any(s in ("", ".", "..") for s in segments):  # pathlib's way
            return str(self._checked(url, (self.root / parts.netloc / parts.path.lstrip("/")).resolve()))
        real = self._real(self._real_dir(parts.netloc, folder), name)
        if not (real.startswith(f"{self._top}/") or real == str(self.root)):
            raise ValueError(f"{url} maps outside the mirror")
        return real

    def _real_dir(self, host: str, folder: str) -> str:
        """The real path of ``<root>/<host><folder>`` (``folder`` is '' or '/a/b'), as ``realpath``
        gives it, from its parent's."""
        key = (host, folder)
        if (known := self._real_dirs.get(key)) is None:
            parent, _, name = folder.rpartition("/")
            known = self._real(self._real_dir(host, parent), name) if folder else self._real(self._top, host)
            self._real_dirs[key] = known
        return known

    @staticmethod
    def _real(directory: str, name: str) -> str:
        """``<directory>/<name>`` resolved, ``directory`` being resolved already: one lstat."""
        path = f"{directory}/{name}"
        return os.path.realpath(path) if os.path.islink(path) else path

    def _checked(self, url: httpx.URL | str, path: Path) -> Path:
        if not path.is_relative_to(self.root):
            raise ValueError(f"{url} maps outside the mirror")
        return path

    def read(self, url: str, max_bytes: int) -> tuple[int, bytes | None]:
        """The status a request for ``url`` gets (200, 404 for no regular file there, 400 for a URL
        that maps outside the mirror) and the file's bytes if 200; TooLarge past ``max_bytes``, as
        a response's body would be cut off (``fetch.files.read_capped_file``: a FIFO is no file)."""
        try:
            path = self.file_for(url)
        except ValueError:
            return 400, None
        try:
            return 200, read_capped_file(path, max_bytes)
        except FileTooLarge:
            raise over_cap(max_bytes) from None
        except FileMissing:
            return 404, None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            path = self.path_for(request.url)
        except ValueError:
            return httpx.Response(400, request=request)
        if not path.is_file():
            return httpx.Response(
                404, text=NOT_IN_MIRROR, headers={MIRROR_MISSING_HEADER: "1"}, request=request
            )
        return httpx.Response(200, stream=_FileStream(path), request=request)


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


Resolver = Callable[[str, int], Awaitable[list[str]]]


async def resolve(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to (the system resolver, off the event loop)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def is_public(address: str) -> bool:
    """Whether an IP address is globally routable (not private, loopback, link-local, reserved...)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


class PublicOnly(httpx.AsyncBaseTransport):
    """The network, but only public addresses: live mode's guard against requests that a document
    (a link, a redirect) or a poisoned resolver could send to 169.254.169.254, loopback or 10.x.

    The host is resolved here and every address it has must be public; the request then goes to the
    address that was checked (the Host header and TLS server name stay the host's), so the name
    cannot resolve elsewhere between the check and the connection. OffLimits otherwise.
    """

    def __init__(
        self, inner: httpx.AsyncBaseTransport | None = None, *, resolver: Resolver = resolve
    ) -> None:
        self.inner = inner or httpx.AsyncHTTPTransport(retries=2)
        self.resolver = resolver

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        host = request.url.host
        try:
            addresses = [str(ipaddress.ip_address(host))]
        except ValueError:
            addresses = await self.resolver(host, request.url.port or 443)
        private = [a for a in addresses if not is_public(a)]
        if private or not addresses:
            raise OffLimits(
                f"{request.url} resolves to a non-public address ({', '.join(private) or 'none'})"
            )
        if addresses[0] != host:
            request.url = request.url.copy_with(host=addresses[0])
            request.extensions = {**request.extensions, "sni_hostname": host}
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class _CappedStream(httpx.AsyncByteStream):
    """A response body that raises TooLarge once more than ``max_bytes`` have come."""

    def __init__(self, inner: httpx.AsyncByteStream, max_bytes: int, url: str) -> None:
        self.inner, self.max_bytes, self.url = inner, max_bytes, url

    async def __aiter__(self) -> AsyncIterator[bytes]:
        received = 0
        async for chunk in self.inner:
            received += len(chunk)
            if received > self.max_bytes:
                raise TooLarge(f"{self.url}: answer over the {self.max_bytes:,}-byte cap")
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class MetadataOnly(httpx.AsyncBaseTransport):
    """Only the given metadata endpoints (``http://<host><path>``, exactly), for ``probe`` alone: the
    link-local metadata service PublicOnly refuses is what that one command must ask, and nothing
    else. OffLimits for any other URL, before connecting. An answer is a short name: one over
    ``max_bytes`` is TooLarge (off a cloud, anyone on the local network can answer 169.254.169.254;
    an endless answer once grew probe to 19 GB)."""

    def __init__(
        self,
        endpoints: frozenset[str],
        inner: httpx.AsyncBaseTransport | None = None,
        *,
        max_bytes: int = METADATA_MAX_BYTES,
    ) -> None:
        self.endpoints = endpoints
        self.inner = inner or httpx.AsyncHTTPTransport(retries=0)
        self.max_bytes = max_bytes

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if f"{url.scheme}://{url.host}{url.path}" not in self.endpoints or url.port not in (None, 80):
            raise OffLimits(f"{str(url)[:200]} is not one of the metadata endpoints probe asks")
        response = await self.inner.handle_async_request(request)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        capped = _CappedStream(response.stream, self.max_bytes, str(url)[:200])
        return httpx.Response(response.status_code, headers=response.headers, stream=capped, request=request)

    async def aclose(self) -> None:
        await self.inner.aclose()
