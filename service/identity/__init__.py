"""Credentials -> who is calling: seat tokens (``seats.py``), stream tickets
(``stream_tickets.py``), the shapes of player tokens and app keys (``credentials.py``), app-signed
JWTs (``jwt.py``), display names (``names.py``), the checked caller (``callers.py``);
bearer credentials checked into callers (``auth.py``, reading apps and players through
``lookups.py``, which ``service.players`` implements) and the player feed's tickets
(``feed_tickets.py``)."""
