"""The ``game`` query field: a game's component catalogue (``service.catalogue``).

The object types are generated from the catalogue's pydantic models by the schema's
``Converter``, like the views, so GraphQL serves exactly the fields REST serves.
"""

from __future__ import annotations

from typing import Annotated, Any, Union

import strawberry

from service.catalogue import CatalogueDocument, catalogue_models, catalogue_of

from .context import Info
from .convert import Codec, Converter
from .results import answer
from .types.failures import BadRequest, NotFound

GAME_DESCRIPTION = (
    "A game's component catalogue: everything a client draws or explains (board, tiles, "
    "cards and their texts), the same document as `GET /v1/games/{id}`. `rulesVersion`: one "
    "of the game's rulesVersions (a match's rulesVersion); omitted: the current one. No such "
    "game, or no such version: `NotFound` (codes not_found, unknown_rules_version)."
)
CATALOGUE_FAILURES: tuple[type, ...] = (NotFound, BadRequest)
RESULT_NAME = "GameCatalogueResult"


def graphql_catalogue_field(converter: Converter) -> Any:
    """``game(id: String!, rulesVersion: Int): GameCatalogueResult!``, where the result is
    one game's catalogue type (``Ny1901Catalogue``, ``GinkgopolisCatalogue``) or a failure.
    Built per schema, for the hosted games."""
    codecs: dict[type, Codec] = {model: converter.output(model) for model in catalogue_models()}
    members = (*(c.annotation for c in codecs.values()), *CATALOGUE_FAILURES)
    result: Any = Annotated[
        Union[members],  # noqa: UP007 - built at run time
        strawberry.union(RESULT_NAME, description="A game's catalogue, or why not."),
    ]

    def render(document: CatalogueDocument) -> Any:
        return codecs[type(document.model)].convert(document.model)

    async def game_resolver(info: Any, id: str, rules_version: int | None = None) -> Any:
        lang = info.context.lang

        async def read() -> CatalogueDocument:
            return catalogue_of(id, rules_version, lang)

        return await answer(CATALOGUE_FAILURES, read, render, lang)

    game_resolver.__annotations__ = {
        "info": Info, "id": str, "rules_version": int | None, "return": result,
    }
    return strawberry.field(resolver=game_resolver, description=GAME_DESCRIPTION)
