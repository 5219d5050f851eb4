"""What an operation declares (``Operation``), the request it is served with (``Context``),
and the pieces declarations share (credentials accepted, common parameters and headers).

One ``Operation`` per REST operation, declared once in the module of its capability; the
routes (``routes.py``), the OpenAPI path items (``service.api.openapi``), the problem codes
(``service.api.problem_codes``) and the rate-limit budgets (``service.api.rate_limits``) are
all read from it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response

from service.i18n import Lang
from service.identity.callers import Credential
from service.matches.models import InputModel

from ..languages import lang_of
from ..rest.http import read_body

Budget = Literal["read", "act", "create", "stream"]
"""The rate-limit budget an operation is charged to (``service.api.rate_limits``)."""
Security = list[dict[str, list[str]]]
"""The OpenAPI security requirements an operation accepts, as alternatives."""
Step = Literal["credential", "params", "body"]
"""What the generic handler reads before the call, in the operation's ``order``."""

SEAT_TOKEN = "seatToken"
PLAYER_TOKEN = "playerToken"
PLAYER_JWT = "playerJwt"
APP_KEY = "appKey"
PUBLIC: Security = []
"""No credentials (and none looked at)."""
PLAYER_SECURITY: Security = [{PLAYER_TOKEN: []}, {PLAYER_JWT: []}]
"""A player's own operations (``/v1/me``)."""
APP_SECURITY: Security = [{APP_KEY: []}]
READ_SECURITY: Security = [{}, {SEAT_TOKEN: []}, *PLAYER_SECURITY, *APP_SECURITY]
"""A read: a spectator without credentials, a seat with its token, a player (its seat, or a
spectator where it has none), or the match's app."""
WRITE_SECURITY: Security = [{SEAT_TOKEN: []}, *PLAYER_SECURITY]
CREATE_SECURITY: Security = [{}, *APP_SECURITY, *PLAYER_SECURITY]
"""What creating a match accepts, as optional alternatives: nothing (anonymous seats), the
app's key or a player credential (seating players, lobby tables). docs/decisions.md, "The
contract declares what each handler accepts"."""

MATCH_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
PRIVATE = {"Vary": "Authorization", "Cache-Control": "private, no-cache"}
"""Per-seat answers: caches must key them on the token, and revalidate."""
NO_STORE = {"Cache-Control": "no-store"}
ETAG_HEADER = {"ETag": {"description": 'The match version, quoted ("7").', "required": True,
                        "schema": {"type": "string"}}}
"""The documented ``ETag`` of an answer tagged with the match version."""


@dataclass(frozen=True)
class Param:
    """A path, query or header parameter: its OpenAPI declaration and, for a query
    parameter the handler reads, ``parse(request, name)`` (400 ``malformed`` when bad)."""

    name: str
    where: Literal["path", "query", "header"]
    schema: Mapping[str, Any]
    description: str = ""
    required: bool = False
    parse: Callable[[Request, str], Any] | None = None

    def document(self) -> dict[str, Any]:
        """The OpenAPI parameter object."""
        out: dict[str, Any] = {"name": self.name, "in": self.where,
                               "required": self.required or self.where == "path",
                               "schema": dict(self.schema)}
        if self.description:
            out["description"] = self.description
        return out


MATCH_ID = Param("matchId", "path", {"type": "string", "pattern": MATCH_ID_PATTERN},
                 "The match id from POST /v1/matches.")


def seat_param(description: str) -> Param:
    """The ``{seat}`` path parameter (a seat number)."""
    return Param("seat", "path", {"type": "integer", "minimum": 0, "maximum": 15},
                 description)


def if_none_match(description: str = "A previous ETag: 304 while the version is unchanged."
                  ) -> Param:
    return Param("If-None-Match", "header", {"type": "string"}, description)


@dataclass(frozen=True)
class Reply:
    """The documented success answer: its schema (a model, or a component name), what it
    is, its headers and links; ``content`` replaces the schema for other media types."""

    model: type[BaseModel] | str | None
    description: str = "OK"
    headers: Mapping[str, Any] = field(default_factory=dict)
    links: Mapping[str, Any] | Callable[[], Mapping[str, Any]] = field(default_factory=dict)
    """By operation id; a function where a link points to a module declared later."""
    content: Mapping[str, Any] | None = None

    def document(self) -> dict[str, Any]:
        """The OpenAPI response object."""
        out: dict[str, Any] = {"description": self.description}
        if self.content is not None:
            out["content"] = dict(self.content)
        elif self.model is not None:
            name = self.model if isinstance(self.model, str) else self.model.__name__
            out["content"] = {"application/json": {
                "schema": {"$ref": f"#/components/schemas/{name}"}}}
        if self.headers:
            out["headers"] = dict(self.headers)
        links = self.links() if callable(self.links) else self.links
        if links:
            out["links"] = dict(links)
        return out


@dataclass(frozen=True)
class GraphQL:
    """How the operation appears in GraphQL: a ``query`` or ``mutation`` field (``name``
    where it differs from the operation id), or none (``rest_only`` says why).

    A query or mutation field is generated from the operation (``service.api.graphql.fields``):
    its arguments from the ``params`` (path and query; ``args`` renames them, ``strings``
    names the path parameters published as ``String`` rather than ``ID``), its result the
    union ``<Name>Result`` (``result``) of the answer and the failures its ``codes`` map to,
    its description the operation's summary (``description`` where GraphQL words it
    otherwise), its budget charged, and its ``call`` (``resolve``: an adapter where the
    REST call answers with bytes). ``hand_written`` says why a field is not generated."""

    kind: Literal["query", "mutation", "subscription"] | None
    name: str | None = None
    rest_only: str = ""
    description: str = ""
    result: str = ""
    """The result union's name, where it is not ``<Name>Result``."""
    result_description: str = ""
    also: tuple[str, ...] = ()
    """Codes whose members the result union lists besides those of the operation's codes
    (published before the codes were declared: a member may not leave a union)."""
    args: Mapping[str, str] = field(default_factory=dict)
    """Arguments published under another name than their parameter (``matchId`` -> ``id``)."""
    strings: tuple[str, ...] = ()
    """Path parameters published as ``String`` (the others are ``ID``s)."""
    optional: tuple[str, ...] = ()
    """Query parameters published optional (``Int = null``: the service's default applies)
    although REST's declares its default."""
    returns: Any = None
    """The answer's type where the reply names no model: a type, or a function of none
    giving the member types of the answer (the hosted games' catalogues)."""
    resolve: Call | None = None
    """The call GraphQL makes where REST's answers with a finished response."""
    hand_written: str = ""
    """Why the field is a resolver of its own (``service.api.graphql``)."""


UNCHARGED = (
    "GraphQL never charged it to its budget (REST does): generated, it would be; a resolver "
    "of its own in service/api/graphql until that is decided"
)
"""Why a field whose resolver charges nothing beyond the request's ``read`` is not generated."""


def query(name: str | None = None, **spec: Any) -> GraphQL:
    return GraphQL("query", name, **spec)


def mutation(name: str | None = None, **spec: Any) -> GraphQL:
    return GraphQL("mutation", name, **spec)


def rest_only(reason: str) -> GraphQL:
    return GraphQL(None, rest_only=reason)


@dataclass
class Context:
    """One request as the generic handler parsed it for the operation's call: its path
    parameters (Starlette's names: ``match_id``), the declared query parameters, the
    caller's credential and the body (None where the operation reads none)."""

    request: Request
    operation: Operation
    path: Mapping[str, Any]
    query: dict[str, Any] = field(default_factory=dict)
    caller: Credential = None
    body: Any = None
    language: Lang | None = None
    """The answer's language where the request's is not it (a GraphQL WebSocket's)."""

    @property
    def lang(self) -> Lang:
        return self.language if self.language is not None else lang_of(self.request)

    async def read_body(self) -> Any:
        """The declared body, for a call that reads it itself (after checks of its own)."""
        return await body_of(self.request, self.operation)

    @property
    def state(self) -> Any:
        """The app's services (``app.state``)."""
        return self.request.app.state


@dataclass(frozen=True)
class Answered:
    """An answer whose status the call chose (``enqueue``: 201 new, 200 already held)."""

    value: Any
    status: int


async def body_of(request: Request, operation: Operation) -> Any:
    """The body as the operation declares it (an empty optional body reads as ``{}``)."""
    model = operation.body
    assert model is not None
    if not operation.body_required and not await request.body():
        assert issubclass(model, InputModel)
        return model.model_validate({})
    return await read_body(request, model)


Call = Callable[[Context], Awaitable[Any]]
"""The one service call of an operation: its answer (a model, a list of models, an
``Answered``, or a finished ``Response``)."""
Endpoint = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True)
class Operation:
    """One REST operation, declared once (see the module docstring).

    Behaviour: ``call`` (through the generic handler: ``order`` says what it reads first)
    or ``handler`` (a hand-written Starlette endpoint: the hot path, streams); the answer's
    ``status``, ``headers`` (cache), ``etag`` (an opaque tag of the answer, tagged with the
    language; ``revalidate``: 304 on ``If-None-Match``) and ``location``. Contract:
    ``summary``, ``description``, ``params``, ``body``, ``reply`` and ``more`` (other
    documented answers), ``codes``, ``budget``, ``security``, ``graphql``.
    """

    id: str
    method: str
    path: str
    tag: str
    summary: str
    codes: tuple[str, ...]
    budget: Budget
    security: Security
    graphql: GraphQL
    reply: Reply
    call: Call | None = None
    handler: Endpoint | None = None
    description: str = ""
    params: tuple[Param, ...] = ()
    body: type[BaseModel] | None = None
    body_required: bool = True
    """False: an empty body reads as ``{}`` (every field optional)."""
    status: int = 200
    more: Mapping[str, Any] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    etag: Callable[[Any], str] | None = None
    revalidate: bool = False
    location: Callable[[Any], str] | None = None
    order: tuple[Step, ...] = ("credential", "params", "body")
    refusals: bool = False
    """It asks the rules: its 422 also carries the games' refusal codes."""

    @property
    def reads_credential(self) -> bool:
        """Whether the caller's credential is looked at (not a public operation)."""
        return bool(self.security)
