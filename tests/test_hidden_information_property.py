"""A hidden-information property for every engine, over seeded random games.

At every step of a seeded random game, and for viewers ``k`` -- the spectator (``None``), the
seat that acts, and one other seat drawn at random -- the test builds twins of the position
``S``: copies in which what ``k`` may not know is re-randomised consistently with what ``k``
has seen, and checks that

1. ``view(S', k) == view(S, k)`` for a twin with *everything* hidden from ``k`` re-randomised;
2. for a twin that also keeps what the next action reveals to ``k`` and what its actor knows
   (re-randomising only what neither ``k`` nor the actor may know): the same view, the same
   legal moves for the actor, and after applying the SAME action, ``Event.for_seat(k)`` of
   every resulting event and ``k``'s view afterwards are identical between ``S`` and ``S'``.

3. for a sealed commitment (a Ginkgopolis card choice, draft pick or tile return) that the
   step does not reveal yet, another legal commitment of the same kind gives ``k`` the same
   events and the same view.

Whole views (every field) and whole event dicts are compared, so a leak into any key fails,
whatever its name. What the next action reveals is derived from the states of the real game
(the cards that end up in places ``k`` can see) and the rules, never from the engine's events
or views, so a leak inside the engine cannot pass by construction.

Hidden information (rules digests): New York 1901 -- the order of the future market (what a
seat knows is kept: the cards a stuck seat returned lie at its bottom, and the four cards a
Market Shift put under it are known as a set), and the RNG. Ginkgopolis -- other seats' hands,
tiles behind their screens, sealed card choices (tile or not) and draft picks, the deck and
tile-supply order, the boxed tiles, Hal's card until it is revealed, and the RNG. A New Hand
is sealed with the card choices under rules version 1 only; from version 2 it is public.

The last test plants the two leaks found by mutation testing (Market Shift listing the cards
in their order under the future market; ``cards_drawn`` naming the cards publicly) and leaks
into unrelated keys in engine wrappers, and checks that the property fails for each.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Protocol

import pytest

from service.games.base import Event
from service.games.ginkgopolis import ENGINE as GK
from service.games.ginkgopolis import GinkgopolisEngine, GkOptions
from service.games.ginkgopolis.actions import GkChooseCard, GkNewHand
from service.games.ginkgopolis.data import CHAR_BASE, card_label
from service.games.ginkgopolis.state import (
    CHOOSE,
    DRAFT,
    NEW_HAND,
    NO_TILE,
    RESOLVE,
    RETURN,
    GkState,
)
from service.games.ny1901 import ENGINE as NY
from service.games.ny1901 import Ny1901Engine, Ny1901Options
from service.games.ny1901.actions import Ny1901MarketShift, Ny1901ReturnLot
from service.games.ny1901.data import MARKET_SIZE
from service.games.ny1901.rules import kind_name
from service.games.ny1901.state import State as NyState

pytestmark = pytest.mark.slow  # long property runs

Viewer = int | None
AnyEngine = Any
"""An engine of the contract (``Engine[Any]``: mypy does not accept Ginkgopolis' class
attributes as the Protocol's)."""


@dataclass(frozen=True)
class Step:
    """One transition of a random game: ``after, events = apply(before, seat, action)``."""

    index: int
    before: Any
    seat: int
    action: Any
    after: Any
    events: list[Event]


def playout(
    engine: AnyEngine, players: int, seed: int, options: Any = None, max_steps: int = 3000,
    prefer: type | None = None, rules_version: int | None = None,
) -> Iterator[Step]:
    """A seeded random game (under ``rules_version``; None: the newest); when a move of type
    ``prefer`` is legal it is played half of the time (so that rare moves such as Market
    Shift are played in every game)."""
    chooser = random.Random(seed)
    state = engine.setup(players, options, seed, rules_version)
    for index in range(max_steps):
        if engine.result(state) is not None:
            return
        seat = chooser.choice(sorted(engine.active_seats(state)))
        legal = engine.legal_actions(state, seat)
        preferred = [a for a in legal if prefer is not None and isinstance(a, prefer)]
        if preferred and chooser.random() < 0.5:
            legal = preferred
        action = chooser.choice(legal)
        after, events = engine.apply(state, seat, action)
        yield Step(index, state, seat, action, after, events)
        state = after
    raise AssertionError(f"game {seed} did not end within {max_steps} steps")


class Rerandomiser(Protocol):
    """Builds the twins of one game's positions (it may track what the seats have seen)."""

    def start(self, state: Any) -> None: ...

    def view_twin(self, state: Any, viewer: Viewer, rng: random.Random) -> Any:
        """Everything hidden from ``viewer`` re-randomised (for the view check)."""

    def step_twin(self, step: Step, viewer: Viewer, rng: random.Random) -> Any:
        """Only what stays hidden from ``viewer`` through ``step`` and what the actor may
        not know either re-randomised (the step's action stays legal and reveals the same)."""

    def changes(self, state: Any, twin: Any) -> list[str]:
        """Names of the hidden parts in which ``twin`` differs from ``state``."""

    def sealed_alternatives(self, engine: AnyEngine, step: Step, viewer: Viewer,
                            rng: random.Random) -> list[Any]:
        """Other moves the actor could have sealed instead, when ``viewer`` may not tell
        them apart (a hidden commitment that the step does not reveal)."""

    def advance(self, step: Step) -> None: ...


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if a.get(key, "<absent>") != b.get(key, "<absent>"):
                return _first_difference(a.get(key, "<absent>"), b.get(key, "<absent>"),
                                         f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    return f"{path or '<top>'}: {a!r} != {b!r}"


def _assert_same(real: Any, twin: Any, what: str) -> None:
    if real != twin:
        if hasattr(real, "model_dump"):
            real, twin = real.model_dump(), twin.model_dump()
        raise AssertionError(f"{what} depends on hidden information: "
                             f"{_first_difference(real, twin)}")


def _seen_events(events: list[Event], viewer: Viewer) -> list[dict[str, Any]]:
    return [event.for_seat(viewer) for event in events]


def check_game(
    engine: AnyEngine, players: int, seed: int, rerandomiser: Rerandomiser,
    options: Any = None, stats: Counter[str] | None = None, prefer: type | None = None,
    rules_version: int | None = None,
) -> Counter[str]:
    """The property at every step of one seeded random game, for the spectator, the seat
    that acts and one other seat (drawn at random: over a game every seat is checked both
    as the actor and as an onlooker).

    Views are compared as whole pydantic models (every field, nested ones included) and
    events as the whole dicts a viewer receives."""
    stats = Counter() if stats is None else stats
    rng = random.Random(f"twins-{seed}")
    views: dict[Viewer, Any] = {}
    for step in playout(engine, players, seed, options, prefer=prefer,
                        rules_version=rules_version):
        if step.index == 0:
            rerandomiser.start(step.before)
        stats["steps"] += 1
        stats[f"action:{type(step.action).__name__}"] += 1
        stats.update(f"event:{event.kind}" for event in step.events)
        onlookers = [seat for seat in range(players) if seat != step.seat]
        viewers: list[Viewer] = [None, step.seat, *rng.sample(onlookers, min(1, len(onlookers)))]
        legal = engine.legal_actions(step.before, step.seat)
        views_after = {viewer: engine.view(step.after, viewer) for viewer in viewers}
        for viewer in viewers:
            stats["checks"] += 1
            if viewer not in views:
                views[viewer] = engine.view(step.before, viewer)
            where = (f"{engine.id} {players}p seed {seed} step {step.index} viewer {viewer} "
                     f"(seat {step.seat} plays {step.action!r})")
            view = views[viewer]
            twin = rerandomiser.view_twin(step.before, viewer, rng)
            stats.update(f"view_twin:{part}" for part in rerandomiser.changes(step.before, twin))
            _assert_same(view, engine.view(twin, viewer), f"{where}: the view")

            twin = rerandomiser.step_twin(step, viewer, rng)
            stats.update(f"step_twin:{part}" for part in rerandomiser.changes(step.before, twin))
            _assert_same(view, engine.view(twin, viewer), f"{where}: the view")
            _assert_same(legal, engine.legal_actions(twin, step.seat),
                         f"{where}: the actor's legal moves")
            after, events = engine.apply(twin, step.seat, step.action)
            _assert_same(_seen_events(step.events, viewer), _seen_events(events, viewer),
                         f"{where}: the events")
            _assert_same(views_after[viewer], engine.view(after, viewer),
                         f"{where}: the view after")

            for other in rerandomiser.sealed_alternatives(engine, step, viewer, rng):
                stats["sealed_alternatives"] += 1
                after, events = engine.apply(step.before, step.seat, other)
                instead = f"{where}, instead {other!r}"
                _assert_same(_seen_events(step.events, viewer), _seen_events(events, viewer),
                             f"{instead}: the events")
                _assert_same(views_after[viewer], engine.view(after, viewer),
                             f"{instead}: the view after")
        views = views_after
        rerandomiser.advance(step)
    return stats


# ---------------------------------------------------------------------------------------
# New York 1901: the future market's order (its top is the end of ``state.future``).


class NyRerandomiser:
    """Permutes the future market within its knowledge segments and reseeds the RNG.

    Every seat and the spectator know the same: the content of the future market (all lot
    cards minus the owned and open ones) but not its order -- except at its bottom, where a
    stuck seat's returned card (NY-A8) lies at a known place and the four cards a Market
    Shift put under it (NY-C2) are known as a set. ``segments`` (bottom to top) tracks those
    parts; cards are only permuted within a segment. The RNG orders only the cards a Market
    Shift puts under the future market, which nobody may know: it is always reseeded.
    """

    def __init__(self) -> None:
        self.segments: list[int] = []

    def start(self, state: NyState) -> None:
        self.segments = [len(state.future)]

    @staticmethod
    def _under(step: Step) -> int:
        """Cards the step puts under the future market (by the rules, NY-C2 and NY-A8)."""
        if isinstance(step.action, Ny1901MarketShift):
            return MARKET_SIZE
        return 1 if isinstance(step.action, Ny1901ReturnLot) else 0

    def revealed(self, step: Step) -> int:
        """Cards the step takes from the top of the future market (refill, Market Shift)."""
        taken: int = len(step.before.future) + self._under(step) - len(step.after.future)
        assert 0 <= taken <= MARKET_SIZE
        return taken

    def _twin(self, state: NyState, rng: random.Random, keep_top: int) -> NyState:
        twin = state.copy()
        future = twin.future
        assert sum(self.segments) == len(future)
        movable = len(future) - keep_top
        start = 0
        for size in self.segments:
            places = [p for p in range(start, start + size) if p < movable]
            cards = [future[p] for p in places]
            rng.shuffle(cards)
            for place, card in zip(places, cards, strict=True):
                future[place] = card
            start += size
        twin.rng = rng.getrandbits(64)
        return twin

    def view_twin(self, state: NyState, viewer: Viewer, rng: random.Random) -> NyState:
        return self._twin(state, rng, 0)

    def step_twin(self, step: Step, viewer: Viewer, rng: random.Random) -> NyState:
        return self._twin(step.before, rng, self.revealed(step))

    def changes(self, state: NyState, twin: NyState) -> list[str]:
        parts = ["rng"] if twin.rng != state.rng else []
        if twin.future != state.future:
            parts.append("future_order")
        return parts

    def sealed_alternatives(self, engine: AnyEngine, step: Step, viewer: Viewer,
                            rng: random.Random) -> list[Any]:
        return []  # every New York 1901 move is public

    def advance(self, step: Step) -> None:
        segments = self.segments
        under = self._under(step)
        if under:
            segments.insert(0, under)
        taken = self.revealed(step)
        while taken:
            top = min(segments[-1], taken)
            segments[-1] -= top
            taken -= top
            if not segments[-1]:
                segments.pop()
        segments[:] = [size for size in segments if size]
        assert sum(segments) == len(step.after.future)


# ---------------------------------------------------------------------------------------
# Ginkgopolis: hands, screens, sealed choices, draft packs, deck, tile supply, box, RNG.

Slot = tuple[str, int, int]
"""(place, seat or -1, index): one position holding one card, tile or character."""
CARD, TILE, CHARACTER = "card", "tile", "character"


def _pile(s: GkState, place: str, seat: int) -> list[int]:
    if place == "deck":
        return s.deck
    if place == "hand":
        return s.hands[seat]
    if place == "supply":
        return s.supply_tiles
    if place == "box":
        return s.box
    if place == "screen":
        return s.tiles[seat]
    return s.draft_packs[seat] if place == "pack" else s.draft_kept[seat]


def _get(s: GkState, slot: Slot) -> int:
    place, seat, index = slot
    return s.hal_card if place == "hal_card" else _pile(s, place, seat)[index]


def _set(s: GkState, slot: Slot, item: int) -> None:
    place, seat, index = slot
    if place == "hal_card":
        s.hal_card = item
    else:
        _pile(s, place, seat)[index] = item


def _choices_public(s: GkState) -> bool:
    """Choices revealed (GK-T2) but not all performed yet: known to everyone."""
    return s.phase in (RESOLVE, RETURN)


def _seat_slots(s: GkState, seat: int) -> Iterator[tuple[str, Slot]]:
    for place, kind in (("hand", CARD), ("screen", TILE), ("pack", CHARACTER),
                        ("kept", CHARACTER)):
        for index in range(len(_pile(s, place, seat))):
            yield kind, (place, seat, index)


def _hidden_slots(s: GkState, viewer: Viewer) -> Iterator[tuple[str, Slot]]:
    """Every position whose content ``viewer`` cannot see."""
    yield from ((CARD, ("deck", -1, i)) for i in range(len(s.deck)))
    yield from ((TILE, ("supply", -1, i)) for i in range(len(s.supply_tiles)))
    yield from ((TILE, ("box", -1, i)) for i in range(len(s.box)))
    if s.solo and viewer is None and s.hal_card >= 0:
        yield CARD, ("hal_card", -1, 0)  # given by seat 0, not revealed yet (GK-H2)
    for seat in range(s.players):
        if seat == viewer:
            continue
        choice = s.choice[seat]
        public = choice if choice is not None and _choices_public(s) else (NO_TILE, NO_TILE, 0)
        for kind, slot in _seat_slots(s, seat):
            item = _get(s, slot)
            if kind == CARD and item == public[0]:
                continue
            # Tiles committed for return (GK-E1) stay: the commitment is tied to its part.
            if kind == TILE and (item == public[1] or item in s.returns[seat]):
                continue
            yield kind, slot


def _visible(s: GkState, viewer: Viewer) -> dict[str, set[int]]:
    """What ``viewer`` can see in ``s``, by kind (tile ids and building-card ids overlap)."""
    seen: dict[str, set[int]] = {CARD: set(s.discard), TILE: set(), CHARACTER: set()}
    for front in s.front:
        for card in front:
            seen[CHARACTER if card >= CHAR_BASE else CARD].add(card)
    for stack in s.stacks.values():
        seen[TILE].update(stack)
    if viewer is not None:
        seen[CARD].update(s.hands[viewer])
        seen[TILE].update(s.tiles[viewer])
        seen[CHARACTER].update(s.draft_packs[viewer], s.draft_kept[viewer])
        if s.solo and s.hal_card >= 0:
            seen[CARD].add(s.hal_card)
    if _choices_public(s):
        for choice in s.choice:
            if choice is not None:
                seen[CARD].add(choice[0])
                seen[TILE].add(choice[1])
    return seen


def _gk_shuffle(s: GkState, viewer: Viewer, rng: random.Random, fixed: set[Slot],
                rechoose: set[int], reseed: bool) -> GkState:
    """Permute the hidden, non-fixed positions among themselves (per kind: counts are kept);
    a sealed choice follows its card's and tile's positions, and the seats in ``rechoose``
    choose their tile (or none) anew."""
    twin = s.clone()
    movable: dict[str, list[Slot]] = {}
    for kind, slot in _hidden_slots(s, viewer):
        if slot not in fixed:
            movable.setdefault(kind, []).append(slot)
    for slots in movable.values():
        items = [_get(s, slot) for slot in slots]
        rng.shuffle(items)
        for slot, item in zip(slots, items, strict=True):
            _set(twin, slot, item)
    if s.phase in (CHOOSE, DRAFT):
        for seat, choice in enumerate(s.choice):
            if choice is not None and choice[0] == NEW_HAND:
                # Rules version 1 seals a New Hand with the choices (it stays one in the
                # twin; ``sealed_alternatives`` compares it with a card choice). From
                # version 2 it is public and carried out at once: never a sealed choice.
                assert s.rules_version == 1, "a sealed New Hand under rules version 2"
                continue
            if choice is None or seat == viewer:
                continue
            old, new = (s.hands, twin.hands) if s.phase == CHOOSE else (
                s.draft_packs, twin.draft_packs)
            card, tile, hal_card = choice
            card = new[seat][old[seat].index(card)]
            if hal_card >= 0:
                hal_card = new[seat][old[seat].index(hal_card)]
            if s.phase == CHOOSE:
                if tile >= 0:
                    tile = twin.tiles[seat][s.tiles[seat].index(tile)]
                if seat in rechoose:
                    tile = rng.choice([NO_TILE, *twin.tiles[seat]])
            twin.choice[seat] = (card, tile, hal_card)
    for tiles in twin.tiles:
        tiles.sort()
    twin.box.sort()
    if reseed:
        twin.rng = rng.getrandbits(64)
    return twin


class GkRerandomiser:
    """Ginkgopolis twins. Fixed: everything ``viewer`` sees, and, for a step, the positions
    whose content ``viewer`` sees after it (cards drawn or passed to it, cards and tiles
    played, Hal's tile and card), every choice the step reveals, and everything the actor
    knows when the actor is another seat. The RNG is reseeded for a step unless the step
    draws from it (a deck rebuild discards 7 cards face up; GK-T4)."""

    def start(self, state: GkState) -> None:
        pass

    def view_twin(self, state: GkState, viewer: Viewer, rng: random.Random) -> GkState:
        others = set(range(state.players)) - {viewer}
        return _gk_shuffle(state, viewer, rng, set(), others, reseed=True)

    def step_twin(self, step: Step, viewer: Viewer, rng: random.Random) -> GkState:
        before: GkState = step.before
        after: GkState = step.after
        fixed: set[Slot] = set()
        if step.seat != viewer:
            fixed.update(slot for _, slot in _seat_slots(before, step.seat))
        seen = _visible(after, viewer)
        fixed.update(slot for kind, slot in _hidden_slots(before, viewer)
                     if _get(before, slot) in seen[kind])
        if before.rng != after.rng:
            # A deck rebuild (GK-T4) shuffles the face-up discard pile into the deck: a card
            # seen during the step may be hidden again after it. Move no card then.
            fixed.update(slot for kind, slot in _hidden_slots(before, viewer) if kind == CARD)
        hal_played = before.solo and after.hal_card < 0 and (
            before.hal_card >= 0 or before.phase == CHOOSE)
        if hal_played and after.supply_tiles and after.supply_tiles[-1] in before.supply_tiles:
            # GK-H2: Hal's tile is drawn for everyone to see, even when he cannot pay for it
            # (the engine keeps it in the supply then).
            top = before.supply_tiles.index(after.supply_tiles[-1])
            fixed.add(("supply", -1, top))
        revealed = before.phase == CHOOSE and (
            after.phase != CHOOSE or after.turn != before.turn)
        rechoose: set[int] = set()
        if revealed:  # GK-T2: every choice is turned face up
            for seat, choice in enumerate(before.choice):
                if choice is None:
                    continue
                fixed.add(("hand", seat, before.hands[seat].index(choice[0])))
                if choice[1] >= 0:
                    fixed.add(("screen", seat, before.tiles[seat].index(choice[1])))
        else:
            rechoose = set(range(before.players)) - {viewer, step.seat}
        return _gk_shuffle(before, viewer, rng, fixed, rechoose, reseed=before.rng == after.rng)

    def changes(self, state: GkState, twin: GkState) -> list[str]:
        parts = {
            "deck": state.deck != twin.deck,
            "hands": state.hands != twin.hands,
            "supply": state.supply_tiles != twin.supply_tiles,
            "box": state.box != twin.box,
            "screens": state.tiles != twin.tiles,
            "choices": state.choice != twin.choice,
            "draft": (state.draft_packs, state.draft_kept) != (twin.draft_packs,
                                                               twin.draft_kept),
            "hal_card": state.hal_card != twin.hal_card,
            "rng": state.rng != twin.rng,
        }
        return [name for name, changed in parts.items() if changed]

    def sealed_alternatives(self, engine: AnyEngine, step: Step, viewer: Viewer,
                            rng: random.Random) -> list[Any]:
        """GK-T1 card choices (tile or not), GK-S4 draft picks and GK-E1 tile returns are
        sealed until every seat has committed: while another seat still has to, a different
        commitment of the same kind must look the same to everyone else. A New Hand: under
        rules version 1 it is sealed like a card choice (one kind: either may stand in for
        the other); from version 2 it is public and immediate (GK-T1, revised ruling), so it
        is no alternative and has none."""
        before: GkState = step.before
        after: GkState = step.after
        if viewer == step.seat or before.phase not in (CHOOSE, DRAFT, RETURN):
            return []
        waiting = engine.active_seats(after) - {step.seat}
        if after.phase != before.phase or not waiting or not waiting <= engine.active_seats(
                before):
            return []  # the last commitment: everything is revealed now
        kind: tuple[type, ...] = (type(step.action),)
        if isinstance(step.action, GkChooseCard | GkNewHand):
            if before.rules_version >= 2:
                kind = (GkChooseCard,)
                if isinstance(step.action, GkNewHand):
                    return []
            else:
                kind = (GkChooseCard, GkNewHand)
        others = [a for a in engine.legal_actions(before, step.seat)
                  if isinstance(a, kind) and a != step.action]
        return rng.sample(others, min(1, len(others)))

    def advance(self, step: Step) -> None:
        pass


# ---------------------------------------------------------------------------------------
# The tests


def _run(engine: AnyEngine, players: int, seeds: range, make: Callable[[], Rerandomiser],
         options: Any = None, prefer: type | None = None, rules_version: int | None = None,
         ) -> Counter[str]:
    stats: Counter[str] = Counter()
    for seed in seeds:
        check_game(engine, players, seed, make(), options, stats, prefer, rules_version)
    return stats


@pytest.mark.parametrize(
    ("players", "seeds", "options"),
    [(2, range(3), None), (3, range(2), None), (4, range(2), None),
     (3, range(3, 5), Ny1901Options(expert=True))],
    ids=["2p", "3p", "4p", "3p-expert"],
)
def test_ny1901_future_market_order_never_reaches_a_view_or_event(
    players: int, seeds: range, options: Ny1901Options | None
) -> None:
    stats = _run(NY, players, seeds, NyRerandomiser, options, prefer=Ny1901MarketShift)
    # Exercised where it matters: Market Shifts (the order of the cards they put under the
    # future market comes from the reseeded RNG), refills, and real reorderings.
    assert stats["action:Ny1901MarketShift"] >= players * len(seeds) - 1
    assert stats["event:market_refill"] >= 50
    assert stats["step_twin:future_order"] >= stats["checks"] // 3
    assert stats["step_twin:rng"] == stats["checks"]


def test_ny1901_twins_keep_what_the_seats_have_seen_of_the_future_market() -> None:
    """The re-randomisation itself: a returned card stays at the bottom (NY-A8), Market
    Shift cards stay below the rest as a set (NY-C2), the cards the step reveals on top."""
    tracker = NyRerandomiser()
    rng = random.Random(5)
    seen: Counter[str] = Counter()
    for seed in range(3):
        for step in playout(NY, 3, seed, prefer=Ny1901MarketShift):
            if step.index == 0:
                tracker.start(step.before)
            before, twin = step.before.future, tracker.step_twin(step, None, rng).future
            start = 0
            for size in tracker.segments:
                assert sorted(twin[start:start + size]) == sorted(before[start:start + size])
                start += size
            top = len(before) - tracker.revealed(step)
            assert twin[top:] == before[top:]
            tracker.advance(step)
            if isinstance(step.action, Ny1901ReturnLot) and tracker.segments[0] == 1:
                lot = NY.board.lots[NY.board.lot_index[step.action.lot]]
                assert step.after.future[0] == lot.kind
                seen["return"] += 1
            if isinstance(step.action, Ny1901MarketShift):
                assert tracker.segments[0] == MARKET_SIZE
                assert sorted(step.after.future[:MARKET_SIZE]) == sorted(step.before.market)
                seen["shift"] += 1
    assert seen["return"] >= 3 and seen["shift"] >= 3


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_ginkgopolis_hands_screens_deck_and_supply_never_reach_another_seat(
    players: int,
) -> None:
    stats = _run(GK, players, range(2), GkRerandomiser)
    assert stats["event:cards_drawn"] >= 40
    assert stats["event:deck_rebuilt"] >= 3
    for part in ("deck", "hands", "supply", "screens", "rng"):
        assert stats[f"step_twin:{part}"] >= stats["checks"] // 2, part
    assert stats["view_twin:choices"] >= 30
    if players > 2:  # with two, the other seat's commitment always reveals the choices
        assert stats["step_twin:choices"] >= 30
    assert stats["sealed_alternatives"] >= 50
    if players <= 3:
        assert stats["step_twin:box"] >= stats["checks"] // 2


@pytest.mark.parametrize("version", GK.rules_versions, ids=lambda v: f"v{v}")
def test_ginkgopolis_sealed_choices_new_hands_and_tile_returns_stay_sealed(version: int) -> None:
    """Simultaneous steps: card choices (tile or not), the New Hand draws and the GK-E1 tile
    returns are committed one seat at a time; nothing of a sealed commitment may show.
    Rules version 1 seals a New Hand with the choices (a sealed New Hand and a sealed card
    choice look alike); from version 2 it is public and carried out at once (GK-T1)."""
    stats = _run(GK, 3, range(4, 7), GkRerandomiser, rules_version=version)
    if version == 1:
        assert stats["event:new_hands_announced"] >= 3
    else:
        assert stats["event:new_hand_announced"] >= 3
        assert stats["event:new_hands_announced"] == 0
    assert stats["event:tiles_returned"] >= 2
    assert stats["action:GkReturnTiles"] >= 30
    assert stats["step_twin:choices"] >= 60
    assert stats["sealed_alternatives"] >= 200


def test_ginkgopolis_v2_a_new_hand_is_public_at_once() -> None:
    """GK-T1 (rules version 2): a New Hand is no sealed commitment. The step itself tells
    everyone who took it and which cards were discarded; every view shows the token spent
    and the hand on the discard pile at once; the seat chooses again (only the new cards
    stay private)."""
    seen = 0
    for seed in range(4, 10):
        for step in playout(GK, 3, seed, rules_version=2, prefer=GkNewHand):
            if not isinstance(step.action, GkNewHand):
                continue
            seen += 1
            before, after, seat = step.before, step.after, step.seat
            old = sorted(card_label(c) for c in before.hands[seat])
            for viewer in (None, *(o for o in range(3) if o != seat)):
                told = [e for e in _seen_events(step.events, viewer)
                        if e["kind"] in ("new_hand_announced", "hand_discarded")]
                assert [(e["kind"], e["seat"]) for e in told] == [
                    ("new_hand_announced", seat), ("hand_discarded", seat)]
                assert told[0] == {"kind": "new_hand_announced", "seat": seat}
                assert sorted(told[1]["cards"]) == old
                view = GK.view(after, viewer)
                assert view.seats[seat].new_hand_tokens == before.nh[seat] - 1
                assert not view.seats[seat].committed and seat in view.active_seats
            assert after.choice[seat] is None and len(after.hands[seat]) == 4
    assert seen >= 10


def test_ginkgopolis_draft_picks_and_packs_stay_hidden() -> None:
    stats = _run(GK, 4, range(2), GkRerandomiser, GkOptions(characters="draft"))
    assert stats["event:draft_passed"] == 4 and stats["event:characters_revealed"] == 2
    assert stats["step_twin:draft"] >= 30


@pytest.mark.parametrize("expert", [False, True], ids=["hal", "hal-expert"])
def test_ginkgopolis_solo_deck_supply_and_hals_card_stay_hidden(expert: bool) -> None:
    stats = _run(GK, 1, range(12), GkRerandomiser, GkOptions(hal_expert=expert))
    assert stats["event:hal_card_revealed"] >= 100
    assert stats["view_twin:hal_card"] >= 10 and stats["view_twin:hands"] >= 100
    for part in ("deck", "supply", "box"):
        assert stats[f"step_twin:{part}"] >= stats["checks"] // 2, part
    if expert:
        assert stats["event:hal_extra_card"] >= 30


# ---------------------------------------------------------------------------------------
# The property bites: the leaks found by mutation testing, planted in engine wrappers.


class _NyShiftOrderLeak(Ny1901Engine):
    """Mutant 1: Market Shift lists the removed cards in their order under the future
    market."""

    def apply(self, state: NyState, seat: int, action: Any) -> tuple[NyState, list[Event]]:
        new, events = super().apply(state, seat, action)
        return new, [
            replace(e, public={**e.public, "removed": [kind_name(k) for k in
                                                       new.future[:MARKET_SIZE]]})
            if e.kind == "market_shift" else e
            for e in events
        ]


class _GkDrawnCardsLeak(GinkgopolisEngine):
    """Mutant 2: ``cards_drawn`` names the drawn cards in its public part."""

    def apply(self, s: GkState, seat: int, action: Any) -> tuple[GkState, list[Event]]:
        new, events = super().apply(s, seat, action)
        out = []
        for e in events:
            if e.kind == "cards_drawn":
                e = Event(e.kind, {**e.public, **e.private.get(e.public["seat"], {})}, {})
            out.append(e)
        return new, out


class _GkHandInViewLeak(GinkgopolisEngine):
    """A leak into an unrelated key: the next seat's hand, size-preserving, in the city
    text."""

    def view(self, s: GkState, seat: int | None) -> Any:
        view = super().view(s, seat)
        other = 0 if seat is None else (seat + 1) % s.players
        hand = ",".join(card_label(c) for c in sorted(s.hands[other]))
        return view.model_copy(update={"text": f"{view.text}\n{hand}"})


class _NyTopCardInViewLeak(Ny1901Engine):
    """A one-bit leak into a count: the future market's size is off by the top card's
    size bit."""

    def view(self, state: NyState, seat: int | None) -> Any:
        view = super().view(state, seat)
        bit = state.future[-1] & 1 if state.future else 0
        return view.model_copy(update={"future_market_size": len(state.future) + bit})


class _GkSealedTileInEventLeak(GinkgopolisEngine):
    """A sealed choice leaking through its own commitment: ``choice_committed`` says
    whether a tile goes with the card."""

    def apply(self, s: GkState, seat: int, action: Any) -> tuple[GkState, list[Event]]:
        new, events = super().apply(s, seat, action)
        with_tile = getattr(action, "tile", None) is not None
        return new, [replace(e, public={**e.public, "with_tile": with_tile})
                     if e.kind == "choice_committed" else e for e in events]


class _GkSealedTileInViewLeak(GinkgopolisEngine):
    """A sealed choice leaking into an unrelated count: a committed seat's hand count is
    one short when a tile goes with its card."""

    def view(self, s: GkState, seat: int | None) -> Any:
        view = super().view(s, seat)
        seats = [
            row.model_copy(update={"hand_count": row.hand_count - 1})
            if s.phase == CHOOSE and (c := s.choice[row.seat]) is not None and c[1] >= 0
            else row
            for row in view.seats
        ]
        return view.model_copy(update={"seats": seats})


class _GkSealedNewHandInEventLeak(GinkgopolisEngine):
    """Rules version 1 seals a New Hand with the card choices: a leak of the difference in
    the commitment's event (``new_hand``) is caught by comparing it with a card choice."""

    def apply(self, s: GkState, seat: int, action: Any) -> tuple[GkState, list[Event]]:
        new, events = super().apply(s, seat, action)
        new_hand = isinstance(action, GkNewHand)
        return new, [replace(e, public={**e.public, "new_hand": new_hand})
                     if e.kind == "choice_committed" else e for e in events]


@dataclass
class _Leak:
    engine: AnyEngine
    players: int
    make: Callable[[], Rerandomiser]
    caught_in: str
    options: Any = None
    rules_version: int | None = None


_EVENTS = r"the events depends on hidden information: \[\d+\]"
_VIEW = r"the view (after )?depends on hidden information: "
_LEAKS = {
    "ny1901-market-shift-order": _Leak(_NyShiftOrderLeak(), 3, NyRerandomiser,
                                       _EVENTS + r"\.removed\["),
    "ny1901-top-card-in-future-size": _Leak(_NyTopCardInViewLeak(), 2, NyRerandomiser,
                                            _VIEW + r"\.future_market_size"),
    "gk-cards-drawn-public": _Leak(_GkDrawnCardsLeak(), 4, GkRerandomiser,
                                   _EVENTS + r"\.cards\["),
    "gk-solo-cards-drawn-public": _Leak(_GkDrawnCardsLeak(), 1, GkRerandomiser,
                                        r"viewer None .*" + _EVENTS + r"\.cards\["),
    "gk-hand-in-city-text": _Leak(_GkHandInViewLeak(), 3, GkRerandomiser, _VIEW + r"\.text"),
    "gk-sealed-tile-in-event": _Leak(_GkSealedTileInEventLeak(), 3, GkRerandomiser,
                                     r", instead .*" + _EVENTS + r"\.with_tile"),
    "gk-sealed-tile-in-hand-count": _Leak(_GkSealedTileInViewLeak(), 3, GkRerandomiser,
                                          _VIEW + r"\.seats\[\d\]\.hand_count"),
    "gk-v1-sealed-new-hand-in-event": _Leak(_GkSealedNewHandInEventLeak(), 3, GkRerandomiser,
                                            r", instead .*" + _EVENTS + r"\.new_hand",
                                            rules_version=1),
}


@pytest.mark.parametrize("name", sorted(_LEAKS))
def test_the_property_fails_for_planted_leaks(name: str) -> None:
    leak = _LEAKS[name]
    prefer = Ny1901MarketShift if isinstance(leak.engine, Ny1901Engine) else None
    with pytest.raises(AssertionError, match=leak.caught_in):
        _run(leak.engine, leak.players, range(4), leak.make, leak.options, prefer,
             leak.rules_version)
