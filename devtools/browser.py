"""The app in a real browser: a Streamlit server on a free port against a given catalog, Debian's
Chromium driven by Playwright, and the timing of what a user waits for. The end-to-end tests
(tests/test_e2e.py) and the app benchmark (``devtools.bench_app``) share it.

Playwright's own browser download needs the internet, so the system's Chromium is launched through
``executable_path``, headless, with a fresh user-data directory. Whether a script run is going on is
read from Streamlit's own ``data-test-script-state`` attribute and, for a run too short to show in it,
from the websocket's run-start and run-end messages; both are recorded in the page (``RUN_WATCH``), so
an interaction is timed from the click to the end of the run it starts.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 800}
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
# Records every script-state change of the page, from before the app's first element exists. A
# change's new state is the next change's old one (or the attribute as it is now, for the last):
# reading the attribute for each change would record a run that started and ended within one batch
# of changes as two 'notRunning's. A short run can also never show 'running' at all (React renders
# the batch of messages it came in once, in its final state), so every websocket frame is recorded
# too: its direction, and of a received ForwardMsg whether it starts a run (``new_session``, field 4)
# or ends one (``script_finished``, field 6, a varint: 2 is FINISHED_EARLY_FOR_RERUN, a run cut short),
# with whether the page has painted twice since it arrived.
RUN_WATCH = """
window.__runs = [];
new MutationObserver((changes) => {
  changes.forEach((change, i) => {
    const next = changes.slice(i + 1).find((later) => later.target === change.target);
    window.__runs.push(next ? next.oldValue : change.target.getAttribute('data-test-script-state'));
  });
}).observe(document, {
  attributes: true, attributeOldValue: true, subtree: true, attributeFilter: ['data-test-script-state'],
});
window.__frames = [];
const forwardKind = (data) => {
  if (!(data instanceof ArrayBuffer)) return 'other';
  const bytes = new Uint8Array(data);
  let at = 0;
  const varint = () => {
    let value = 0, shift = 0, byte = 0;
    do {
      byte = bytes[at++];
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80 && at < bytes.length);
    return value;
  };
  while (at < bytes.length) {
    const tag = varint(), field = Math.floor(tag / 8), wire = tag % 8;
    if (field === 4 && wire === 2) return 'start';
    if (field === 6 && wire === 0) return varint() === 2 ? 'cut' : 'finished';
    if (wire === 0) varint();
    else if (wire === 2) { const length = varint(); at += length; }  // not at += varint(): at is read first
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else return 'other';
  }
  return 'other';
};
const PageSocket = window.WebSocket;
window.WebSocket = class extends PageSocket {
  constructor(...args) {
    super(...args);
    this.addEventListener('message', (event) => {
      const frame = {way: 'in', kind: forwardKind(event.data), painted: false};
      window.__frames.push(frame);
      requestAnimationFrame(() => requestAnimationFrame(() => { frame.painted = true; }));
    });
  }
  send(data) {
    window.__frames.push({way: 'out', kind: 'other', painted: true});
    return super.send(data);
  }
};
"""
#: Where the records stand before an action: [script states, websocket frames].
MARK = "[window.__runs.length, window.__frames.length]"
RUN_STARTED = """([runs, frames]) => window.__runs.slice(runs).includes('running')
    || window.__frames.slice(frames).some((f) => f.kind === 'start' || f.kind === 'finished')"""
# True once a run started after the mark and ended, and nothing on the page is stale any more: the
# last run frame since the mark is a script_finished that is not a cut and has been painted, and the
# page is not running. A cut run is not the end: a widget's callback that reruns one fragment
# (``ui.sidebar.main_only``) cuts the interaction's run and starts the fragment's, and the page shows
# 'notRunning' for a moment between the two.
RUN_DONE = """([runs, frames]) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning'
      || document.querySelector('[data-stale="true"]')) return false;
  const marks = window.__frames.slice(frames).filter((f) => ['start', 'finished', 'cut'].includes(f.kind));
  const last = marks[marks.length - 1];
  return last !== undefined && last.kind === 'finished' && last.painted;
}"""


def missing_requirement() -> str | None:
    """Why the browser cannot run here (no Chromium, no Playwright), or None."""
    if not CHROMIUM.exists():
        return f"{CHROMIUM} not found (install it with `make e2e`, or apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (`make e2e` installs it)"
    return None


def free_port() -> int:
    """A TCP port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AppServer:
    """``streamlit run app.py`` on a free loopback port, reading the catalog at ``db``; with
    ``preload``, the way ``make app`` serves it (``python -m ui.serve``: modules loaded first)."""

    def __init__(
        self, db: Path, *, root: Path = ROOT, env: dict[str, str] | None = None, preload: bool = False
    ) -> None:
        self.db, self.root, self.port, self.preload = Path(db), root, free_port(), preload
        self.env = {**os.environ, "INTERCONNECT_CATALOG_DB": str(self.db), **(env or {})}
        self.process: subprocess.Popen | None = None
        handle, name = tempfile.mkstemp(prefix="streamlit-", suffix=".log")
        os.close(handle)
        self.log = Path(name)
        self.ready_s = 0.0

    @property
    def url(self) -> str:
        """The app's address."""
        return f"http://127.0.0.1:{self.port}/"

    def start(self, timeout_s: float = 60) -> AppServer:
        """Start the server and wait until its health endpoint answers (``ready_s`` is how long)."""
        command = [sys.executable, "-m", *(["ui.serve"] if self.preload else ["streamlit", "run", "app.py"])]
        command += [
            "--server.port",
            str(self.port),
            "--server.headless",
            "true",
            "--server.fileWatcherType",
            "none",
        ]
        started = time.perf_counter()
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, cwd=self.root, env=self.env, stdout=log, stderr=log)
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"streamlit exited with {self.process.returncode}; see {self.log}")
            try:
                with urllib.request.urlopen(f"{self.url}_stcore/health", timeout=1) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if time.perf_counter() - started > timeout_s:
                    raise TimeoutError(f"streamlit not ready after {timeout_s} s; see {self.log}") from None
                time.sleep(0.05)
        self.ready_s = time.perf_counter() - started
        return self

    def stop(self) -> None:
        """Stop the server (the process this object started, and only it)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> AppServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


@contextlib.contextmanager
def chromium(playwright, **context_options) -> Iterator:
    """A persistent Chromium context with a fresh user-data directory, 1280x800 unless told."""
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport=context_options.pop("viewport", VIEWPORT),
            accept_downloads=True,
            **context_options,
        )
        context.add_init_script(RUN_WATCH)
        try:
            yield context
        finally:
            context.close()


def wait_idle(page, timeout_ms: float = 60_000) -> None:
    """Wait until the app has finished its run and nothing on the page is stale."""
    page.wait_for_selector(IDLE, timeout=timeout_ms)
    page.wait_for_function("!document.querySelector('[data-stale=\"true\"]')", timeout=timeout_ms)


#: A person's pause before acting: the page re-renders for a moment after a run ends, and a click
#: landing during that moment can be lost.
SETTLE_MS = 300


def timed_run(
    page, action: Callable[[], object], timeout_ms: float = 60_000, *, retry_after_ms: float | None = None
) -> float:
    """Seconds from ``action`` (a click, a key press) to the end of the script run it starts, after
    a pause of ``SETTLE_MS`` (not counted). With ``retry_after_ms``, an action that started no run by
    then is done once more (tests, whose actions are idempotent; the benchmark drops such samples)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.wait_for_timeout(SETTLE_MS)
    mark = page.evaluate(MARK)
    started = time.perf_counter()
    action()
    if retry_after_ms is not None:
        try:
            page.wait_for_function(RUN_STARTED, arg=mark, timeout=retry_after_ms)
        except PlaywrightTimeout:
            action()
    try:
        page.wait_for_function(RUN_DONE, arg=mark, timeout=timeout_ms, polling="raf")
    except PlaywrightTimeout as timeout:
        raise PlaywrightTimeout(f"{timeout}\n{_not_done(page, mark)}") from None
    return time.perf_counter() - started


def _not_done(page, mark: list[int]) -> str:
    """Why a run is not seen done: the script states and websocket frames since ``mark``, and what is
    still stale."""
    runs = page.evaluate("(mark) => window.__runs.slice(mark)", mark[0])
    stale = page.evaluate(
        """() => [...document.querySelectorAll('[data-stale="true"]')].slice(0, 5).map(
             (e) => (e.getAttribute('data-testid') || e.tagName) + ': ' + e.innerText.slice(0, 80))"""
    )
    frames = page.evaluate(
        "(mark) => window.__frames.slice(mark).map((f) => f.way === 'out' ? 'sent' : f.kind)", mark[1]
    )
    kinds = {kind: frames.count(kind) for kind in dict.fromkeys(frames)}
    return (
        f"script states since the action: {runs[-12:]} ({len(runs)}); still stale: {stale}; "
        f"websocket frames since it: {kinds} (a rerun is asked for in one sent)"
    )


def table_rows(page, nth: int = 0, *, showing: str = "", timeout_ms: float = 30_000) -> list[list[str]]:
    """The header and the rendered rows of the ``nth`` dataframe, read from its accessible table,
    once the grid has drawn a row (and, if given, a cell or header with the text ``showing``)."""
    page.wait_for_function(
        """([nth, showing]) => {
          const frame = document.querySelectorAll('[data-testid="stDataFrame"]')[nth];
          if (!frame || frame.querySelectorAll('table tr td').length === 0) return false;
          return !showing || [...frame.querySelectorAll('th,td')].some((c) => c.textContent === showing);
        }""",
        arg=[nth, showing],
        timeout=timeout_ms,
    )
    return page.evaluate(
        """(nth) => {
          const frame = document.querySelectorAll('[data-testid="stDataFrame"]')[nth];
          return [...frame.querySelectorAll('table tr')].map(
              (tr) => [...tr.querySelectorAll('th,td')].map((cell) => cell.textContent));
        }""",
        nth,
    )
