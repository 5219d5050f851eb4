"""Turn sequencing: setup (GK-S), the simultaneous steps (draft, card choice with New Hand
announcements, first supply exhaustion), resolution in turn order with sequential
follow-ups, preparation of the next turn (GK-T3) and the end (GK-E, GK-H3).

Every function mutates the (cloned) state it is given.
"""

from __future__ import annotations

from ..base import Event
from ..rng import seed_state, shuffled
from . import hal
from .city import pos
from .data import (
    CARDS_DISCARDED_SMALL,
    CHAR_BASE,
    CHARACTERS,
    HAND_SIZE,
    N_CHARS,
    N_TILES,
    NEW_HAND_TOKENS,
    NUMBERS,
    RESOURCES_PER_PLAYER,
    SOLO_HAND_SIZE,
    SOLO_START,
    START_TILES,
    TILES_REMOVED_SMALL,
    TOKEN_START,
    URBANIZATION_CARDS,
    card_label,
    tile_label,
)
from .rules import (
    Events,
    draw_cards,
    gain_resources,
    gain_tiles,
    perform_choice,
    resources_total,
    small_game,
)
from .state import (
    CHOOSE,
    DRAFT,
    FLAG_DRAFT,
    FLAG_EXPERT,
    NEW_HAND,
    NO_PENDING,
    NO_TILE,
    OVER,
    RESOLVE,
    RETURN,
    GkState,
    empty_state,
    place_building,
)

DRAFT_DEAL = 4
RETURN_PARTS = tuple((c, lo, hi) for c in range(3) for lo, hi in ((1, 10), (11, 20)))
DRAFT_KEEP = 3


def setup(players: int, seed: int, draft: bool, expert: bool, rules_version: int = 1
          ) -> GkState:
    """GK-S1..S5 (and GK-H1 for one player), under ``rules_version``."""
    s = empty_state(players)
    s.rules_version = rules_version
    s.flags = (FLAG_DRAFT if draft and players > 1 else 0) | (FLAG_EXPERT if expert else 0)
    rng = seed_state(seed)
    # S1: the 9 starting tiles in a random 3x3 square; tokens A-L around it.
    square, rng = shuffled(rng, START_TILES)
    for i, tile in enumerate(square):
        place_building(s, pos(i % 3, i // 3), (tile,), -1)
    s.tokens = [pos(x, y) for x, y in TOKEN_START]
    # S2: the other tiles shuffled into the supply; 6 to the box with 2-3 players.
    others = [t for t in range(N_TILES) if t not in START_TILES]
    supply, rng = shuffled(rng, others)
    if small_game(s):
        s.box = sorted(supply[-TILES_REMOVED_SMALL:])
        del supply[-TILES_REMOVED_SMALL:]
    s.supply_tiles = supply
    # S3: the deck; the top 7 discarded face up with 2-3 players.
    deck, rng = shuffled(rng, [*URBANIZATION_CARDS, *START_TILES])
    if small_game(s):
        for _ in range(CARDS_DISCARDED_SMALL):
            s.discard.append(deck.pop())
    s.deck = deck
    total = RESOURCES_PER_PLAYER[players]
    s.res_supply = [total] * s.owners
    s.rng = rng
    events: Events = []
    if s.solo:
        resources, tiles, vp = SOLO_START
        gain_resources(s, 0, resources)
        gain_tiles(s, 0, tiles)
        s.vp[0] = vp
        draw_cards(s, 0, SOLO_HAND_SIZE, events)
        s.phase = CHOOSE
        return s
    s.nh = [NEW_HAND_TOKENS] * players
    # S5: seat 0 is first player and deals 4 cards to each.
    for seat in range(players):
        draw_cards(s, seat, HAND_SIZE, events)
    # S4: characters.
    if s.draft:
        chars, s.rng = shuffled(s.rng, range(CHAR_BASE, CHAR_BASE + N_CHARS))
        for seat in range(players):
            s.draft_packs[seat] = sorted(chars[seat * DRAFT_DEAL : (seat + 1) * DRAFT_DEAL])
        s.phase = DRAFT
        return s
    sets, s.rng = shuffled(s.rng, range(9))
    for seat in range(players):
        base = CHAR_BASE + sets[seat] * 3
        take_characters(s, seat, [base, base + 1, base + 2])
    s.phase = CHOOSE
    return s


def take_characters(s: GkState, seat: int, characters: list[int]) -> None:
    """Characters go in front of the screen with their starting items (GK-S4)."""
    s.front[seat] = sorted(characters)
    for card in characters:
        char = CHARACTERS[card - CHAR_BASE]
        gain_resources(s, seat, char.start_resources)
        gain_tiles(s, seat, char.start_tiles)
        s.vp[seat] += char.start_vp


# --------------------------------------------------------------------------- draft


def commit_draft(s: GkState, seat: int, character: int, events: Events) -> None:
    s.choice[seat] = (character, NO_TILE, NO_TILE)
    events.append(Event("character_kept", {"seat": seat}))
    if any(c is None for c in s.choice):
        return
    n = s.players
    packs: list[list[int]] = [[] for _ in range(n)]
    for seat_i in range(n):
        choice = s.choice[seat_i]
        assert choice is not None
        s.draft_kept[seat_i].append(choice[0])
        s.draft_packs[seat_i].remove(choice[0])
        packs[(seat_i + 1) % n] = s.draft_packs[seat_i]
        s.choice[seat_i] = None
    if len(s.draft_kept[0]) < DRAFT_KEEP:
        s.draft_packs = packs
        events.append(
            Event(
                "draft_passed",
                {"pack_size": len(packs[0])},
                {i: {"pack": [card_label(c) for c in packs[i]]} for i in range(n)},
            )
        )
        return
    s.draft_packs = [[] for _ in range(n)]
    for seat_i in range(n):
        kept = s.draft_kept[seat_i]
        s.draft_kept[seat_i] = []
        take_characters(s, seat_i, kept)
    events.append(
        Event(
            "characters_revealed",
            {"characters": [[card_label(c) for c in s.front[i]] for i in range(n)]},
        )
    )
    s.phase = CHOOSE


# --------------------------------------------------------------------------- choice


def commit_choice(
    s: GkState, seat: int, card: int, tile: int, hal_card: int, events: Events
) -> None:
    s.choice[seat] = (card, tile, hal_card)
    events.append(Event("choice_committed", {"seat": seat}))
    if any(c is None for c in s.choice):
        return
    n = s.players
    order = [(s.first + i) % n for i in range(n)]
    announced = [seat_i for seat_i in order if s.choice[seat_i] == (NEW_HAND, NO_TILE, NO_TILE)]
    if announced:
        # GK-T1: New Hands in seat order from the first player; they then choose again.
        events.append(Event("new_hands_announced", {"seats": announced}))
        for seat_i in announced:
            _take_new_hand(s, seat_i, events)
            s.choice[seat_i] = None
        return
    revealed = []
    for seat_i in order:
        choice = s.choice[seat_i]
        assert choice is not None
        entry: dict[str, object] = {
            "seat": seat_i,
            "card": card_label(choice[0]),
            "tile": tile_label(choice[1]) if choice[1] >= 0 else None,
        }
        if s.solo:
            entry["discarded"] = [
                card_label(c) for c in s.hands[seat_i] if c not in (choice[0], choice[2])
            ]
        revealed.append(entry)
    events.append(Event("choices_revealed", {"choices": revealed}))
    if s.solo:
        card, _, hal_card = s.choice[0]  # type: ignore[misc]
        for c in s.hands[0]:
            if c != card and c != hal_card:
                s.discard.append(c)
        s.hands[0] = [c for c in s.hands[0] if c == card]
        s.hal_card = hal_card
    s.phase = RESOLVE
    s.res_pos = 0
    resolve(s, events)


def new_hand(s: GkState, seat: int, events: Events) -> None:
    """GK-T1 from rules version 2: a New Hand is announced, not sealed. It is carried out as
    soon as it is stored, in public (the log order is the announcement order); the seat then
    chooses from its new hand. (Version 1 seals it with the choices: ``commit_choice``.)"""
    events.append(Event("new_hand_announced", {"seat": seat}))
    _take_new_hand(s, seat, events)


def _take_new_hand(s: GkState, seat: int, events: Events) -> None:
    """Spend a New Hand token, discard the hand (face up) and draw 4."""
    s.nh[seat] -= 1
    hand = s.hands[seat]
    s.discard.extend(hand)
    events.append(Event("hand_discarded", {"seat": seat, "cards": [card_label(c) for c in hand]}))
    s.hands[seat] = []
    draw_cards(s, seat, HAND_SIZE, events)


# --------------------------------------------------------------------------- resolution


def resolve(s: GkState, events: Events) -> None:
    """Perform choices in turn order until a decision is needed or the turn ends."""
    n = s.players
    while s.phase == RESOLVE and s.pending == NO_PENDING:
        if s.solo:
            if s.res_pos == 0:
                s.res_pos = 1
                _perform(s, 0, events)
            elif s.res_pos == 1:
                s.res_pos = 2
                # Hal holds his card until he plays it. (A state rebuilt from a view, as the
                # bots' determinizer does, may show res_pos 1 while seat 0 decides where
                # Hal's token goes, GK-H2 version 2: he has played then.)
                if s.hal_card >= 0:
                    hal.play_turn(s, events)
                if s.pending == NO_PENDING:
                    after_action(s, events)
            else:
                end_turn(s, events)
        elif s.res_pos < n:
            seat = (s.first + s.res_pos) % n
            s.res_pos += 1
            _perform(s, seat, events)
        else:
            end_turn(s, events)


def _perform(s: GkState, seat: int, events: Events) -> None:
    choice = s.choice[seat]
    assert choice is not None
    card, tile, _ = choice
    s.choice[seat] = None
    hand = s.hands[seat]
    hand.remove(card)
    perform_choice(s, seat, card, tile, events)
    if s.pending == NO_PENDING:
        after_action(s, events)


def finish_follow_up(s: GkState, events: Events) -> None:
    """After a sequential follow-up decision completed a seat's action."""
    after_action(s, events)
    resolve(s, events)


def after_action(s: GkState, events: Events) -> None:
    """End conditions (GK-E2, GK-H3) and the first supply exhaustion (GK-E1)."""
    total = resources_total(s)
    if s.solo:
        if s.in_city[0] == total or s.res_supply[s.hal] == 0 or s.runs >= 1:
            s.end = True
        return
    if not s.end and any(s.in_city[seat] == total for seat in range(s.players)):
        s.end = True
        events.append(Event("end_triggered", {"reason": "all_resources_placed"}))
    if s.runs >= 2 and not s.end:
        s.end = True
        events.append(Event("end_triggered", {"reason": "supply_exhausted_twice"}))
    if s.runs >= 1 and not s.e1_done:
        s.phase = RETURN
        s.returns = [()] * s.players
        s.ret_part = [0] * s.players
        events.append(Event("tile_supply_exhausted", {}))


def returnable_tiles(s: GkState, seat: int) -> list[int]:
    """Tiles behind the screen, minus one committed with a card not yet resolved."""
    choice = s.choice[seat]
    if choice is not None and choice[1] >= 0:
        return [t for t in s.tiles[seat] if t != choice[1]]
    return s.tiles[seat]


def return_group_tiles(s: GkState, seat: int) -> list[int]:
    """The returnable tiles of the seat's current part of the GK-E1 commitment.

    Skyline ruling: the hidden choice is committed in RETURN_PARTS fixed parts (each colour,
    numbers 1-10 then 11-20) so that the moves of one part stay few (at most 2^10) however
    many tiles a seat holds; every seat commits every part, so the number of moves reveals
    nothing.
    """
    colour, low, high = RETURN_PARTS[s.ret_part[seat]]
    return [
        t
        for t in returnable_tiles(s, seat)
        if t // NUMBERS == colour and low <= t % NUMBERS + 1 <= high
    ]


def commit_returns(s: GkState, seat: int, tiles: tuple[int, ...], events: Events) -> None:
    s.returns[seat] = (*s.returns[seat], *tiles)
    s.ret_part[seat] += 1
    if s.ret_part[seat] == len(RETURN_PARTS):
        events.append(Event("tiles_return_committed", {"seat": seat}))
    if any(part < len(RETURN_PARTS) for part in s.ret_part):
        return
    returned: list[int] = []
    for seat_i in range(s.players):
        chosen = s.returns[seat_i]
        for tile in chosen:
            s.tiles[seat_i].remove(tile)
        s.vp[seat_i] += len(chosen)
        returned.extend(chosen)
    events.append(
        Event(
            "tiles_returned",
            {"tiles": [[tile_label(t) for t in s.returns[i]] for i in range(s.players)]},
        )
    )
    s.returns = [()] * s.players
    s.ret_part = [0] * s.players
    s.supply_tiles, s.rng = shuffled(s.rng, sorted(returned))
    s.e1_done = True
    s.phase = RESOLVE
    if not s.supply_tiles:
        s.runs = 2
    if s.runs >= 2 and not s.end:
        s.end = True
        events.append(Event("end_triggered", {"reason": "supply_exhausted_twice"}))
    resolve(s, events)


def end_turn(s: GkState, events: Events) -> None:
    """GK-E2 / GK-H3: the game ends after the turn; otherwise GK-T3 prepares the next."""
    if s.end:
        s.phase = OVER
        events.append(Event("game_over", {"turn": s.turn}))
        return
    s.turn += 1
    s.phase = CHOOSE
    if s.solo:
        draw_cards(s, 0, SOLO_HAND_SIZE - len(s.hands[0]), events)
        return
    n = s.players
    s.hands = [s.hands[(seat - 1) % n] for seat in range(n)]
    s.first = (s.first + 1) % n
    events.append(Event("hands_passed", {"first_player": s.first}))
    for i in range(n):
        seat = (s.first + i) % n
        draw_cards(s, seat, HAND_SIZE - len(s.hands[seat]), events)
