"""The catalogue documents: built once per (engine, rules version, language), serialized
once, and named by a hash of their JSON (the entity tag REST sends)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from service import games
from service.errors import ApiError
from service.games.base import Engine
from service.games.ginkgopolis import GinkgopolisEngine
from service.games.ny1901 import Ny1901Engine
from service.i18n import DEFAULT_LANGUAGE, Lang, T

from . import ginkgopolis, ny1901


def _build_ny1901(engine: Engine[Any], version: int, lang: Lang) -> BaseModel | None:
    return ny1901.build(engine, version, lang) if isinstance(engine, Ny1901Engine) else None


def _build_ginkgopolis(engine: Engine[Any], version: int, lang: Lang) -> BaseModel | None:
    if not isinstance(engine, GinkgopolisEngine):
        return None
    return ginkgopolis.build(engine, version, lang)


Builder = Callable[[Engine[Any], int, Lang], BaseModel | None]
# game id -> (the catalogue model, its builder: None for an engine it does not know)
BUILDERS: dict[str, tuple[type[BaseModel], Builder]] = {
    ny1901.GAME: (ny1901.Ny1901Catalogue, _build_ny1901),
    ginkgopolis.GAME: (ginkgopolis.GinkgopolisCatalogue, _build_ginkgopolis),
}


@dataclass(frozen=True, slots=True)
class CatalogueDocument:
    """One game's catalogue under one rules version, ready to send."""

    game: str
    rules_version: int
    current: bool
    """True when ``rules_version`` is the version new matches get."""
    lang: Lang
    """The language of its texts."""
    model: BaseModel
    """``Ny1901Catalogue`` or ``GinkgopolisCatalogue``."""
    body: bytes
    """The JSON document (camelCase)."""
    digest: str
    """A hash of ``body``: equal documents, equal digests."""


def has_catalogue(game_id: str) -> bool:
    """Whether ``game_id`` is hosted and has a catalogue."""
    return game_id in BUILDERS and game_id in games.ids()


def catalogue_models() -> list[type[BaseModel]]:
    """The catalogue models of the hosted games, sorted by game id."""
    return [BUILDERS[game_id][0] for game_id in sorted(games.ids()) if game_id in BUILDERS]


def catalogue_of(
    game_id: str, rules_version: int | None = None, lang: Lang = DEFAULT_LANGUAGE
) -> CatalogueDocument:
    """The catalogue of ``game_id`` under ``rules_version`` (None: the current version),
    its texts in ``lang``.

    ``not_found`` for a game that is not hosted (or has no catalogue);
    ``unknown_rules_version`` for a version this build does not play."""
    try:
        engine = games.get(game_id)
    except games.UnknownGame:
        known = ", ".join(sorted(g for g in games.ids() if g in BUILDERS)) or "none"
        raise ApiError.of(
            "not_found", T("No game {game}; known: {known}.", game=repr(game_id[:64]),
                           known=known),
        ) from None
    versions = tuple(engine.rules_versions)
    version = versions[-1] if rules_version is None else rules_version
    if version not in versions:
        raise ApiError.of(
            "unknown_rules_version",
            T("{game} has no rules version {version}; this server plays {versions}.",
              game=engine.title, version=version,
              versions=", ".join(str(v) for v in versions)),
        )
    document = _document(engine, version, version == versions[-1], lang)
    if document is None:
        raise ApiError.of(
            "not_found", T("{game} has no component catalogue.", game=engine.title)
        )
    return document


_CACHE: dict[tuple[str, int, bool, Lang], tuple[Engine[Any], CatalogueDocument | None]] = {}
"""(game, version, current, language) -> the engine it was built from and the document."""


def _document(
    engine: Engine[Any], version: int, current: bool, lang: Lang
) -> CatalogueDocument | None:
    key = (engine.id, version, current, lang)
    cached = _CACHE.get(key)
    if cached is None or cached[0] is not engine:
        cached = _CACHE[key] = (engine, _build(engine, version, current, lang))
    return cached[1]


def _build(
    engine: Engine[Any], version: int, current: bool, lang: Lang
) -> CatalogueDocument | None:
    entry = BUILDERS.get(engine.id)
    model = entry[1](engine, version, lang) if entry is not None else None
    if model is None:
        return None
    body = model.model_dump_json(by_alias=True).encode()
    return CatalogueDocument(
        game=engine.id, rules_version=version, current=current, lang=lang, model=model,
        body=body, digest=hashlib.sha256(body).hexdigest()[:32],
    )
