"""``python -m bench`` (``make bench``): every benchmark in turn, each in its own process.

``--quick`` passes ``--quick`` to the load benchmark (1-2 minutes instead of about 4), to
the fan-out benchmark (small sizes: about 5 minutes instead of about 15), to the players
benchmark (100 players instead of 1,000), to the soak test (about 1 minute of traffic
instead of 5), to the clock benchmark (1,000 matches instead of 10,000; about 1.5 minutes
either way: the deadlines spread over 60 s), to the webhook benchmark (500 events, a 15 s
retry watch), to the isolation benchmark (20 pings, 8 connections) and to the spectator
benchmark (500 spectators, 10 moves).
Results go to stdout; docs/performance.md records them with the machine's state.
"""

from __future__ import annotations

import subprocess
import sys
import time

BENCHES = ("ny1901", "ginkgopolis", "rules_versions", "store", "bot_pool", "load", "fanout",
           "players", "soak", "clocks", "webhooks", "isolation", "hardening", "replays",
           "spectators")
# the benches that take --quick
QUICK = ("load", "fanout", "players", "soak", "clocks", "webhooks", "isolation", "hardening",
         "replays", "spectators")


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    failed = []
    for name in BENCHES:
        extra = ["--quick"] if quick and name in QUICK else []
        print(f"\n== bench.{name} {' '.join(extra)}".rstrip(), flush=True)
        start = time.monotonic()
        code = subprocess.call([sys.executable, "-m", f"bench.{name}", *extra])
        print(f"== bench.{name}: exit {code} after {time.monotonic() - start:.0f} s", flush=True)
        if code:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
