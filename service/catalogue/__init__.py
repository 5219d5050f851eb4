"""The component catalogue (issue 14): everything a client draws or explains, per game and
rules version, read from the engines' data so that it cannot drift from the rules.

``catalogue_of(game_id, rules_version)`` is the face REST (``GET /v1/games/{id}``) and GraphQL
(``game(id, rulesVersion)``) share. ``models.py`` holds the shared wire base, ``ny1901.py`` and
``ginkgopolis.py`` the per-game models and builders, ``*_text.py`` every English text (kept as
plain data strings, one module per game, ready for gettext catalogues).
"""

from __future__ import annotations

from .documents import CatalogueDocument, catalogue_models, catalogue_of, has_catalogue
from .ginkgopolis import GinkgopolisCatalogue
from .models import CatalogueModel, ScoringRuleInfo
from .ny1901 import Ny1901Catalogue

__all__ = [
    "CatalogueDocument",
    "CatalogueModel",
    "GinkgopolisCatalogue",
    "Ny1901Catalogue",
    "ScoringRuleInfo",
    "catalogue_models",
    "catalogue_of",
    "has_catalogue",
]
