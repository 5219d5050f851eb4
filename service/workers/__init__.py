"""The long-running loops that ``skyline worker`` runs beside the servers, and ``skyline
serve`` runs itself unless ``--no-worker``: bot seats (``bots.py``), deadlines of timed
matches (``clocks.py``), webhook deliveries (``webhooks.py``), idle guests (``guests.py``),
heartbeats (``heartbeat.py``); ``loops.py`` runs them all in one process."""
