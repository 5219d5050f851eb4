"""Board pictures over HTTP: ``GET /v1/matches/{id}/board.svg[?highlight=<move index>]``.

The picture is drawn from the caller's view only (``MatchService.get_state`` with the Bearer
token of the request; no token: the spectator's view), so a seat never sees more in the SVG
than in ``GET /v1/matches/{id}``. ``highlight`` indexes the caller's legal moves at the same
version (``GET /v1/matches/{id}/legal-moves``); a bad index is a 400 / 422 problem, never a 500.

``board_svg`` is the one function REST, GraphQL and ``skyline show`` share.
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import strawberry
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from service.pictures import SVG_MEDIA_TYPE, render_view, supported

from .auth import bearer_token
from .errors import ApiError
from .service import MatchService

MAX_CONSISTENT_READS = 5


@dataclass(frozen=True)
class BoardPicture:
    match_id: str
    version: int
    svg: str


def parse_highlight(raw: str | None) -> int | None:
    """The ``highlight`` query value: None when absent, else a non-negative integer (400)."""
    if raw is None or raw == "":
        return None
    text = raw.strip()
    if not text.isdigit() or len(text) > 9:
        raise ApiError.of("malformed", "highlight must be a move index (a non-negative integer).")
    return int(text)


async def board_svg(
    service: MatchService, match_id: str, token: str | None, highlight: int | None = None
) -> BoardPicture:
    """The SVG of the caller's view, with legal move number ``highlight`` drawn on it.

    The view and the legal moves are read at one version (re-read if a move lands between
    the two reads), so the highlighted move always belongs to the drawn position.
    """
    if highlight is not None and highlight < 0:
        raise ApiError.of("malformed", "highlight must be a move index (a non-negative integer).")
    for _ in range(MAX_CONSISTENT_READS):
        state = await service.get_state(match_id, token)
        if not supported(state.game):
            raise ApiError(
                422, "no_picture", "No picture", f"No board picture for game {state.game!r}."
            )
        move: Any = None
        if highlight is not None:
            moves = await service.legal_moves(match_id, token)
            if moves.version != state.version:
                continue
            if highlight >= len(moves.moves):
                raise ApiError(
                    422,
                    "bad_highlight",
                    "Invalid highlight",
                    f"highlight={highlight} is not a legal move index: the caller has "
                    f"{len(moves.moves)} legal moves at version {state.version}.",
                    currentVersion=state.version,
                )
            move = moves.moves[highlight]
        svg = render_view(state.view, highlight=move)
        return BoardPicture(match_id=match_id, version=state.version, svg=svg)
    raise ApiError.of("busy", "The match keeps changing; retry.", retryAfter=1)


async def board_svg_route(request: Request) -> Response:
    match_id = request.path_params["match_id"]
    token = bearer_token(request.headers.get("authorization"))
    highlight = parse_highlight(request.query_params.get("highlight"))
    service: MatchService = request.app.state.match_service
    picture = await board_svg(service, match_id, token, highlight)
    etag = f'"{picture.version}-{"x" if highlight is None else highlight}"'
    headers = {
        "ETag": etag,
        "Vary": "Authorization",
        "Cache-Control": "private, no-cache",
        "X-Match-Version": str(picture.version),
    }
    if_none_match = request.headers.get("if-none-match")
    if if_none_match is not None and etag in [t.strip() for t in if_none_match.split(",")]:
        return Response(status_code=304, headers=headers)
    return Response(
        picture.svg, media_type=f"{SVG_MEDIA_TYPE}; charset=utf-8", headers=headers
    )


def picture_routes() -> list[Route]:
    return [
        Route(
            "/v1/matches/{match_id}/board.svg", board_svg_route, methods=["GET"],
            name="board_svg",
        ),
    ]


BOARD_SVG_DESCRIPTION = (
    "The board as an SVG picture drawn from the caller's view only (the same document as "
    "`GET /v1/matches/{id}/board.svg`). `highlight`: the index of one of the caller's legal "
    "moves (as listed by `legalMoves`) to draw distinctly; an index out of range is a "
    "`BadRequest` with code `bad_highlight`."
)


def graphql_board_field() -> Any:
    """The ``boardSvg`` field of the GraphQL ``Query`` (used in ``graphql/queries.py``).

    ``boardSvg(matchId: ID!, highlight: Int): BoardSvgResult!`` where the result is
    ``BoardSvg {matchId, version, svg}`` or a read failure (``NotFound``, ``Unauthorized``,
    ``BadRequest``, ``Unavailable``). Built per schema, like the other operations.
    """
    from .graphql.context import Info
    from .graphql.results import READ_FAILURES, answer, result_union

    @strawberry.type(name="BoardSvg", description="A board picture (SVG) of one version.")
    class BoardSvgType:
        match_id: strawberry.ID
        version: int = strawberry.field(description="The match version drawn.")
        svg: str = strawberry.field(description="The SVG document (image/svg+xml).")

    result = result_union(
        "BoardSvgResult", BoardSvgType, READ_FAILURES, "The board picture, or why not."
    )

    async def board_svg_resolver(
        info: Any, match_id: Any, highlight: int | None = None
    ) -> Any:
        ctx = info.context
        return await answer(
            READ_FAILURES,
            lambda: board_svg(ctx.service, str(match_id), ctx.credentials(), highlight),
            lambda picture: BoardSvgType(
                match_id=strawberry.ID(picture.match_id), version=picture.version,
                svg=picture.svg,
            ),
        )

    board_svg_resolver.__annotations__ = {
        "info": Info, "match_id": strawberry.ID, "highlight": int | None, "return": result,
    }
    return strawberry.field(resolver=board_svg_resolver, description=BOARD_SVG_DESCRIPTION)


# -- `skyline show MATCH [--svg FILE]` ---------------------------------------------------------
SHOW_HELP = "print a match as text, or write its board picture as SVG (--svg FILE)"


def add_show_parser(commands: Any) -> None:
    """Add ``skyline show`` to the CLI's subcommands (``service/cli.py``)."""
    show = commands.add_parser("show", help=SHOW_HELP, description=SHOW_HELP)
    show.add_argument("match", help="the match id")
    show.add_argument("--svg", metavar="FILE",
                      help="write the board as SVG to FILE ('-': standard output)")
    show.add_argument("--token", default=None,
                      help="a seat token: draw that seat's view (default: a spectator's)")
    show.add_argument("--highlight", type=int, default=None, metavar="INDEX",
                      help="with --svg and --token: draw legal move number INDEX distinctly")
    show.add_argument(
        "--redis-url", default=os.environ.get("SKYLINE_REDIS_URL"),
        help="redis://host:port/db of the server's store (SKYLINE_REDIS_URL)",
    )
    show.add_argument(
        "--redis-cluster", default=os.environ.get("SKYLINE_REDIS_CLUSTER"),
        help="host:port,... seed nodes of a Redis Cluster (SKYLINE_REDIS_CLUSTER)",
    )
    show.add_argument(
        "--redis-prefix", default=os.environ.get("SKYLINE_REDIS_PREFIX", "skyline:"),
        help="key prefix in Redis (SKYLINE_REDIS_PREFIX)",
    )
    show.set_defaults(handler=run_show)


def run_show(args: Any) -> int:
    """The ``skyline show`` handler: 0 on success, 1 with a message on stderr otherwise."""
    from service.store import open_store

    store = open_store(args.redis_url or None, args.redis_cluster or None, args.redis_prefix)
    try:
        output = asyncio.run(show(store, args.match, token=args.token, svg=args.svg is not None,
                                  highlight=args.highlight))
    except ApiError as error:
        hint = ""
        if error.code == "match_not_found" and not (args.redis_url or args.redis_cluster):
            hint = (" (no --redis-url: the embedded store is empty in a new process; point "
                    "`skyline show` at the server's Redis)")
        print(f"skyline show: {error.detail}{hint}", file=sys.stderr)
        return 1
    if args.svg is None or args.svg == "-":
        sys.stdout.write(output if output.endswith("\n") else output + "\n")
    else:
        Path(args.svg).write_text(output, encoding="utf-8")
        print(f"wrote {args.svg}")
    return 0


async def show(store: Any, match_id: str, *, token: str | None = None, svg: bool = False,
               highlight: int | None = None) -> str:
    """The text (default) or SVG picture of a match, as ``token``'s seat (None: spectator)
    sees it. Text comes from the engine's own text rendering of public information."""
    from service import games

    from .records import MatchRecord

    service = MatchService(store, ttl_finished=None, ttl_idle=None)
    try:
        if svg:
            return (await board_svg(service, match_id, token, highlight)).svg
        if highlight is not None:
            raise ApiError.of("malformed", "--highlight needs --svg.")
        state = await service.get_state(match_id, token)
        picture = getattr(state.view, "text", None)
        if not isinstance(picture, str):
            _, data = await store.load(match_id)
            engine: Any = games.get(state.game)
            render = getattr(engine, "render", None)
            picture = render(engine.loads(MatchRecord.decode(data).state)) if render else ""
        who = "spectator" if state.seat is None else f"seat {state.seat}"
        lines = [f"{state.game} match {match_id} · version {state.version} · {state.status}"
                 f" · to act: {', '.join(map(str, state.active_seats)) or 'nobody'}"
                 f" · view of {who}", "", picture.rstrip("\n")]
        if state.result is not None:
            lines += ["", "final scores:"]
            for seat in sorted(state.result.seats, key=lambda s: (s.rank, s.seat)):
                parts = ", ".join(f"{line.rule} {line.points}" for line in seat.breakdown)
                lines.append(f"  seat {seat.seat}: {seat.score} (rank {seat.rank}) — {parts}")
        return "\n".join(lines) + "\n"
    finally:
        await store.close()


def openapi_path(
    problems: Any, match_id_param: dict[str, Any], auth_param: dict[str, Any]
) -> dict[str, Any]:
    """The OpenAPI path item of ``board.svg``, for ``service/api/openapi.py``'s ``_paths()``:
    ``**openapi_path(_problems, MATCH_ID_PARAM, AUTH_PARAM)`` (then ``skyline export-schema``).
    """
    return {
        "/v1/matches/{matchId}/board.svg": {"get": {
            "operationId": "getBoardSvg", "tags": ["matches"],
            "summary": "The board as an SVG picture of the caller's view.",
            "description": "Drawn from the caller's view only (no token: a spectator's). "
            "`highlight` draws the caller's legal move of that index (as listed by "
            "legal-moves at the same version) distinctly; out of range: 422 "
            "`bad_highlight`.",
            "parameters": [match_id_param, auth_param, {
                "name": "highlight", "in": "query", "required": False,
                "description": "Index of one of the caller's legal moves.",
                "schema": {"type": "integer", "minimum": 0, "maximum": 999_999_999}}, {
                "name": "If-None-Match", "in": "header", "required": False,
                "description": "A previous ETag: 304 while unchanged.",
                "schema": {"type": "string"}}],
            "responses": {
                "200": {
                    "description": "The SVG document.",
                    "headers": {"ETag": {
                        "description": 'The version and highlight, quoted ("7-x", "7-3").',
                        "required": True, "schema": {"type": "string"}}},
                    "content": {SVG_MEDIA_TYPE: {"schema": {"type": "string"}}},
                },
                "304": {"description": "Not modified."},
                **problems(400, 401, 404, 422, 503),
            },
        }},
    }
