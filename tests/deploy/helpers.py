"""Small parsers for the deployment files: Dockerfile instructions, .dockerignore matching,
nginx configuration blocks and location selection, Kubernetes quantities, and the SKYLINE_*
environment names the CLI reads."""

from __future__ import annotations

import argparse
import json
import re
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
K8S = DEPLOY / "k8s"

# What `skyline serve` / `skyline worker` read, as planned. Used only while the CLI names none.
PLANNED_ENV_NAMES = frozenset({
    "SKYLINE_HOST",
    "SKYLINE_PORT",
    "SKYLINE_REDIS_URL",
    "SKYLINE_REDIS_CLUSTER",
    "SKYLINE_CORS_ORIGINS",
    "SKYLINE_TTL_FINISHED",
    "SKYLINE_TTL_IDLE",
    "SKYLINE_MAX_BODY_BYTES",
    "SKYLINE_REDIS_PREFIX",
    "SKYLINE_LOG_LEVEL",
})
# Non-SKYLINE_ settings the manifests may carry: none since forwarded headers are read by the
# app from SKYLINE_TRUSTED_PROXIES (uvicorn's FORWARDED_ALLOW_IPS is not used).
UVICORN_ENV_NAMES: frozenset[str] = frozenset()
ENV_NAME = re.compile(r"\bSKYLINE_[A-Z0-9_]*[A-Z0-9]\b")


def load_yaml_all(path: Path) -> list[Any]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


# --- the CLI's environment names --------------------------------------------------------------


def _names_in_source() -> set[str]:
    names: set[str] = set()
    for path in sorted((REPO / "service").rglob("*.py")):
        names.update(ENV_NAME.findall(path.read_text()))
    return names


def _names_from_parser() -> set[str]:
    """SKYLINE_<FLAG> for every long option of `serve` and `worker` (the CLI reads each flag
    from ``SKYLINE_<FLAG>`` too)."""
    try:
        from service import cli

        parser = cli.build_parser()
    except Exception:  # the CLI is being written; the other sources stand in
        return set()
    names: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in ("serve", "worker"):
                sub = action.choices.get(command)
                if sub is None:
                    continue
                for option in sub._actions:
                    for flag in option.option_strings:
                        if flag.startswith("--") and flag != "--help":
                            names.add("SKYLINE_" + flag[2:].replace("-", "_").upper())
    return names


def known_env_names() -> tuple[frozenset[str], str]:
    """The SKYLINE_* names the service reads and where that list came from: the names spelled
    in service/ plus SKYLINE_<FLAG> of each `serve`/`worker` flag; the planned list only while
    the CLI yields neither."""
    spelled, flags = _names_in_source(), _names_from_parser()
    if spelled or flags:
        return frozenset(spelled | flags), "service/ source and skyline serve/worker flags"
    return PLANNED_ENV_NAMES, "planned list (service/cli.py names none yet)"


def env_names_in(values: Iterable[str]) -> set[str]:
    found: set[str] = set()
    for value in values:
        found.update(ENV_NAME.findall(value))
    return found


# --- Dockerfile ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Instruction:
    keyword: str
    flags: dict[str, str]
    value: str
    line: int

    def exec_form(self) -> list[str] | None:
        """The JSON array of an exec-form CMD/ENTRYPOINT/RUN, else None."""
        if not self.value.startswith("["):
            return None
        parsed = json.loads(self.value)
        assert isinstance(parsed, list) and all(isinstance(x, str) for x in parsed)
        return parsed


def parse_dockerfile(text: str) -> list[Instruction]:
    """Instructions with continuation lines joined; comments and blank lines dropped. Leading
    ``--flag=value`` words become ``flags`` (``--mount`` may repeat: values joined by ``;``)."""
    instructions: list[Instruction] = []
    buffer: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue  # also inside a continuation, as Docker does
        if not buffer:
            start = number
        if stripped.endswith("\\"):
            buffer.append(stripped[:-1].strip())
            continue
        buffer.append(stripped)
        line = " ".join(part for part in buffer if part)
        buffer = []
        keyword, _, rest = line.partition(" ")
        flags: dict[str, str] = {}
        rest = rest.strip()
        while rest.startswith("--"):
            word, _, rest = rest.partition(" ")
            name, _, value = word[2:].partition("=")
            flags[name] = f"{flags[name]};{value}" if name in flags else value
            rest = rest.strip()
        instructions.append(Instruction(keyword.upper(), flags, rest, start))
    assert not buffer, "the Dockerfile ends inside a continuation line"
    return instructions


def _substitute(value: str, variables: dict[str, str]) -> str:
    def repl(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return variables.get(name, "")

    return re.sub(r"\$\{(\w+)\}|\$(\w+)", repl, value)


def env_pairs(value: str) -> dict[str, str]:
    """``ENV a=b c="d e"`` (or the legacy ``ENV a b``) as a dict."""
    words = shlex.split(value)
    if words and "=" not in words[0]:
        return {words[0]: " ".join(words[1:])}
    return dict(word.split("=", 1) for word in words)


@dataclass
class Stage:
    image: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)


def stages(instructions: list[Instruction]) -> list[Stage]:
    """Build stages, with global ARG defaults substituted into each FROM image."""
    global_args: dict[str, str] = {}
    result: list[Stage] = []
    for instruction in instructions:
        if instruction.keyword == "ARG" and not result:
            name, _, default = instruction.value.partition("=")
            global_args[name.strip()] = default.strip().strip('"')
        elif instruction.keyword == "FROM":
            words = instruction.value.split()
            name = words[2] if len(words) == 3 and words[1].lower() == "as" else None
            result.append(Stage(_substitute(words[0], global_args), name))
        elif result:
            result[-1].instructions.append(instruction)
    return result


def healthcheck_command(stage: Stage) -> list[str]:
    """The exec-form command of the stage's HEALTHCHECK (``HEALTHCHECK [flags] CMD [...]``)."""
    checks = [i for i in stage.instructions if i.keyword == "HEALTHCHECK"]
    assert checks, "no HEALTHCHECK"
    keyword, _, command = checks[-1].value.partition(" ")
    assert keyword.upper() == "CMD", "HEALTHCHECK must run a command"
    parsed = json.loads(command.strip())
    assert isinstance(parsed, list)
    return [str(x) for x in parsed]


def dockerfile_problems(text: str, port: int = 8000) -> list[str]:
    """Everything wrong with a Dockerfile, measured against the deployment's requirements."""
    problems: list[str] = []
    all_stages = stages(parse_dockerfile(text))
    if len(all_stages) < 2:
        return ["not multi-stage: a build stage and a runtime stage are required"]
    for stage in all_stages:
        if not re.fullmatch(r"python:3\.(1[1-9])-slim(-\w+)?", stage.image):
            problems.append(f"FROM {stage.image}: expected python:3.11+-slim")
    final = all_stages[-1]
    earlier = {s.name for s in all_stages[:-1] if s.name} | {
        str(n) for n in range(len(all_stages) - 1)
    }
    builds_wheels = any(
        i.keyword == "RUN" and "pip wheel" in i.value
        for s in all_stages[:-1]
        for i in s.instructions
    )
    if not builds_wheels:
        problems.append("no earlier stage runs `pip wheel`")
    takes_from_build = any(
        (i.keyword == "COPY" and i.flags.get("from") in earlier)
        or (
            i.keyword == "RUN"
            and any(
                m in i.flags.get("mount", "")
                for m in (f"from={name}" for name in earlier)
            )
        )
        for i in final.instructions
    )
    if not takes_from_build:
        problems.append("the final stage takes nothing from the build stage")
    if not any(i.keyword == "RUN" and "-m venv" in i.value for i in final.instructions):
        problems.append("the final stage does not create a virtualenv")

    env: dict[str, str] = {}
    user: str | None = None
    user_before_cmd: str | None = None
    exposed: set[int] = set()
    entrypoint: list[str] = []
    cmd: list[str] | None = None
    for instruction in final.instructions:
        if instruction.keyword == "ENV":
            env.update(env_pairs(instruction.value))
        elif instruction.keyword == "USER":
            user = instruction.value.strip()
        elif instruction.keyword == "EXPOSE":
            exposed.update(int(p.split("/")[0]) for p in instruction.value.split())
        elif instruction.keyword == "ENTRYPOINT":
            entrypoint = instruction.exec_form() or ["<shell form>"]
        elif instruction.keyword == "CMD":
            cmd = instruction.exec_form()
            if cmd is None:
                problems.append("CMD must be exec form (JSON array) so the server is PID 1")
            user_before_cmd = user
    if user_before_cmd is None or user_before_cmd.split(":")[0] in {"root", "0"}:
        problems.append(f"no non-root USER before CMD (USER {user_before_cmd})")
    if user is not None and user.split(":")[0] in {"root", "0"}:
        problems.append("the final USER is root")
    if env.get("SKYLINE_HOST") != "0.0.0.0":
        problems.append("ENV SKYLINE_HOST=0.0.0.0 missing: the server would listen on loopback")
    if "SKYLINE_PORT" in env and env["SKYLINE_PORT"] != str(port):
        problems.append(f"ENV SKYLINE_PORT={env['SKYLINE_PORT']} but the port is {port}")
    if exposed != {port}:
        problems.append(f"EXPOSE {sorted(exposed)}, expected [{port}]")
    if (entrypoint + (cmd or [])) != ["skyline", "serve"]:
        problems.append(f"the container runs {entrypoint + (cmd or [])}, not skyline serve")
    try:
        check = healthcheck_command(final)
    except (AssertionError, json.JSONDecodeError) as exc:
        problems.append(f"HEALTHCHECK: {exc}")
    else:
        joined = " ".join(check)
        if "/healthz" not in joined:
            problems.append("HEALTHCHECK does not hit /healthz")
        if check[0] in {"curl", "wget"} or "curl " in joined or "wget " in joined:
            problems.append("HEALTHCHECK uses curl/wget, which slim images lack")
        if check[:2] != ["python", "-c"]:
            problems.append("HEALTHCHECK should be `python -c <urllib code>`")
    return problems


# --- .dockerignore -----------------------------------------------------------------------------


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out)


def dockerignore_excludes(patterns: list[str], path: str) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parents decides."""
    parts = path.split("/")
    candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    excluded = False
    for raw in patterns:
        negate = raw.startswith("!")
        pattern = raw[1:] if negate else raw
        pattern = pattern.strip().strip("/")
        if not pattern:
            continue
        regex = _glob_regex(pattern)
        if any(regex.fullmatch(c) for c in candidates):
            excluded = not negate
    return excluded


def read_dockerignore(path: Path) -> list[str]:
    lines = (line.strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


# --- nginx ---------------------------------------------------------------------------------


@dataclass
class Directive:
    name: str
    args: list[str]
    block: list[Directive] | None = None

    def children(self, name: str) -> list[Directive]:
        return [d for d in self.block or [] if d.name == name]


def _nginx_tokens(text: str) -> Iterator[str]:
    token_re = re.compile(r"""#[^\n]*|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|[{};]|[^\s{};"'#]+""")
    for match in token_re.finditer(text):
        token = match.group(0)
        if token.startswith("#"):
            continue
        if token[0] in "\"'":
            token = token[1:-1]
        yield token


def parse_nginx(text: str) -> Directive:
    """The configuration as a tree under a synthetic ``main`` block."""
    root = Directive("main", [], [])
    stack = [root]
    words: list[str] = []
    for token in _nginx_tokens(text):
        if token == ";":
            assert words, "empty directive"
            assert stack[-1].block is not None
            stack[-1].block.append(Directive(words[0], words[1:]))
            words = []
        elif token == "{":
            assert words, "block without a name"
            block = Directive(words[0], words[1:], [])
            assert stack[-1].block is not None
            stack[-1].block.append(block)
            stack.append(block)
            words = []
        elif token == "}":
            assert not words and len(stack) > 1, "unbalanced }"
            stack.pop()
        else:
            words.append(token)
    assert len(stack) == 1 and not words, "unterminated block or directive"
    return root


def select_location(server: Directive, path: str) -> Directive | None:
    """nginx's choice of location for a request path (top-level locations)."""
    prefixes: list[tuple[str, Directive, bool]] = []
    for location in server.children("location"):
        args = location.args
        if args[0] == "=" and args[1] == path:
            return location
        if args[0] == "^~":
            prefixes.append((args[1], location, True))
        elif args[0] not in {"=", "~", "~*"}:
            prefixes.append((args[0], location, False))
    matching = [p for p in prefixes if path.startswith(p[0])]
    longest = max(matching, key=lambda p: len(p[0]), default=None)
    if longest is not None and longest[2]:
        return longest[1]
    for location in server.children("location"):
        if location.args[0] in {"~", "~*"}:
            flags = re.IGNORECASE if location.args[0] == "~*" else 0
            if re.search(location.args[1], path, flags):
                return location
    return longest[1] if longest is not None else None


def effective(chain: list[Directive], name: str) -> list[list[str]]:
    """The arguments of ``name`` in force at the innermost block of ``chain``: nginx takes a
    directive from the innermost level that sets it at all (for array-like directives such as
    proxy_set_header, all of that level's entries and none of the outer ones)."""
    for block in reversed(chain):
        found = block.children(name)
        if found:
            return [d.args for d in found]
    return []


def nginx_seconds(value: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
    match = re.fullmatch(r"(\d+)(ms|s|m|h|d)?", value)
    assert match, f"not an nginx time: {value}"
    return int(match.group(1)) * units[match.group(2) or "s"]


# --- Kubernetes ----------------------------------------------------------------------------


def quantity(value: str | int | float) -> float:
    """A Kubernetes quantity as a plain number (cpu in cores, memory in bytes)."""
    text = str(value)
    suffixes = {
        "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
        "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
    }
    match = re.fullmatch(r"([0-9.]+)([a-zA-Z]*)", text)
    assert match, f"not a quantity: {value}"
    number, suffix = match.groups()
    return float(number) * (suffixes[suffix] if suffix else 1)


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())
