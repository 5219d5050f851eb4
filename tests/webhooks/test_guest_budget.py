"""What guests may cause to be delivered (issue 31, item 11: two guests drove 3,070
deliveries in 30 s to an app with 10 endpoints): deliveries about guests are counted per
guest and per app and not stored past either budget; deliveries about the app's own users
are never counted, and every one of them arrives, as the player feed tells them."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from service.cli import build_parser
from service.identity.callers import Caller
from service.matches.models import CreateMatchRequest
from service.players.feed import FeedItem
from service.players.models import CreatePlayerRequest
from service.store import MatchStore
from service.webhooks import WebhookSettings
from service.webhooks.budget import GUEST_APP_DEFAULT, GUEST_DEFAULT, Window

from .conftest import FAST, Receiver, Stack, until
from .test_delivery import _play_one

PER_GUEST = Window(6, 600)
PER_APP = Window(10, 600)
BUDGETED = WebhookSettings(**{**FAST.__dict__, "guest_budget": PER_GUEST,
                              "guest_app_budget": PER_APP})
ENDPOINTS = ("/a", "/b")
KINDS = ("match_started", "your_turn", "match_finished")


async def _guest(stack: Stack, app: Caller, name: str) -> Caller:
    created = await stack.players.create_guest(CreatePlayerRequest(name=name, app_id=app.app))
    caller = await stack.players.authenticate(created.token)
    assert isinstance(caller, Caller) and caller.player == created.id
    return caller


async def _guest_match(stack: Stack, guest: Caller) -> str:
    created = await stack.players.create_match(guest, CreateMatchRequest.model_validate(
        {"game": "toy", "seats": [{"player": "me"}, {"bot": "random"}],
         "options": {"rounds": 1}}))
    return created.match_id


def _about(receiver: Receiver) -> Counter[str]:
    """Deliveries received per player."""
    return Counter(str(b["data"].get("player")) for b in receiver.bodies())


async def test_guests_get_a_budget_and_the_apps_users_get_everything(
        store: MatchStore, receiver: Receiver) -> None:
    stack = Stack(store, BUDGETED)
    try:
        app = await stack.app()
        for path in ENDPOINTS:
            await stack.endpoint(app, receiver, path, events=list(KINDS))
        guests = [await _guest(stack, app, f"Guest {n}") for n in range(3)]
        # The app's users play a whole match, between the guests' floods.
        users_match = await stack.match(app)
        for _ in range(20):
            for guest in guests:
                await _guest_match(stack, guest)
        for _ in range(60):
            _, record = await stack.matches.storage.load(users_match)
            if record.finished:
                break
            await _play_one(stack, users_match)
        budget = stack.hooks.budget
        assert budget is not None and budget.dropped > 0
        stack.start_worker()
        await until(lambda: stack.hooks.enqueued == len(receiver.ids()), "every delivery")
        about = _about(receiver)
        guest_total = sum(about[g.player or ""] for g in guests)
        assert all(about[g.player or ""] <= PER_GUEST.quota for g in guests), about
        assert 0 < guest_total <= PER_APP.quota, about
        assert guest_total + budget.dropped >= 20 * 3 * len(ENDPOINTS)

        # Every event the users' feed holds reached each endpoint, and nothing else.
        _, record = await stack.matches.storage.load(users_match)
        for seat in (0, 1):
            holder = record.holder(seat)
            assert holder is not None
            items, _ = await stack.players.feed.read(holder.player, 0)
            feed = [json.loads(i.data) for i in items if isinstance(i, FeedItem)]
            told = sorted((d["version"], d["kind"]) for d in feed
                          if d["matchId"] == users_match and d["kind"] in KINDS)
            assert told, items
            for path in ENDPOINTS:
                got = sorted((b["data"]["version"], b["type"])
                             for b in receiver.bodies(path)
                             if b["data"]["player"] == holder.player)
                assert got == told, (path, seat)
        assert receiver.bad == []
    finally:
        await stack.close()


async def test_without_budgets_every_guest_delivery_is_sent(
        store: MatchStore, receiver: Receiver) -> None:
    stack = Stack(store, WebhookSettings(**{**FAST.__dict__, "guest_budget": None,
                                            "guest_app_budget": None}))
    try:
        app = await stack.app()
        await stack.endpoint(app, receiver, "/all", events=["match_started", "your_turn"])
        guest = await _guest(stack, app, "Guest")
        for _ in range(10):
            await _guest_match(stack, guest)
        assert stack.hooks.budget is None
        stack.start_worker()
        await until(lambda: len(receiver.ids()) == stack.hooks.enqueued, "every delivery")
        assert _about(receiver)[guest.player or ""] == stack.hooks.enqueued > PER_GUEST.quota
    finally:
        await stack.close()


def _settings(*flags: str) -> Any:
    from service.cli import _webhook_settings

    return _webhook_settings(build_parser().parse_args(["serve", *flags]))


def test_the_budgets_are_flags_and_rate_limits_off_switches_them_off(capsys: Any) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"default {GUEST_DEFAULT.spec()}" in help_text
    assert f"default {GUEST_APP_DEFAULT.spec()}" in help_text
    default = _settings()
    assert (default.guest_budget, default.guest_app_budget) == (GUEST_DEFAULT,
                                                                GUEST_APP_DEFAULT)
    assert default.budget_uri == "async+memory://"
    chosen = _settings("--webhook-guest-budget", "30/60", "--webhook-guest-app-budget", "0",
                       "--redis-url", "redis://r:6379/0", "--redis-prefix", "p:")
    assert (chosen.guest_budget, chosen.guest_app_budget) == (Window(30, 60), None)
    assert (chosen.budget_uri, chosen.budget_prefix) == ("async+redis://r:6379/0", "p:")
    assert _settings("--webhook-guest-budget", "off").guest_budget is None
    off = _settings("--rate-limits", "off")
    assert (off.guest_budget, off.guest_app_budget) == (None, None)
