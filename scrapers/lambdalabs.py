"""Lambda: no fetchable spec page (its instance pages render in JavaScript); curated facts only.

The facts and their sources are in scrapers/curated/lambda.toml.
"""

from scrapers.base import CuratedOnly


class LambdaCloud(CuratedOnly):
    name = "lambda"
    title = "Lambda"
