"""Languages over REST: every answer says its language, ETags name it, problems speak it
(docs/api.md "Languages", docs/decisions.md "ETags and languages")."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from service.api.openapi import build_openapi
from service.games.ny1901.codes import REFUSALS
from service.i18n import render
from tests.i18n.conftest import create

CS = {"Accept-Language": "cs-CZ,cs;q=0.9,en;q=0.5"}
IDENTITY = {"Accept-Encoding": "identity"}
"""Uncompressed: a compressed answer's tag also names its coding (docs/api.md)."""
DE = {"Accept-Language": "de"}


def vary(answer: object) -> set[str]:
    header = answer.headers.get("vary", "")  # type: ignore[attr-defined]
    return {name.strip().lower() for name in header.split(",") if name.strip()}


@pytest.mark.parametrize(("headers", "query", "lang"), [
    ({}, "", "en"), (CS, "", "cs"), (DE, "", "de"), (CS, "?lang=de", "de"),
    ({"Accept-Language": "fr"}, "", "en"), (DE, "?lang=xx", "en"),
])
def test_every_answer_says_its_language_and_varies_with_accept_language(
    client: TestClient, headers: dict[str, str], query: str, lang: str
) -> None:
    match = create(client, "ny1901")
    sep = "&" if "?" in query else "?"
    answers = [
        client.get(f"/v1/games{query}", headers=headers),
        client.get(f"/v1/games/ny1901{query}", headers=headers),
        client.get(f"{match.url}{query}", headers=headers),
        client.get(f"{match.url}/legal-moves{query}", headers=match.auth(0, **headers)),
        client.get(f"{match.url}/log{query}{sep}after=0", headers=headers),
        client.get(f"/v1/matches/nothing-here{query}", headers=headers),  # 404 problem
        client.get(f"/healthz{query}", headers=headers),
        client.post(f"/v1/matches{query}", json={"game": "ny1901", "players": 9},
                    headers=headers),  # 422 problem
    ]
    for answer in answers:
        assert answer.headers["content-language"] == lang, answer.url
        assert "accept-language" in vary(answer), answer.url
    # Per-seat answers still vary with the credentials.
    assert {"authorization", "accept-language"} <= vary(answers[2])


def test_the_etag_names_the_language_and_304_only_for_the_same_language(
    client: TestClient,
) -> None:
    match = create(client, "ny1901")
    for path in (match.url, f"{match.url}/legal-moves"):
        auth = match.auth(0, **IDENTITY)
        en = client.get(path, headers=auth)
        cs = client.get(path, headers={**auth, **CS})
        de = client.get(f"{path}?lang=de", headers=auth)
        assert (en.headers["etag"], cs.headers["etag"], de.headers["etag"]) == (
            '"0"', '"0;lang=cs"', '"0;lang=de"')
        # Same language: 304 (weak comparison too); another language's tag: a full answer.
        for tag in ('"0;lang=cs"', 'W/"0;lang=cs"', '"1", "0;lang=cs"'):
            again = client.get(path, headers={**auth, **CS, "If-None-Match": tag})
            assert again.status_code == 304, tag
            assert again.headers["etag"] == '"0;lang=cs"'
            assert again.headers["content-language"] == "cs"
        for headers, tag in ((CS, '"0"'), (CS, '"0;lang=de"'), ({}, '"0;lang=cs"'),
                             (DE, '"0;lang=cs"')):
            other = client.get(path, headers={**auth, **headers, "If-None-Match": tag})
            assert other.status_code == 200, (headers, tag)
        assert client.get(path, headers={**auth, "If-None-Match": '"0"'}).status_code == 304


def test_the_catalogue_etag_and_body_follow_the_language(client: TestClient) -> None:
    url = "/v1/games/ginkgopolis?rulesVersion=2"
    answers = {lang: client.get(f"{url}&lang={lang}", headers=IDENTITY)
               for lang in ("en", "cs", "de")}
    tags = {lang: answer.headers["etag"] for lang, answer in answers.items()}
    assert len(set(tags.values())) == 3
    assert tags["cs"].endswith(';lang=cs"') and not tags["en"].endswith(';lang=en"')
    names = {lang: [a["name"] for a in answer.json()["actions"]]
             for lang, answer in answers.items()}
    assert names == {"en": ["Exploit", "Urbanize", "Build up"],
                     "cs": ["Zužitkování", "Urbanizace", "Stavba patra"],
                     "de": ["Nutzen", "Urbanisieren", "Aufstocken"]}
    assert client.get(url, headers={**CS, "If-None-Match": tags["cs"]}).status_code == 304
    assert client.get(url, headers={**CS, "If-None-Match": tags["en"]}).status_code == 200
    assert client.get(url, headers={"If-None-Match": tags["cs"]}).status_code == 200
    unversioned = client.get("/v1/games/ny1901?lang=de")
    assert unversioned.headers["content-location"].endswith("&lang=de")
    ny = client.get("/v1/games/ny1901", headers=CS).json()
    assert [c["name"] for c in ny["actionCards"]] == [
        "Stavitelská horečka", "Výměna trhu", "Přivlastnění půdy"]
    assert [c["name"] for c in ny["characters"]] == [
        c["name"] for c in client.get("/v1/games/ny1901").json()["characters"]]  # names


def test_if_match_pins_the_version_in_any_language(client: TestClient) -> None:
    match = create(client, "ny1901")
    moves = client.get(f"{match.url}/legal-moves", headers=match.auth(0, **CS)).json()
    move = moves["moves"][0]
    stale = client.post(f"{match.url}/actions", json={"action": move},
                        headers=match.auth(0, **CS, **{"If-Match": '"3;lang=cs"'}))
    assert (stale.status_code, stale.json()["code"]) == (412, "precondition_failed")
    assert stale.json()["detail"] == "Partie je ve verzi 0, ne 3."
    # A tag received in Czech pins its version; so does the plain (English) one.
    for version, tag in ((0, '"0;lang=cs"'), (1, '"1"')):
        played = client.post(f"{match.url}/actions", json={"action": move},
                             headers=match.auth(0, **CS, **IDENTITY, **{"If-Match": tag}))
        assert played.status_code == 200, played.text
        assert played.headers["etag"] == f'"{version + 1};lang=cs"'
        assert played.headers["content-language"] == "cs"
        if version == 0:
            move = client.get(f"{match.url}/legal-moves", headers=match.auth(0)).json()[
                "moves"][0]
    weak = client.post(f"{match.url}/actions", json={"action": {"type": "end_turn"}},
                       headers=match.auth(0, **{"If-Match": 'W/"2;lang=cs"'}))
    assert weak.status_code == 412  # If-Match compares strongly


def test_problem_details_speak_the_language(client: TestClient) -> None:
    url = "/v1/matches/nothing-here"
    assert client.get(url).json()["detail"] == "No such match (or it expired)."
    cs = client.get(url, headers=CS).json()
    de = client.get(url, headers=DE).json()
    assert (cs["code"], cs["title"], cs["detail"]) == (
        "match_not_found", "Partie nenalezena", "Taková partie neexistuje (nebo vypršela).")
    assert (de["code"], de["title"], de["detail"]) == (
        "match_not_found", "Partie nicht gefunden",
        "Diese Partie gibt es nicht (oder sie ist abgelaufen).")
    players = client.post("/v1/matches?lang=de", json={"game": "ny1901", "players": 9}).json()
    assert players["detail"] == "New York 1901 ist für 2 bis 4 Spieler, nicht 9."
    match = create(client, "ny1901")
    refused = client.post(f"{match.url}/actions", json={"action": {"type": "end_turn"}},
                          headers=match.auth(1, **CS)).json()
    assert refused["code"] == "not_your_turn" and refused["detail"] == "Místo 1 teď nemůže hrát."


@pytest.mark.parametrize("lang", ["en", "cs", "de"])
def test_a_refused_move_says_the_meaning_of_its_code(client: TestClient, lang: str) -> None:
    match = create(client, "ny1901")
    lot = client.get(f"{match.url}/legal-moves", headers=match.auth(0)).json()["moves"][0]
    assert lot["type"] == "acquire"
    taken = {"type": "acquire", "lot": "zZ"}
    refused = client.post(f"{match.url}/actions?lang={lang}", json={"action": taken},
                          headers=match.auth(0))
    problem = refused.json()
    assert refused.status_code == 422 and problem["code"] == "unknown_lot"
    if lang == "en":
        assert "zZ" in problem["detail"]  # the engine's own, specific words
        assert problem["title"] == "Illegal move"
    else:
        assert problem["detail"] == render(REFUSALS["unknown_lot"].description, lang)
        assert problem["title"] == {"cs": "Neplatný tah", "de": "Ungültiger Zug"}[lang]
    assert problem["detail"] != ""


def test_the_openapi_document_declares_the_languages() -> None:
    document = build_openapi()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            names = {(p["name"], p["in"]) for p in operation["parameters"]}
            assert {("lang", "query"), ("Accept-Language", "header")} <= names, (path, method)
            for status, response in operation["responses"].items():
                assert {"Content-Language", "Vary"} <= set(response["headers"]), (path, status)
    schemas = document["components"]["schemas"]
    assert "texts" in schemas["LegalMoves"]["required"]
    assert "text" in schemas["Ny1901BuildEvent"]["required"]
    assert "text" in schemas["UnknownEvent"]["required"]
