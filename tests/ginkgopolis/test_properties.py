"""Property tests over seeded random games (tests/conformance.py) plus Ginkgopolis
invariants: resources conserved per colour, tiles conserved, the derived indexes agree with
the city, and no view of one seat changes when only another seat's hidden choice changes."""

from __future__ import annotations

import random
from typing import Any

import pytest

from service.games.ginkgopolis import ENGINE, GkOptions
from service.games.ginkgopolis.actions import (
    GkChooseCard,
    GkDraftCharacter,
    GkNewHand,
    GkReturnTiles,
)
from service.games.ginkgopolis.data import N_TILES
from service.games.ginkgopolis.rules import resources_total
from service.games.ginkgopolis.state import GkState
from tests.conformance import check_replay, play_random_game

E = ENGINE
GAMES = 1000
HIDDEN = (GkChooseCard, GkNewHand, GkDraftCharacter, GkReturnTiles)


def check_conservation(s: GkState) -> None:
    total = resources_total(s)
    in_city = [0] * s.owners
    for key, stack in s.stacks.items():
        owner = s.owner[key]
        if owner >= 0:
            in_city[owner] += len(stack)
        assert s.where[stack[-1]] == key
    assert in_city == s.in_city, "in_city index out of step with the city"
    assert len(s.where) == len(s.stacks)
    for o in range(s.owners):
        screen = s.res_screen[o] if o < s.players else 0
        assert s.res_supply[o] >= 0 and screen >= 0
        assert s.res_supply[o] + screen + in_city[o] == total, f"resources of colour {o}"
    tiles = [*s.supply_tiles, *s.box]
    for seat_tiles in s.tiles:
        tiles.extend(seat_tiles)
    for stack in s.stacks.values():
        tiles.extend(stack)
    assert sorted(tiles) == list(range(N_TILES)), "tiles not conserved"
    for hand_or_pile in (*s.hands, s.deck, s.discard):
        for card in hand_or_pile:
            if card < N_TILES:
                assert card in s.where, "a building card names no building"
    assert all(v >= 0 for v in s.vp)
    assert len(s.markers) <= 60


def views(s: GkState, skip: int) -> list[Any]:
    return [E.view(s, seat) for seat in (None, *range(s.players)) if seat != skip]


def check_hidden(before: GkState, seat: int, action: Any, rng: random.Random) -> None:
    """Another hidden commitment of the same seat leaves every other view unchanged."""
    if len(E.active_seats(before)) == 1:
        return  # the last commitment resolves the step: a reveal, public by design
    others = [a for a in E.legal_actions(before, seat) if a != action]
    if not others:
        return
    alternative = rng.choice(others)
    if type(alternative) is not type(action):
        return
    one, ev1 = E.apply(before, seat, action)
    two, ev2 = E.apply(before, seat, alternative)
    assert views(one, seat) == views(two, seat), "a hidden choice changed another's view"
    assert [e.for_seat(None) for e in ev1] == [e.for_seat(None) for e in ev2]
    for other in range(before.players):
        if other != seat:
            assert [e.for_seat(other) for e in ev1] == [e.for_seat(other) for e in ev2]


def check_perturbed(s: GkState, rng: random.Random) -> None:
    """Swapping one seat's hidden items (hand card with a deck card, tile with a supply tile,
    a resource between screen and supply, VP) changes no other seat's view."""
    seat = rng.randrange(s.players)
    t = s.clone()
    choice = t.choice[seat]
    committed = set(choice) if choice is not None else set()
    hand = [i for i, c in enumerate(t.hands[seat]) if c not in committed]
    if hand and t.deck:
        i, j = rng.choice(hand), rng.randrange(len(t.deck))
        t.hands[seat][i], t.deck[j] = t.deck[j], t.hands[seat][i]
    tiles = [i for i, c in enumerate(t.tiles[seat]) if c not in committed]
    if tiles and t.supply_tiles:
        i, j = rng.choice(tiles), rng.randrange(len(t.supply_tiles))
        t.tiles[seat][i], t.supply_tiles[j] = t.supply_tiles[j], t.tiles[seat][i]
        t.tiles[seat].sort()
    if t.res_supply[seat] > 0:
        t.res_supply[seat] -= 1
        t.res_screen[seat] += 1
    t.vp[seat] += 3
    assert E.view(s, seat) != E.view(t, seat)  # the seat itself sees the change
    assert views(s, seat) == views(t, seat), "another seat's hidden items leaked"


def make_on_step(seed: int, leak_checks: bool) -> Any:
    rng = random.Random(seed * 7 + 1)

    def on_step(before: GkState, after: GkState) -> None:
        check_conservation(after)
        if not leak_checks:
            return
        check_perturbed(after, rng)
        for seat in sorted(E.active_seats(before)):
            legal = E.legal_actions(before, seat)
            hidden = [a for a in legal if isinstance(a, HIDDEN)]
            if hidden:
                check_hidden(before, seat, rng.choice(hidden), rng)

    return on_step


def run(players: int, seeds: range, options: GkOptions | None = None) -> None:
    for seed in seeds:
        leak = seed % 20 == 0
        playout = play_random_game(
            E,
            players,
            seed,
            options,
            full_check_every=25 if seed % 10 == 0 else 0,
            refusal_probes=1,
            on_step=make_on_step(seed, leak),
        )
        check_replay(E, playout, options)
        assert len(playout.states[-1]) <= 4096, "state too large"


@pytest.mark.slow  # a long property run
@pytest.mark.parametrize("players", [1, 2, 3, 4, 5])
def test_random_games_conform(players: int) -> None:
    """1,000 seeded games per player count: every game ends; listed actions apply;
    unlisted ones are refused with a stable code and leave the state unchanged; states
    round-trip; replay reproduces; scores equal their breakdown; resources and tiles are
    conserved; hidden choices never change another seat's view (every 20th game)."""
    run(players, range(players * 100_000, players * 100_000 + GAMES))


@pytest.mark.slow  # a long property run
@pytest.mark.parametrize(
    ("players", "options"),
    [
        (1, GkOptions(hal_expert=True)),
        (3, GkOptions(characters="draft")),
        (5, GkOptions(characters="draft")),
    ],
)
def test_random_games_conform_with_options(players: int, options: GkOptions) -> None:
    """The draft (GK-S4) and Hal's expert level (GK-H4) under the same checks."""
    run(players, range(7_000_000 + players * 1000, 7_000_000 + players * 1000 + 150), options)
