"""AWS's own GPU-to-GPU figures, in two local copies of AWS pages that print a "GPU Peer to peer"
column the accelerated-computing page lacks: the AWS News Blog's P6-B200 launch post (a markdown
capture in an unidentified public repository; "GPU Peer to peer (GB/s)" 1800) and the AWS HPC
workshop's verify-cluster page (aws-samples/aws-hpc-tutorials, branch ml; "900 GB/s NVSwitch" for
p5.48xlarge). Each is cited as the copy it is, with AWS's URL as its original. Only that column is
read: the workshop's network column contradicts AWS's own page (p4d "200 Gbps") and is left alone.
A figure is added to an instance type AWS's page lists; a copy never creates a row.
"""

from __future__ import annotations

import re
from dataclasses import replace

from normalize.errors import ParseError
from records.documents import DocumentSet, copy_url
from records.offers import Claim, RawOffer
from scrapers.claims import fact
from scrapers.markdown import markdown_tables
from scrapers.tables import Table, clean

BLOG = (
    "reference/aws/blog-md-mirror/"
    "new-amazon-ec2-p6-b200-instances-powered-by-nvidia-blackwell-gpus-to-accelerate-ai-innovations.md"
)
BLOG_ORIGINAL = (
    "https://aws.amazon.com/blogs/aws/new-amazon-ec2-p6-b200-instances-powered-by-nvidia-blackwell-gpus-"
    "to-accelerate-ai-innovations/"
)
WORKSHOP = "reference/aws/aws-hpc-tutorials-ml-branch/content/04-Verify-Cluster/_index.md"
WORKSHOP_ORIGINAL = (
    "https://github.com/aws-samples/aws-hpc-tutorials/blob/ml/content/04-Verify-Cluster/_index.md"
)
COPIES = {BLOG: BLOG_ORIGINAL, WORKSHOP: WORKSHOP_ORIGINAL}
NOTE = "GPU peer-to-peer figure from a local copy of an AWS page ({path}), cited as the copy it is"

_PEER = r"GPU\s+Peer\s+to\s+Peer"
_GBYTES = re.compile(r"^(?P<n>\d[\d,]*(?:\.\d+)?)(?:\s*GB/s)?\b")


def _headed(table: Table) -> Table:
    """A table whose header row is empty and whose first row holds the headers (the blog capture's
    "| **Instance size** | ... |" under a blank header), with that row as its headers."""
    if any(clean(h) for h in table.headers) or not table.rows:
        return table
    return Table(table.rows[0], table.rows[1:], table.heading)


def peer_claims(text: str, path: str) -> dict[str, Claim]:
    """Instance type → its "GPU Peer to peer" figure (GB/s, as the table prints it) in one copy."""
    found: dict[str, Claim] = {}
    for table in map(_headed, markdown_tables(text)):
        if not table.has_column(_PEER) or not table.has_column(r"^Instance"):
            continue
        header = next(h for h in table.clean_headers if re.search(_PEER, h, re.IGNORECASE))
        for row in table.rows:
            name = clean(table.cell(row, r"^Instance")).strip("* ").lower()
            cell = table.cell(row, _PEER)
            match = _GBYTES.match(clean(cell))
            if not name or match is None:
                continue
            if "GB/s" not in header and "GB/s" not in cell:
                raise ParseError(f"{path}: {header!r} names no unit for {name}")
            found[name] = fact(
                "intra_node_gbytes_per_s",
                float(match.group("n").replace(",", "")),
                quote=clean(cell),
                source_url=copy_url(path),
                context=f"{table.heading or 'table'} › {header} › {clean(table.cell(row, r'^Instance'))}",
                qualifiers="GPU peer to peer per GPU, as AWS's table prints it",
            )
    return found


def with_peer_figures(offers: list[RawOffer], documents: DocumentSet) -> list[RawOffer]:
    """``offers`` with each copy's GPU peer-to-peer figure added to the instance types it names."""
    for path, original in COPIES.items():
        text = documents.optional_text(copy_url(path))
        if text is None:
            continue
        claims = peer_claims(text, path)
        note = NOTE.format(path=path)
        offers = [
            replace(
                offer,
                claims=(*offer.claims, replace(claims[offer.instance_type], original_url=original)),
                notes=(*offer.notes, note),
            )
            if offer.instance_type in claims
            else offer
            for offer in offers
        ]
    return offers
