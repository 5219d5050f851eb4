"""The long-running loops that ``skyline worker`` runs beside the servers (and ``skyline
serve`` inside itself unless ``--no-worker``): bot seats (``bots.py``), deadlines
(``clocks.py``), webhook deliveries (``webhooks.py``), idle guests' expiry (``guests.py``),
and the heartbeats that tell ``/readyz`` the loops run (``heartbeat.py``); ``loops.py`` runs
them all in one process."""
