"""Verifiable seeds (issue 20, item 8): a drawn seed is committed to at the start and revealed
at the end, never before; a chosen seed is said (``seedChosen``) and refused when other players
sit in the match; ``skyline verify`` and the third-party recipe check a match."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import logging
import random
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from service import cli, games
from service.games.base import dump_action
from service.matches import MatchService
from service.matches.models import CreateMatchRequest
from service.matches.records import LogRecord, MatchRecord
from service.matches.replay import initial_state, replay_step
from service.store import DEFAULT_FILENAME, open_store
from tests.api.conftest import Match, bearer, make_app, stored

ROOT = Path(__file__).resolve().parents[2]
SPECTATOR: dict[str, str] = {}


def _commitment(seed: int, salt: bytes) -> str:
    return hashlib.sha256(salt + seed.to_bytes(8, "big")).hexdigest()


def _drawn(client: TestClient, game: str = "toy", players: int = 2) -> Match:
    answer = client.post("/v1/matches", json={"game": game, "players": players})
    assert answer.status_code == 201, answer.text
    body = answer.json()
    return Match(body["matchId"], game, {s["seat"]: s["token"] for s in body["seats"]},
                 players)


# -- a drawn seed: committed at the start, revealed at the end, never before ------------------


def _everything(client: TestClient, match: Match, headers: dict[str, str]) -> str:
    """Every answer (bodies and headers) a caller gets about the match, errors included."""
    url = match.url
    answers = [
        client.get(url, headers=headers),
        client.get(url, headers={**headers, "If-None-Match": '"0"'}),
        client.get(f"{url}/legal-moves", headers=headers),
        client.get(f"{url}/log", headers=headers),
        client.get(f"{url}/log?after=1&limit=1", headers=headers),
        client.get(f"{url}/log?after=x", headers=headers),  # 400
        client.get(f"{url}/log?after=99999", headers=headers),  # 400
        client.get(f"{url}/events", headers=headers),  # ends after sse_max_seconds
        client.get(f"{url}/board.svg", headers=headers),
        client.post(f"{url}/actions", headers=headers, json={"action": {"type": "nope"}}),
        client.post(f"{url}/actions", headers=headers,
                    json={"action": {"type": "draw"}, "expectedVersion": 99999}),
        client.post("/graphql", headers=headers, json={
            "query": "query($id: ID!) { match(id: $id) { ... on MatchState { version seed "
                     "seedSalt seedChosen seedCommitment } ... on Problem { code message } } "
                     "log(matchId: $id) { ... on LogPage { latestVersion } } }",
            "variables": {"id": match.id}}),
    ]
    return "\n".join(f"{a.status_code} {dict(a.headers)} {a.text}" for a in answers)


def test_a_drawn_seed_is_committed_at_the_start_and_revealed_only_at_the_end(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    with TestClient(make_app(sse_max_seconds=0.05)) as client:
        match = _drawn(client)
        _, record = stored(client, match.id)
        assert record.seed_chosen is False and record.seed_salt is not None
        assert len(record.seed_salt) == 16 and 0 <= record.seed < 2**53
        salt_hex = record.seed_salt.hex()
        secrets_ = [str(record.seed), salt_hex, salt_hex.upper(),
                    record.seed.to_bytes(8, "big").hex()]
        start = client.get(match.url).json()
        commitment = start["seedCommitment"]
        assert commitment == _commitment(record.seed, record.seed_salt)
        assert start["seedChosen"] is False
        assert start["seed"] is None and start["seedSalt"] is None
        callers = {None: SPECTATOR, **{s: match.auth(s) for s in match.tokens}}
        chooser = random.Random(5)
        while True:
            for seat, headers in callers.items():
                seen = _everything(client, match, headers)
                for secret in secrets_:
                    assert secret not in seen, (seat, secret)
            state = client.get(match.url, headers=match.auth(0)).json()
            assert state["seedCommitment"] == commitment
            seat = chooser.choice(state["activeSeats"])
            moves = client.get(f"{match.url}/legal-moves", headers=match.auth(seat)).json()
            answer = client.post(f"{match.url}/actions", headers=match.auth(seat),
                                 json={"action": chooser.choice(moves["moves"])})
            assert answer.status_code == 200, answer.text
            if answer.json()["state"]["status"] == "finished":
                assert answer.json()["state"]["seed"] == record.seed  # the act's answer too
                break
            # ... but no act answer before the end names them
            for secret in secrets_:
                assert secret not in answer.text
        for record_ in caplog.records:
            for secret in secrets_:
                assert secret not in record_.getMessage()
        for headers in callers.values():
            end = client.get(match.url, headers=headers).json()
            assert end["status"] == "finished"
            assert (end["seed"], end["seedSalt"]) == (record.seed, salt_hex)
            assert end["seedCommitment"] == commitment == _commitment(
                end["seed"], bytes.fromhex(end["seedSalt"]))
            # Every move is shown once the match is finished: enough to replay it.
            log = client.get(f"{match.url}/log", headers=headers).json()["entries"]
            assert all(entry["action"] is not None for entry in log)
        graphql = client.post("/graphql", json={
            "query": "query($id: ID!) { match(id: $id) { ... on MatchState { seed seedSalt "
                     "seedChosen seedCommitment options { __typename } } } }",
            "variables": {"id": match.id}}).json()["data"]["match"]
        assert graphql == {"seed": str(record.seed), "seedSalt": salt_hex,
                           "seedChosen": False, "seedCommitment": commitment,
                           "options": None}


def test_every_view_shows_the_options_a_replay_needs(client: TestClient) -> None:
    answer = client.post("/v1/matches", json={"game": "ny1901", "players": 2,
                                              "options": {"expert": True}})
    assert answer.status_code == 201, answer.text
    match_id = answer.json()["matchId"]
    options = client.get(f"/v1/matches/{match_id}").json()["options"]
    assert options == {"expert": True, "challenge": "random", "streets": None}
    graphql = client.post("/graphql", json={
        "query": "query($id: ID!) { match(id: $id) { ... on MatchState { options { "
                 "__typename ... on Ny1901Options { expert challenge streets } } } } }",
        "variables": {"id": match_id}}).json()
    assert graphql["data"]["match"]["options"] == {
        "__typename": "Ny1901Options", "expert": True, "challenge": "random", "streets": None}


def test_moves_of_other_seats_stay_hidden_while_the_match_is_played(client: TestClient
                                                                   ) -> None:
    match = _drawn(client)
    assert client.post(f"{match.url}/actions", headers=match.auth(0),
                       json={"action": {"type": "draw"}}).status_code == 200
    for headers in (match.auth(1), SPECTATOR):
        (entry,) = client.get(f"{match.url}/log", headers=headers).json()["entries"]
        assert entry["action"] is None
    (own,) = client.get(f"{match.url}/log", headers=match.auth(0)).json()["entries"]
    assert own["action"] == {"type": "draw"}


# -- chosen seeds --------------------------------------------------------------------------


def _app_key(client: TestClient) -> str:
    players = client.app.state.player_service  # type: ignore[attr-defined]

    async def add() -> str:
        _, key = await players.apps.add("Seeds")
        return str(key)

    return str(client.portal.call(add))  # type: ignore[union-attr]


def _guest(client: TestClient, name: str) -> tuple[str, dict[str, str]]:
    answer = client.post("/v1/players", json={"name": name})
    assert answer.status_code == 201, answer.text
    return answer.json()["id"], bearer(answer.json()["token"])


def test_a_chosen_seed_is_refused_when_other_players_sit_in_the_match(client: TestClient
                                                                     ) -> None:
    key = bearer(_app_key(client))
    for seats in ([{"user": "u-1"}, {"user": "u-2"}], [{"user": "u-3"}, {"bot": "random"}]):
        answer = client.post("/v1/matches", headers=key,
                             json={"game": "toy", "seats": seats, "seed": 7})
        assert answer.status_code == 400, answer.text
        assert answer.json()["code"] == "seed_not_allowed"
        assert answer.headers["content-type"].startswith("application/problem+json")
        # Without a seed the same match is created, its seed drawn and committed to.
        made = client.post("/v1/matches", headers=key, json={"game": "toy", "seats": seats})
        assert made.status_code == 201, made.text
        state = client.get(f"/v1/matches/{made.json()['matchId']}").json()
        assert state["seedChosen"] is False and len(state["seedCommitment"]) == 64
    graphql = client.post("/graphql", headers=key, json={
        "query": 'mutation { createMatch(game: "toy", seed: 7, seats: [{user: "u-1"}, '
                 '{user: "u-2"}]) { __typename ... on Problem { code } } }'}).json()
    assert graphql["data"]["createMatch"] == {"__typename": "BadRequest",
                                              "code": "seed_not_allowed"}


def test_a_chosen_seed_is_the_creators_own_when_nobody_else_sits_there(client: TestClient
                                                                      ) -> None:
    alice, auth = _guest(client, "Alice")
    alone = client.post("/v1/matches", headers=auth, json={
        "game": "toy", "seed": 7, "seats": [{"player": alice}, {"bot": "random"}]})
    assert alone.status_code == 201, alone.text
    anonymous = client.post("/v1/matches", json={"game": "toy", "players": 2, "seed": 7})
    assert anonymous.status_code == 201, anonymous.text
    for created in (alone, anonymous):
        state = client.get(f"/v1/matches/{created.json()['matchId']}").json()
        assert state["seedChosen"] is True
        assert state["seedCommitment"] is None and state["seed"] is None
    mine = client.get("/v1/me/matches", headers=auth).json()["items"]
    assert [item["seedChosen"] for item in mine] == [True]


def test_the_deployment_may_allow_chosen_seeds() -> None:
    with TestClient(make_app(allow_chosen_seeds=True)) as client:
        key = bearer(_app_key(client))
        answer = client.post("/v1/matches", headers=key, json={
            "game": "toy", "seed": 7, "seats": [{"user": "u-1"}, {"user": "u-2"}]})
        assert answer.status_code == 201, answer.text
        state = client.get(f"/v1/matches/{answer.json()['matchId']}").json()
        assert state["seedChosen"] is True and state["seedCommitment"] is None


def test_the_serve_flag_and_its_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli.build_parser().parse_args(["serve"]).allow_chosen_seeds is False
    assert cli.build_parser().parse_args(
        ["serve", "--allow-chosen-seeds"]).allow_chosen_seeds is True
    monkeypatch.setenv("SKYLINE_ALLOW_CHOSEN_SEEDS", "1")
    assert cli.build_parser().parse_args(["serve"]).allow_chosen_seeds is True


# -- skyline verify ------------------------------------------------------------------------


async def _play_drawn(data_dir: Path, game: str = "ny1901", players: int = 2) -> str:
    """A finished match with a drawn seed, in the embedded store in ``data_dir``."""
    store = open_store(None, None, data_dir=str(data_dir))
    service = MatchService(store, ttl_finished=None, ttl_idle=None)
    created = await service.create_match(CreateMatchRequest(game=game, players=players))
    tokens = {s.seat: s.token for s in created.seats}
    engine = games.get(game)
    chooser = random.Random(3)
    while (state := await service.get_state(created.match_id, None)).status != "finished":
        seat = chooser.choice(state.active_seats)
        moves = (await service.legal_moves(created.match_id, tokens[seat])).moves
        await service.act(created.match_id, tokens[seat],
                          dump_action(engine, chooser.choice(moves)), None, None)
    await store.close()
    return created.match_id


def _verify(data_dir: Path, match_id: str, *extra: str,
            capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli.main(["verify", match_id, "--data-dir", str(data_dir), *extra])
    return code, capsys.readouterr().out


def _database(data_dir: Path) -> sqlite3.Connection:
    return sqlite3.connect(data_dir / DEFAULT_FILENAME)


def _record(data_dir: Path, match_id: str) -> MatchRecord:
    with _database(data_dir) as db:
        (data,) = db.execute("SELECT record FROM matches WHERE id = ?", (match_id,)).fetchone()
    return MatchRecord.decode(data)


def _rewrite(data_dir: Path, match_id: str, record: MatchRecord) -> None:
    with _database(data_dir) as db:
        db.execute("UPDATE matches SET record = ? WHERE id = ?", (record.encode(), match_id))


def test_verify_passes_on_an_honest_match(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    match_id = asyncio.run(_play_drawn(tmp_path))
    record = _record(tmp_path, match_id)
    assert record.seed_salt is not None
    published = _commitment(record.seed, record.seed_salt)
    code, out = _verify(tmp_path, match_id, "--commitment", published, capsys=capsys)
    assert code == 0, out
    assert f"{published} = sha256(salt ‖ seed) of the stored salt and seed: equal to the " \
        "commitment given" in out
    assert f"seed: {record.seed}, salt: {record.seed_salt.hex()}" in out
    assert "verdict: OK" in out and "MISMATCH" not in out


def test_verify_fails_on_a_seed_changed_after_the_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    match_id = asyncio.run(_play_drawn(tmp_path))
    honest = _record(tmp_path, match_id)
    assert honest.seed_salt is not None
    published = _commitment(honest.seed, honest.seed_salt)
    # Another seed whose draws replay the same log is the tamperer's dream: the published
    # commitment still catches it, and the replay catches this one.
    _rewrite(tmp_path, match_id, replace(honest, seed=honest.seed ^ 1))
    code, out = _verify(tmp_path, match_id, "--commitment", published, capsys=capsys)
    assert code == 1, out
    assert "the seed changed after the match started" in out
    assert "verdict: FAILED" in out
    code, out = _verify(tmp_path, match_id, capsys=capsys)  # no noted commitment: the replay
    assert code == 1 and "MISMATCH:" in out and "verdict: FAILED" in out


def test_verify_fails_on_a_move_changed_in_the_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    match_id = asyncio.run(_play_drawn(tmp_path))
    record = _record(tmp_path, match_id)
    engine: Any = games.get(record.game)
    with _database(tmp_path) as db:
        rows = db.execute("SELECT version, data FROM log WHERE match_id = ? ORDER BY version",
                          (match_id,)).fetchall()
    # Replace the first move that had another legal choice by that other (legal) move.
    state = initial_state(engine, record)
    for version, data in rows:
        logged = LogRecord.decode(record.game, record.log_dict, data)
        assert logged.seat is not None
        legal = [dump_action(engine, a) for a in engine.legal_actions(state, logged.seat)]
        others = [a for a in legal if a != logged.action]
        if others:
            forged = replace(logged, action=others[0]).encode(record.game, record.log_dict)
            with _database(tmp_path) as db:
                db.execute("UPDATE log SET data = ? WHERE match_id = ? AND version = ?",
                           (forged, match_id, version))
            break
        state, _ = replay_step(engine, state, logged)
    else:
        pytest.fail("no move had an alternative")
    code, out = _verify(tmp_path, match_id, capsys=capsys)
    assert code == 1, out
    assert "MISMATCH" in out and "verdict: FAILED" in out


def test_verify_says_no_commitment_for_an_older_match(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    match_id = asyncio.run(_play_drawn(tmp_path))
    _rewrite(tmp_path, match_id,
             replace(_record(tmp_path, match_id), seed_salt=None, seed_chosen=None))
    code, out = _verify(tmp_path, match_id, capsys=capsys)
    assert code == 0, out
    assert "no commitment (the match was stored before seeds were committed to)" in out
    assert "verdict: OK" in out and "nothing shows the seed was drawn" in out
    code, out = _verify(tmp_path, "nosuchmatch", capsys=capsys)
    assert code == 2


# -- the third party's recipe (tools/verify_match.py) ---------------------------------------


def _tool() -> Any:
    spec = importlib.util.spec_from_file_location("verify_match",
                                                  ROOT / "tools" / "verify_match.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("game", "players"), [("ny1901", 3), ("ginkgopolis", 2)])
def test_a_third_party_verifies_a_match_with_the_public_api_only(game: str, players: int
                                                                 ) -> None:
    tool = _tool()
    with TestClient(make_app()) as client:
        match = _drawn(client, game, players)
        noted = client.get(match.url).json()["seedCommitment"]
        with pytest.raises(tool.Unverifiable, match="not finished"):
            tool.verify(lambda path: client.get(path).json(), match.id, noted)
        chooser = random.Random(9)
        while (state := client.get(match.url).json())["status"] != "finished":
            seat = chooser.choice(state["activeSeats"])
            moves = client.get(f"{match.url}/legal-moves", headers=match.auth(seat)).json()
            answer = client.post(f"{match.url}/actions", headers=match.auth(seat),
                                 json={"action": chooser.choice(moves["moves"])})
            assert answer.status_code == 200, answer.text

        def get(path: str) -> Any:  # a spectator: no token at all
            answer = client.get(path)
            assert answer.status_code == 200, answer.text
            return answer.json()

        assert tool.verify(get, match.id, noted) == []
        assert tool.verify(get, match.id, "00" * 32) == [
            "the commitment published now is not the one noted at the start"]

        def lying(path: str) -> Any:  # a server that reveals another seed than it used
            body = get(path)
            if "seed" in body:
                body["seed"] ^= 1
            return body

        found = tool.verify(lying, match.id, noted)
        assert found[0] == "sha256(seedSalt ‖ seed) is not the published seedCommitment"
        assert len(found) > 1  # and the replay from that seed disagrees with the log
