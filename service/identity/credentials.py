"""Player tokens, app keys and the shapes of every credential a caller may present.

Five kinds of credential reach the service, told apart by their shape alone (``kind_of``):

- ``sky_...``: a seat token (``seats.py``);
- ``sks_...``: a spectator token of one match (``service.matches.invites``);
- ``skp_<player id>.<secret>``: a player token, shown once when the player is created;
- ``ska_<app id>.<secret>``: an app key, an integrator backend's credential;
- three base64url parts joined by dots: a JWT an app signed for one of its users (``jwt.py``).

Ids are random (``secrets``): an app id is public (``app_`` + 20 base32 letters, 100 bits), a
player id opaque (26 base32 letters, 130 bits). A token or key embeds its owner's id, so the
one stored document to check is found without a search, then its secret is compared with the
digest kept there (``digest``: SHA-256, as for seat tokens; ``same``: constant time). A stolen
document grants nothing. Parsing is strict (charset and lengths): anything else is no id.

``user_key(app_id, sub)``: an app's user id (any string the app chose) made safe as a store
key, by hashing it.

Pure: no clock, no I/O.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from typing import Final, Literal

from service.errors import ApiError
from service.i18n import T

from . import seats

Kind = Literal["seat", "spectator", "player", "app", "jwt"]

MAX_TOKEN_LENGTH: Final = 4096
"""Longer credentials are refused before any parsing (``malformed_token``)."""
PLAYER_TOKEN_PREFIX: Final = "skp_"
APP_KEY_PREFIX: Final = "ska_"
APP_ID_PREFIX: Final = "app_"
APP_ID_LETTERS: Final = 20
PLAYER_ID_LETTERS: Final = 26
"""26 base32 letters: 130 random bits."""
MAX_SUB_LENGTH: Final = 255

_SECRET = r"[A-Za-z0-9_-]{43}"  # secrets.token_urlsafe(32)
DEFAULT_APP_ID: Final = "app_default"
"""The app of a deployment without apps (``service.players``): the one app id of another
shape."""
_APP_ID = re.compile(rf"(?:{APP_ID_PREFIX}[a-z2-7]{{{APP_ID_LETTERS}}}|{DEFAULT_APP_ID})")
_PLAYER_ID = re.compile(rf"[a-z2-7]{{{PLAYER_ID_LETTERS}}}")
_APP_KEY = re.compile(rf"{APP_KEY_PREFIX}({_APP_ID.pattern})\.{_SECRET}")
_PLAYER_TOKEN = re.compile(rf"{PLAYER_TOKEN_PREFIX}({_PLAYER_ID.pattern})\.{_SECRET}")
_JWT = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")

SPECTATOR_TOKEN_PREFIX: Final = "sks_"
"""A spectator token (``service.matches.invites``): reads one match, private or not."""
TICKET_PREFIXES: Final = ("skt_", "skf_")
"""Stream tickets (a match seat's, a player feed's): credentials of ``?ticket=`` only."""
_PREFIXES: Final[tuple[tuple[str, Kind], ...]] = (
    (seats.TOKEN_PREFIX, "seat"),
    (SPECTATOR_TOKEN_PREFIX, "spectator"),
    (PLAYER_TOKEN_PREFIX, "player"),
    (APP_KEY_PREFIX, "app"),
)


def kind_of(token: str) -> Kind:
    """Which kind of credential ``token`` is, by its shape; raises ``malformed_token``."""
    if len(token) > MAX_TOKEN_LENGTH:
        raise ApiError.of(
            "malformed_token",
            T("A token is at most {max} characters long.", max=MAX_TOKEN_LENGTH),
        )
    for prefix, kind in _PREFIXES:
        if token.startswith(prefix):
            return kind
    if token.startswith(TICKET_PREFIXES):
        raise ApiError.of(
            "unauthorized", "A stream ticket opens an event stream as ?ticket=; it is no "
            "bearer credential.",
        )
    if _JWT.fullmatch(token) is not None:
        return "jwt"
    raise ApiError.of(
        "malformed_token",
        T("The token is not a seat token, a spectator token, a player token, an app key or "
          "a JWT."),
    )


def _letters(count: int) -> str:
    """``count`` random lowercase base32 letters (5 random bits each)."""
    raw = secrets.token_bytes((count * 5 + 7) // 8)
    return base64.b32encode(raw).decode("ascii")[:count].lower()


def new_app_id() -> str:
    return APP_ID_PREFIX + _letters(APP_ID_LETTERS)


def new_player_id() -> str:
    return _letters(PLAYER_ID_LETTERS)


def is_app_id(value: str) -> bool:
    return _APP_ID.fullmatch(value) is not None


def is_player_id(value: str) -> bool:
    return _PLAYER_ID.fullmatch(value) is not None


def new_app_key(app_id: str) -> str:
    """A new secret key for ``app_id`` (shown once; store ``digest`` of it)."""
    if not is_app_id(app_id):
        raise ValueError("not an app id")
    return f"{APP_KEY_PREFIX}{app_id}.{secrets.token_urlsafe(32)}"


def new_player_token(player_id: str) -> str:
    """A new secret token for ``player_id`` (shown once; store ``digest`` of it)."""
    if not is_player_id(player_id):
        raise ValueError("not a player id")
    return f"{PLAYER_TOKEN_PREFIX}{player_id}.{secrets.token_urlsafe(32)}"


def app_of_key(key: str) -> str | None:
    """The app id an app key names, or None when ``key`` does not have an app key's shape."""
    found = _APP_KEY.fullmatch(key)
    return found.group(1) if found is not None else None


def player_of_token(token: str) -> str | None:
    """The player id a player token names, or None when ``token`` does not have its shape."""
    found = _PLAYER_TOKEN.fullmatch(token)
    return found.group(1) if found is not None else None


def digest(secret_token: str) -> str:
    """The stored form of a player token or app key (as ``seats.digest``)."""
    return seats.digest(secret_token)


def same(token: str, stored_digest: str) -> bool:
    """Whether ``token`` is the credential whose digest is ``stored_digest`` (constant time)."""
    candidate = digest(token).encode("ascii")
    return hmac.compare_digest(candidate, stored_digest.encode("utf-8", "surrogatepass"))


def user_key(app_id: str, sub: str) -> str:
    """The store-safe key of the user ``sub`` of ``app_id``: ``user:<app id>:<hash>``, only
    ``[a-z0-9:_]`` (the hash: base32 of the SHA-256 of ``sub``, lowercase, no padding)."""
    if not is_app_id(app_id):
        raise ValueError("not an app id")
    if not 1 <= len(sub) <= MAX_SUB_LENGTH:
        raise ValueError(f"a user id has 1 to {MAX_SUB_LENGTH} characters")
    hashed = hashlib.sha256(sub.encode("utf-8", "surrogatepass")).digest()
    return f"user:{app_id}:" + base64.b32encode(hashed).decode("ascii").rstrip("=").lower()
