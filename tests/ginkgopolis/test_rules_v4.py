"""Rules version 4 of Ginkgopolis (``GinkgopolisEngine.rules_versions``): GK-T2, when the
moved urbanization token has no free neighbour and no free space of the walk keeps the
alphabetical order, EVERY order-keeping layout that moves the fewest other tokens is offered
(``city.fewest_moves``) -- version 3 offered only those on the spaces the tokens already
held plus one free space, withholding equal ones (issue 30, item 10). The same holds for
Hal's token, which the solo player moves (GK-H2). Version 3 is kept unchanged for its
matches (``tests/golden`` replays it bit for bit).

The oracle is ``test_oracle.fewest_layouts``: a brute-force enumeration (every set of k other
tokens, every placement of them and the token on free or vacated spaces of a walk traced edge
by edge, the order read at every choice of meetings), compared with the engine on random
positions drawn by hypothesis and at every decision of random games (``test_oracle.py``).
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.games.base import IllegalAction, parse_action
from service.games.ginkgopolis.actions import GkPlaceToken, GkTokenAt
from service.games.ginkgopolis.city import (
    boundary_walk,
    edge_spaces,
    neighbours,
    pos,
    walk_placements,
    xy,
)
from service.games.ginkgopolis.data import LETTERS
from service.games.ginkgopolis.state import CHOOSE, PLACE_TOKEN
from tests.golden.corpus import RECORDINGS, _setup

from .helpers import E
from .test_oracle import configurations, edge_walk, fewest_layouts, playout
from .test_rules_v3 import CROWDED, CROWDED_CHOICES, in_order, moved, scene, start_of

# ----------------------------------------------------------------------------- a drawn city


CROWDED_V4 = [
    GkPlaceToken(7, 0, (GkTokenAt("F", 7, -1),)),
    GkPlaceToken(6, 1, (GkTokenAt("H", 5, 1),)),
    GkPlaceToken(6, 1, (GkTokenAt("H", 4, 1),)),
    GkPlaceToken(5, 1, (GkTokenAt("H", 4, 1),)),
]
"""G has no free neighbour and no free space between F (7, 0) and H (6, 1). Moving one other
token is the least: F back to (7, -1) with G on F's space; or H on along the bay to (5, 1)
or (4, 1) with G on H's space; or -- withheld by version 3, as it uses two free spaces --
G to (5, 1) and H to (4, 1). Listed along the walk."""


def test_rules_versions_1_to_4_new_matches_get_4() -> None:
    assert E.rules_versions == (1, 2, 3, 4)
    new = E.setup(2, None, 1)
    assert new.rules_version == 4 and E.view(new, 0).rules_version == 4
    assert E.dumps(new)[0] == 2 and E.loads(E.dumps(new)).rules_version == 4
    assert E.setup(2, None, 1, 3).rules_version == 3


def test_GK_T2_v4_when_others_must_move_every_fewest_layout_is_offered() -> None:
    before = start_of(CROWDED)
    s, _ = scene(CROWDED, 4)
    assert s.pending == PLACE_TOKEN and E.active_seats(s) == {0}
    legal = E.legal_actions(s, 0)
    assert legal == CROWDED_V4
    pending = E.view(s, 1).pending
    assert pending is not None and [(c.x, c.y, [(t.letter, t.x, t.y) for t in c.others])
                                    for c in pending.choices] == [
        (7, 0, [("F", 7, -1)]), (6, 1, [("H", 5, 1)]), (6, 1, [("H", 4, 1)]),
        (5, 1, [("H", 4, 1)])]
    after, events = E.apply(s, 0, CROWDED_V4[3])
    assert in_order(after) and moved(before, after) == {"G": (5, 1), "H": (4, 1)}
    assert events[0].for_seat(None) == {"kind": "token_moved", "token": "G", "at": [5, 1],
                                        "others": [{"token": "H", "at": [4, 1]}]}
    for refused in (GkPlaceToken(5, 1), GkPlaceToken(4, 1, (GkTokenAt("H", 5, 1),)),
                    GkPlaceToken(5, 1, (GkTokenAt("H", 4, 1), GkTokenAt("I", 2, 2)))):
        try:
            E.apply(s, 0, refused)
        except IllegalAction as refusal:
            assert refusal.code == "not_legal"
        else:
            raise AssertionError(f"{refused} was accepted")


def test_GK_T2_v3_unchanged_withholds_the_layout_on_two_free_spaces() -> None:
    """Version 3 keeps offering its three re-letterings: G to (5, 1) with H to (4, 1) is
    refused there."""
    s, _ = scene(CROWDED, 3)
    assert E.legal_actions(s, 0) == CROWDED_CHOICES
    assert set(CROWDED_CHOICES) < set(CROWDED_V4)
    try:
        E.apply(s, 0, CROWDED_V4[3])
    except IllegalAction as refusal:
        assert refusal.code == "not_legal"
    else:
        raise AssertionError("version 3 accepted a version 4 layout")


def test_GK_T2_v4_GK_H2_the_solo_player_gets_every_layout_for_hals_token() -> None:
    """Hal urbanizes at G (his card): seat 0 chooses among the same four layouts."""
    s, _ = scene(CROWDED, 4, players=1)
    assert s.pending == PLACE_TOKEN and E.active_seats(s) == {0}
    assert E.legal_actions(s, 0) == CROWDED_V4
    after, _ = E.apply(s, 0, CROWDED_V4[3])
    assert after.phase == CHOOSE and after.turn == 2 and in_order(after)
    assert moved(start_of(CROWDED), after) == {"G": (5, 1), "H": (4, 1)}
    old, _ = scene(CROWDED, 3, players=1)
    assert E.legal_actions(old, 0) == CROWDED_CHOICES


# ----------------------------------------------------------------------------- random positions


def random_position(draw: Callable[[int, int], int]) -> tuple[set[int], list[int], int]:
    """A city grown from the starting square by up to 20 buildings, each beside it; the 12
    tokens in order along its walk, packed close (a third of the gaps 1-3 spaces, the rest
    none, so that tokens must often move), now and then one in an enclosed hole; the played
    token (mostly one whose space has no free neighbour) and its space built on.
    ``draw(low, high)`` picks an integer. Returns (the city, the tokens, the played token)."""
    city = {pos(x, y) for x in range(3) for y in range(3)}
    for _ in range(draw(0, 20)):
        around = sorted(edge_spaces(city))
        city.add(around[draw(0, len(around) - 1)])
    walk = traced_walk(city)
    size = len(walk)
    gaps = [draw(1, 3) if draw(0, 2) == 0 else 0 for _ in range(11)]
    while sum(gaps) + 12 > size:
        gaps[gaps.index(max(gaps))] -= 1
    start = draw(0, size - 1)
    offsets = list(itertools.accumulate((1 + g for g in gaps), initial=0))
    tokens = [walk[(start + off) % size] for off in offsets]
    if len(set(tokens)) < 12:  # a space met twice picked twice: move on to the next free ones
        taken: set[int] = set()
        for i, off in enumerate(offsets):
            at = (start + off) % size
            while walk[at] in taken:
                at = (at + 1) % size
            tokens[i] = walk[at]
            taken.add(walk[at])
        if not reads_along(walk, tokens):
            tokens = _spread(walk)
    holes = sorted(edge_spaces(city) - set(walk) - set(tokens))
    if holes and draw(0, 3) == 0:
        tokens[draw(0, 11)] = holes[draw(0, len(holes) - 1)]
    # Mostly a token whose new building will have no free neighbour (it goes elsewhere).
    shut = [i for i, k in enumerate(tokens)
            if all(n in city or n in tokens for n in neighbours(k))]
    letter = shut[draw(0, len(shut) - 1)] if shut and draw(0, 4) else draw(0, 11)
    return city | {tokens[letter]}, tokens, letter


def traced_walk(city: set[int]) -> list[int]:
    """The oracle's walk around ``city`` (``test_oracle.edge_walk``, edge by edge)."""
    return edge_walk(SimpleNamespace(stacks=city))  # type: ignore[arg-type]


def reads_along(walk: list[int], tokens: list[int]) -> bool:
    """The tokens on ``walk`` read A..L as a cycle at some choice of meetings."""
    spots: dict[int, list[int]] = {}
    for i, k in enumerate(walk):
        spots.setdefault(k, []).append(i)
    letters = [i for i, k in enumerate(tokens) if k in spots]
    if len(letters) <= 2:
        return True
    for pick in itertools.product(*(spots[tokens[i]] for i in letters)):
        ring = [i for _, i in sorted(zip(pick, letters, strict=True))]
        start = ring.index(letters[0])
        if ring[start:] + ring[:start] == letters:
            return True
    return False


def _spread(walk: list[int]) -> list[int]:
    """12 distinct spaces of the walk in walk order (first meetings)."""
    seen: list[int] = []
    for k in walk:
        if k not in seen:
            seen.append(k)
    return seen[:12]


def engine_moves(city: set[int], tokens: list[int], letter: int) -> list[GkPlaceToken]:
    return [GkPlaceToken(*xy(space), tuple(GkTokenAt(LETTERS[who], *xy(where))
                                           for who, where in others))
            for space, others in walk_placements(city, tokens, letter, tokens[letter], True)]


def check_against_oracle(city: set[int], tokens: list[int], letter: int) -> list[GkPlaceToken]:
    listed = engine_moves(city, tokens, letter)
    assert len(set(listed)) == len(listed), "a layout listed twice"
    assert set(listed) == fewest_layouts(city, tokens, letter), (
        sorted(xy(k) for k in city), [xy(k) for k in tokens], letter)
    return listed


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_GK_T2_v4_placements_match_the_brute_force_oracle(data: Any) -> None:
    """Random cities and tokens in order (hypothesis): the engine's version 4 placements are
    exactly the brute-force set -- the free neighbours of the new tile, else the free spaces
    of the walk that keep the order, else every layout that keeps it moving the fewest
    other tokens."""
    city, tokens, letter = random_position(
        lambda low, high: data.draw(st.integers(low, high)))
    check_against_oracle(city, tokens, letter)


def test_GK_T2_v4_random_positions_offer_what_version_3_withheld() -> None:
    """Seeded random positions of the same kind: the engine agrees with the oracle; where
    others must move, version 4 offers every layout version 3 offered and, often, more
    (never a layout moving more tokens: both move the fewest)."""
    rng = random.Random(30_10)
    seen = {"positions": 0, "relettered": 0, "more": 0}
    for _ in range(300):
        city, tokens, letter = random_position(rng.randint)
        listed = check_against_oracle(city, tokens, letter)
        seen["positions"] += 1
        if not any(move.others for move in listed):
            continue
        seen["relettered"] += 1
        old = walk_placements(city, tokens, letter, tokens[letter])
        new = walk_placements(city, tokens, letter, tokens[letter], True)
        assert set(old) <= set(new)
        assert {len(others) for _, others in new} == {len(others) for _, others in old}
        seen["more"] += len(new) > len(old)
    assert seen["relettered"] >= 40 and seen["more"] >= 30, seen


def test_GK_T2_v4_random_games_offer_what_version_3_withheld() -> None:
    """Random version 4 games (the oracle's playouts): at most decisions where other tokens
    must move, version 3 would have withheld an equal layout (the issue: 36 of 40)."""
    decisions = withheld = 0
    for players, seed, options in itertools.islice(configurations(), 100):
        for s, _, _ in playout(players, seed, options, 4):
            if s.pending != PLACE_TOKEN:
                assert in_order(s)
                continue
            letter = s.pending_arg
            new = walk_placements(s.stacks, s.tokens, letter, s.tokens[letter], True)
            if not any(others for _, others in new):
                continue
            old = walk_placements(s.stacks, s.tokens, letter, s.tokens[letter])
            decisions += 1
            withheld += len(new) > len(old)
            assert set(old) <= set(new)
    assert decisions >= 10 and withheld >= decisions // 2, (decisions, withheld)


def test_GK_T2_v4_the_walks_agree() -> None:
    """The oracle's walk (traced edge by edge) is the engine's, on the random cities."""
    rng = random.Random(4)
    for _ in range(300):
        city, _, _ = random_position(rng.randint)
        assert traced_walk(city) == boundary_walk(city)


# ----------------------------------------------------------------------------- golden corpus


def test_GK_T2_v4_the_golden_corpus_holds_a_layout_version_3_withheld() -> None:
    """The version 4 recordings (``tests/golden``) exercise the new rule: in one, a seat
    chooses a layout version 3 does not offer, so flipping the version branch
    (``rules.along_walk``) fails the corpus."""
    chosen = []
    for path in sorted((RECORDINGS / "v4").glob("ginkgopolis-*.json")):
        recording = json.loads(path.read_text())
        assert recording["rules_version"] == 4
        s = _setup(E, recording)
        for seat, wire in recording["actions"]:
            action = parse_action(E, wire)
            if isinstance(action, GkPlaceToken) and action.others:
                letter = s.pending_arg
                old = walk_placements(s.stacks, s.tokens, letter, s.tokens[letter])
                if (pos(action.x, action.y), tuple(
                        (LETTERS.index(t.letter), pos(t.x, t.y)) for t in action.others)
                        ) not in old:
                    chosen.append(path.name)
            s, _ = E.apply(s, seat, action)
    assert chosen, "no version 4 recording chooses a layout version 3 withheld"
