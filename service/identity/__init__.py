"""Credentials -> who is calling: seat tokens (``seats.py``), stream tickets
(``tickets.py``), the shapes of player tokens and app keys (``credentials.py``), app-signed
JWTs (``jwt.py``), display names (``names.py``) and the checked caller (``callers.py``)."""
