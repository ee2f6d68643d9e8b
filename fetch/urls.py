"""URLs as the server will read them, so that a declared-prefix check cannot be walked out of.

A string test on a URL is only as good as the URL's spelling: ``.../virtual-machines/../../evil``
starts with the declared prefix, yet httpx removes the dot segments before sending and the server
answers for another repository. ``refusal`` names what makes a URL unsafe to check as written (dot
segments, plain or percent-encoded; backslashes; user info; control characters or spaces);
``canonical`` is the URL as the client sends it, the form every prefix check compares.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import unquote, urlsplit

import httpx

MAX_URL_CHARS = 2_000
_UNSAFE_CHARS = re.compile(r"[\x00-\x20\x7f]")


def refusal(url: str) -> str | None:
    """Why ``url`` is refused before any prefix check, or None."""
    if len(url) > MAX_URL_CHARS:
        return f"longer than {MAX_URL_CHARS:,} characters"
    if _UNSAFE_CHARS.search(url):
        return "has a control character or a space"
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return f"not a URL ({exc})"
    if "@" in parts.netloc:
        return "has user info before its host"
    path = unquote(parts.path)
    if "\\" in path:
        return "has a backslash in its path"
    if any(segment in (".", "..") for segment in path.split("/")):
        return "has dot segments ('.' or '..') in its path"
    return None


@lru_cache(maxsize=4096)
def canonical(url: str) -> str:
    """``url`` as the client sends it: host lower-cased, default port dropped, no fragment (made once
    a URL: it is checked under the prefixes, then read from a mirror under it)."""
    return str(canonical_url(url))


@lru_cache(maxsize=4096)
def canonical_url(url: str) -> httpx.URL:
    """``canonical(url)`` as the parsed URL the client is given: httpx parses a string on every
    request (a character-by-character check), the most of an offline refresh's fetch time; a URL
    is checked, then requested, and each of its parses is made once."""
    return httpx.URL(url).copy_with(fragment=None)
