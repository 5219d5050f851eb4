"""Webhook endpoints over REST and GraphQL: the app's key only, the secret shown once, the
refusals as problems with stable codes (never a 500), the URL policy (SSRF) with and without
the operator's allowances, and the OpenAPI document."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from service.api.openapi import build_openapi
from service.webhooks import WebhookSettings
from tests.api.conftest import make_app


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(make_app()) as found:
        yield found


@pytest.fixture(scope="module")
def lenient() -> Iterator[TestClient]:
    """An operator who allows loopback (and http) for webhooks."""
    settings = WebhookSettings(allow_http=True,
                               allow_networks=("127.0.0.0/8", "::1/128", "169.254.0.0/16"))
    with TestClient(make_app(webhooks=settings)) as found:
        yield found


def app_key(client: TestClient) -> dict[str, str]:
    players = client.app.state.player_service  # type: ignore[attr-defined]

    async def add() -> str:
        _, key = await players.apps.add("Hooks")
        return str(key)

    assert client.portal is not None
    return bearer(client.portal.call(add))


def create(client: TestClient, auth: dict[str, str], **body: Any) -> Any:
    return client.post("/v1/apps/me/webhooks", headers=auth,
                       json={"url": "https://hooks.example.invalid/in", "events": ["your_turn"],
                             **body})


def test_crud_and_the_secret_shown_once(client: TestClient) -> None:
    auth = app_key(client)
    made = create(client, auth, warnBeforeSeconds=60)
    assert made.status_code == 201, made.text
    hook = made.json()
    assert hook["secret"].startswith("whsec_") and hook["id"].startswith("we_")
    assert made.headers["location"] == f"/v1/apps/me/webhooks/{hook['id']}"
    assert (hook["enabled"], hook["failures"], hook["warnBeforeSeconds"]) == (True, 0, 60)
    url = f"/v1/apps/me/webhooks/{hook['id']}"
    got = client.get(url, headers=auth).json()
    assert "secret" not in got and got["url"] == "https://hooks.example.invalid/in"
    listed = client.get("/v1/apps/me/webhooks", headers=auth).json()
    assert [h["id"] for h in listed["items"]] == [hook["id"]]
    assert all("secret" not in h for h in listed["items"])
    changed = client.patch(url, headers=auth, json={"events": ["match_finished",
                                                               "timeout_soon"]})
    assert changed.status_code == 200 and changed.json()["events"] == [
        "match_finished", "timeout_soon"]
    assert changed.json()["warnBeforeSeconds"] == 60
    rotated = client.post(f"{url}/rotate-secret", headers=auth).json()
    assert rotated["secret"].startswith("whsec_") and rotated["secret"] != hook["secret"]
    ping = client.post(f"{url}/ping", headers=auth)
    assert ping.status_code == 202 and ping.json()["eventId"].startswith("msg_")
    assert client.post(f"{url}/enable", headers=auth).json()["enabled"] is True
    assert client.get(f"{url}/deliveries", headers=auth).status_code == 200
    assert client.delete(url, headers=auth).status_code == 200
    gone = client.get(url, headers=auth)
    assert (gone.status_code, gone.json()["code"]) == (404, "webhook_not_found")
    assert gone.headers["content-type"] == "application/problem+json"


def code(answer: Any) -> tuple[int, str]:
    return answer.status_code, answer.json()["code"]


def test_refusals_have_stable_codes(client: TestClient) -> None:
    auth = app_key(client)
    assert code(create(client, auth, url="http://hooks.example.invalid/")) == (
        422, "webhook_url_not_https")
    assert code(create(client, auth, url="ftp://x.example/")) == (422, "webhook_url_not_https")
    assert code(create(client, auth, url="https://u:p@x.example/")) == (422, "bad_webhook")
    assert code(create(client, auth, events=["nope"])) == (422, "bad_webhook")
    assert code(create(client, auth, events=[])) == (422, "bad_webhook")
    assert code(create(client, auth, warnBeforeSeconds=5)) == (422, "bad_webhook")
    assert code(create(client, auth, warnBeforeSeconds=8 * 86400)) == (422, "bad_webhook")
    assert code(create(client, auth, secret="mine")) == (400, "malformed")
    for _ in range(10):
        assert create(client, auth).status_code == 201
    assert code(create(client, auth)) == (422, "bad_webhook")  # 11th endpoint
    assert code(client.get("/v1/apps/me/webhooks/we_nope", headers=auth)) == (
        404, "webhook_not_found")
    assert code(client.get("/v1/apps/me/webhooks/we_x/deliveries?cursor=abc",
                           headers=auth)) == (404, "webhook_not_found")
    other = app_key(client)
    mine = client.get("/v1/apps/me/webhooks", headers=auth).json()["items"][0]["id"]
    for method in ("get", "delete"):
        answer = getattr(client, method)(f"/v1/apps/me/webhooks/{mine}", headers=other)
        assert code(answer) == (404, "webhook_not_found")
    bad_cursor = client.get(f"/v1/apps/me/webhooks/{mine}/deliveries?cursor=x",
                            headers=auth)
    assert code(bad_cursor) == (400, "malformed")
    assert code(client.get(f"/v1/apps/me/webhooks/{mine}/deliveries?limit=500",
                           headers=auth)) == (400, "malformed")
    guest = client.post("/v1/players", json={"name": "Guest"}).json()["token"]
    assert code(client.get("/v1/apps/me/webhooks", headers=bearer(guest))) == (
        401, "unauthorized")
    assert code(client.get("/v1/apps/me/webhooks")) == (401, "unauthorized")


INTERNAL = [
    "https://127.0.0.1/in", "https://127.8.9.1:8443/in", "https://10.1.2.3/in",
    "https://192.168.0.1/in", "https://172.16.0.1/", "https://169.254.169.254/latest",
    "https://169.254.1.1/", "https://[::1]/in", "https://[fd00:ec2::254]/",
    "https://[fe80::1]/", "https://[fc00::1]/", "https://[::ffff:127.0.0.1]/",
    "https://224.0.0.1/", "https://0.0.0.0/", "https://240.0.0.1/", "https://localhost/in",
    "https://localhost:9000/in", "https://x.localhost/", "https://100.100.100.200/",
]


@pytest.mark.parametrize("url", INTERNAL)
def test_internal_addresses_are_refused_by_default(client: TestClient, url: str) -> None:
    auth = app_key(client)
    assert code(create(client, auth, url=url)) == (422, "webhook_url_forbidden")


def test_the_operator_may_allow_loopback_but_not_the_metadata_service(
        lenient: TestClient) -> None:
    auth = app_key(lenient)
    for url in ("http://127.0.0.1:9/in", "https://localhost/in", "https://[::1]:8443/"):
        assert create(lenient, auth, url=url).status_code == 201, url
    for url in ("https://10.0.0.1/", "https://169.254.169.254/"):
        assert code(create(lenient, auth, url=url)) == (422, "webhook_url_forbidden")
    made = create(lenient, auth).json()["id"]
    patched = lenient.patch(f"/v1/apps/me/webhooks/{made}", headers=auth,
                            json={"url": "https://10.9.9.9/"})
    assert code(patched) == (422, "webhook_url_forbidden")


CREATE = """mutation($url: String!, $events: [String!]!) {
  createWebhook(url: $url, events: $events) {
    __typename
    ... on WebhookCreated { secret webhook { id url events enabled } }
    ... on Problem { code message }
  }
}"""


def graphql(client: TestClient, auth: dict[str, str], query: str,
            **variables: Any) -> dict[str, Any]:
    answer = client.post("/graphql", headers=auth, json={"query": query,
                                                         "variables": variables})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert "errors" not in body, body
    data: dict[str, Any] = body["data"]
    return data


def test_graphql_operations_answer_as_rest(client: TestClient) -> None:
    auth = app_key(client)
    made = graphql(client, auth, CREATE, url="https://hooks.example.invalid/g",
                   events=["your_turn", "invited"])["createWebhook"]
    assert made["__typename"] == "WebhookCreated" and made["secret"].startswith("whsec_")
    hook = made["webhook"]["id"]
    refused = graphql(client, auth, CREATE, url="https://10.0.0.1/",
                      events=["your_turn"])["createWebhook"]
    assert (refused["__typename"], refused["code"]) == ("BadRequest", "webhook_url_forbidden")
    listed = graphql(client, auth, "{ webhooks { ... on WebhookList { items { id } } } }")
    assert listed["webhooks"]["items"] == [{"id": hook}]
    one = graphql(client, auth, """query($id: ID!) { webhook(id: $id) {
        __typename ... on Webhook { id events } ... on Problem { code } } }""", id="we_zz")
    assert (one["webhook"]["__typename"], one["webhook"]["code"]) == (
        "NotFound", "webhook_not_found")
    ops = graphql(client, auth, """mutation($id: ID!) {
        u: updateWebhook(id: $id, warnBeforeSeconds: 30) { ... on Webhook { warnBeforeSeconds } }
        p: pingWebhook(id: $id) { ... on PingQueued { eventId } }
        e: enableWebhook(id: $id) { ... on Webhook { enabled } }
        r: rotateWebhookSecret(id: $id) { ... on WebhookSecret { secret } }
    }""", id=hook)
    assert ops["u"]["warnBeforeSeconds"] == 30 and ops["p"]["eventId"].startswith("msg_")
    assert ops["e"]["enabled"] is True and ops["r"]["secret"].startswith("whsec_")
    log = graphql(client, auth, """query($id: ID!) { webhookDeliveries(id: $id) {
        ... on WebhookDeliveriesPage { items { eventId } nextCursor } } }""", id=hook)
    assert "items" in log["webhookDeliveries"]
    gone = graphql(client, auth, """mutation($id: ID!) { deleteWebhook(id: $id) {
        __typename } }""", id=hook)
    assert gone["deleteWebhook"]["__typename"] == "Webhook"
    anonymous = graphql(client, {}, "{ webhooks { __typename ... on Problem { code } } }")
    assert anonymous["webhooks"] == {"__typename": "Unauthorized", "code": "unauthorized"}


def test_the_operations_are_published_with_the_app_key() -> None:
    doc = build_openapi()
    operations = {op["operationId"]: op for item in doc["paths"].values()
                  for op in item.values()}
    names = ("listWebhooks", "createWebhook", "getWebhook", "updateWebhook", "deleteWebhook",
             "pingWebhook", "enableWebhook", "rotateWebhookSecret", "listWebhookDeliveries")
    for name in names:
        assert operations[name]["security"] == [{"appKey": []}], name
    created = operations["createWebhook"]["responses"]["201"]
    assert created["content"]["application/json"]["schema"]["$ref"].endswith(
        "/WebhookCreated")
    assert "webhook_url_forbidden" in operations["createWebhook"]["responses"]["422"][
        "x-problem-codes"]
