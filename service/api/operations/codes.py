"""The problem codes operations share (``service.errors.CODES``), composed by each
operation's ``codes``."""

from __future__ import annotations

BODY = ("malformed", "body_too_large", "unsupported_media_type")
"""Reading a JSON body."""
JWT = (
    "malformed_token", "token_expired", "token_not_yet_valid", "token_bad_signature",
    "token_unknown_key", "token_bad_audience", "token_bad_issuer", "token_too_long_lived",
)
CREDENTIALS = (
    "unauthorized", "credential_revoked", "bad_name", *JWT, "busy", "store_unavailable",
    "store_full",
)
"""What checking a bearer credential may answer: a JWT signs its user in (its name is
checked, its player written: ``busy``, ``store_unavailable``, ``store_full``). So every
operation that writes (a match, a player) lists ``store_full``."""
PLAYER = CREDENTIALS
APP = CREDENTIALS
READ = (
    *CREDENTIALS, "match_not_found", "rules_version_retired", "rules_version_unavailable",
    "seat_handed_to_bot",
)
"""A match read: the caller's credential checked, then the match loaded (an old seat token
of a seat a bot took over: ``seat_handed_to_bot``)."""
WEBHOOK_URL = ("webhook_url_not_https", "webhook_url_forbidden")
