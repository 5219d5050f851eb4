"""Credentials -> who is calling. Today: seat tokens (``seats.py``); player tokens, JWTs and
app keys join them with players."""
