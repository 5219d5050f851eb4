"""Players in GraphQL: the same models as REST's (``service.players.models``), as object
types."""

from __future__ import annotations

from enum import Enum

import strawberry

from service.players import models

from .match import Label, SeatHolder, SeatToken, Visibility, labels_of, seat_holder


@strawberry.enum(description="Filter on a match's status.")
class MatchStatusFilter(Enum):
    WAITING = "waiting"
    ACTIVE = "active"
    FINISHED = "finished"
    CANCELLED = "cancelled"


@strawberry.enum(description=models.SEAT_STATUS_DESCRIPTION)
class SeatStatus(Enum):
    PLAYING = "playing"
    AWAY = "away"
    RESIGNED = "resigned"
    FORFEITED = "forfeited"


@strawberry.type(name="Player", description="A player: its id, display name and app.")
class PlayerType:
    id: strawberry.ID
    name: str
    app_id: str
    user: str | None = strawberry.field(
        description="The app's own user id (a JWT's `sub`); null for a guest."
    )

    @classmethod
    def from_model(cls, player: models.PlayerOut) -> PlayerType:
        return cls(id=strawberry.ID(player.id), name=player.name, app_id=player.app_id,
                   user=player.user)


@strawberry.type(description="A new guest player and its secret token.")
class PlayerCreated:
    id: strawberry.ID
    token: str = strawberry.field(
        description=models.PlayerCreated.model_fields["token"].description
    )
    name: str
    app_id: str

    @classmethod
    def from_model(cls, created: models.PlayerCreated) -> PlayerCreated:
        return cls(id=strawberry.ID(created.id), token=created.token, name=created.name,
                   app_id=created.app_id)


@strawberry.type(description="A player who left for good.")
class PlayerDeleted:
    id: strawberry.ID
    name: str = strawberry.field(description="The neutral name it now has everywhere.")
    matches_renamed: int

    @classmethod
    def from_model(cls, gone: models.DeletedPlayer) -> PlayerDeleted:
        return cls(id=strawberry.ID(gone.id), name=gone.name,
                   matches_renamed=gone.matches_renamed)


@strawberry.type(description="One of the player's matches.")
class MyMatch:
    match_id: strawberry.ID
    game: str
    status: str = strawberry.field(
        description="waiting, active, finished or cancelled (as MatchState.status; an open "
        "list)."
    )
    seat: int = strawberry.field(description="The player's seat.")
    seat_status: SeatStatus = strawberry.field(description=models.SEAT_STATUS_DESCRIPTION)
    players: list[SeatHolder]
    active_seats: list[int]
    your_turn: bool = strawberry.field(
        description=models.MyMatch.model_fields["your_turn"].description
    )
    version: int
    created_at: str = strawberry.field(description="RFC 3339, UTC.")
    updated_at: str = strawberry.field(description="RFC 3339, UTC: the last write.")
    url: str | None = strawberry.field(
        description="The match in the app's own client (its matchUrlTemplate)."
    )
    seed_chosen: bool = strawberry.field(
        description=models.MyMatch.model_fields["seed_chosen"].description
    )
    visibility: Visibility = strawberry.field(
        description=models.MyMatch.model_fields["visibility"].description
    )
    name: str | None = strawberry.field(
        description=models.MyMatch.model_fields["name"].description
    )
    labels: list[Label] = strawberry.field(description="The match's labels, sorted by key.")


@strawberry.type(description=models.MyMatchesPage.__doc__ or "A page of the player's matches.")
class MyMatchesPage:
    items: list[MyMatch] = strawberry.field(
        description=models.MyMatchesPage.model_fields["items"].description
    )
    next_cursor: str | None = strawberry.field(
        description=models.MyMatchesPage.model_fields["next_cursor"].description
    )

    @classmethod
    def from_model(cls, page: models.MyMatchesPage) -> MyMatchesPage:
        wire = page.to_json()
        items = wire["items"]
        assert isinstance(items, list)
        return cls(
            items=[
                MyMatch(
                    match_id=strawberry.ID(item.match_id), game=item.game, status=item.status,
                    seat=item.seat, seat_status=SeatStatus(item.seat_status),
                    players=[seat_holder(h) for h in item.players],
                    active_seats=list(item.active_seats), your_turn=item.your_turn,
                    version=item.version, created_at=str(raw["createdAt"]),
                    updated_at=str(raw["updatedAt"]), url=item.url,
                    seed_chosen=item.seed_chosen, visibility=Visibility(item.visibility),
                    name=item.name, labels=labels_of(item.labels),
                )
                for item, raw in zip(page.items, items, strict=True)
            ],
            next_cursor=page.next_cursor,
        )


def seat_token(token: object) -> SeatToken:
    return SeatToken(seat=token.seat, token=token.token)  # type: ignore[attr-defined]
