"""Ginkgopolis (Xavier Georges, Pearl Games 2012): the rules engine, Hal included.

``ENGINE`` implements the contract of ``service/games/base.py``. Modules: ``data`` (facts),
``state`` (state + serialization), ``city`` (geometry), ``rules`` (effects), ``flow`` (turn
sequencing), ``hal`` (solo automaton), ``scoring``, ``actions``, ``views``, ``render``.
"""

from .engine import ENGINE, GinkgopolisEngine, GkOptions

__all__ = ["ENGINE", "GinkgopolisEngine", "GkOptions"]
