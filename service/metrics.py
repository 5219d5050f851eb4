"""Prometheus metrics in the text exposition format, kept in process (one set per replica).

Hand-written to avoid a dependency: counters and one latency histogram are all we need.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def _labels(**labels: str) -> str:
    inner = ",".join(
        f'{k}="{v.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
        for k, v in sorted(labels.items())
    )
    return "{" + inner + "}"


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: dict[tuple[str, str, int], int] = defaultdict(int)
        self.latency_buckets: dict[str, list[int]] = {}
        self.latency_sum: dict[str, float] = defaultdict(float)
        self.latency_count: dict[str, int] = defaultdict(int)
        self.cas_conflicts = 0
        self.actions: dict[tuple[str, int], int] = defaultdict(int)
        self.matches_created: dict[tuple[str, int], int] = defaultdict(int)
        #: Figures read at each scrape (the live side: watchers, pub/sub, deliveries ...):
        #: (name, type, help, labels, value); set by the composition root.
        self.live: Callable[[], list[tuple[str, str, str, dict[str, str], float]]] | None = None

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        with self._lock:
            self.requests[(method, route, status)] += 1
            buckets = self.latency_buckets.setdefault(route, [0] * len(LATENCY_BUCKETS))
            for index, bound in enumerate(LATENCY_BUCKETS):
                if seconds <= bound:
                    buckets[index] += 1
            self.latency_sum[route] += seconds
            self.latency_count[route] += 1

    def cas_conflict(self) -> None:
        with self._lock:
            self.cas_conflicts += 1

    def action(self, game: str, rules_version: int) -> None:
        with self._lock:
            self.actions[(game, rules_version)] += 1

    def match_created(self, game: str, rules_version: int) -> None:
        with self._lock:
            self.matches_created[(game, rules_version)] += 1

    def render(self) -> str:
        with self._lock:
            lines = [
                "# HELP skyline_http_requests_total HTTP requests by method, route and status.",
                "# TYPE skyline_http_requests_total counter",
            ]
            for (method, route, status), count in sorted(self.requests.items()):
                labels = _labels(method=method, route=route, status=str(status))
                lines.append(f"skyline_http_requests_total{labels} {count}")
            lines += [
                "# HELP skyline_http_request_duration_seconds Request latency by route.",
                "# TYPE skyline_http_request_duration_seconds histogram",
            ]
            for route, buckets in sorted(self.latency_buckets.items()):
                for bound, count in zip(LATENCY_BUCKETS, buckets, strict=True):
                    labels = _labels(route=route, le=repr(bound))
                    lines.append(f"skyline_http_request_duration_seconds_bucket{labels} {count}")
                labels = _labels(route=route, le="+Inf")
                total = self.latency_count[route]
                lines.append(f"skyline_http_request_duration_seconds_bucket{labels} {total}")
                plain = _labels(route=route)
                lines.append(
                    f"skyline_http_request_duration_seconds_sum{plain} {self.latency_sum[route]}"
                )
                lines.append(f"skyline_http_request_duration_seconds_count{plain} {total}")
            lines += [
                "# HELP skyline_cas_conflicts_total Compare-and-set writes that lost a race.",
                "# TYPE skyline_cas_conflicts_total counter",
                f"skyline_cas_conflicts_total {self.cas_conflicts}",
                "# HELP skyline_actions_total Actions applied, by game and rules version (a "
                "version whose count stops growing on every replica has no match in play).",
                "# TYPE skyline_actions_total counter",
            ]
            for (game, version), count in sorted(self.actions.items()):
                labels = _labels(game=game, rules_version=str(version))
                lines.append(f"skyline_actions_total{labels} {count}")
            lines += [
                "# HELP skyline_matches_created_total Matches created, by game and rules "
                "version.",
                "# TYPE skyline_matches_created_total counter",
            ]
            for (game, version), count in sorted(self.matches_created.items()):
                labels = _labels(game=game, rules_version=str(version))
                lines.append(f"skyline_matches_created_total{labels} {count}")
        lines += self._render_live()
        return "\n".join(lines) + "\n"

    def _render_live(self) -> list[str]:
        if self.live is None:
            return []
        lines: list[str] = []
        seen: set[str] = set()
        for name, kind, text, labels, value in self.live():
            if name not in seen:
                seen.add(name)
                lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
            rendered = _labels(**labels) if labels else ""
            lines.append(f"{name}{rendered} {int(value) if value.is_integer() else value}")
        return lines
