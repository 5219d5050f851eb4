"""The GraphQL types generated from the service layer's wire models (``types/wire.py`` and
the shapes beside the operations): values as REST writes them come out as the published
GraphQL fields."""

from datetime import UTC, datetime
from typing import Literal

import pytest
import strawberry
from pydantic import BaseModel, Field

from service.api.graphql import feed
from service.api.graphql.convert import Codec, Converter, Shape, UnsupportedType
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


# -- Shape: what a model cannot say -------------------------------------------------------

class SmpBase(BaseModel):
    id: str = Field(description="Its id.")
    n: int


class SmpThing(SmpBase):
    """A thing."""

    code: str | None = Field(default=None, description="REST's code.")
    state: Literal["on", "off"]
    tags: dict[str, str] = Field(default_factory=dict)
    at: datetime


def _sdl(converter: Converter, annotation: object) -> str:
    @strawberry.type
    class Query:
        @strawberry.field
        def thing(self) -> annotation:  # type: ignore[valid-type]
            raise NotImplementedError

    return str(strawberry.Schema(query=Query, types=[]))


def test_a_shape_keeps_published_names_ids_and_shapes() -> None:
    converter = Converter(shapes={
        SmpBase: Shape(name="Base", interface=True, ids=("id",)),
        SmpThing: Shape(
            name="Thing", ids=("id",), implements=(SmpBase,), renamed={"code": "the_code"},
            notes={"code": "GraphQL's code.", "n": "A number."}, order=("state",),
            fields={"tags": Codec(list[str], lambda tags: sorted(tags))},
        ),
        Literal["on", "off"]: Shape(name="Power", description="On or off.", upper_case=True),
    })
    thing = converter.output(SmpThing)
    sdl = _sdl(converter, thing.annotation)
    assert "type Thing implements Base" in sdl and "interface Base" in sdl
    assert '"""GraphQL\'s code."""\n  theCode: String' in sdl
    assert "id: ID!" in sdl and "state: Power!" in sdl and "ON\n  OFF" in sdl
    assert '"""On or off."""\nenum Power' in sdl and "at: String!" in sdl
    # The interface's fields first (GraphQL's own rule), then ``order``, then the rest.
    assert sdl.index("state: Power!") < sdl.index("theCode")
    out = thing.convert(SmpThing(id="t1", n=2, code="c", state="on", tags={"b": "", "a": ""},
                                 at=datetime(2026, 1, 1, tzinfo=UTC)))
    assert (out.code, out.tags, out.at) == ("c", ["a", "b"], "2026-01-01T00:00:00Z")
    assert out.state.name == "ON"


def test_a_note_may_not_shadow_the_models_description() -> None:
    converter = Converter(shapes={SmpBase: Shape(notes={"id": "Another text."})})
    with pytest.raises(UnsupportedType, match="may not shadow"):
        converter.output(SmpBase)


def test_a_shape_comes_before_the_first_use() -> None:
    converter = Converter()
    converter.output(SmpBase)
    with pytest.raises(UnsupportedType, match="before its first use"):
        converter.shape(SmpBase, Shape(name="Late"))


def test_a_converter_reuses_its_bases_types() -> None:
    base = Converter()
    codec = base.output(SmpBase)
    assert Converter(base=base).output(SmpBase).annotation is codec.annotation
