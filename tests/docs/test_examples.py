"""Every example of the docs runs, against a live ``skyline serve``: the blocks are read from
``README.md`` and ``docs/*.md`` by ``tests/docs/examples.py``, so a doc and the server cannot
drift apart. docs/testing.md ("The docs' examples are tests") is the reference for what is
run, how variables are bound, the markers and how answers are compared; in short:

- ``sh`` blocks run in bash, in the order of their page, against one server per test module
  (embedded store, ``--sse-max-seconds 1`` so that an event stream ends), with ``B``, ``M``,
  ``TOKEN`` and ``TOKEN1`` bound (``Page.bind``); the blocks that directly follow are what they
  answer (an HTTP head, a JSON body, an event stream, plain text).
- ``graphql`` operations are posted to ``/graphql`` (leading ``# Header: value`` comments are
  headers), with the variables and the answer in the ``json`` blocks that follow; type
  definitions must agree with the schema.
- ``python`` blocks run with a New York 1901 match's ``engine``, ``state``, ``view``,
  ``legal`` and ``seat`` bound; docs/events.md's ``json`` blocks validate as events.
- ``<!-- example: ... -->`` above a block: ``not run (why)``, ``parse only (why)``, ``run
  with FLAGS``, ``on a match of its own``, ``check NAME`` (``CHECKS``). Any other block fails
  ``test_every_block_is_an_example``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from graphql import (
    ExecutableDefinitionNode,
    GraphQLError,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLObjectType,
    TypeDefinitionNode,
    build_schema,
    parse,
    print_ast,
)
from pydantic import TypeAdapter, ValidationError

from service import games
from service.api.graphql.schema import sdl
from service.cli import build_parser
from service.games.events import event_union_of
from tests.docs.examples import (
    DOCS,
    ELIDED,
    ROOT,
    Block,
    Matcher,
    blocks,
    parse_pattern,
    split_head,
    sse_events,
    text_matches,
)
from tests.support.live_serve import skyline_serve
from tests.support.slow import starts_processes

BIN = Path(sys.executable).parent
PORT = int(os.environ.get("DOCS_TEST_PORT", "0")) or None
"""A fixed port for the server (else a free one)."""
COMMAND_TIMEOUT = 120.0


# --------------------------------------------------------------------------- the plan
@dataclass
class Example:
    kind: str
    """shell, parse, graphql, sdl, python, event, check, skip."""
    block: Block
    outputs: list[Block] = field(default_factory=list)
    """The blocks that directly follow it and show what it answers."""
    option: str = ""
    """The marker's argument: flags (``run with``), a check's name, ``own match``."""


def _marker(block: Block) -> tuple[str, str] | None:
    """(kind, argument) of a block's marker; None when it has none."""
    if block.marker is None:
        return None
    for pattern, kind in (
        (r"not run \((?P<arg>.+)\)", "skip"),
        (r"parse only \((?P<arg>.+)\)", "parse"),
        (r"run with (?P<arg>--.+)", "shell"),
        (r"(?P<arg>on a match of its own)", "shell"),
        (r"check (?P<arg>.+)", "check"),
    ):
        found = re.fullmatch(pattern, block.marker)
        if found:
            return kind, found["arg"]
    raise ValueError(f"{block.where}: unknown marker <!-- example: {block.marker} -->")


def _outputs(found: list[Block], start: int, langs: tuple[str, ...], limit: int) -> list[Block]:
    out = []
    for block in found[start:start + limit]:
        if not block.follows or block.marker is not None or block.lang not in langs:
            break
        out.append(block)
    return out


def plan(path: Path) -> tuple[list[Example], list[str]]:
    """What the test does with each block of ``path``, and the blocks it cannot classify."""
    found = blocks(path)
    examples: list[Example] = []
    problems: list[str] = []
    index = 0
    while index < len(found):
        block = found[index]
        index += 1
        try:
            marked = _marker(block)
        except ValueError as error:
            problems.append(str(error))
            continue
        kind, option = marked if marked else ("", "")
        if kind == "skip":
            outputs = _outputs(found, index, ("", "json"), 2)
            examples.append(Example("skip", block, outputs, option))
        elif kind == "check":
            if option not in CHECKS:
                problems.append(f"{block.where}: no check named {option!r} ({sorted(CHECKS)})")
            examples.append(Example("check", block, [], option))
        elif block.lang == "sh":
            outputs = _outputs(found, index, ("", "json"), 2)
            examples.append(Example(kind or "shell", block, outputs, option))
        elif kind:
            problems.append(f"{block.where}: <!-- example: {block.marker} --> is for sh blocks")
            continue
        elif block.lang == "graphql":
            try:
                document = parse(block.text)
            except GraphQLError as error:
                problems.append(f"{block.where}: not a GraphQL document ({error.message}); "
                                "mark it <!-- example: not run (why) -->")
                continue
            executable = {isinstance(d, ExecutableDefinitionNode) for d in document.definitions}
            if executable == {True}:
                outputs = _outputs(found, index, ("json",), 2)
                examples.append(Example("graphql", block, outputs))
            elif executable == {False}:
                examples.append(Example("sdl", block))
            else:
                problems.append(f"{block.where}: mixes operations and type definitions")
                continue
        elif block.lang == "python":
            examples.append(Example("python", block))
        elif block.lang == "json" and path.name == "events.md":
            examples.append(Example("event", block))
        else:
            problems.append(
                f"{block.where}: a ```{block.lang or '(plain)'} block that is no example: make it "
                "one (docs/testing.md) or mark it <!-- example: not run (why) -->"
            )
            continue
        index += len(examples[-1].outputs)
    return examples, problems


def test_every_block_is_an_example() -> None:
    problems = [p for path in DOCS for p in plan(path)[1]]
    assert not problems, "\n".join(problems)


def test_the_pattern_language() -> None:
    matcher = Matcher()
    pattern = parse_pattern('{"matchId": "ec16", "seats": [{"seat": 0, ...}, ...], '
                            '"view": {...}, "moves": [{"a": 1}, ..., {"b": 2}, ...], ...}')
    actual = {"matchId": "Zq9", "seats": [{"seat": 0, "token": "t"}, {"seat": 1}],
              "view": {"x": 1}, "moves": [{"a": 1}, {"c": 0}, {"b": 2}], "more": True}
    assert matcher.mismatches(pattern, actual) == []
    assert matcher.aliases == {"ec16": "Zq9"}
    assert matcher.mismatches(parse_pattern('{"moves": [{"a": 1}, {"b": 2}]}'), actual)
    assert matcher.mismatches(parse_pattern('{"moves": [..., {"d": 2}, ...]}'), actual)
    assert matcher.mismatches(parse_pattern('{"seats": [{"seat": 1}, ...]}'), actual)
    assert matcher.mismatches(parse_pattern('{"view": {"x": true}}'), actual)  # 1 is no bool
    assert matcher.mismatches(parse_pattern('{"nothing": null}'), actual)
    assert matcher.mismatches(parse_pattern('[{"seat": 0}, ...]'), actual["seats"]) == []
    assert text_matches("At the end, ... points <x>.", "At the end, 3 points per district.")
    assert not text_matches("sky_ab...", "sky_cd")
    events = list(sse_events("id: 1\r\nevent: state\r\ndata: {}\r\n\r\n: ping\r\n\r\n...\n"))
    assert events == [{"id": "1", "event": "state", "data": "{}"}, {ELIDED: ELIDED}]


# --------------------------------------------------------------------------- running
@pytest.fixture(scope="module")
@starts_processes
def server() -> Iterator[str]:
    missing = [tool for tool in ("bash", "curl") if shutil.which(tool) is None]
    assert not missing, f"the docs' examples need {missing} (Debian: apt-get install curl)"
    with skyline_serve(["--sse-max-seconds", "1"], port=PORT) as url:
        yield url


def _created(document: Any) -> dict[str, Any] | None:
    """The first object of ``document`` that is a new match (``matchId`` and ``seats``)."""
    if isinstance(document, dict):
        if "matchId" in document and isinstance(document.get("seats"), list):
            return document
        children: Any = document.values()
    elif isinstance(document, list):
        children = document
    else:
        return None
    return next((m for m in map(_created, children) if m is not None), None)


_NUMBER = re.compile(r"[0-9]+(\.[0-9]+)?")


def _line_matches(pattern: str, actual: str, numbers: bool) -> bool:
    if not numbers:
        return text_matches(pattern.rstrip(), actual.rstrip())
    words, real = pattern.split(), actual.split()
    return len(words) == len(real) and all(
        (_NUMBER.fullmatch(w) and _NUMBER.fullmatch(r)) or text_matches(w, r)
        for w, r in zip(words, real, strict=True)
    )


def _lines_match(pattern: list[str], actual: list[str], numbers: bool) -> bool:
    """``pattern`` over ``actual``, a line ``...`` standing for any lines."""
    if not pattern:
        return not actual
    if pattern[0].strip() == ELIDED:
        return any(_lines_match(pattern[1:], actual[i:], numbers) for i in range(len(actual) + 1))
    return bool(actual) and _line_matches(pattern[0], actual[0], numbers) and _lines_match(
        pattern[1:], actual[1:], numbers)


def _join_lines(script: str) -> list[str]:
    return [line for line in script.replace("\\\n", " ").split("\n") if line.strip()]


@dataclass
class Page:
    """One page's examples run in order against the server, sharing what they bind."""

    url: str
    path: Path
    matcher: Matcher = field(default_factory=Matcher)
    env: dict[str, str] = field(default_factory=dict)
    tokens: list[str] = field(default_factory=list)
    create: str | None = None
    """The shell example that created the page's match (re-run for ``on a match of its
    own``)."""
    problems: list[str] = field(default_factory=list)
    ran: int = 0

    def __post_init__(self) -> None:
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("SKYLINE_")},
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "B": self.url,
        }

    def fail(self, block: Block, message: str) -> None:
        self.problems.append(f"{block.where}: {message}")

    def bind(self, document: Any) -> None:
        created = _created(document)
        if created is None or not all("token" in seat for seat in created["seats"]):
            return
        self.tokens = [seat["token"] for seat in created["seats"]]
        self.env["M"] = created["matchId"]
        for seat, token in enumerate(self.tokens):
            self.env["TOKEN" if seat == 0 else f"TOKEN{seat}"] = token

    def run(self, example: Example) -> None:
        handler: Callable[[Example], None] = getattr(self, f"_{example.kind}")
        if example.kind != "skip":
            self.ran += 1
        handler(example)

    def _skip(self, example: Example) -> None:
        pass

    # -- shell --------------------------------------------------------------------------
    def _bot_match(self) -> dict[str, Any]:
        response = httpx.post(f"{self.url}/v1/matches", json={
            "game": "ny1901", "players": 2, "seed": 42, "bots": {"1": "random"}})
        response.raise_for_status()
        created: dict[str, Any] = response.json()
        return created

    def _script(self, example: Example) -> str | None:
        lines = [line for line in _join_lines(example.block.text)
                 if not re.match(r"\s*(skyline serve\b|B=)", line)]
        script = "\n".join(lines)
        if "<matchId>" in script or "<seat token>" in script:
            match = self._bot_match()
            script = script.replace("<matchId>", shlex.quote(match["matchId"]))
            script = script.replace("<seat token>", shlex.quote(match["seats"][0]["token"]))
        if example.option.startswith("--"):
            script = re.sub(r"(?m)^(\s*skyline\b.*?)(\s+#.*)?$",
                            lambda m: f"{m[1]} {example.option}", script)
        left = re.findall(r"<[^<>\s][^<>]*>", script)
        if left:
            self.fail(example.block, f"placeholders the test does not bind: {left}")
            return None
        return script

    def _shell(self, example: Example) -> None:
        script = self._script(example)
        if script is None:
            return
        env = dict(self.env)
        if example.option == "on a match of its own":
            if self.create is None:
                self.fail(example.block, "no earlier example on the page created a match")
                return
            own = subprocess.run(["bash", "-c", self.create], cwd=ROOT, env=env,
                                 capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
            created = _created(json.loads(split_head(own.stdout)[1]))
            assert created is not None
            env["M"], env["TOKEN"] = created["matchId"], created["seats"][0]["token"]
        process = subprocess.run(
            ["bash", "-c", "set -eo pipefail\n" + script], cwd=ROOT, env=env,
            capture_output=True, text=True, timeout=COMMAND_TIMEOUT,
        )
        if process.returncode != 0:
            self.fail(example.block, f"exit status {process.returncode}:\n"
                      f"{process.stdout[-2000:]}{process.stderr[-2000:]}")
            return
        document = self._compare_output(example, process.stdout)
        if document is not None and _created(document) is not None:
            self.bind(document)
            self.create = script

    def _compare_output(self, example: Example, output: str) -> Any:
        """Compare ``output`` with the example's output blocks; the JSON body, if any."""
        head_pattern = next((b for b in example.outputs
                             if not b.lang and b.text.startswith("HTTP/")), None)
        head, body = split_head(output) if head_pattern else (None, output)
        if head_pattern is not None:
            if head is None:
                self.fail(head_pattern, f"expected an HTTP head, got {output[:200]!r}")
                return None
            status, *lines = head_pattern.text.strip().split("\n")
            if not text_matches(status.strip(), head.status):
                self.fail(head_pattern, f"status {head.status!r}, not {status!r}")
            for line in lines:
                name, _, value = line.partition(":")
                real = head.headers.get(name.strip().lower())
                if real is None or not text_matches(value.strip(), real):
                    self.fail(head_pattern, f"header {name.strip()}: {real!r}, not "
                              f"{value.strip()!r}")
        document: Any = None
        with contextlib.suppress(ValueError):
            document = json.loads(body)
        for block in example.outputs:
            if block is head_pattern:
                continue
            if block.lang == "json":
                if document is None:
                    self.fail(block, f"the output is not JSON: {body[:300]!r}")
                    continue
                for problem in self.matcher.mismatches(parse_pattern(block.text), document):
                    self.fail(block, problem)
            elif re.match(r"(id|event|data|retry):", block.text):
                self._compare_stream(block, body)
            else:
                self._compare_text(block, body, numbers=example.option.startswith("--"))
        return document

    def _compare_stream(self, block: Block, body: str) -> None:
        def decoded(events: Iterator[dict[str, str]], pattern: bool) -> list[Any]:
            out: list[Any] = []
            for event in events:
                if ELIDED in event:
                    out.append(ELIDED)
                    continue
                if "data" in event:
                    data = event["data"]
                    event = {**event, "data": parse_pattern(data) if pattern else json.loads(data)}
                out.append(event)
            return out

        expected = decoded(sse_events(block.text), pattern=True)
        for problem in self.matcher.mismatches(expected, decoded(sse_events(body), False)):
            self.fail(block, f"event stream: {problem}")

    def _compare_text(self, block: Block, body: str, *, numbers: bool) -> None:
        """Line by line, ``...`` for any text (a line ``...`` alone: any lines); with
        ``numbers``, word by word, any number standing for any number."""
        expected = block.text.rstrip("\n").split("\n")
        actual = body.rstrip("\n").split("\n")
        if not _lines_match(expected, actual, numbers):
            self.fail(block, "the output differs:\n" + body[-3000:])

    def _parse(self, example: Example) -> None:
        parser = build_parser()
        for line in _join_lines(example.block.text):
            argv = shlex.split(line, comments=True)
            if not argv:
                continue
            if argv[0] != "skyline":
                self.fail(example.block, f"parse only knows skyline commands, not {argv[0]}")
                continue
            try:
                parser.parse_args(argv[1:])
            except SystemExit:
                self.fail(example.block, f"skyline does not parse: {line.strip()}")

    # -- graphql ------------------------------------------------------------------------
    def _substitute(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.matcher.aliases.get(value, value)
        if isinstance(value, dict):
            return {k: self._substitute(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._substitute(v) for v in value]
        return value

    def _graphql(self, example: Example) -> None:
        headers = {}
        for line in example.block.text.split("\n"):
            found = re.match(r"#\s*([A-Za-z][A-Za-z0-9-]*):\s*(.+)$", line.strip())
            if not found:
                break
            seats = [int(n) for n in re.findall(r"<token of seat (\d+)>", found[2])]
            if any(seat >= len(self.tokens) for seat in seats):
                self.fail(example.block, f"no earlier example made a match with seats {seats}")
                return
            headers[found[1]] = re.sub(r"<token of seat (\d+)>",
                                       lambda m: self.tokens[int(m[1])], found[2].strip())
        variables: Any = None
        response_block = None
        for block in example.outputs:
            pattern = parse_pattern(block.text)
            answer_like = isinstance(pattern, dict) and bool({"data", "errors"} & set(pattern))
            if variables is None and response_block is None and not answer_like:
                variables = self._substitute(pattern)
            elif response_block is None:
                response_block = block
        answer = httpx.post(f"{self.url}/graphql", headers=headers,
                            json={"query": example.block.text, "variables": variables})
        document = answer.json()
        if response_block is None:
            self.fail(example.block, "an operation must show its answer (a ```json block "
                      f"right after it, or after its variables); it answered {answer.text[:1500]}")
        else:
            for problem in self.matcher.mismatches(parse_pattern(response_block.text), document):
                self.fail(response_block, problem)
        self.bind(document)

    def _sdl(self, example: Example) -> None:
        schema = build_schema(sdl())
        for definition in parse(example.block.text).definitions:
            if not isinstance(definition, TypeDefinitionNode):
                continue
            name = definition.name.value
            real = schema.get_type(name)
            if real is None:
                self.fail(example.block, f"the schema has no type {name}")
                continue
            if not isinstance(real, GraphQLObjectType | GraphQLInterfaceType
                              | GraphQLInputObjectType):
                continue
            shown_fields = [f.name.value for f in getattr(definition, "fields", None) or ()]
            if sorted(shown_fields) != sorted(real.fields):
                self.fail(example.block, f"{name} has the fields {', '.join(real.fields)}, not "
                          f"{', '.join(shown_fields)}")
            for doc_field in getattr(definition, "fields", None) or ():
                field_name = doc_field.name.value
                real_field = real.fields.get(field_name)
                if real_field is None:
                    self.fail(example.block, f"{name}.{field_name} is not in the schema")
                    continue
                shown = print_ast(doc_field.type)
                if shown != str(real_field.type):
                    self.fail(example.block, f"{name}.{field_name}: {real_field.type}, "
                              f"not {shown}")
                real_args = getattr(real_field, "args", {})
                doc_args = {a.name.value: a for a in getattr(doc_field, "arguments", ()) or ()}
                if list(doc_args) != list(real_args):
                    self.fail(example.block, f"{name}.{field_name} takes ({', '.join(real_args)})"
                              f", not ({', '.join(doc_args)})")
                    continue
                for arg_name, arg in doc_args.items():
                    real_arg = real_args[arg_name]
                    if print_ast(arg.type) != str(real_arg.type):
                        self.fail(example.block, f"{name}.{field_name}({arg_name}): "
                                  f"{real_arg.type}, not {print_ast(arg.type)}")
                    node = real_arg.ast_node
                    default = print_ast(node.default_value) if node and node.default_value \
                        else None
                    if arg.default_value is not None and print_ast(arg.default_value) != default:
                        self.fail(example.block, f"{name}.{field_name}({arg_name}): the default "
                                  f"is {default}, not {print_ast(arg.default_value)}")

    # -- python, data ---------------------------------------------------------------------
    def _python(self, example: Example) -> None:
        engine = games.get("ny1901")
        state = engine.setup(2, None, 42)
        legal = engine.legal_actions(state, 0)
        namespace: dict[str, Any] = {"engine": engine, "state": state, "seat": 0,
                                     "view": engine.view(state, 0), "legal": legal}
        exec(compile(example.block.text, example.block.where, "exec"), namespace)
        if "action" in namespace and namespace["action"] not in legal:
            self.fail(example.block, f"action {namespace['action']!r} is not in legal")

    def _event(self, example: Example) -> None:
        text = self.path.read_text("utf-8")
        before = "\n".join(text.split("\n")[:example.block.line])
        sections = re.findall(r"^## .*\(`([a-z0-9_]+)`\)", before, re.MULTILINE)
        kinds = re.findall(r"^### `([a-z_]+)`", before, re.MULTILINE)
        event = json.loads(example.block.text)
        candidates = [sections[-1]] if sections else sorted(games.ids())
        errors = []
        for game in candidates:
            union = event_union_of(games.get(game))
            if union is None:
                continue
            try:
                TypeAdapter(union).validate_python(event, strict=True)
                break
            except ValidationError as error:
                errors.append(f"{game}: {error.errors(include_url=False)[:3]}")
        else:
            self.fail(example.block, f"not an event of {candidates}: {errors}")
        if sections and kinds and event.get("kind") != kinds[-1]:
            self.fail(example.block, f"a {event.get('kind')!r} event under ### `{kinds[-1]}`")

    def _check(self, example: Example) -> None:
        for problem in CHECKS[example.option](self.url, example.block.text):
            self.fail(example.block, problem)


def _ny1901_board(version: int) -> Callable[[str, str], list[str]]:
    def check(url: str, text: str) -> list[str]:
        rows = httpx.get(f"{url}/v1/games/ny1901?rulesVersion={version}").json()["board"]["rows"]
        # The first line numbers the columns; every other starts with its row's number.
        shown = [m[1] for m in re.finditer(r"^\s*\d+  (.*?)\s*$", text.split("\n", 1)[1],
                                           re.MULTILINE)]
        if shown != rows:
            return [f"the map differs from the board of rules version {version}: "
                    + next((f"row {y}: {a!r} (board: {b!r})"
                            for y, (a, b) in enumerate(zip(shown, rows, strict=False)) if a != b),
                           f"{len(shown)} rows, not {len(rows)}")]
        return []

    return check


def _webhook_receiver(url: str, text: str) -> list[str]:
    """docs/clocks-and-notifications.md's Python receiver, fed deliveries signed the way the
    server signs them: a good one is handled once (a repeat is only acknowledged), a
    tampered or stale one is refused."""
    import time as _time

    from service.webhooks import signing

    secret = signing.new_secret()
    handled: list[tuple[str, Any]] = []
    seen: set[str] = set()

    def seen_before(msg_id: str) -> bool:
        if msg_id in seen:
            return True
        seen.add(msg_id)
        return False

    scope: dict[str, Any] = {"SKYLINE_WEBHOOK_SECRET": secret, "seen_before": seen_before,
                             "handle": lambda kind, data: handled.append((kind, data))}
    exec(compile(text, "<docs webhook receiver>", "exec"), scope)
    receive = scope["receive"]
    body = json.dumps({"type": "your_turn", "timestamp": "2026-12-06T10:00:00.000Z",
                       "data": {"matchId": "m1", "version": 3, "seat": 0}}).encode()
    good = signing.headers(secret, "msg_1", body, _time.time())
    problems = []
    if receive(body, good) != 204 or handled != [("your_turn", {"matchId": "m1",
                                                                "version": 3, "seat": 0})]:
        problems.append(f"a signed delivery was not handled once: {handled}")
    if receive(body, good) != 204 or len(handled) != 1:
        problems.append("a repeated delivery was handled again")
    if receive(body.replace(b"3", b"4"), signing.headers(secret, "msg_2", body,
                                                         _time.time())) != 400:
        problems.append("a tampered body was accepted")
    if receive(body, signing.headers(secret, "msg_3", body, _time.time() - 3600)) != 400:
        problems.append("a delivery an hour old was accepted")
    return problems


def _webhook_receiver_ts(url: str, text: str) -> list[str]:
    """docs/clocks-and-notifications.md's TypeScript receiver, compiled by ``tsc --strict``
    (tests/clients/tsconfig.json but ``noImplicitReturns``) into
    tests/docs/webhook_receiver.ts (a stand-in for Express around it) and run by Node
    with the npm ``standardwebhooks`` that tests/clients pins; fed deliveries signed by the
    Python library the way the server signs them: a good one is enqueued once (a repeat is
    only acknowledged), a tampered, stale or otherwise keyed one is refused."""
    import base64
    import tempfile
    import time as _time

    from service.webhooks import signing
    from tests.clients.conftest import install_node_tools, run, tool_env, ts_build

    tools = install_node_tools()
    secret = signing.new_secret()
    data = {"matchId": "m1", "version": 3, "seat": 0, "sub": "user-1"}
    body = json.dumps({"type": "your_turn", "timestamp": "2026-12-06T10:00:00.000Z",
                       "data": data}).encode()
    now = _time.time()
    cases = [
        (body, signing.headers(secret, "msg_1", body, now)),  # good
        (body, signing.headers(secret, "msg_1", body, now)),  # the same again
        (body.replace(b"3", b"4"), signing.headers(secret, "msg_2", body, now)),  # tampered
        (body, signing.headers(secret, "msg_3", body, now - 3600)),  # an hour old
        (body, signing.headers(signing.new_secret(), "msg_4", body, now)),  # another key
    ]
    harness = (Path(__file__).parent / "webhook_receiver.ts").read_text("utf-8")
    if harness.count("// EXAMPLE\n") != 1:
        return ["tests/docs/webhook_receiver.ts has no single // EXAMPLE line"]
    with tempfile.TemporaryDirectory() as tmp:
        build = ts_build(Path(tmp) / "ts", [], ["receiver.ts"])
        # Strict, except that an Express handler may `return res.sendStatus(400)` on one
        # path and fall off the end on another (the usual idiom; Express ignores the value).
        config = (build / "tsconfig.json").read_text()
        (build / "tsconfig.json").write_text(config.replace(
            '"compilerOptions": {', '"compilerOptions": {"noImplicitReturns": false, ', 1))
        (build / "receiver.ts").write_text(harness.replace("// EXAMPLE\n", text), "utf-8")
        (build / "cases.json").write_text(json.dumps([
            {"body": base64.b64encode(b).decode(), "headers": h} for b, h in cases]))
        run([tools["tsc"], "-p", build / "tsconfig.json"], cwd=build,
            what="tsc --strict over the docs' TypeScript webhook receiver")
        done = run(["node", build / "out" / "receiver.js", build / "cases.json"], cwd=build,
                   env={**tool_env(), "SKYLINE_WEBHOOK_SECRET": secret}, timeout=60,
                   what="the docs' TypeScript webhook receiver")
    results = json.loads(done.stdout.strip().splitlines()[-1])
    event = {"type": "your_turn", "timestamp": "2026-12-06T10:00:00.000Z", "data": data}
    expected = [(204, [event]), (204, []), (400, []), (400, []), (400, [])]
    what = ["a signed delivery was not enqueued once", "a repeated delivery was enqueued again",
            "a tampered body was accepted", "a delivery an hour old was accepted",
            "a delivery signed with another secret was accepted"]
    return [f"{problem}: {result}" for problem, result, (status, queued)
            in zip(what, results, expected, strict=True)
            if (result["status"], result["enqueued"]) != (status, queued)]


CHECKS: dict[str, Callable[[str, str], list[str]]] = {
    "the New York 1901 board of rules version 3": _ny1901_board(3),
    "the Python webhook receiver": _webhook_receiver,
    "the TypeScript webhook receiver": _webhook_receiver_ts,
}
"""Marker ``check NAME``: NAME -> (server URL, the block's text) -> problems."""


RUNNABLE = [path for path in DOCS
            if any(e.kind != "skip" for e in plan(path)[0])]


@pytest.mark.parametrize("path", RUNNABLE, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_examples_of(path: Path, server: str) -> None:
    examples, unclassified = plan(path)
    page = Page(server, path)
    for example in examples:
        page.run(example)
    assert page.ran, f"{path.name}: no example ran"
    problems = unclassified + page.problems
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)
