"""deploy/Dockerfile and the root .dockerignore (the build context is the repository root)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.deploy.helpers import (
    DEPLOY,
    REPO,
    dockerfile_problems,
    dockerignore_excludes,
    env_pairs,
    healthcheck_command,
    parse_dockerfile,
    read_dockerignore,
    stages,
)

DOCKERFILE = DEPLOY / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"


def _text() -> str:
    return DOCKERFILE.read_text()


def test_dockerfile_meets_the_requirements() -> None:
    assert dockerfile_problems(_text()) == []


def test_build_stage_sources_exist_and_enter_the_context() -> None:
    """Every COPY source of the build must exist at the repository root and survive the root
    .dockerignore, and the bulky or private parts of the tree must not enter the context."""
    patterns = read_dockerignore(DOCKERIGNORE)
    copies = [
        i for s in stages(parse_dockerfile(_text())) for i in s.instructions
        if i.keyword in {"COPY", "ADD"} and "from" not in i.flags
    ]
    assert copies, "the image copies no sources"
    for instruction in copies:
        for source in instruction.value.split()[:-1]:
            path = REPO / source
            assert path.exists(), f"COPY {source}: not in the repository root"
            files = [path] if path.is_file() else [p for p in path.rglob("*.py")]
            assert files, f"COPY {source}: nothing to copy"
            for file in files:
                relative = file.relative_to(REPO).as_posix()
                if "__pycache__" in relative:
                    continue
                assert not dockerignore_excludes(patterns, relative), relative
    for private in (".git/HEAD", ".venv/bin/python", "tests/__init__.py",
                    "service/__pycache__/cli.cpython-312.pyc", ".mypy_cache/x"):
        assert dockerignore_excludes(patterns, private), f"{private} enters the build context"


def test_pyproject_readme_is_copied_before_the_wheel_is_built() -> None:
    """setuptools reads `readme = "README.md"` when building the wheel."""
    build = stages(parse_dockerfile(_text()))[0]
    copied: list[str] = []
    for instruction in build.instructions:
        if instruction.keyword == "COPY":
            copied += instruction.value.split()[:-1]
        if instruction.keyword == "RUN" and "pip wheel" in instruction.value:
            break
    assert {"pyproject.toml", "README.md", "service"} <= set(copied)


def test_runtime_user_is_numeric_and_matches_kubernetes() -> None:
    """A numeric USER lets Kubernetes verify runAsNonRoot; the manifests pin the same uid."""
    final = stages(parse_dockerfile(_text()))[-1]
    user = [i.value for i in final.instructions if i.keyword == "USER"][-1]
    uid = user.split(":")[0]
    assert uid.isdigit() and int(uid) > 0
    deployment = (DEPLOY / "k8s" / "deployment.yaml").read_text()
    assert f"runAsUser: {uid}" in deployment


@contextmanager
def _server(status: int) -> Iterator[int]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status if self.path == "/healthz" else 404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _run_healthcheck(port: int) -> int:
    command = healthcheck_command(stages(parse_dockerfile(_text()))[-1])
    env = {**os.environ, "SKYLINE_PORT": str(port)}
    done = subprocess.run([sys.executable, *command[1:]], env=env, capture_output=True,
                          timeout=30, check=False)
    return done.returncode


@pytest.mark.parametrize(("status", "healthy"), [(200, True), (503, False), (500, False)])
def test_healthcheck_command_reports_the_healthz_status(status: int, healthy: bool) -> None:
    with _server(status) as port:
        assert (_run_healthcheck(port) == 0) is healthy


def test_healthcheck_command_fails_when_nothing_listens() -> None:
    with _server(200) as port:
        pass
    assert _run_healthcheck(port) != 0


def test_healthcheck_timeout_fits_inside_dockers_timeout() -> None:
    final = stages(parse_dockerfile(_text()))[-1]
    check = next(i for i in final.instructions if i.keyword == "HEALTHCHECK")
    docker_timeout = int(check.flags["timeout"].rstrip("s"))
    code = healthcheck_command(final)[2]
    assert "timeout=" in code
    inner = int(code.split("timeout=")[1].split(")")[0])
    assert inner < docker_timeout


# --- the checker itself catches what it must -----------------------------------------------

GOOD = _text()


@pytest.mark.parametrize(
    ("old", "new", "complaint"),
    [
        ("USER 10001:10001", "USER root", "non-root USER"),
        ("USER 10001:10001", "", "non-root USER"),
        ("EXPOSE 8000", "EXPOSE 8080", "EXPOSE"),
        ('CMD ["skyline", "serve"]', 'CMD ["skyline", "games"]', "not skyline serve"),
        ('CMD ["skyline", "serve"]', "CMD skyline serve", "exec form"),
        ("SKYLINE_HOST=0.0.0.0", "SKYLINE_HOST=127.0.0.1", "SKYLINE_HOST"),
        ("SKYLINE_PORT=8000", "SKYLINE_PORT=9000", "SKYLINE_PORT"),
        ("/healthz", "/readyz", "/healthz"),
        ('CMD ["skyline", "serve"]', 'CMD ["skyline", "serve"]\nUSER root', "final USER is root"),
        ("python:${PYTHON_VERSION}-slim AS runtime", "python:3.12 AS runtime", "slim"),
        ("-m venv", "-m notvenv", "virtualenv"),
        ("from=build", "from=elsewhere", "takes nothing"),
    ],
)
def test_checker_catches(old: str, new: str, complaint: str) -> None:
    assert old in GOOD
    problems = dockerfile_problems(GOOD.replace(old, new))
    assert any(complaint in p for p in problems), problems


def test_checker_rejects_single_stage_and_curl() -> None:
    single = "FROM python:3.12-slim\nUSER 1\nEXPOSE 8000\nCMD [\"skyline\", \"serve\"]\n"
    assert "multi-stage" in dockerfile_problems(single)[0]
    curl = GOOD.replace(
        GOOD[GOOD.index("    CMD [\"python\""):GOOD.index("\n", GOOD.index("    CMD [\"python\""))],
        '    CMD ["curl", "-f", "http://127.0.0.1:8000/healthz"]',
    )
    assert any("curl" in p for p in dockerfile_problems(curl))


def test_parser_joins_continuations_and_reads_flags() -> None:
    parsed = parse_dockerfile(
        "# syntax=docker/dockerfile:1\nARG V=3.12\nFROM python:${V}-slim AS b\n"
        "RUN --mount=type=bind,from=b,source=/w,target=/w \\\n  # comment\n  echo a \\\n"
        "  && echo b\nENV A=1 \\\n    B=\"two words\"\n"
    )
    assert [i.keyword for i in parsed] == ["ARG", "FROM", "RUN", "ENV"]
    assert parsed[2].flags == {"mount": "type=bind,from=b,source=/w,target=/w"}
    assert parsed[2].value == "echo a && echo b"
    assert env_pairs(parsed[3].value) == {"A": "1", "B": "two words"}
    assert stages(parsed)[0].image == "python:3.12-slim"
    assert stages(parsed)[0].name == "b"


def test_dockerignore_matcher() -> None:
    patterns = ["*", "!service/", "**/__pycache__"]
    assert not dockerignore_excludes(patterns, "service/cli.py")
    assert dockerignore_excludes(patterns, "service/__pycache__/cli.pyc")
    assert dockerignore_excludes(patterns, "tests/test_rng.py")
    assert dockerignore_excludes(["*.md", "!README.md"], "docs.md")
    assert not dockerignore_excludes(["*.md", "!README.md"], "README.md")
