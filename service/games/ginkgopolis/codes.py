"""Every refusal code Ginkgopolis' ``apply`` can raise: the rule ids it enforces (rule ids of
``shared/rules/ginkgopolis.md``) and what it means. Data only, keyed by the codes' strings
(the constants of ``engine.py`` and ``base.py`` name the same strings);
``tests/test_refusal_codes.py`` checks that the two agree. Add new codes, never rename or
remove one (docs/codes.md).
"""

from __future__ import annotations

from typing import Final

from ..refusals import Refusal

REFUSALS: Final[dict[str, Refusal]] = {
    # Shared by every engine (service.games.base). The service answers a seat that may not
    # act, or a finished match, with 409 before asking the rules, so these two are not met
    # over the API.
    "not_your_turn": Refusal(
        ("GK-T1", "GK-T2"),
        "This seat may not act now (the card choice is simultaneous; the rest in turn).",
    ),
    "game_over": Refusal(("GK-E2", "GK-H3"), "The game is over."),
    "not_legal": Refusal(
        ("GK-T1", "GK-T2", "GK-S4", "GK-E1", "GK-H2"),
        "The move does not fit the position: a card not in your hand, a tile not behind your "
        "screen, a token space not allowed, no New Hand token left, a character not in your "
        "pack, tiles you may not return, or a card for Hal that is missing or superfluous.",
    ),
    "wrong_step": Refusal(
        ("GK-T", "GK-S4", "GK-E1"),
        "That kind of action is not accepted at this step.",
    ),
    "unknown_action": Refusal(("GK-T",), "Not a Ginkgopolis action."),
}
"""code -> the rules it enforces and its meaning (``GinkgopolisEngine.refusal_codes``)."""
