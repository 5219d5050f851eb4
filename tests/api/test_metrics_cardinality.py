"""``/metrics`` stays bounded whatever clients send (issue 20, item 6): only known HTTP
methods and route templates become labels; any other method is ``other`` and every path
no route matches is one ``unmatched`` label."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from service.api.middleware import KNOWN_METHODS

SERIES = re.compile(r"^(skyline_http_request\w*)(\{[^}]*\})? ", re.MULTILINE)


def _series(body: str) -> set[str]:
    """The HTTP series of a scrape: metric name and labels."""
    return {match.group(1) + (match.group(2) or "") for match in SERIES.finditer(body)}


def _labels(body: str, name: str) -> set[str]:
    return set(re.findall(rf'{name}="([^"]*)"', body))


def test_junk_methods_and_paths_do_not_grow_the_metrics(client: TestClient) -> None:
    client.get("/v1/games")
    client.get("/v1/matches/nosuchmatch")
    client.get("/metrics")  # the scrape's own series exist before the count
    before = _series(client.get("/metrics").text)
    for index in range(600):
        # A distinct method on a known route, on an unknown path, and a known method on an
        # unknown path: 1,800 distinct requests.
        client.request(f"JUNK{index}", "/v1/games")
        client.request(f"X-{index}", f"/nowhere/{index}")
        client.get(f"/v1/nowhere/{index}/{'a' * (index % 50)}")
    body = client.get("/metrics").text
    after = _series(body)
    # A handful of new series (the 'other' method and the 'unmatched' route, by status),
    # not one per request.
    assert len(after - before) <= 40, sorted(after - before)[:30]
    assert _labels(body, "method") <= KNOWN_METHODS | {"other"}
    assert "other" in _labels(body, "method")
    routes = _labels(body, "route")
    assert "unmatched" in routes
    assert not any(route.startswith("/nowhere") or "JUNK" in route for route in routes)
    assert len(body) < 64 * 1024  # was about 2 KB per junk method


def test_known_methods_and_templates_are_still_labels(client: TestClient) -> None:
    client.get("/v1/matches/abc")
    client.options("/v1/games")
    body = client.get("/metrics").text
    assert 'method="GET",route="/v1/matches/{match_id}",status="404"' in body
    assert 'method="OPTIONS"' in body
