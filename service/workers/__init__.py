"""The long-running loops that ``skyline worker`` runs beside the servers: today the bot
seats (``bots.py``); deadlines and webhook deliveries join them later."""
