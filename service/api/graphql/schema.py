"""``build_schema()``: the GraphQL schema for the registered engines, with its limits.

The per-game types are generated from the engines every time, sorted by game id, so the same
engines always give the same SDL (``schema.graphql`` is checked against it in CI).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

import strawberry
from graphql import GraphQLError, OperationDefinitionNode
from strawberry.extensions import (
    AddValidationRules,
    MaskErrors,
    MaxAliasesLimiter,
    MaxTokensLimiter,
    ParserCache,
    QueryDepthLimiter,
    SchemaExtension,
    ValidationCache,
)
from strawberry.types import ExecutionContext
from strawberry.utils.logging import StrawberryLogger

from service import games

from ..operations.base import Operation
from .convert import Converter
from .fields import operation_fields
from .invitations import invitation_result
from .limits import RootFieldLimit
from .mutations import build_mutation
from .queries import build_query
from .results import union_name
from .subscriptions import build_subscription
from .tables import build_table_result
from .types.failures import FAILURES
from .types.games import build_game_types
from .types.match import build_match_types
from .types.wire import WIRE
from .webhooks import OUTPUTS as WEBHOOK_OUTPUTS

_log = logging.getLogger(__name__)

MAX_DEPTH = 12
"""Deepest selection allowed; the deepest view of our games needs fewer levels."""
MAX_ALIASES = 20
MAX_TOKENS = 2000
"""Lexical tokens per document; a query selecting every field of a game's view, moves and log
uses under 400."""
DOCUMENT_CACHE = 512
"""Distinct documents whose parse and validation are cached (LRU; clients send the same few
operations with different variables, so parsing and validating once saves ~half of a small
mutation's CPU)."""

RESERVED_NAMES = (
    # The hand-written names; the generated types' names are claimed by their converter
    # (``types/wire.py``'s, which every schema's converter starts from).
    "Query", "Mutation", "Subscription", "Event", "ActionAccepted",
    "MatchResult", "LegalMovesResult", "LogResult", "CreateMatchResult", "ActResult",
    "MatchUpdate", "Problem", "NoGame", "CreateStreamTicketResult",
    "JSON", "ID", "String", "Int", "Float", "Boolean",
    "LabelInput",
    "LobbyResult", "LiveMatchesResult", "TableResult",
    "InvitationResult", "InvitationInfoResult", "SpectatorTokenResult", "MyInvitationsResult",
    "WebhookCreated", "WebhookResult", "WebhooksResult",
    "CreateWebhookResult", "WebhookSecretResult", "PingWebhookResult",
    "WebhookDeliveriesResult",
    *(kind.__name__ for kind in FAILURES),
)


class CachedParser(ParserCache):
    """Strawberry's ``ParserCache``, except that a document it cannot parse (a syntax error,
    or more than ``MAX_TOKENS`` tokens) is left to Strawberry's own parse, which answers the
    error as a GraphQL error. Strawberry 0.341 does so for queries and mutations, but a
    subscription's parse error raised here escapes: the WebSocket operation died with
    ``complete`` and no error (strawberry-graphql/strawberry#1439)."""

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        try:
            context.graphql_document = self.cached_parse_document(
                context.query, **context.parse_options
            )
        except GraphQLError:
            context.graphql_document = None  # parsed again, within Strawberry's handling
        yield


class OneOperationOrName(SchemaExtension):
    """A document of several operations needs ``operationName`` (GraphQL spec, "Executing
    Requests": ``GetOperation`` raises a request error). Strawberry 0.341 runs the first
    operation instead, over HTTP and WebSocket alike; this refuses the request with a
    GraphQL error before anything runs. It comes after ``ValidationCache`` (whose cached
    error list it leaves untouched) and adds its error to the validation errors."""

    MESSAGE = "Must provide operation name if query contains multiple operations."

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        document = context.graphql_document
        named = getattr(context, "_provided_operation_name", None)
        if document is not None and named is None and sum(
            isinstance(d, OperationDefinitionNode) for d in document.definitions
        ) > 1:
            context.pre_execution_errors = [
                *(context.pre_execution_errors or ()), GraphQLError(self.MESSAGE)
            ]
        yield


def should_mask(error: GraphQLError) -> bool:
    """Hide unexpected failures (exceptions in resolvers); keep validation errors readable."""
    original = error.original_error
    return original is not None and not isinstance(original, GraphQLError)


class SkylineSchema(strawberry.Schema):
    """strawberry's schema, logging only what is the server's fault.

    strawberry logs every error of every request at ERROR level, with the document around
    it: a client's invalid document or variables (a GraphQL validation error) would fill
    the server's log at the client's pace. Those are the client's answer, not the
    operator's concern: logged at DEBUG. An unexpected exception in a resolver (masked in
    the answer) is still logged at ERROR, with its traceback."""

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        for error in errors:
            if should_mask(error):
                StrawberryLogger.error(error, execution_context)
            else:
                _log.debug("GraphQL request refused: %s", error.message)


def build_schema(operations: Sequence[Operation] | None = None) -> strawberry.Schema:
    """The schema for every registered engine (deterministic for the same engines), its
    Query and Mutation fields generated from ``operations`` (default: the table's)."""
    if operations is None:
        from ..operations import OPERATIONS

        operations = OPERATIONS
    converter = Converter(reserved=RESERVED_NAMES, base=WIRE)
    game_types = build_game_types(converter, games.all())
    match_types = build_match_types(game_types, converter)
    outputs = {**match_types.outputs(), **WEBHOOK_OUTPUTS}
    table_result = build_table_result(match_types)
    # The result unions hand-written resolvers share with generated fields.
    unions = {union_name(u): u for u in (table_result, invitation_result)}
    limits = [
        *QueryDepthLimiter(max_depth=MAX_DEPTH).validation_rules,
        *MaxAliasesLimiter(max_alias_count=MAX_ALIASES).validation_rules,
        RootFieldLimit,
    ]
    return SkylineSchema(
        query=build_query(match_types, operation_fields(operations, "query", converter,
                                                        outputs, unions)),
        mutation=build_mutation(match_types, game_types, operation_fields(
            operations, "mutation", converter, outputs, unions), table_result),
        subscription=build_subscription(match_types, game_types),
        types=[*FAILURES, *game_types.events.types],
        extensions=[
            # The limiters' rule classes are made once: each limiter instance makes new
            # ones, which would make every request a miss in the validation cache.
            lambda: AddValidationRules(limits),
            lambda: MaxTokensLimiter(max_token_count=MAX_TOKENS),
            lambda: CachedParser(maxsize=DOCUMENT_CACHE),
            lambda: ValidationCache(maxsize=DOCUMENT_CACHE),
            OneOperationOrName,
            lambda: MaskErrors(should_mask_error=should_mask),
        ],
    )


def sdl() -> str:
    """The schema as SDL text, ending with a newline (the content of ``schema.graphql``)."""
    return str(build_schema()).rstrip("\n") + "\n"
