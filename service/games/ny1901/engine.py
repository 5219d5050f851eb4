"""The New York 1901 engine object (the contract of ``service/games/base.py``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .. import rng
from ..base import (
    GAME_OVER,
    NOT_YOUR_TURN,
    Event,
    IllegalAction,
    Result,
    check_rules_version,
)
from . import codes, data, render, scoring
from . import state as st
from .actions import Ny1901Action
from .board import Board, shipped_board
from .events import Ny1901Event
from .rules import Rules, kind_name
from .shapes import LEGENDARY_TILES, START_TILE, SUPPLY, TILES, Geometry
from .state import State
from .views import (
    Ny1901BuildingView,
    Ny1901Card,
    Ny1901LotView,
    Ny1901SeatView,
    Ny1901Square,
    Ny1901StreetView,
    Ny1901View,
)

StreetCard = Literal["broadway", "nassau_broad", "wall_street", "pine_thames", "cedar_street"]
ChallengeChoice = Literal[
    "random", "none", "gold_tycoon", "master_architect", "gold_prestige", "bronze_baron",
    "generation_king",
]


class Ny1901Options(BaseModel):
    """Variants of a New York 1901 match; every one has a default."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    expert: bool = Field(
        default=False,
        description="The expert game (NY-S6): no starting property, silver from 10 points, "
        "gold from 25.",
    )
    challenge: ChallengeChoice = Field(
        default="random",
        description="The challenge card: a random one, none (the learning game, NY-S3) or a "
        "named one.",
    )
    streets: (
        Annotated[
            list[StreetCard],
            Field(min_length=3, max_length=3, json_schema_extra={"uniqueItems": True}),
        ]
        | None
    ) = Field(default=None, description="Three distinct street cards; null: three random ones.")

    @field_validator("streets")
    @classmethod
    def _three_distinct(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and (len(value) != 3 or len(set(value)) != 3):
            raise ValueError("streets must name 3 distinct street cards")
        return value


class Ny1901Engine:
    id = "ny1901"
    title = "New York 1901"
    min_players = 2
    max_players = 4
    Options: type[BaseModel] = Ny1901Options
    Action: Any = Ny1901Action
    View: type[BaseModel] = Ny1901View
    Events: type[BaseModel] = Ny1901Event
    refusal_codes = codes.REFUSALS  # every IllegalAction code, with its rule ids
    rules_versions: tuple[int, ...] = (1, 2, 3)
    """1: the rules as first shipped (until 2026-12-01).
    2: NY-C3 revised -- Land Grab may also be played after the turn's build, with a worker
    that build released (still no 3-square lot that turn and no second build from it).
    3: version 2's rules on the redrawn board (``boards/v3.json``): deeper blocks, some
    holding two districts' lots (NY-A3, NY-F3), and lot squares without a street or park
    side (NY-A6). Versions 1 and 2 keep the first drawing (``data.py``) byte for byte."""

    def __init__(self, board: Board | None = None) -> None:
        """``board``: a custom board, played under every rules version instead of the
        shipped ones (each version keeps its rules; only the map is replaced). None: each
        version's shipped board (``board.shipped_board``)."""
        self._custom = board
        # rules version -> its drawing, built on first use and shared by the versions that
        # play the same board (the placement tables are the costly part).
        self._drawings: dict[int, _Drawing] = {}

    def _drawing(self, version: int) -> _Drawing:
        found = self._drawings.get(version)
        if found is None:
            board = self._custom if self._custom is not None else shipped_board(version)
            for other in self._drawings.values():
                if other.board is board:
                    found = other
                    break
            else:
                found = _Drawing(board)
            self._drawings[version] = found
        return found

    def board_for(self, rules_version: int) -> Board:
        """The board a match of ``rules_version`` is played on."""
        return self._drawing(rules_version).board

    def geometry_for(self, rules_version: int) -> Geometry:
        """The placement tables of ``board_for(rules_version)``."""
        return self._drawing(rules_version).geometry

    def rules_for(self, rules_version: int) -> Rules:
        """The move generator bound to ``board_for(rules_version)`` (it reads the rules
        version of each state it is given)."""
        return self._drawing(rules_version).rules

    @property
    def board(self) -> Board:
        """The board new matches are played on (that of the newest rules version)."""
        return self._drawing(self.rules_versions[-1]).board

    @property
    def geometry(self) -> Geometry:
        return self._drawing(self.rules_versions[-1]).geometry

    @property
    def rules(self) -> Rules:
        return self._drawing(self.rules_versions[-1]).rules

    # ------------------------------------------------------------------------------ setup
    def setup(self, players: int, options: BaseModel | None, seed: int,
              rules_version: int | None = None) -> State:
        """NY-S1..S6: characters, start properties, markets, street and challenge cards."""
        version = check_rules_version(self.id, self.rules_versions, rules_version)
        if not self.min_players <= players <= self.max_players:
            raise ValueError(f"New York 1901 is for 2 to 4 players, not {players}")
        opts = self._options(options)
        r = rng.seed_state(seed)
        districts = [d for d in range(len(data.DISTRICTS)) if players > 2 or d != data.PINK]
        order, r = rng.shuffled(r, districts)
        characters = tuple(order[:players])
        if opts.streets is None:
            picked, r = rng.shuffled(r, range(len(data.STREET_CARDS)))
            streets = tuple(sorted(picked[:3]))
        else:
            streets = tuple(data.STREET_CARDS.index(s) for s in opts.streets)
        if opts.challenge == "random":
            challenge, r = rng.randbelow(r, len(data.CHALLENGES))
        elif opts.challenge == "none":
            challenge = -1
        else:
            challenge = data.CHALLENGES.index(opts.challenge)
        drawing = self._drawing(version)
        board = drawing.board
        start_lots = set() if opts.expert else {board.start_lots[d] for d in characters}
        deck = [lot.kind for i, lot in enumerate(board.lots)
                if lot.district in districts and i not in start_lots]
        future, r = rng.shuffled(r, deck)
        market = [future.pop() for _ in range(data.MARKET_SIZE)]

        state = State.__new__(State)
        state.n = players
        state.rules_version = version
        state.expert = opts.expert
        state.challenge = challenge
        state.streets = streets
        state.rng = r
        state.characters = characters
        state.seat = 0
        state.phase = st.START
        state.flags = 0
        state.trigger = -1
        state.left = 0
        state.legend = [-1] * len(LEGENDARY_TILES)
        state.lots = [0] * players
        state.used = [0] * players
        state.cards = [0] * players
        state.points = [0] * players
        state.prestige = [0] * players
        state.buildings = [[] for _ in range(players)]
        state.market = market
        state.future = future
        for seat, district in enumerate(characters):
            if opts.expert:
                continue
            index = board.start_lots[district]
            state.lots[seat] = 1 << index
            mask = board.lots[index].mask
            placement = drawing.geometry.placement_of(TILES[START_TILE].shape, mask)
            state.buildings[seat] = [(START_TILE, placement.id, mask)]
        st.refresh(state, drawing.geometry)
        return state

    def rules_version(self, state: State) -> int:
        return state.rules_version

    def _options(self, options: BaseModel | None) -> Ny1901Options:
        if options is None:
            return Ny1901Options()
        if isinstance(options, Ny1901Options):
            return options
        return Ny1901Options.model_validate(options.model_dump())

    # ------------------------------------------------------------------------------ play
    def active_seats(self, state: State) -> frozenset[int]:
        if state.phase == st.OVER:
            return frozenset()
        return frozenset((state.seat,))

    def legal_actions(self, state: State, seat: int) -> list[Any]:
        if state.phase == st.OVER or seat != state.seat:
            return []
        return self._drawing(state.rules_version).rules.legal(state)

    def apply(self, state: State, seat: int, action: Any) -> tuple[State, list[Event]]:
        if state.phase == st.OVER:
            raise IllegalAction(GAME_OVER, "the game is over")
        if seat != state.seat:
            raise IllegalAction(NOT_YOUR_TURN, f"it is seat {state.seat}'s turn")
        return self._drawing(state.rules_version).rules.apply(state, action)

    def result(self, state: State) -> Result | None:
        if state.phase != st.OVER:
            return None
        return scoring.result(state, self._drawing(state.rules_version).board)

    def dumps(self, state: State) -> bytes:
        return st.dumps(state, self._drawing(state.rules_version).geometry)

    def loads(self, data_: bytes) -> State:
        """The state of ``dumps``; its rules version (read first) picks the board."""
        version = st.rules_version_of(data_)
        if version not in self.rules_versions:
            raise st.DecodeError(f"not a New York 1901 state: rules version {version} is not "
                                 f"played here ({', '.join(map(str, self.rules_versions))})")
        return st.loads(data_, self._drawing(version).geometry)

    def render(self, state: State) -> str:
        """A text picture of the position (see render.py for the legend)."""
        return render.render(state, self._drawing(state.rules_version).rules)

    # ------------------------------------------------------------------------------ view
    def view(self, state: State, seat: int | None) -> Ny1901View:
        drawing = self._drawing(state.rules_version)
        board = drawing.board
        rules = drawing.rules
        geometry = drawing.geometry

        cache = drawing.squares

        def squares(mask: int) -> list[Ny1901Square]:
            found = cache.get(mask)
            if found is None:
                out = []
                rest = mask
                while rest:
                    low = rest & -rest
                    rest ^= low
                    x, y = board.xy(low.bit_length() - 1)
                    out.append(Ny1901Square(x=x, y=y))
                found = cache[mask] = tuple(out)
            return list(found)

        owners: dict[int, int] = {}
        for holder in range(state.n):
            for index in range(len(board.lots)):
                if state.lots[holder] >> index & 1:
                    owners[index] = holder
        lot_views = drawing.lot_views
        lots = []
        for index, lot in enumerate(board.lots):
            owner = owners.get(index)
            worker = owner is not None and bool(state.staffed[owner] >> index & 1)
            in_play = state.n > 2 or lot.district != data.PINK
            key = (index, in_play, owner, worker)
            lot_view = lot_views.get(key)
            if lot_view is None:
                lot_view = lot_views[key] = Ny1901LotView(
                    name=lot.name, district=data.DISTRICTS[lot.district], size=lot.size,
                    squares=squares(lot.mask), in_play=in_play, owner=owner, worker=worker,
                )
            lots.append(lot_view)
        buildings = []
        for owner in range(state.n):
            for tile_index, pid, mask in state.buildings[owner]:
                tile = TILES[tile_index]
                placement = geometry.placements[pid]
                buildings.append(Ny1901BuildingView(
                    owner=owner, tile=tile.id, level=data.LEVEL_NAMES[tile.level],
                    legendary=tile.legendary >= 0, points=tile.points,
                    rotation=placement.rotation, x=placement.x, y=placement.y,
                    squares=squares(mask)))
        seats = []
        for s in range(state.n):
            legend = [TILES[LEGENDARY_TILES[k]].id for k, o in enumerate(state.legend) if o == s]
            seats.append(Ny1901SeatView(
                seat=s,
                character=data.CHARACTERS[state.characters[s]][0],
                character_district=data.DISTRICTS[state.characters[s]],
                score=state.score(s),
                technology=data.LEVEL_NAMES[rules.tech(state, s)],
                free_workers=state.free_workers(s),
                workers_on_board=state.staffed[s].bit_count(),
                tiles_left=[TILES[t].id for t in range(SUPPLY) if not state.used[s] >> t & 1],
                unbuilt_tiles=SUPPLY - state.used[s].bit_count(),
                used_action_cards=[c for k, c in enumerate(data.ACTION_CARDS)
                                   if state.cards[s] >> k & 1],
                unused_action_cards=[c for k, c in enumerate(data.ACTION_CARDS)
                                     if not state.cards[s] >> k & 1],
                legendary=legend[0] if legend else None,
            ))
        over = state.phase == st.OVER
        return Ny1901View(
            rules_version=state.rules_version,
            viewer=seat,
            players=state.n,
            expert=state.expert,
            challenge=data.CHALLENGES[state.challenge] if state.challenge >= 0 else None,
            streets=[
                Ny1901StreetView(id=street.id, name=street.name, squares=squares(street.mask))
                for street in (board.street(data.STREET_CARDS[i]) for i in state.streets)
            ],
            current_seat=None if over else state.seat,
            step=st.PHASE_NAMES[state.phase],
            open_market=[Ny1901Card(**kind_name(k)) for k in state.market],
            future_market_size=len(state.future),
            seats=seats,
            lots=lots,
            buildings=buildings,
            legendary_available=[TILES[t].id for k, t in enumerate(LEGENDARY_TILES)
                                 if state.legend[k] < 0],
            end_triggered_by=state.trigger if state.trigger >= 0 else None,
            last_turns_left=state.left if state.trigger >= 0 else None,
            game_over=over,
            board_rows=list(board.rows),
        )


class _Drawing:
    """One board and what the engine derives from it, built once: its placement tables,
    its move generator and the frozen pieces its views share."""

    __slots__ = ("board", "geometry", "lot_views", "rules", "squares")

    def __init__(self, board: Board) -> None:
        self.board = board
        self.geometry = Geometry(board)
        self.rules = Rules(self.geometry)
        # mask -> its squares: board geometry, the same for every view (Ny1901Square is
        # frozen, so views may share the instances). Bounded by lots + streets + placements.
        self.squares: dict[int, tuple[Ny1901Square, ...]] = {}
        # (lot, in play, owner, worker) -> its frozen view: at most lots x 2 x 5 x 2.
        self.lot_views: dict[tuple[int, bool, int | None, bool], Ny1901LotView] = {}
