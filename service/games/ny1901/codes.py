"""Every refusal code New York 1901's ``apply`` can raise: the rule ids it enforces (rule ids
of ``shared/rules/ny1901.md``) and what it means. Data only, keyed by the codes' strings (the
constants of ``rules.py`` and ``base.py`` name the same strings); ``tests/test_refusal_codes.py``
checks that the two agree. Add new codes, never rename or remove one (docs/codes.md).
"""

from __future__ import annotations

from typing import Final

from ..refusals import Refusal

REFUSALS: Final[dict[str, Refusal]] = {
    # Shared by every engine (service.games.base). The service answers a seat that may not
    # act, or a finished match, with 409 before asking the rules, so these two are not met
    # over the API.
    "not_your_turn": Refusal(("NY-S5",), "Another seat is to move."),
    "game_over": Refusal(("NY-E2",), "The game is over."),
    "not_legal": Refusal(("NY-A",), "Not a New York 1901 action."),
    # The turn's structure.
    "wrong_step": Refusal(
        ("NY-A1", "NY-A2", "NY-A4", "NY-A8", "NY-C1", "NY-C2", "NY-C3"),
        "That kind of action is not allowed at this step of the turn.",
    ),
    "must_acquire": Refusal(
        ("NY-A1",),
        "With a free worker and a card in the open market, acquire a lot first (or demolish "
        "and rebuild).",
    ),
    # Acquiring a lot.
    "no_free_worker": Refusal(("NY-A1",), "All your workers are on the board."),
    "unknown_lot": Refusal(("NY-A1", "NY-A8"), "No lot of that name on this board."),
    "lot_taken": Refusal(("NY-A1",), "The lot is already owned."),
    "card_not_in_market": Refusal(
        ("NY-A1",), "No card of that lot's district and size in the open market."
    ),
    # Building and rebuilding.
    "tile_unavailable": Refusal(
        ("NY-A2", "NY-A4"), "Not a tile of your supply (already built, or no such tile)."
    ),
    "tile_not_canonical": Refusal(
        ("NY-A7",), "Of two identical tiles, place the first unused one (B1 before B2)."
    ),
    "technology_too_low": Refusal(
        ("NY-T1",), "Your score has not reached that tile's technology level."
    ),
    "legendary_unavailable": Refusal(
        ("NY-T3",), "That legendary skyscraper is built, or you have already built one."
    ),
    "illegal_placement": Refusal(
        ("NY-A6", "NY-A7"),
        "The tile must lie on lots in a listed rotation and touch a street or park.",
    ),
    "not_on_own_free_land": Refusal(
        ("NY-A2", "NY-A4"),
        "A build needs empty squares of your own land; a rebuild stays on your own land.",
    ),
    "nothing_to_demolish": Refusal(
        ("NY-A4",), "A rebuild must replace at least one of your buildings."
    ),
    "cannot_demolish": Refusal(
        ("NY-T2",),
        "The new building must be of a higher level than every building it replaces; gold "
        "is never demolished.",
    ),
    "not_enough_workers": Refusal(
        ("NY-A5",), "Not enough workers to staff the lots the rebuild leaves empty."
    ),
    # Stuck (NY-A8).
    "stuck_must_return_lot": Refusal(
        ("NY-A8",), "No free worker and nothing to build or rebuild: return a lot."
    ),
    "not_stuck": Refusal(("NY-A8",), "A lot may be returned only when stuck."),
    "lot_not_staffed": Refusal(("NY-A8",), "That lot holds none of your workers."),
    # Action cards.
    "action_card_used": Refusal(("NY-C",), "That action card was already played this game."),
    "market_shift_unavailable": Refusal(
        ("NY-C2",), "Market Shift needs at least 4 cards in the future market."
    ),
    "land_grab_three_square_lot": Refusal(
        ("NY-C3",), "No 3-square lot in a turn in which Land Grab is played."
    ),
    "land_grab_unavailable": Refusal(
        ("NY-C3",),
        "Land Grab needs a free worker, a future market and a 2-square card in the open "
        "market.",
    ),
    "nothing_to_build": Refusal(
        ("NY-C1", "NY-C3"),
        "Construction Boom needs a second build, which a Land Grab played after the build "
        "does not give.",
    ),
    "construction_boom_after_end_trigger": Refusal(
        ("NY-C1",), "No Construction Boom after a first build that triggered the end."
    ),
}
"""code -> the rules it enforces and its meaning (``Ny1901Engine.refusal_codes``)."""
