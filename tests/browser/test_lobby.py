"""The lobby in the reference client (issue 17), with two and three browser contexts, each a
guest of its own: a quick match of three guests played to the end by clicking, then a
rematch (asked for by one, taken from the result by another and from "My matches" by the
third); a private table joined through its invite link; the same private table refused to a
third guest without the link, with nothing of it shown; a public table found in the lobby,
joined, and started early with a bot."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import Any

import pytest

from .test_client import _choose, _playable, _wait_idle

NAMES = ("Ada", "Bo", "Cy")


def _phase(page: Any) -> str:
    phase: str = page.evaluate("document.querySelector('main').dataset.phase")
    return phase


def _wait_phase(page: Any, phase: str, timeout: float = 30_000) -> None:
    page.wait_for_function(
        "p => document.querySelector('main').dataset.phase === p", arg=phase, timeout=timeout)


def _open(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_function("() => document.body.dataset.ready === 'true'")


def _sign_in(page: Any, name: str) -> None:
    page.fill("#player-name", name)
    page.click("#sign-in")
    page.wait_for_function("() => !document.getElementById('signed-in').hidden")
    assert page.inner_text("#player-shown") == name


@pytest.fixture
def guests(browser: Any) -> Iterator[Any]:
    """``guests(n)``: n pages, each in a browser context of its own (its own localStorage:
    its own guest), with the page errors they raise in ``page.js_errors``."""
    contexts: list[Any] = []

    def make(count: int) -> list[Any]:
        pages = []
        for _ in range(count):
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            contexts.append(context)
            page = context.new_page()
            page.set_default_timeout(30_000)
            errors: list[str] = []
            page.on("pageerror", lambda error, errors=errors: errors.append(str(error)))
            page.js_errors = errors
            pages.append(page)
        return pages

    try:
        yield make
    finally:
        for context in contexts:
            context.close()


def _create_table(page: Any, game: str, seats: list[str], visibility: str, name: str) -> str:
    """Create a table in the form (seat 0 is the player; ``seats`` the kinds of the others:
    "open" or a bot), wait for its waiting room, and answer its match id."""
    page.select_option("#table-game", game)
    page.fill("#table-players", str(len(seats) + 1))
    page.dispatch_event("#table-players", "input")
    for seat, kind in enumerate(seats, start=1):
        page.select_option(f"#table-seat-{seat}", kind)
    page.select_option("#table-visibility", visibility)
    page.fill("#table-name", name)
    page.click("#table-create")
    _wait_phase(page, "waiting")
    match_id: str = page.evaluate(
        "new URLSearchParams(location.hash.slice(1)).get('match')")
    assert match_id
    return match_id


def _seats_text(page: Any) -> str:
    text: str = page.inner_text("#waiting-seats")
    return text


def _play_together_to_end(pages: list[Any], seed: int, max_clicks: int = 1500) -> int:
    """Each page plays its own seat: whichever page has moves clicks one (builds first, as
    in test_client) until every page shows the final scores."""
    rng = random.Random(seed)
    clicks = 0
    idle_since = time.monotonic()
    while not all(_phase(page) == "finished" for page in pages):
        moved = False
        for page in pages:
            if _phase(page) == "finished":
                continue
            moves = _playable(page)
            if not moves:
                continue
            assert clicks < max_clicks, f"the match did not end within {clicks} clicks"
            before = page.evaluate("document.querySelector('#status').dataset.version")
            chosen = _choose("ny1901", moves, rng)
            page.locator(f"#moves button.play[data-index='{chosen['index']}']").evaluate(
                "b => b.click()")
            page.wait_for_function(
                "v => document.querySelector('main').dataset.busy === 'false'"
                " && (document.querySelector('#status').dataset.version !== v"
                "     || document.querySelector('main').dataset.phase === 'finished')",
                arg=before)
            assert not page.locator("#message").is_visible(), page.inner_text("#message")
            clicks += 1
            moved = True
        if moved:
            idle_since = time.monotonic()
        else:
            # the next seat's page learns of its turn over its event stream
            assert time.monotonic() - idle_since < 30, "no page got a move for 30 s"
            pages[0].wait_for_timeout(50)
    return clicks


def test_quick_match_of_three_guests_to_the_end_then_a_rematch(
        guests: Any, server: str) -> None:
    pages = guests(3)
    for page, name in zip(pages, NAMES, strict=True):
        _open(page, server + "/play/")
        _sign_in(page, name)
    # Each queues for a 3-player New York 1901, people only (no bots).
    for page in pages:
        page.select_option("#quick-game", "ny1901")
        page.fill("#quick-players", "3")
        page.click("#quick-find")
    for page in pages:
        _wait_phase(page, "play")
        _wait_idle(page)
    match_id = pages[0].evaluate("new URLSearchParams(location.hash.slice(1)).get('match')")
    for page in pages:
        assert page.evaluate(
            "new URLSearchParams(location.hash.slice(1)).get('match')") == match_id
        seats = page.inner_text("#seats")
        assert all(name in seats for name in NAMES), seats  # three people, no bot
        assert "bot" not in seats
    # One seat at a time may move: exactly one page has moves.
    assert sum(1 for page in pages if _playable(page)) == 1
    started = time.monotonic()
    clicks = _play_together_to_end(pages, seed=17)
    print(f"\n3-player New York 1901 through the UI: {clicks} clicks in "
          f"{time.monotonic() - started:.1f} s")
    for page in pages:
        assert page.locator("#result").is_visible()
        assert page.inner_text("#winner").startswith("Winner")
        assert page.eval_on_selector_all("table.scores tfoot td", "c => c.length") == 3
        assert page.locator("#rematch").is_visible()
    # Ada asks for a rematch: its waiting room, her seat taken, the others' kept for them.
    ada, bo, cy = pages
    ada.click("#rematch")
    _wait_phase(ada, "waiting")
    rematch_id = ada.evaluate("new URLSearchParams(location.hash.slice(1)).get('match')")
    assert rematch_id and rematch_id != match_id
    assert "Ada (you)" in _seats_text(ada)
    assert _seats_text(ada).count("open") == 2
    assert ada.locator("#start-now").is_visible()  # she made it: she may start it
    # Bo's feed says so while he looks at the result: he takes his seat from there.
    bo.wait_for_function(
        "() => document.getElementById('rematch').textContent === 'Join the rematch'")
    bo.click("#rematch")
    _wait_phase(bo, "waiting")
    assert "Bo (you)" in _seats_text(bo)
    assert bo.locator("#leave-table").is_visible() and bo.locator("#waiting-host").is_hidden()
    ada.wait_for_function("() => document.getElementById('waiting-seats').innerText"
                          ".includes('Bo')")
    # Cy goes back to the lobby: the offer is in "My matches", joined from there.
    cy.click("#leave")
    _wait_phase(cy, "setup")
    offer = cy.locator(f"#my-matches li[data-offer='rematch'][data-match='{rematch_id}']")
    offer.wait_for()
    assert "rematch offered" in offer.inner_text()
    offer.locator("button").click()
    # The last seat taken: the rematch starts for all three.
    for page in pages:
        _wait_phase(page, "play")
        _wait_idle(page)
        assert page.evaluate(
            "new URLSearchParams(location.hash.slice(1)).get('match')") == rematch_id
    assert sum(1 for page in pages if _playable(page)) == 1
    for page in pages:
        assert page.js_errors == []


def test_a_private_table_joined_through_its_invite_link(guests: Any, server: str) -> None:
    host, guest = guests(2)
    _open(host, server + "/play/")
    _sign_in(host, "Host")
    match_id = _create_table(host, "ny1901", ["open"], "private", "Secret table")
    assert "Seat 0: Host (you)" in _seats_text(host)
    assert "Seat 1: open" in _seats_text(host)
    assert "Waiting for 1 more player" in host.inner_text("#waiting-status")
    host.click("#copy-invite")
    host.wait_for_function("() => document.getElementById('invite-link').value !== ''")
    assert host.locator("#invite-box").is_visible()
    link = host.input_value("#invite-link")
    assert link.startswith(server + "/play?match=" + match_id + "&invite=ski_"), link
    # The guest opens the link: what it invites to, then sign in, and in.
    _open(guest, link)
    assert guest.locator("#invite-panel").is_visible()
    described = guest.inner_text("#invite-text")
    assert "Secret table" in described and "New York 1901" in described
    assert "Host" in described and "open" in described
    assert guest.locator("#invite-join").is_disabled()  # sign in first
    _sign_in(guest, "Guest")  # joins right after signing in
    for page in (guest, host):
        _wait_phase(page, "play")
        _wait_idle(page)
        seats = page.inner_text("#seats")
        assert "Host" in seats and "Guest" in seats, seats
    # The invitation is spent, and the URL no longer carries it.
    assert "invite=" not in guest.url
    for page in (host, guest):
        assert page.js_errors == []


def test_a_private_table_is_refused_without_the_invite(guests: Any, server: str) -> None:
    host, guest, outsider = guests(3)
    _open(host, server + "/play/")
    _sign_in(host, "Hana")
    match_id = _create_table(host, "ny1901", ["open", "open"], "private", "Hidden room")
    host.click("#copy-invite")
    host.wait_for_function("() => document.getElementById('invite-link').value !== ''")
    assert host.locator("#invite-box").is_visible()
    link = host.input_value("#invite-link")
    _open(guest, server + "/play/")
    _sign_in(guest, "Gil")
    _open(guest, link)
    guest.click("#invite-join")  # signed in already: joins on request
    _wait_phase(guest, "waiting")
    assert "Gil (you)" in _seats_text(guest)
    host.wait_for_function(
        "() => document.getElementById('waiting-seats').innerText.includes('Gil')")
    # The outsider: its own guest, no invite. Every answer about the match is the 404 of a
    # match that does not exist, and the page shows nothing of it.
    answers: list[tuple[str, int]] = []
    outsider.on("response", lambda r: answers.append((r.url, r.status))
                if "/v1/" in r.url and match_id in r.url else None)
    _open(outsider, server + "/play/")
    _sign_in(outsider, "Oz")
    for url in (f"/play?match={match_id}", f"/play/#match={match_id}"):
        _open(outsider, server + url)
        outsider.wait_for_selector("#message:not([hidden])")
        message = outsider.inner_text("#message")
        assert "match_not_found" in message and "Not found" in message, message
        assert _phase(outsider) == "setup"
        shown = outsider.inner_text("body")
        for secret in ("Hidden room", "Hana", "Gil"):
            assert secret not in shown, secret
    assert outsider.locator(f"#lobby-list li[data-match='{match_id}']").count() == 0
    # A made-up invite code is no better.
    _open(outsider, server + f"/play?match={match_id}&invite=ski_{match_id}.nope")
    outsider.wait_for_selector("#message:not([hidden])")
    assert "invite_not_found" in outsider.inner_text("#message")
    assert outsider.locator("#invite-join").is_hidden()
    assert len(answers) >= 3 and all(status == 404 for _, status in answers), answers
    # The host cancels: the guest's waiting room says so.
    host.click("#cancel-table")
    _wait_phase(host, "setup")
    assert "cancelled" in host.inner_text("#message")
    guest.wait_for_function(
        "() => document.getElementById('waiting-status').dataset.status === 'cancelled'")
    assert "cancelled" in guest.inner_text("#waiting-status")
    for page in (host, guest, outsider):
        assert page.js_errors == []


def test_a_public_table_from_the_lobby_started_early_with_a_bot(
        guests: Any, server: str) -> None:
    host, joiner = guests(2)
    _open(host, server + "/play/")
    _sign_in(host, "Lou")
    match_id = _create_table(host, "ny1901", ["open", "open"], "public", "Open house")
    _open(joiner, server + "/play/")
    _sign_in(joiner, "Max")
    # The lobby lists it (with its seats), and Join takes a seat.
    entry = joiner.locator(f"#lobby-list li[data-match='{match_id}']")
    entry.wait_for()
    assert "Open house" in entry.inner_text() and "2 open seats" in entry.inner_text()
    entry.locator("button.join-table").click()
    _wait_phase(joiner, "waiting")
    assert "Max (you)" in _seats_text(joiner)
    host.wait_for_function(
        "() => document.getElementById('waiting-seats').innerText.includes('Max')")
    assert "Waiting for 1 more player" in host.inner_text("#waiting-status")
    host.click("#start-now")  # the open seat goes to a bot; both are taken to the match
    for page in (host, joiner):
        _wait_phase(page, "play")
        _wait_idle(page)
        seats = page.inner_text("#seats")
        assert "Lou" in seats and "Max" in seats and "bot" in seats, seats
    # Back in the lobby, the table is no longer listed.
    joiner.click("#leave")
    _wait_phase(joiner, "setup")
    joiner.click("#lobby-refresh")
    joiner.wait_for_function(
        f"() => !document.querySelector(\"#lobby-list li[data-match='{match_id}']\")")
    for page in (host, joiner):
        assert page.js_errors == []


def test_leaving_the_quick_match_queue(guests: Any, server: str) -> None:
    (page,) = guests(1)
    _open(page, server + "/play/")
    _sign_in(page, "Solo")
    page.select_option("#quick-game", "ginkgopolis")
    page.fill("#quick-players", "4")
    page.click("#quick-find")
    page.wait_for_function(
        "() => document.getElementById('quick-status').dataset.status === 'waiting'")
    assert page.locator("#quick-leave").is_visible()
    assert "In the queue" in page.inner_text("#quick-status")
    page.click("#quick-leave")
    page.wait_for_function(
        "() => document.getElementById('quick-status').dataset.status === 'left'")
    assert page.locator("#quick-leave").is_hidden()
    assert page.locator("#quick-find").is_enabled()
    assert _phase(page) == "setup"
    assert page.js_errors == []
