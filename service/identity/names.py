"""Display names: what a player (or an app, for its user) may be called.

A name is text shown to other players, so it is normalized before it is checked or kept:
NFC (``e`` + a combining acute accent is the one character ``é``), surrounding whitespace
stripped. Then it has 1 to 32 code points and no character that is invisible or may disguise
the text around it: controls (Cc), format characters (Cf: zero-width spaces and joiners,
bidirectional overrides), surrogates (Cs), private-use (Co) and unassigned (Cn) code points,
line and paragraph separators (Zl, Zp). Letters of any script, inner spaces, punctuation and
symbols (emoji) are fine. A refusal says what is wrong without repeating the name.

``NEUTRAL_NAME``: the name a deleted player gets everywhere it was shown.

Pure: no I/O.
"""

from __future__ import annotations

import unicodedata
from typing import Final

from service.errors import ApiError
from service.i18n import T

MAX_NAME_LENGTH: Final = 32
"""Code points, after NFC normalization."""
NEUTRAL_NAME: Final = "Former player"
FORBIDDEN_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def clean_name(raw: object) -> str:
    """``raw`` as a name (NFC, stripped), or ``bad_name``."""
    if not isinstance(raw, str):
        raise ApiError.of("bad_name", T("A name must be a string."))
    name = unicodedata.normalize("NFC", raw).strip()
    if not name:
        raise ApiError.of("bad_name", T("A name must not be empty."))
    if len(name) > MAX_NAME_LENGTH:
        raise ApiError.of(
            "bad_name",
            T("A name has at most {max} characters, not {length}.", max=MAX_NAME_LENGTH,
              length=len(name)),
        )
    for char in name:
        if unicodedata.category(char) in FORBIDDEN_CATEGORIES:
            raise ApiError.of(
                "bad_name",
                T("A name may not contain the invisible or control character {char}.",
                  char=f"U+{ord(char):04X}"),
            )
    return name

