"""Skyline: a stateless game service for city-building board games."""
