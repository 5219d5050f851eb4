"""What ``GET /v1/matches/{id}`` answered at each version of a match, recorded while it is
played, and what a resumed stream (full or patch mode) sends for each version: the two must
agree field by field, but for what is read anew each time (``states.timeless``)."""

from __future__ import annotations

import json
from typing import Any

import jsonpatch

from service.errors import ApiError
from service.matches import MatchService
from tests.support.states import timeless

Answers = dict[int, dict[int | None, dict[str, Any]]]
"""version -> seat (None: a spectator) -> the state GET answered, as JSON."""


async def record_gets(service: MatchService, match_id: str, tokens: dict[int, str],
                      answers: Answers) -> int:
    """GET the match as a spectator and as each seat whose token still reads it; store the
    answers under their version, and return it."""
    spectator = (await service.get_state(match_id, None)).to_json()
    version = int(str(spectator["version"]))
    seen: dict[int | None, dict[str, Any]] = {None: spectator}
    for seat, token in tokens.items():
        try:
            seen[seat] = (await service.get_state(match_id, token)).to_json()
        except ApiError:
            continue  # a bot holds the seat now: the token no longer reads it
    answers[version] = seen
    return version


async def resumed(service: MatchService, match_id: str, token: str | None, after: int,
                  mode: str = "full", *, upto: int | None = None) -> dict[int, dict[str, Any]]:
    """Every version a stream resumed after ``after`` sends (to the end of the match, or up
    to ``upto``), as JSON: whole states, or in patch mode, each patch applied to the state
    before (checking that it is the patch of that state)."""
    out: dict[int, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    stream = service.follow(match_id, token=token, after=after, mode=mode)  # type: ignore[arg-type]
    try:
        async for event in stream:
            data = json.loads(event.data)
            if event.kind == "patch":
                assert current is not None and data["baseVersion"] == current["version"]
                current = jsonpatch.apply_patch(current, data["operations"])
            else:
                current = data
            assert current is not None and current["version"] == event.version
            out[event.version] = current
            if event.finished or (upto is not None and event.version >= upto):
                break
    finally:
        await stream.aclose()
    return out


def differences(answers: Answers, sent: dict[int, dict[str, Any]],
                seat: int | None) -> list[str]:
    """Each version ``sent`` where the stream disagrees with GET: field by field."""
    out = []
    for version, state in sorted(sent.items()):
        got = answers.get(version, {}).get(seat)
        if got is None:
            out.append(f"v{version}: no GET answer recorded")
            continue
        want, have = timeless(got), timeless(state)
        for key in sorted(set(want) | set(have)):
            if want.get(key) != have.get(key):
                out.append(f"v{version} {key}: GET {want.get(key)!r} != stream "
                           f"{have.get(key)!r}"[:300])
    return out
