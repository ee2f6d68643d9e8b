"""``python -m devtools.port PORT``: exit 0 if ``make app`` can serve on PORT, else one line saying why.

Streamlit alone ends a busy port in a traceback-free exit 1 that ``make`` reports as ``Error 1``; this
check runs first and names the port and the way out (``make app PORT=8600``). Standard library only,
so it runs in the app's runtime-only venv.
"""

from __future__ import annotations

import socket
import sys


def port_problem(text: str) -> str | None:
    """Why ``make app`` cannot serve on the port ``text`` names, or None if it can."""
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        return f"PORT must be a whole number from 1 to 65535, got {text!r}"
    port = int(text)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Streamlit: TIME_WAIT is no clash
        try:
            probe.bind(("0.0.0.0", port))  # where Streamlit listens: every interface
        except PermissionError:
            return f"port {port} needs privileges this user lacks; serve on another: make app PORT=8600"
        except OSError:
            return (
                f"port {port} is already in use (another `make app`?); stop it, or serve on another port: "
                f"make app PORT={8600 if port != 8600 else 8601}"
            )
    return None


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    problem = port_problem(args[0] if args else "")
    if problem:
        print(f"make app: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
