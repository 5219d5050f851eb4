"""Guest players in the reference client (issue 16): two people in two browser contexts
each sign in with a name -- no token copied by hand --, start a match against a bot, see it in
"My matches" with whose turn it is, open it from there, play, and see the list follow the
player feed; neither sees the other's match. (Two guests in one match need the lobby's open
seats: issue 17.)"""

from __future__ import annotations

from typing import Any

from .test_client import _wait_idle


def _sign_in(page: Any, server: str, name: str) -> None:
    page.goto(server + "/play/")
    page.wait_for_function("() => document.body.dataset.ready === 'true'")
    page.fill("#player-name", name)
    page.click("#sign-in")
    page.wait_for_function("() => !document.getElementById('signed-in').hidden")
    assert page.inner_text("#player-shown") == name


def _start_against_a_bot(page: Any) -> None:
    page.select_option("#game", "ny1901")
    page.fill("#players", "2")
    page.dispatch_event("#players", "input")
    page.select_option("#seat-kind-0", "human")
    page.select_option("#seat-kind-1", "bot")
    page.click("#create")
    page.wait_for_function("() => document.querySelector('main').dataset.phase === 'play'")
    _wait_idle(page)


def test_two_guests_sign_in_and_find_their_matches(browser: Any, server: str) -> None:
    contexts = [browser.new_context(), browser.new_context()]
    try:
        pages = [c.new_page() for c in contexts]
        errors: list[str] = []
        for page in pages:
            page.on("pageerror", lambda error: errors.append(str(error)))
        _sign_in(pages[0], server, "Ada")
        _sign_in(pages[1], server, "Bo")
        for page in pages:
            _start_against_a_bot(page)
            # the seats name the player
            assert page.locator("#seats").inner_text().count("bot") >= 1
            # play one move as the player, then go back to the list
            page.locator("#moves button.play").first.evaluate("b => b.click()")
            _wait_idle(page)
            page.click("#leave")
            page.wait_for_function(
                "() => document.querySelectorAll('#my-matches li').length === 1")
        for page, name in zip(pages, ("Ada", "Bo"), strict=True):
            item = page.locator("#my-matches li").first
            assert name in item.inner_text()  # the list names the player, not the other one
            # the bot answers, the feed says it is the player's turn again: the list follows
            page.wait_for_function(
                "() => document.querySelector('#my-matches li')?.dataset.yourTurn === 'true'",
                timeout=20_000)
            item.locator("button").click()
            page.wait_for_function(
                "() => document.querySelector('main').dataset.phase === 'play'")
            _wait_idle(page)
            assert page.locator("#moves button.play").count() > 0  # its seat, its moves
        # a reload keeps the player signed in (the token stays in this browser)
        pages[0].goto(server + "/play/")
        pages[0].wait_for_function("() => document.body.dataset.ready === 'true'")
        pages[0].wait_for_function("() => !document.getElementById('signed-in').hidden")
        assert errors == []
    finally:
        for context in contexts:
            context.close()
