"""Reading credentials from requests: the ``Authorization: Bearer <token>`` header.

Who a token is (a seat of a match) is the business of ``service.identity``.
"""

from __future__ import annotations

from service.errors import ApiError


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header; None when absent.

    A header that is present but not a bearer token is refused (401), not ignored.
    """
    if authorization is None:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise ApiError.of("unauthorized", "Authorization must be 'Bearer <seat token>'.")
    return token
