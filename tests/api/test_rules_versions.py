"""Rules versions: a match is played under the rules version it was set up with, for its
whole life, and a stored match whose version this build does not have is refused with a
clear problem -- never replayed under other rules, never a 500."""

from __future__ import annotations

from dataclasses import replace

import pytest
from starlette.testclient import TestClient

from service import games
from service.matches.records import LogRecord, MatchRecord
from service.store import MatchStore
from tests.api.conftest import TOY, Match, create, stored


def test_the_catalogue_lists_each_games_rules_versions(client: TestClient) -> None:
    for info in client.get("/v1/games").json():
        engine = games.get(info["id"])
        assert info["rulesVersions"] == list(engine.rules_versions)
        assert info["currentRulesVersion"] == engine.rules_versions[-1]


def test_a_new_match_gets_the_current_rules_version_and_shows_it(client: TestClient) -> None:
    for game in games.ids():
        match = create(client, game=game, players=games.get(game).min_players + 1
                       if game != TOY else 2)
        current = games.get(game).rules_versions[-1]
        assert client.get(match.url).json()["rulesVersion"] == current
        assert stored(client, match.id)[1].rules_version == current


def test_a_record_stored_before_rules_versions_is_version_1() -> None:
    record = MatchRecord(game=TOY, players=2, options=None, seed=1, tokens=(None, None),
                         state=b"x", log_dict=0)
    old = record.encode()
    assert b'"r"' not in old  # version 1 keeps the header it always had
    assert MatchRecord.decode(old).rules_version == 1
    newer = replace(record, rules_version=2)
    assert MatchRecord.decode(newer.encode()).rules_version == 2


def _store_as(client: TestClient, match: Match, rules_version: int) -> None:
    """Rewrite the stored record as if the match had been set up under ``rules_version``."""
    store: MatchStore = client.app.state.store  # type: ignore[attr-defined]
    version, record = stored(client, match.id)
    changed = replace(record, rules_version=rules_version)
    entry = LogRecord(seat=None, action={"type": "rewritten"}).encode(record.game,
                                                                      record.log_dict)
    assert client.portal is not None
    assert client.portal.call(store.compare_and_set, match.id, version, changed.encode(), entry)


@pytest.mark.parametrize(("rules_version", "status", "code"), [
    (99, 503, "rules_version_unavailable"),  # a newer replica set it up (rolling upgrade)
    (0, 410, "rules_version_retired"),  # this build no longer plays it
])
def test_a_match_under_rules_this_build_lacks_is_refused_everywhere(
    client: TestClient, rules_version: int, status: int, code: str
) -> None:
    match = create(client)
    _store_as(client, match, rules_version)
    answers = [
        client.get(match.url, headers=match.auth(0)),
        client.get(f"{match.url}/legal-moves", headers=match.auth(0)),
        client.get(f"{match.url}/log", headers=match.auth(0)),
        client.get(f"{match.url}/events?after=0", headers=match.auth(0)),
        client.post(f"{match.url}/actions", json={"action": {"type": "pass"}},
                    headers=match.auth(0)),
    ]
    for answer in answers:
        assert answer.status_code == status, answer.text
        assert answer.json()["code"] == code
        assert str(rules_version) in answer.json()["detail"]
        if status == 503:
            assert answer.headers["Retry-After"] == "1"
    assert stored(client, match.id)[0] == 1  # nothing was written


def test_metrics_count_matches_and_moves_per_game_and_rules_version(
    client: TestClient,
) -> None:
    match = create(client)
    assert client.post(f"{match.url}/actions", json={"action": {"type": "pass"}},
                       headers=match.auth(0)).status_code == 200
    text = client.get("/metrics").text
    assert 'skyline_matches_created_total{game="toy",rules_version="1"} 1' in text
    assert 'skyline_actions_total{game="toy",rules_version="1"} 1' in text
