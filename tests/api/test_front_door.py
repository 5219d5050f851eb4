"""``GET /``, the server's own address (issue 30 item 9): not a 404 problem but a way in --
a page leading a person to ``/play`` and the API, and the same links as JSON for a program;
every link leads somewhere."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from tests.api.conftest import make_app


def test_a_browser_gets_a_page_that_leads_to_play_and_the_api() -> None:
    client = TestClient(make_app())
    page = client.get("/", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "Accept" in page.headers["vary"]
    links = re.findall(r'href="([^"]+)"', page.text)
    assert links[0] == "/play/"
    assert {"/openapi.json", "/graphql", "/v1/games"} <= set(links)
    assert "docs/api.md" in page.text
    for link in links:
        answer = client.get(link, headers={"Accept": "text/html"})
        assert answer.status_code == 200, (link, answer.status_code)
    assert client.head("/").status_code == 200


def test_a_program_gets_the_links_as_json() -> None:
    client = TestClient(make_app())
    answer = client.get("/", headers={"Accept": "application/json"})
    assert answer.status_code == 200
    body = answer.json()
    assert body["links"]["play"]["href"] == "/play/"
    assert body["links"]["openapi"]["href"] == "/openapi.json"
    for link in body["links"].values():
        assert client.get(link["href"]).status_code in (200, 405), link  # /graphql: 405 GET
    assert "docs/api.md" in body["docs"]
    # Still a problem for a path that is nothing.
    assert client.get("/nothing-here").status_code == 404
