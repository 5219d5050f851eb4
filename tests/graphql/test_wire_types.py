"""The GraphQL types generated from the service layer's wire models (``types/wire.py`` and
the shapes beside the operations): values as REST writes them come out as the published
GraphQL fields."""

from datetime import UTC, datetime

import strawberry

from service.api.graphql import feed
from service.api.graphql.types import wire
from service.players import models


def test_feed_events_convert_from_their_stored_json() -> None:
    common = {"seq": 7, "match_id": "m1", "version": 3, "game": "ny1901", "seat": 1}
    samples = {
        "your_turn": models.YourTurnEvent(**common),
        "seat_changed": models.SeatChangedEvent(**common, change="to_bot"),
        "timed_out": models.TimedOutEvent(**common, policy="forfeit"),
        "player_joined": models.PlayerJoinedEvent(**common, player_seat=2, player_name="Ann"),
        "rematch_offered": models.RematchOfferedEvent(**common, rematch_of="m0"),
        "invited": models.InvitedEvent(seq=7, match_id="m1", version=3, game="ny1901",
                                       seat=None, invitation_id="i1", by="Ann"),
    }
    for kind, event in samples.items():
        raw = event.to_json()
        out = feed._CODECS[kind].convert(type(event).model_validate(raw))
        assert out.seq == 7 and out.match_id == strawberry.ID("m1") and out.version == 3
    assert feed._CODECS["seat_changed"].convert(samples["seat_changed"]).change == "to_bot"
    assert feed._CODECS["timed_out"].convert(samples["timed_out"]).policy == "forfeit"
    joined = feed._CODECS["player_joined"].convert(samples["player_joined"])
    assert (joined.player_seat, joined.player_name) == (2, "Ann")
    invited = feed._CODECS["invited"].convert(samples["invited"])
    assert invited.seat is None and invited.invitation_id == "i1"  # published as invitedSeat


def test_times_are_written_as_rest_writes_them_and_labels_sorted() -> None:
    when = datetime(2026, 12, 1, 10, 0, 0, 123000, tzinfo=UTC)
    item = models.MyMatch(
        match_id="m1", game="ny1901", status="active", seat=0, players=[],
        active_seats=[0], your_turn=True, version=4, created_at=when, updated_at=when,
        url=None, labels={"b": "2", "a": "1"}, seat_status="away",
    )
    page = wire.MY_MATCHES_PAGE.convert(models.MyMatchesPage(items=[item], next_cursor=None))
    out = page.items[0]
    raw = item.to_json()
    assert out.created_at == raw["createdAt"] == "2026-12-01T10:00:00.123000Z"
    assert [(label.key, label.value) for label in out.labels] == [("a", "1"), ("b", "2")]
    assert out.seat_status.name == "AWAY" and out.status == "active"
    assert out.match_id == strawberry.ID("m1")
