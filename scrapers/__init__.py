"""Provider modules and the one registry of them. The CLI and Makefile derive their choices from it."""

from __future__ import annotations

from scrapers.aws import Aws
from scrapers.azure import Azure
from scrapers.base import Scraper

REGISTRY: dict[str, type[Scraper]] = {cls.name: cls for cls in (Aws, Azure)}
