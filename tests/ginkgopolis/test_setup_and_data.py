"""GK-S (setup) and the consistency of the card data."""

from __future__ import annotations

from collections import Counter

from service.games.ginkgopolis import GkOptions
from service.games.ginkgopolis import data as d
from service.games.ginkgopolis.actions import GkDraftCharacter
from service.games.ginkgopolis.city import neighbours, pos
from service.games.ginkgopolis.state import CHOOSE, DRAFT

from .helpers import E


def test_data_ids_and_labels_are_unique_and_complete() -> None:
    labels = [d.card_label(c) for c in range(d.N_CARDS)]
    assert len(set(labels)) == 99 == 12 + 60 + 27
    assert [d.tile_id(d.colour_of(t), d.number_of(t)) for t in range(60)] == list(range(60))
    assert sorted(d.START_TILES) == [t for t in range(60) if d.number_of(t) <= 3]


def test_GK_B1_data_bonus_pattern_of_cards_1_to_9() -> None:
    for tile in range(d.N_TILES):
        colour, number = d.colour_of(tile), d.number_of(tile)
        bonus = d.BUILDING_BONUS[tile]
        if number > 9:
            assert bonus is None
            continue
        assert bonus is not None and bonus.action == (number - 1) % 3
        items = (bonus.resources, bonus.tiles, bonus.vp)
        if number <= 6:
            assert items == [(1, 0, 0), (0, 1, 0), (0, 0, 1)][colour]
        else:
            assert items == [(1, 0, 1), (0, 1, 1), (0, 0, 2)][colour]


def test_GK_B2_data_cards_11_and_12_score_the_other_colours() -> None:
    for colour in range(3):
        others = {d.end_card_scored_colour(d.tile_id(colour, n)) for n in (11, 12)}
        assert others == {0, 1, 2} - {colour}
        assert d.end_card_scored_colour(d.tile_id(colour, 10)) == colour
        assert d.end_card_scored_colour(d.tile_id(colour, 13)) == colour


def test_characters_9_sets_3_per_colour_and_3_bonuses_per_action() -> None:
    chars = d.CHARACTERS
    assert len(chars) == 27 and [c.id for c in chars] == list(range(72, 99))
    assert Counter(c.set for c in chars) == {s: 3 for s in range(1, 10)}
    for colour in range(3):
        mine = [c for c in chars if c.colour == colour]
        assert Counter(c.bonus.action for c in mine) == {0: 3, 1: 3, 2: 3}
        kinds = {(c.bonus.resources, c.bonus.tiles, c.bonus.vp) for c in mine}
        assert kinds == {[(1, 0, 0), (0, 1, 0), (0, 0, 1)][colour]}
    assert {c.set for c in chars if c.reconstructed} == {7, 8, 9}
    # Starting items of each colour stay within the ranges of the public sets 1-6.
    for colour in range(3):
        public = {
            (c.start_resources, c.start_vp, c.start_tiles)
            for c in chars
            if c.colour == colour and not c.reconstructed
        }
        rebuilt = {
            (c.start_resources, c.start_vp, c.start_tiles)
            for c in chars
            if c.colour == colour and c.reconstructed
        }
        assert rebuilt <= public


def test_characters_set_2_matches_the_rulebook_example() -> None:
    """Nela's set 2 starts her with 4 resources, 2 tiles and 2 VP."""
    set2 = [c for c in d.CHARACTERS if c.set == 2]
    assert sum(c.start_resources for c in set2) == 4
    assert sum(c.start_tiles for c in set2) == 2
    assert sum(c.start_vp for c in set2) == 2


def test_resource_counts_per_player_count() -> None:
    assert d.RESOURCES_PER_PLAYER == {1: 25, 2: 25, 3: 20, 4: 18, 5: 16}


def test_GK_S1_starting_square_and_tokens() -> None:
    s = E.setup(4, None, 9)
    square = {pos(x, y) for x in range(3) for y in range(3)}
    assert set(s.stacks) == square
    assert sorted(s.stacks[k][0] for k in square) == sorted(d.START_TILES)
    assert all(s.owner[k] == -1 for k in square) and s.markers == set()
    assert s.tokens[0] == pos(0, -1) and s.tokens[3] == pos(3, 0)
    assert s.tokens[6] == pos(2, 3) and s.tokens[11] == pos(-1, 0)
    for key in s.tokens:  # every token is edge-adjacent to the square, corners are empty
        assert sum(n in square for n in neighbours(key)) == 1
    layouts = {tuple(E.setup(4, None, seed).stacks[pos(0, 0)]) for seed in range(20)}
    assert len(layouts) > 1  # random square


def test_GK_S2_S3_supply_and_deck_by_player_count() -> None:
    """GK-S2: 51 tiles in the supply, 6 of them to the box with 2-3 players. GK-S3: the deck
    is the 12 urbanization cards and the 9 cards 1-3, its top 7 discarded with 2-3 players."""
    for players, supply, box, deck, discard in ((2, 45, 6, 14, 7), (4, 51, 0, 21, 0)):
        s = E.setup(players, None, 1)
        dealt = 4 * players
        tiles_taken = sum(len(t) for t in s.tiles)
        assert len(s.supply_tiles) + tiles_taken == supply and len(s.box) == box
        assert len(s.deck) + dealt == deck and len(s.discard) == discard
        cards = sorted([*s.deck, *s.discard, *(c for h in s.hands for c in h)])
        assert cards == sorted([*d.URBANIZATION_CARDS, *d.START_TILES])


def test_GK_S4_intro_sets_give_their_starting_items() -> None:
    s = E.setup(3, None, 4)
    sets = set()
    for seat in range(3):
        chars = [d.CHARACTERS[c - d.CHAR_BASE] for c in s.front[seat]]
        assert len({c.set for c in chars}) == 1 and len(chars) == 3
        sets.add(chars[0].set)
        assert s.res_screen[seat] == sum(c.start_resources for c in chars)
        assert s.vp[seat] == sum(c.start_vp for c in chars)
        assert len(s.tiles[seat]) == sum(c.start_tiles for c in chars)
    assert len(sets) == 3


def test_GK_S4_draft_keep_one_pass_left_until_three() -> None:
    s = E.setup(3, GkOptions(characters="draft"), 8)
    assert s.phase == DRAFT and all(len(p) == 4 for p in s.draft_packs)
    assert E.active_seats(s) == frozenset({0, 1, 2})
    packs = [list(p) for p in s.draft_packs]
    picks = [p[0] for p in packs]
    for seat in range(3):
        s, _ = E.apply(s, seat, GkDraftCharacter(picks[seat]))
    for seat in range(3):  # the rest of the right-hand neighbour's pack
        assert s.draft_packs[seat] == [
            c for c in packs[(seat - 1) % 3] if c != picks[(seat - 1) % 3]
        ]
    assert E.view(s, 1).me is not None and E.view(s, 0).seats[1].cards_in_front == []
    while s.phase == DRAFT:
        for seat in range(3):
            s, _ = E.apply(s, seat, E.legal_actions(s, seat)[0])
    assert s.phase == CHOOSE
    fronts = [set(f) for f in s.front]
    assert all(len(f) == 3 for f in fronts) and not (fronts[0] & fronts[1])
    assert picks[0] in fronts[0]


def test_GK_S5_seat_0_first_with_4_cards_and_2_new_hand_tokens() -> None:
    s = E.setup(5, None, 2)
    assert s.first == 0 and all(len(h) == 4 for h in s.hands) and s.nh == [2] * 5
    assert E.view(s, None).seats[0].first_player


def test_setup_is_deterministic_per_seed() -> None:
    assert E.dumps(E.setup(4, None, 77)) == E.dumps(E.setup(4, None, 77))
    assert E.dumps(E.setup(4, None, 77)) != E.dumps(E.setup(4, None, 78))
