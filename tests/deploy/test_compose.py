"""deploy/compose.yaml and the nginx load balancer it mounts."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.deploy.helpers import (
    DEPLOY,
    REPO,
    UVICORN_ENV_NAMES,
    Directive,
    effective,
    env_names_in,
    known_env_names,
    load_yaml_all,
    nginx_seconds,
    parse_dockerfile,
    parse_nginx,
    select_location,
    stages,
)

COMPOSE = DEPLOY / "compose.yaml"
LONG_STREAM = 300  # seconds an idle SSE/WebSocket connection must survive at least


def _compose() -> dict[str, Any]:
    docs = load_yaml_all(COMPOSE)
    assert len(docs) == 1
    doc = docs[0]
    assert isinstance(doc, dict)
    return doc


def _env(service: dict[str, Any]) -> dict[str, str]:
    raw = service.get("environment") or {}
    if isinstance(raw, list):
        return dict(item.split("=", 1) if "=" in item else (item, "") for item in raw)
    return {str(k): "" if v is None else str(v) for k, v in raw.items() if k != "<<"}


def _depends(service: dict[str, Any]) -> dict[str, str]:
    raw = service.get("depends_on") or {}
    if isinstance(raw, list):
        return dict.fromkeys(raw, "service_started")
    return {name: (spec or {}).get("condition", "service_started") for name, spec in raw.items()}


def _published(service: dict[str, Any]) -> dict[int, int | None]:
    """container port -> host port for each `ports` entry (short or long syntax)."""
    result: dict[int, int | None] = {}
    for entry in service.get("ports") or []:
        if isinstance(entry, dict):
            result[int(entry["target"])] = int(entry["published"]) if "published" in entry else None
        else:
            parts = str(entry).split("/")[0].split(":")
            result[int(parts[-1])] = int(parts[-2]) if len(parts) > 1 else None
    return result


def _skyline_port(service: dict[str, Any]) -> int:
    return int(_env(service).get("SKYLINE_PORT") or 8000)


def _nginx_file(lb: dict[str, Any]) -> Path:
    for volume in lb.get("volumes") or []:
        source, target = str(volume).split(":")[:2]
        if target == "/etc/nginx/nginx.conf":
            return (COMPOSE.parent / source).resolve()
    raise AssertionError("the load balancer mounts no /etc/nginx/nginx.conf")


def compose_problems(doc: dict[str, Any]) -> list[str]:
    """What is wrong with the compose file's topology."""
    problems: list[str] = []
    services: dict[str, Any] = doc.get("services") or {}
    for name in ("redis", "skyline", "lb", "worker"):
        if name not in services:
            problems.append(f"no `{name}` service")
    if problems:
        return problems
    redis, skyline, lb, worker = (services[n] for n in ("redis", "skyline", "lb", "worker"))

    if not str(redis.get("image", "")).startswith("redis:"):
        problems.append("redis: not a redis image")
    test = (redis.get("healthcheck") or {}).get("test") or []
    if "ping" not in " ".join(test if isinstance(test, list) else [test]):
        problems.append("redis: no `redis-cli ping` healthcheck")

    replicas = (skyline.get("deploy") or {}).get("replicas", skyline.get("scale", 1))
    if int(replicas) < 2:
        problems.append(f"skyline: {replicas} replica(s), at least 2 expected")
    if skyline.get("ports"):
        problems.append("skyline: replicas cannot share published host ports; publish the LB")
    build = skyline.get("build") or {}
    context = (COMPOSE.parent / build.get("context", ".")).resolve()
    if context != REPO or not (context / build.get("dockerfile", "Dockerfile")).samefile(
        DEPLOY / "Dockerfile"
    ):
        problems.append("skyline: must build deploy/Dockerfile with the repository root as context")
    url = urlparse(_env(skyline).get("SKYLINE_REDIS_URL", ""))
    if url.scheme not in {"redis", "rediss"} or url.hostname != "redis":
        problems.append("skyline: SKYLINE_REDIS_URL must point at the `redis` service")
    if _depends(skyline).get("redis") != "service_healthy":
        problems.append("skyline: must wait for redis to be healthy")
    if "healthcheck" not in skyline and not any(
        i.keyword == "HEALTHCHECK"
        for i in stages(parse_dockerfile((DEPLOY / "Dockerfile").read_text()))[-1].instructions
    ):
        problems.append("skyline: no healthcheck in compose or in the image")

    if _depends(lb).get("skyline") != "service_healthy":
        problems.append("lb: must depend on skyline being healthy")
    if not _published(lb):
        problems.append("lb: publishes no port")

    command = worker.get("command") or []
    words = command.split() if isinstance(command, str) else command
    if words[:2] != ["skyline", "worker"]:
        problems.append("worker: must run `skyline worker`")
    if "redis" not in _depends(worker):
        problems.append("worker: must depend on redis")
    if "worker" not in (worker.get("profiles") or []):
        problems.append("worker: optional, so it belongs in the `worker` profile")
    if worker.get("ports"):
        problems.append("worker: serves no HTTP, publishes nothing")
    return problems


def test_compose_topology() -> None:
    assert compose_problems(_compose()) == []


def test_compose_uses_only_env_names_the_cli_reads() -> None:
    known, source = known_env_names()
    used: set[str] = set()
    for service in _compose()["services"].values():
        used |= set(_env(service))
        command = service.get("command") or []
        used |= env_names_in(command if isinstance(command, list) else [command])
    assert used, "compose configures no variable"
    assert used <= known | UVICORN_ENV_NAMES, f"unknown to the CLI ({source}): " + str(
        sorted(used - known - UVICORN_ENV_NAMES))


def test_worker_uses_the_same_redis_as_the_api() -> None:
    services = _compose()["services"]
    api_url = _env(services["skyline"])["SKYLINE_REDIS_URL"]
    command = services["worker"]["command"]
    assert command[command.index("--redis-url") + 1] == api_url
    assert services["worker"].get("image") == services["skyline"].get("image")


@pytest.mark.parametrize(
    ("path", "value", "complaint"),
    [
        (("services", "skyline", "deploy", "replicas"), 1, "at least 2"),
        (("services", "skyline", "environment", "SKYLINE_REDIS_URL"), "redis://localhost:6379",
         "`redis` service"),
        (("services", "skyline", "depends_on"), ["redis"], "healthy"),
        (("services", "skyline", "ports"), ["8000:8000"], "host ports"),
        (("services", "redis", "healthcheck"), None, "ping"),
        (("services", "lb", "depends_on"), {"skyline": {"condition": "service_started"}},
         "lb: must depend"),
        (("services", "worker", "profiles"), None, "profile"),
        (("services", "worker", "command"), ["skyline", "serve"], "skyline worker"),
        (("services", "skyline", "build", "context"), ".", "repository root"),
    ],
)
def test_compose_checker_catches(path: tuple[str, ...], value: object, complaint: str) -> None:
    doc = copy.deepcopy(_compose())
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is None:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    problems = compose_problems(doc)
    assert any(complaint in p for p in problems), problems


# --- nginx ---------------------------------------------------------------------------------


def _nginx() -> tuple[Directive, Directive, Directive]:
    """(http, server, the upstream of the skyline service)."""
    lb = _compose()["services"]["lb"]
    root = parse_nginx(_nginx_file(lb).read_text())
    (http,) = root.children("http")
    servers = http.children("server")
    assert len(servers) == 1
    upstreams = http.children("upstream")
    assert len(upstreams) == 1
    return http, servers[0], upstreams[0]


def test_nginx_upstream_is_the_skyline_service_on_its_port() -> None:
    services = _compose()["services"]
    _, _, upstream = _nginx()
    servers = [d.args[0] for d in upstream.children("server")]
    assert servers == [f"skyline:{_skyline_port(services['skyline'])}"]


def test_nginx_re_resolves_the_replicas() -> None:
    """Replicas share one DNS name; without `resolve` nginx would keep start-up addresses."""
    http, _, upstream = _nginx()
    assert http.children("resolver"), "no resolver"
    assert upstream.children("zone"), "`resolve` needs a shared-memory zone"
    assert all("resolve" in d.args for d in upstream.children("server"))


def test_nginx_listens_on_the_published_port() -> None:
    _, server, _ = _nginx()
    listen = {int(d.args[0].split(":")[-1]) for d in server.children("listen")}
    assert set(_published(_compose()["services"]["lb"])) <= listen


def _route(path: str) -> list[Directive]:
    http, server, upstream = _nginx()
    location = select_location(server, path)
    assert location is not None, f"no location for {path}"
    assert location.children("proxy_pass"), f"{path} is not proxied"
    assert location.children("proxy_pass")[0].args == [f"http://{upstream.args[0]}"]
    return [http, server, location]


@pytest.mark.parametrize("path", ["/v1/matches", "/v1/games", "/readyz", "/healthz", "/graphql"])
def test_nginx_proxies_the_api_to_skyline(path: str) -> None:
    _route(path)


def test_nginx_streams_sse_unbuffered_with_long_timeouts() -> None:
    chain = _route("/v1/matches/abc123/events")
    assert effective(chain, "proxy_buffering") == [["off"]]
    assert effective(chain, "proxy_http_version") == [["1.1"]]
    (timeout,) = effective(chain, "proxy_read_timeout")
    assert nginx_seconds(timeout[0]) >= LONG_STREAM
    # an ordinary request keeps the short default, so a stuck replica is noticed
    (short,) = effective(_route("/v1/matches"), "proxy_read_timeout")
    assert nginx_seconds(short[0]) < LONG_STREAM


def test_nginx_upgrades_graphql_websockets() -> None:
    chain = _route("/graphql")
    headers = {args[0].lower(): args[1] for args in effective(chain, "proxy_set_header")}
    assert headers.get("upgrade") == "$http_upgrade"
    connection = headers.get("connection", "")
    if connection.startswith("$"):
        maps = [m for m in chain[0].children("map") if m.args == ["$http_upgrade", connection]]
        assert maps, f"{connection} is not mapped from $http_upgrade"
        assert ["upgrade"] in [d.args for d in maps[0].block or [] if d.name == "default"]
    else:
        assert connection.lower() == "upgrade"
    assert effective(chain, "proxy_http_version") == [["1.1"]]
    (timeout,) = effective(chain, "proxy_read_timeout")
    assert nginx_seconds(timeout[0]) >= LONG_STREAM
    # every location inherits the same headers: none overrides (and so drops) them
    assert headers.get("host") == "$host"


def test_nginx_helpers() -> None:
    root = parse_nginx(
        "http { proxy_set_header A 1; server { proxy_set_header B 2;"
        " location / { } location ~ ^/x/[^/]+$ { proxy_set_header C 3; }"
        " location = /exact { } location ^~ /static { } } }"
    )
    (http,) = root.children("http")
    (server,) = http.children("server")

    def chosen(path: str) -> Directive:
        location = select_location(server, path)
        assert location is not None
        return location

    assert chosen("/x/1").args == ["~", "^/x/[^/]+$"]
    assert chosen("/exact").args == ["=", "/exact"]
    assert chosen("/static/x/1").args == ["^~", "/static"]
    assert chosen("/y").args == ["/"]
    assert effective([http, server, chosen("/y")], "proxy_set_header") == [["B", "2"]]
    assert effective([http, server, chosen("/x/1")], "proxy_set_header") == [["C", "3"]]
    assert nginx_seconds("1h") == 3600
    assert nginx_seconds("75") == 75


def test_nginx_cuts_slow_clients_and_buffers_bodies() -> None:
    """Issue 20, item 7: in the compose setup nginx meets the clients; it times out slow
    headers and bodies as the replicas do and reads each body in full before proxying it, so
    a slow client never reaches a replica."""
    from service.api.serving import DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT

    for path in ("/v1/matches", "/v1/matches/abc/actions", "/graphql", "/healthz"):
        chain = _route(path)
        (header,) = effective(chain, "client_header_timeout")
        (body,) = effective(chain, "client_body_timeout")
        assert 0 < nginx_seconds(header[0]) <= DEFAULT_HEADER_TIMEOUT
        assert 0 < nginx_seconds(body[0]) <= DEFAULT_BODY_TIMEOUT
        assert effective(chain, "proxy_request_buffering") in ([], [["on"]])


def _nginx_bytes(value: str) -> int:
    units = {"": 1, "k": 1024, "m": 1024 * 1024}
    match = re.fullmatch(r"(\d+)([kKmM]?)", value)
    assert match, f"not an nginx size: {value}"
    return int(match.group(1)) * units[match.group(2).lower()]


def test_nginx_refuses_oversized_headers_with_431() -> None:
    """Issue 31, item 5: nginx meets the clients first; it bounds a request's line and
    headers (a few buffers, read before anything is proxied) and answers 431, below the
    replicas' own cap so that nothing it passes on is refused there."""
    from service.api.serving import DEFAULT_MAX_HEADER_BYTES

    http, server, _ = _nginx()
    for path in ("/v1/matches", "/graphql", "/v1/matches/abc/events"):
        chain = _route(path)
        (small,) = effective(chain, "client_header_buffer_size")
        (large,) = effective(chain, "large_client_header_buffers")
        count, size = int(large[0]), _nginx_bytes(large[1])
        assert _nginx_bytes(small[0]) <= size
        # What nginx passes on, plus the headers it adds (a few hundred bytes), fits.
        assert count * size + 4096 <= DEFAULT_MAX_HEADER_BYTES
        assert count * size <= 64 * 1024
    pages = effective([http, server], "error_page")
    mapped = [args for args in pages if "494" in args[:-2] and args[-2] == "=431"]
    assert mapped, pages
    target = mapped[0][-1]
    named = [loc for loc in server.children("location") if loc.args == [target]]
    assert named and named[0].children("return")[0].args[0] == "431"
