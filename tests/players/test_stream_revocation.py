"""Issue 20, item 9, for seats bound to players: a match stream re-checks its credential at
every version it is about to send. A seat token stops reading when the seat's token is
renewed (the player recovers or the app rotates it); the player's own credential goes on
reading through a renewal and stops when the seat is handed to a bot or the player leaves
for good. The stream ends with ``Revoked`` before that version (``seat_handed_to_bot`` when a
bot took the seat, else ``credential_revoked``)."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import time
from collections.abc import AsyncGenerator
from typing import Any

import jsonschema_rs
import pytest

from service.api.openapi import build_openapi
from service.errors import ApiError
from service.identity.callers import Caller, Credential
from service.matches import MatchService
from service.matches.watch import LiveEvent, Revoked
from tests.players.conftest import Rig

WAIT = 30.0


def _matches(rig: Rig) -> MatchService:
    service: MatchService = rig.client.app.state.match_service  # type: ignore[attr-defined]
    return service


async def _next(updates: AsyncGenerator[LiveEvent, None]) -> LiveEvent:
    return await asyncio.wait_for(anext(updates), WAIT)


async def _revoked(updates: AsyncGenerator[LiveEvent, None]) -> ApiError:
    with pytest.raises(Revoked) as ended:
        await _next(updates)
    await updates.aclose()
    return ended.value.error


def test_a_renewed_token_ends_the_old_tokens_stream_not_the_players(rig: Rig) -> None:
    alice = rig.guest("Alice")
    match_id = rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])
    first = rig.client.post(f"/v1/matches/{match_id}/seats/0/token",
                            headers=alice.auth).json()["token"]

    async def scenario() -> dict[str, Any]:
        matches, players = _matches(rig), rig.players
        caller: Credential = await players.authenticate(alice.token)
        by_token = matches.follow(match_id, token=first)
        by_player = matches.follow(match_id, token=caller)
        start = [(await _next(by_token)).version, (await _next(by_player)).version]
        renewed = await players.renew_seat_token(caller, match_id, 0)
        token_end = await _revoked(by_token)
        player_next = await _next(by_player)
        second = matches.follow(match_id, token=renewed.token)
        second_first = await _next(second)
        await matches.hand_seat_to_bot(match_id, caller, "random")
        player_end = await _revoked(by_player)
        second_end = await _revoked(second)
        return {"start": start, "token_end": token_end, "player_next": player_next,
                "second_first": second_first, "player_end": player_end,
                "second_end": second_end}

    got = rig.call(scenario)
    assert got["start"][0] == got["start"][1]
    renewal = got["start"][0] + 1
    assert (got["token_end"].code, got["token_end"].status) == ("credential_revoked", 401)
    assert "renewed" in got["token_end"].detail
    # The player's own stream reads the renewal's version as its seat, and goes on.
    assert (got["player_next"].version, got["player_next"].state.seat) == (renewal, 0)
    assert got["second_first"].version == renewal
    for ended in (got["player_end"], got["second_end"]):
        assert ended.code == "seat_handed_to_bot" and "bot" in ended.detail


def test_a_player_leaving_for_good_ends_its_stream(rig: Rig) -> None:
    alice = rig.guest("Alice")
    match_id = rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])

    async def scenario() -> tuple[int, ApiError, int]:
        matches, players = _matches(rig), rig.players
        caller = await players.authenticate(alice.token)
        spectating = matches.follow(match_id)
        updates = matches.follow(match_id, token=caller)
        opened = (await _next(updates)).version
        await _next(spectating)
        await players.delete_me(caller)
        ended = await _revoked(updates)
        renamed = (await _next(spectating)).version  # the spectator's stream goes on
        await spectating.aclose()
        return opened, ended, renamed

    opened, ended, renamed = rig.call(scenario)
    assert ended.code == "credential_revoked" and "left for good" in ended.detail
    assert renamed == opened + 1


def test_the_player_feed_stops_when_its_player_leaves_for_good(rig: Rig) -> None:
    """The feed's credential is the player's: checked again before every event, so nothing
    is delivered once the player is gone (before the fix its own rename, and every later
    event of its matches, still arrived)."""
    alice = rig.guest("Alice")
    rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])

    async def scenario() -> tuple[str, ApiError]:
        players = rig.players
        caller = await players.authenticate(alice.token)
        feed = players.follow_feed(alice.id, 0)
        first = await asyncio.wait_for(anext(feed), WAIT)
        await players.delete_me(caller)
        with pytest.raises(Revoked) as ended:
            await asyncio.wait_for(anext(feed), WAIT)
        await feed.aclose()
        return getattr(first, "kind", ""), ended.value.error

    kind, ended = rig.call(scenario)
    assert kind == "match_started"
    assert (ended.code, ended.status) == ("credential_revoked", 401)


async def test_a_revoked_feed_ends_with_a_revoked_event() -> None:
    from service.api.rest.feed import _encoded
    from service.live import LiveHub
    from service.players.feed import FeedItem, FeedReset
    from service.store import SqliteStore

    async def gone() -> AsyncGenerator[FeedItem | FeedReset, None]:
        yield FeedItem(1, "your_turn", '{"kind":"your_turn","seq":1}')
        raise Revoked(ApiError.of("credential_revoked", "This player left for good."))

    store = SqliteStore(":memory:")
    try:
        wire = [chunk async for chunk in _encoded(gone(), LiveHub(store))]
    finally:
        await store.close()
    assert wire[-1] == b'event: revoked\r\ndata: {"code":"credential_revoked"}\r\n\r\n'
    assert len(wire) == 2
    components = build_openapi()["components"]
    jsonschema_rs.validator_for(
        {"$ref": "#/components/schemas/PlayerStreamEvent", "components": components}
    ).validate({"event": "revoked", "data": '{"code":"credential_revoked"}'})


def test_a_stream_opened_with_a_jwt_ends_when_the_jwt_expires(rig: Rig) -> None:
    """Item 9 for app-signed JWTs: the credential stops being accepted at ``exp`` (plus the
    leeway), so a stream opened with it ends with ``token_expired`` at the next version it
    would send; the same player's stream with a credential still valid goes on. (Before, a
    JWT checked once when the stream opened read the seat for as long as it stayed open.)"""
    alice = rig.guest("Alice")
    match_id = rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])

    async def scenario() -> tuple[ApiError, int, int]:
        matches, players = _matches(rig), rig.players
        caller = await players.authenticate(alice.token)
        assert isinstance(caller, Caller)
        now = int(time.time())
        lapsed = dataclasses.replace(caller, expires_at=now - 1)
        valid = dataclasses.replace(caller, expires_at=now + 3600)
        expiring = matches.follow(match_id, token=lapsed)
        lasting = matches.follow(match_id, token=valid)
        opened = (await _next(expiring)).version
        await _next(lasting)
        await players.renew_seat_token(caller, match_id, 0)  # a new version
        ended = await _revoked(expiring)
        went_on = (await _next(lasting)).version
        await lasting.aclose()
        return ended, opened, went_on

    ended, opened, went_on = rig.call(scenario)
    assert (ended.code, ended.status) == ("token_expired", 401)
    assert went_on == opened + 1


def test_the_player_feed_ends_when_its_jwt_expires(rig: Rig) -> None:
    alice = rig.guest("Alice")
    rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])

    async def scenario() -> tuple[ApiError, str]:
        players = rig.players
        lapsed = players.follow_feed(alice.id, 0, int(time.time()) - 1)
        with pytest.raises(Revoked) as ended:
            await asyncio.wait_for(anext(lapsed), WAIT)
        await lapsed.aclose()
        lasting = players.follow_feed(alice.id, 0, int(time.time()) + 3600)
        first = await asyncio.wait_for(anext(lasting), WAIT)
        await lasting.aclose()
        return ended.value.error, getattr(first, "kind", "")

    ended, kind = rig.call(scenario)
    assert (ended.code, ended.status) == ("token_expired", 401)
    assert kind == "match_started"


def test_a_jwt_caller_carries_when_its_token_stops_being_accepted(rig: Rig) -> None:
    from tests.players.test_apps import user_jwt

    app_id, _ = rig.app("Acme")
    encoded = rig.call(rig.players.apps.add_hs256_secret, app_id, "k1")
    secret = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    exp = int(time.time()) + 600
    token = user_jwt(app_id, secret, "u-1", exp=exp)
    caller = rig.call(rig.players.authenticate, token)
    assert isinstance(caller, Caller)
    assert caller.expires_at == exp + 60  # the verifier's leeway
    guest = rig.call(rig.players.authenticate, rig.guest("G").token)
    assert guest.expires_at is None


def test_a_jwt_stream_of_a_quiet_match_ends_at_the_expiry_itself(rig: Rig) -> None:
    """Issue 31, item 12: a stream opened with a JWT ends when the JWT stops being accepted,
    even when the match makes no new version (before, it stayed open until the next one,
    outliving the token by as long as the match was quiet)."""
    alice = rig.guest("Alice")
    match_id = rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])

    async def scenario() -> tuple[ApiError, float]:
        matches, players = _matches(rig), rig.players
        caller = await players.authenticate(alice.token)
        assert isinstance(caller, Caller)
        expiring = matches.follow(match_id, token=dataclasses.replace(
            caller, expires_at=int(time.time()) + 2))
        await _next(expiring)  # the current state; alice's turn: nothing else happens
        ended = await _revoked(expiring)
        return ended, time.time()

    started = time.time()
    ended, at = rig.call(scenario)
    assert (ended.code, ended.status) == ("token_expired", 401)
    assert at >= started + 1  # not before its expiry


def test_a_jwt_feed_ends_at_the_expiry_while_no_event_comes(rig: Rig) -> None:
    alice = rig.guest("Alice")
    rig.seated(alice.auth, [{"player": alice.id}, {"bot": "random"}])

    async def scenario() -> tuple[ApiError, int]:
        feed = rig.players.follow_feed(alice.id, 0, int(time.time()) + 2)
        read = 0
        with pytest.raises(Revoked) as ended:
            while True:
                await asyncio.wait_for(anext(feed), WAIT)
                read += 1
        await feed.aclose()
        return ended.value.error, read

    ended, read = rig.call(scenario)
    assert (ended.code, ended.status) == ("token_expired", 401)
    assert read >= 1  # what was there was delivered first
