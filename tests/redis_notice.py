"""Printed by `make test` before the suite: says whether Redis is reachable and what happens.

Store, integration and end-to-end tests use a real Redis: $SKYLINE_TEST_REDIS_URL, else
redis://127.0.0.1:6379. When none answers, the tests start their own `redis-server` if one is
installed, and otherwise fail with an instruction -- they never pass by skipping.
"""

from __future__ import annotations

import os
import shutil
import socket
from urllib.parse import urlparse


def main() -> None:
    url = os.environ.get("SKYLINE_TEST_REDIS_URL", "redis://127.0.0.1:6379")
    parsed = urlparse(url)
    host, port = parsed.hostname or "127.0.0.1", parsed.port or 6379
    try:
        with socket.create_connection((host, port), timeout=1):
            print(f"Redis: reachable at {host}:{port}; store tests run against it.")
            return
    except OSError:
        pass
    server = shutil.which("redis-server")
    if server:
        print(f"Redis: NOT reachable at {host}:{port}; tests will start {server} on a free port.")
    else:
        print(
            f"Redis: NOT reachable at {host}:{port} and no redis-server is installed.\n"
            "  Tests that need Redis will FAIL. Install it (Debian/Ubuntu: apt-get install "
            "redis-server; macOS: brew install redis) or set SKYLINE_TEST_REDIS_URL."
        )


if __name__ == "__main__":
    main()
