"""Compressed answers (``service/api/compression.py``): zstd, br or gzip when accepted,
identity otherwise; the event stream flushed per event over a real server; entity tags per
coding with If-None-Match and If-Match still working; problem documents intact."""

from __future__ import annotations

import asyncio
import gzip
import json
import zlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import brotli  # type: ignore[import-untyped]
import httpx
import httpx2
import pytest
import zstandard
from starlette.testclient import TestClient

from service.api.compression import MINIMUM_SIZE, negotiated_coding, strip_codings
from tests.api.conftest import bearer, create, make_app, serve_in_thread

CATALOGUE = "/v1/games/ny1901"
DECODE: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.decompress,
    "br": brotli.decompress,
    "zstd": lambda data: zstandard.ZstdDecompressor().decompressobj().decompress(data),
}


def raw_get(client: TestClient, url: str, encoding: str, **headers: str
            ) -> tuple[httpx2.Response, bytes]:
    """The answer and its body exactly as sent (not decoded)."""
    with client.stream("GET", url, headers={"Accept-Encoding": encoding, **headers}) as answer:
        return answer, b"".join(answer.iter_raw())


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_a_large_answer_is_compressed_when_accepted(client: TestClient, coding: str) -> None:
    plain, identity = raw_get(client, CATALOGUE, "identity")
    assert "content-encoding" not in plain.headers
    assert len(identity) >= MINIMUM_SIZE
    answer, body = raw_get(client, CATALOGUE, coding)
    assert answer.headers["content-encoding"] == coding
    assert "accept-encoding" in answer.headers["vary"].lower()
    assert "accept-language" in answer.headers["vary"].lower()  # merged, not replaced
    assert int(answer.headers["content-length"]) == len(body) < len(identity) // 2
    assert DECODE[coding](body) == identity


def test_without_accept_encoding_the_answer_is_identity_and_says_it_varies(
    client: TestClient,
) -> None:
    for encoding in ("identity", "gzip;q=0, br;q=0", "compress"):
        answer, body = raw_get(client, CATALOGUE, encoding)
        assert "content-encoding" not in answer.headers, encoding
        assert json.loads(body)["game"] == "ny1901"
        assert "accept-encoding" in answer.headers["vary"].lower()


def test_small_answers_stay_identity(client: TestClient) -> None:
    answer, body = raw_get(client, "/healthz", "gzip, br, zstd")
    assert "content-encoding" not in answer.headers
    assert json.loads(body) == {"status": "ok"}


@pytest.mark.parametrize("header", [
    "gzip", "br", "zstd", "gzip, br", "br;q=0.1, gzip;q=1", "*", "*, zstd;q=0",
    "gzip;q=0, *", "identity", "BR", "deflate",
])
def test_the_negotiated_coding_is_the_one_answered(client: TestClient, header: str) -> None:
    answer, _ = raw_get(client, CATALOGUE, header)
    assert answer.headers.get("content-encoding") == negotiated_coding(header)


def test_problem_documents_survive_compression(client: TestClient) -> None:
    small, body = raw_get(client, "/v1/matches/nope", "gzip")
    assert small.status_code == 404
    assert small.headers["content-type"] == "application/problem+json"
    assert json.loads(body)["code"] == "match_not_found"  # short: identity
    # A long problem (every unknown field listed) is compressed like any JSON.
    fields = {f"field{i}": i for i in range(40)}
    for coding in ("gzip", "br"):
        with client.stream("POST", "/v1/matches", json={"game": "toy", "players": 2, **fields},
                           headers={"Accept-Encoding": coding}) as answer:
            raw = b"".join(answer.iter_raw())
        assert answer.status_code == 400
        assert answer.headers["content-encoding"] == coding
        assert answer.headers["content-type"] == "application/problem+json"
        problem = json.loads(DECODE[coding](raw))
        assert problem["code"] == "malformed" and len(problem["errors"]) == 40


def test_graphql_answers_are_compressed(client: TestClient) -> None:
    query = "{ games { id title minPlayers maxPlayers optionsSchema } }"
    with client.stream("POST", "/graphql", json={"query": query},
                       headers={"Accept-Encoding": "br"}) as answer:
        raw = b"".join(answer.iter_raw())
    assert answer.headers["content-encoding"] == "br"
    assert {g["id"] for g in json.loads(DECODE["br"](raw))["data"]["games"]} >= {"ny1901"}


# -- entity tags --------------------------------------------------------------------------


def test_a_compressed_representation_has_its_own_strong_tag(client: TestClient) -> None:
    match = create(client, "ny1901")
    tags = {}
    for coding in ("identity", "gzip", "br", "zstd"):
        answer, _ = raw_get(client, match.url, coding, **match.auth(0))
        tags[coding] = answer.headers["etag"]
    assert tags == {"identity": '"0"', "gzip": '"0;gzip"', "br": '"0;br"', "zstd": '"0;zstd"'}
    czech, _ = raw_get(client, f"{match.url}?lang=cs", "br", **match.auth(0))
    assert czech.headers["etag"] == '"0;lang=cs;br"'


def test_if_none_match_answers_304_for_the_representation_it_names(
    client: TestClient,
) -> None:
    match = create(client, "ny1901")
    for path in (match.url, f"{match.url}/legal-moves", CATALOGUE):
        first, _ = raw_get(client, path, "gzip", **match.auth(0))
        tag = first.headers["etag"]
        assert tag.endswith(';gzip"'), (path, tag)
        again, body = raw_get(client, path, "gzip", **match.auth(0), **{"If-None-Match": tag})
        assert (again.status_code, body, again.headers["etag"]) == (304, b"", tag), path
        weak, _ = raw_get(client, path, "gzip", **match.auth(0),
                          **{"If-None-Match": f'"other", W/{tag}'})
        assert (weak.status_code, weak.headers["etag"]) == (304, tag), path
        # Another coding's tag names another representation: the full answer, in br.
        other, _ = raw_get(client, path, "br", **match.auth(0), **{"If-None-Match": tag})
        assert other.status_code == 200 and other.headers["etag"].endswith(';br"'), path
        # A tag received before compression (identity) still revalidates.
        plain, _ = raw_get(client, path, "identity", **match.auth(0))
        old, _ = raw_get(client, path, "gzip", **match.auth(0),
                         **{"If-None-Match": plain.headers["etag"]})
        assert (old.status_code, old.headers["etag"]) == (304, plain.headers["etag"]), path


def test_if_match_pins_the_version_whatever_the_coding(client: TestClient) -> None:
    match = create(client, "ny1901")
    url = f"{match.url}/actions"

    def play(if_match: str) -> httpx2.Response:
        moves = client.get(f"{match.url}/legal-moves", headers=match.auth(0)).json()
        return client.post(url, json={"action": moves["moves"][0]},
                           headers={**match.auth(0), "If-Match": if_match,
                                    "Accept-Encoding": "br"})

    stale = play('"3;gzip"')
    assert (stale.status_code, stale.json()["code"]) == (412, "precondition_failed")
    assert play('W/"0;gzip"').status_code == 412  # weak: never matches
    played = play('"0;zstd"')
    assert played.status_code == 200, played.text
    assert played.headers["etag"] == '"1;br"'
    assert play(played.headers["etag"]).status_code == 200  # as received, pins version 1


def test_stripping_leaves_other_tags_as_they_were() -> None:
    header = '"a,b;gzip" , W/"7;br", "7;lang=cs;gzip", "x;zstd", *'
    assert strip_codings(header, ("gzip",)) == (
        '"a,b" , W/"7;br", "7;lang=cs", "x;zstd", *', {'"a,b"', '"7;lang=cs"'})
    assert strip_codings('";gzip", "7;deflate"', ("gzip",)) == ('";gzip", "7;deflate"', set())


# -- the event stream, live ---------------------------------------------------------------


class Decoder:
    """Decodes a content-coded body chunk by chunk, as a browser does."""

    def __init__(self, coding: str) -> None:
        if coding == "gzip":
            self.feed: Callable[[bytes], bytes] = zlib.decompressobj(16 + zlib.MAX_WBITS
                                                                      ).decompress
        elif coding == "br":
            self.feed = brotli.Decompressor().process
        elif coding == "identity":
            self.feed = bytes
        else:
            self.feed = zstandard.ZstdDecompressor().decompressobj().decompress


async def next_event(chunks: AsyncIterator[bytes], decoder: Decoder, buffer: list[str]
                     ) -> dict[str, Any]:
    """The next ``state`` event decoded from the raw chunks read so far and the ones that
    follow; ``buffer`` keeps what was decoded past it."""
    while True:
        text = buffer[0].replace("\r\n", "\n")
        while "\n\n" in text:
            block, text = text.split("\n\n", 1)
            buffer[0] = text
            lines = [line for line in block.split("\n") if not line.startswith(":")]
            fields = dict(line.split(": ", 1) for line in lines if ": " in line)
            if fields.get("event") == "state":
                return json.loads(fields["data"])  # type: ignore[no-any-return]
        buffer[0] = text + decoder.feed(await anext(chunks)).decode()


@pytest.mark.parametrize(("accepted", "coding"), [
    ("gzip", "gzip"), ("zstd, br, gzip", "gzip"), ("br", "identity"), ("zstd", "identity"),
])
@pytest.mark.slow
async def test_each_event_is_decodable_as_it_arrives(accepted: str, coding: str) -> None:
    """An event stream is gzip when the client takes it, else identity: never zstd or br,
    whose coders would hold megabytes per open stream (docs/performance.md)."""
    with serve_in_thread(make_app()) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            created = (await http.post("/v1/matches", json={"game": "toy", "players": 2,
                                                              "seed": 3})).json()
            url = f"/v1/matches/{created['matchId']}"
            token = created["seats"][0]["token"]
            async with http.stream("GET", f"{url}/events",
                                   headers={"Accept-Encoding": accepted}) as stream:
                assert stream.headers.get("content-encoding", "identity") == coding
                assert "accept-encoding" in stream.headers["vary"].lower()
                assert stream.headers["content-type"].startswith("text/event-stream")
                chunks, decoder, buffer = stream.aiter_raw(), Decoder(coding), [""]
                # The stream stays open: a buffered coder would hold back each event until
                # the next one (or the end), and these reads would time out.
                async with asyncio.timeout(30):
                    first = await next_event(chunks, decoder, buffer)
                    assert first["version"] == 0
                    moves = (await http.get(f"{url}/legal-moves", headers=bearer(token))
                             ).json()["moves"]
                    posted = await http.post(f"{url}/actions", json={"action": moves[0]},
                                             headers=bearer(token))
                    assert posted.status_code == 200, posted.text
                    second = await next_event(chunks, decoder, buffer)
                    assert second["version"] == 1


def test_an_event_streams_gzip_keeps_a_small_window() -> None:
    """The gzip of a stream is ordinary gzip with a 4 KiB window: a decoder limited to 4 KiB
    reads it, though the data repeats itself 9 KiB back (the default coder's 32 KiB window
    refers back that far, and such a decoder fails on it)."""
    import random

    from starlette_compress._gzip import _GzipStreamEncoder

    from service.api.compression import STREAM_WINDOW_BITS, _StreamGzip

    rng = random.Random(15)
    block = rng.randbytes(3000)
    data = block + rng.randbytes(6000) + block

    def coded(encoder: _GzipStreamEncoder) -> bytes:
        return b"".join(encoder.feed(data, flush=True)) + b"".join(encoder.finish())

    def decoded(body: bytes) -> bytes:
        """Inflated 1 KiB at a time, as a stream is: references reach only the window."""
        decoder, out = zlib.decompressobj(16 + STREAM_WINDOW_BITS), b""
        while body:
            out += decoder.decompress(body, 1024)
            body = decoder.unconsumed_tail
        return out

    assert decoded(coded(_StreamGzip())) == data
    with pytest.raises(zlib.error, match="too far back"):
        decoded(coded(_GzipStreamEncoder(4)))


def test_compressed_requests_are_counted_by_their_route(client: TestClient) -> None:
    metrics = client.app.state.match_service.metrics  # type: ignore[attr-defined]
    key = ("GET", "/v1/games/{game_id}", 200)
    before = metrics.requests[key]
    answer, _ = raw_get(client, CATALOGUE, "br")
    assert answer.headers["content-encoding"] == "br"
    assert metrics.requests[key] == before + 1
