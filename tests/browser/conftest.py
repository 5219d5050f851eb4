"""Browser fixtures: Debian's Chromium driven by Playwright, and a real ``skyline serve``.

- ``chromium_path`` (session): ``$SKYLINE_CHROMIUM``, else ``/usr/bin/chromium`` (or another
  chromium on PATH); when none is installed and we run as root with apt-get (as CI does), it
  installs Debian's ``chromium`` package. Otherwise the test fails and says how to install it.
  Playwright's own browser download (``playwright install``) is never used.
- ``server`` (session): ``skyline serve`` on a free port with the embedded store; stopped at
  the end of the session.
- ``browser`` (module) and ``page`` (function): headless Chromium and a fresh page.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.slow import starts_processes

ROOT = Path(__file__).resolve().parents[2]
# The committed screenshots (linked from the README) are rewritten only on request
# (`make screenshots`, which sets SKYLINE_UPDATE_SCREENSHOTS=1): match ids differ on every
# run, so rewriting them on every `make test` would leave the tree dirty. Otherwise the same
# screenshots are taken into a scratch folder, so the capture is exercised on every run.
SCREENSHOTS = (
    ROOT / "docs" / "screenshots"
    if os.environ.get("SKYLINE_UPDATE_SCREENSHOTS") == "1"
    else Path(tempfile.gettempdir()) / "skyline-screenshots"
)
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

_HOW_TO = (
    "The browser tests need Debian's Chromium. Install it with "
    "`apt-get update && apt-get install -y chromium` (as root), or point SKYLINE_CHROMIUM at "
    "a Chromium/Chrome binary."
)


def _find_chromium() -> str | None:
    explicit = os.environ.get("SKYLINE_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).exists() else None
    for candidate in ("/usr/bin/chromium", "/usr/bin/chromium-browser"):
        if Path(candidate).exists():
            return candidate
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _install_chromium() -> str:
    if os.name != "posix" or os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.fail(f"Chromium not found and cannot be installed here (not root with apt-get). "
                    f"{_HOW_TO}", pytrace=False)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update"], ["apt-get", "install", "-y", "chromium"]):
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            pytest.fail(f"`{' '.join(command)}` failed ({done.returncode}): "
                        f"{done.stderr.strip()[-800:]}\n{_HOW_TO}", pytrace=False)
    found = _find_chromium()
    if found is None:
        pytest.fail(f"apt-get installed chromium but no binary was found. {_HOW_TO}",
                    pytrace=False)
    return found


@pytest.fixture(scope="session")
def chromium_path() -> str:
    found = _find_chromium()
    return found if found is not None else _install_chromium()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="session")
@starts_processes
def server() -> Iterator[str]:
    """Base URL of a ``skyline serve`` process (embedded store) for this session."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--host", "127.0.0.1", "--port",
             str(port), "--log-level", "warning", "--data-dir", ":memory:"],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
            env={k: v for k, v in os.environ.items() if not k.startswith("SKYLINE_")},
        )
        try:
            _wait_healthy(process, base, log)
            yield base
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_healthy(process: subprocess.Popen[bytes], base: str, log: Any) -> None:
    # A deadline, not a count: under a loaded CI machine each attempt may take a while.
    deadline = time.monotonic() + 90
    last_error = "no attempt"
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            pytest.fail("skyline serve exited: " + log.read().decode(errors="replace"),
                        pytrace=False)
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2) as answer:
                if answer.status == 200:
                    return
                last_error = f"HTTP {answer.status}"
        except OSError as error:
            last_error = repr(error)
            time.sleep(0.2)
    log.seek(0)
    pytest.fail(f"skyline serve did not answer {base}/healthz within 90 s (last: {last_error});"
                f" its output:\n{log.read().decode(errors='replace')[-3000:]}", pytrace=False)


@pytest.fixture(scope="module")
@starts_processes
def browser(chromium_path: str) -> Iterator[Any]:
    """Headless Chromium for one module. Not session-wide: Playwright's sync API keeps an
    event loop running while it is started, which would break ``asyncio.run`` and async
    tests that run later in the same process."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("The browser tests need the `playwright` Python package: "
                    "`pip install -e '.[dev]'` (never `playwright install`: the tests use "
                    "Debian's Chromium).", pytrace=False)
    # Playwright starts Chromium with a new, empty temporary profile (--user-data-dir) and
    # removes it on close.
    with sync_playwright() as driver:
        launched = driver.chromium.launch(
            executable_path=chromium_path, headless=True, args=CHROMIUM_FLAGS
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.js_errors = errors  # type: ignore[attr-defined]
    try:
        yield page
    finally:
        context.close()
