"""``python -m devtools serve-mirror DIR [--port N] [--latency-ms MS]``, ``python -m devtools bench``,
``python -m devtools bench-app [--db PATH] [--factor N]``,
``python -m devtools bench-elements [--extra N ...]``, ``python -m devtools bench-ab OTHER``,
``python -m devtools attacks [CASE ...]`` and ``python -m devtools schema``."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path


def serve_mirror(argv: list[str]) -> int:
    """Serve a mirror directory over loopback HTTP, for ``catalog refresh --mirror http://...``."""
    from devtools.mirror_server import MirrorServer

    parser = argparse.ArgumentParser(prog="python -m devtools serve-mirror")
    parser.add_argument("directory")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency-ms", type=float, default=0.0, help="delay every response (benchmarks)")
    args = parser.parse_args(argv)
    if not Path(args.directory).is_dir():
        print(f"error: mirror directory {args.directory} does not exist", file=sys.stderr)
        return 2
    server = MirrorServer(Path(args.directory), port=args.port, latency_s=args.latency_ms / 1000)
    print(
        f"serving {args.directory} at {server.base_url} (refresh --mirror {server.base_url})", file=sys.stderr
    )
    with contextlib.suppress(KeyboardInterrupt):
        server.server.serve_forever()
    return 0


COMMANDS = ("serve-mirror", "bench", "bench-app", "bench-elements", "bench-ab", "attacks", "schema")


def main(argv: list[str] | None = None) -> int:
    """Dispatch to one of ``COMMANDS``."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: python -m devtools {{{','.join(COMMANDS)}}} ...", file=sys.stderr)
        return 2
    if argv[0] == "bench":
        from devtools import bench

        return bench.main(argv[1:])
    if argv[0] == "attacks":
        from devtools import attacks

        return attacks.main(argv[1:])
    if argv[0] == "schema":
        from devtools import schema

        return schema.main(argv[1:])
    if argv[0] == "bench-app":
        from devtools import bench_app

        return bench_app.main(argv[1:])
    if argv[0] == "bench-ab":
        from devtools import bench_ab

        return bench_ab.main(argv[1:])
    if argv[0] == "bench-elements":
        from devtools import bench_elements

        return bench_elements.main(argv[1:])
    return serve_mirror(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
