"""Clocks, resigning and taking a seat back in the reference client (headless Chromium
against a real ``skyline serve``, whose clock worker fires the deadlines).

- A correspondence match (10 s per move, a random bot at a timeout): the page shows seat 0's
  clock running down, nobody moves, the deadline passes and a bot takes the seat; the page
  offers the seat back, takes it back with the old seat token and plays on with the new one.
- Resign: the button (after its confirm dialog) puts the seat out; with two seats the match
  ends, and the page says it ended by resignation and marks the seat forfeited.
"""

from __future__ import annotations

import re
from typing import Any

from .test_client import _click_move, _playable, _rest, _wait_idle

CLOCK_0 = "#seats .clock[data-seat='0']"


def _seconds(text: str) -> int:
    match = re.fullmatch(r"(\d+):(\d\d)", text.strip())
    assert match, f"not a m:ss clock: {text!r}"
    return int(match.group(1)) * 60 + int(match.group(2))


def _open_as(page: Any, server: str, match_id: str, token: str) -> None:
    page.goto(server + f"/play/#match={match_id}&token={token}")
    _wait_idle(page)


def _play_seat_1(server: str, match_id: str, token: str) -> None:
    """One action of seat 1 (from elsewhere, by REST), if it may act and still holds its seat
    (its own deadline may have passed too: then its bot plays it)."""
    status, legal = _rest(server, "GET", f"/v1/matches/{match_id}/legal-moves", token=token)
    if status != 200 or not legal.get("moves"):
        return
    moves = legal["moves"]
    move = next((m for m in moves if m["type"] == "end_turn"), moves[0])
    _rest(server, "POST", f"/v1/matches/{match_id}/actions",
          {"action": move, "expectedVersion": legal["version"]}, token=token)


def test_a_deadline_passes_a_bot_takes_the_seat_and_the_player_takes_it_back(
    page: Any, server: str
) -> None:
    status, created = _rest(server, "POST", "/v1/matches", {
        "game": "ny1901", "players": 2, "seed": 8, "options": {"challenge": "none"},
        "timeControl": {"correspondence": {"secondsPerMove": 10}},
        "onTimeout": {"policy": "bot", "bot": "random"},
    })
    assert status == 201, created
    match_id = created["matchId"]
    seat0, seat1 = (s["token"] for s in created["seats"])
    _open_as(page, server, match_id, seat0)
    assert page.locator("#moves button.play").count() > 0  # seat 0 may move; it will not

    # The time control and seat 0's clock, running (seat 0 moves first) and ticking down.
    assert "10 s per move" in page.inner_text("#time-control")
    assert "random bot" in page.inner_text("#time-control")
    page.wait_for_function(f"() => document.querySelector(\"{CLOCK_0}\")?.textContent")
    clock = page.locator(CLOCK_0)
    assert clock.get_attribute("data-running") == "true"
    assert page.locator("#seats .deadline[data-seat='0']").inner_text().startswith("(until ")
    first = _seconds(clock.inner_text())
    assert 0 < first <= 10
    page.wait_for_function(
        f"s => {{ const c = document.querySelector(\"{CLOCK_0}\"); if (!c) return true;"
        " const m = /^(\\d+):(\\d\\d)$/.exec(c.textContent);"
        " return m && Number(m[1]) * 60 + Number(m[2]) < s; }", arg=first)
    if page.locator(CLOCK_0).count():  # (a very slow machine may be past the deadline)
        second = _seconds(page.locator(CLOCK_0).inner_text())
        assert second < first

    # The deadline passes: a bot takes seat 0, its token stops working, the page says so.
    reclaim = page.locator("#away-panel button.reclaim[data-seat='0']")
    reclaim.wait_for(state="visible", timeout=40_000)
    assert "A bot took over your seat" in page.inner_text("#away-panel")
    page.wait_for_function(
        "() => document.querySelector(\"#seats li[data-seat='0']\")?.dataset.bot === 'random'")
    status, _ = _rest(server, "GET", f"/v1/matches/{match_id}", token=seat0)
    assert status == 401

    # Take it back: the page holds the seat's new token and plays seat 0 again.
    reclaim.click()
    page.wait_for_function("() => document.querySelector('#away-panel').hidden")
    page.wait_for_function(
        "() => document.querySelector(\"#seats li[data-seat='0']\")?.dataset.bot === undefined"
        " && document.querySelector(\"#seats li[data-seat='0']\").textContent"
        ".includes('played in this browser')")
    assert not page.locator("#message").is_visible(), page.inner_text("#message")
    _, state = _rest(server, "GET", f"/v1/matches/{match_id}")
    assert "0" not in (state.get("bots") or {})

    # Seat 1 (elsewhere) finishes its turn; then seat 0's moves are in the page again.
    for _ in range(100):
        if page.locator("#moves button.play").count():
            break
        _play_seat_1(server, match_id, seat1)
        page.wait_for_timeout(300)
    page.wait_for_selector("#moves button.play >> visible=true")
    assert "your move" in page.inner_text("#status")
    before = page.evaluate("document.querySelector('#status').dataset.version")
    moves = _playable(page)
    pick = next((m for m in moves if m["type"] == "acquire"), moves[0])
    _click_move(page, pick["index"])  # (opens the move's group first)
    page.wait_for_function(
        "v => document.querySelector('main').dataset.busy === 'false'"
        " && document.querySelector('#status').dataset.version !== v", arg=before)
    assert page.locator("#away-panel").is_hidden()
    assert not page.locator("#message").is_visible(), page.inner_text("#message")
    assert page.js_errors == []


def test_resign_ends_a_two_seat_match_and_the_seat_is_forfeited(
    page: Any, server: str
) -> None:
    status, created = _rest(server, "POST", "/v1/matches", {
        "game": "ny1901", "players": 2, "seed": 5, "options": {"challenge": "none"},
    })
    assert status == 201, created
    match_id = created["matchId"]
    seat0 = created["seats"][0]["token"]
    _open_as(page, server, match_id, seat0)
    # An untimed match shows no clocks.
    assert page.locator("#seats .clock").count() == 0
    assert page.locator("#time-control").is_hidden()
    assert page.locator("#resign").is_visible()

    # Dismissing the confirm dialog resigns nothing.
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.click("#resign")
    _, state = _rest(server, "GET", f"/v1/matches/{match_id}")
    assert state["status"] == "active"

    asked: list[str] = []

    def accept(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)
    page.click("#resign")
    page.wait_for_function("() => document.querySelector('main').dataset.phase === 'finished'")
    assert asked and asked[0].startswith("Resign Seat 0")
    assert page.get_attribute("#termination", "data-reason") == "resign"
    assert "resignation" in page.inner_text("#termination")
    assert "resignation" in page.inner_text("#status")
    assert "Seat 0 (black)" in page.inner_text("#forfeited")
    assert "Seat 0 (black) (forfeited)" in page.inner_text("table.scores thead")
    assert "forfeited" not in page.inner_text("table.scores thead").replace(
        "Seat 0 (black) (forfeited)", "")
    assert page.locator("#away-panel").is_hidden()  # a resigned seat is not offered back
    assert page.locator("#resign-box").is_hidden()
    _, state = _rest(server, "GET", f"/v1/matches/{match_id}")
    assert state["status"] == "finished"
    assert [s["seat"] for s in state["result"]["seats"] if s.get("forfeited")] == [0]
    assert page.js_errors == []


def test_a_seat_handed_to_a_bot_elsewhere_is_offered_back_and_played_on(
    page: Any, server: str
) -> None:
    """No clock needed: the same seat token hands the seat to a bot from another device; the
    page's stream is revoked, it offers the seat back, and the reclaimed seat plays on."""
    status, created = _rest(server, "POST", "/v1/matches", {
        "game": "ny1901", "players": 2, "seed": 3, "options": {"challenge": "none"},
    })
    assert status == 201, created
    match_id = created["matchId"]
    seat0, seat1 = (s["token"] for s in created["seats"])
    _open_as(page, server, match_id, seat1)
    assert page.locator("#no-moves").is_visible()  # seat 0 moves first
    status, _ = _rest(server, "POST", f"/v1/matches/{match_id}/seats/1/bot", {"kind": "random"},
                      token=seat1)
    assert status == 200
    reclaim = page.locator("#away-panel button.reclaim[data-seat='1']")
    reclaim.wait_for(state="visible")
    assert page.locator("#resign-box").is_hidden()  # the page holds no seat now
    reclaim.click()
    page.wait_for_function("() => document.querySelector('#away-panel').hidden")
    assert page.locator("#resign-box").is_visible()
    # seat 0 plays its turn elsewhere; then the page, with the new token, plays seat 1
    for _ in range(10):
        if page.locator("#moves button.play").count():
            break
        status, legal = _rest(server, "GET", f"/v1/matches/{match_id}/legal-moves", token=seat0)
        if status == 200 and legal.get("moves"):
            moves = legal["moves"]
            move = next((m for m in moves if m["type"] == "end_turn"),
                        next((m for m in moves if m["type"] == "acquire"), moves[0]))
            _rest(server, "POST", f"/v1/matches/{match_id}/actions",
                  {"action": move, "expectedVersion": legal["version"]}, token=seat0)
        page.wait_for_timeout(300)
    page.wait_for_selector("#moves button.play >> visible=true")
    assert "your move" in page.inner_text("#status")
    before = page.evaluate("document.querySelector('#status').dataset.version")
    page.locator("#moves button.play").first.click()
    page.wait_for_function(
        "v => document.querySelector('main').dataset.busy === 'false'"
        " && document.querySelector('#status').dataset.version !== v", arg=before)
    assert not page.locator("#message").is_visible(), page.inner_text("#message")
    # the old token is gone for good: the page keeps only the new one
    status, _ = _rest(server, "GET", f"/v1/matches/{match_id}", token=seat1)
    assert status == 401
    assert page.js_errors == []
