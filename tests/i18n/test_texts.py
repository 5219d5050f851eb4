"""Sentences for events and legal moves: in each language, in the rulebooks' words, and never
telling a seat more than its data (service/texts, docs/events.md "Texts")."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from service import games, texts
from service.games.base import Event
from service.games.events import kinds
from service.games.ginkgopolis import data as gk
from service.games.ginkgopolis.events import GkEvent
from service.games.ny1901.events import Ny1901Event
from service.i18n import LANGUAGES, Lang
from service.matches.views import events_for
from service.texts.ginkgopolis import card_name
from tests.i18n.conftest import create

WORDS: dict[str, dict[str, tuple[str, str]]] = {
    # game -> language -> (a word of the first legal moves, a word of the first move's events)
    "ny1901": {"en": ("Acquire lot", "acquired lot"), "cs": ("Pořídit pozemek", "pořizuje pozemek"),
               "de": ("erwerben", "erwarb das Grundstück")},
    "ginkgopolis": {"en": ("Urbanize at token", "chose a card"),
                    "cs": ("Urbanizace u žetonu", "volí kartu"),
                    "de": ("urbanisieren", "wählte eine Karte")},
}


@pytest.mark.parametrize("game", sorted(WORDS))
@pytest.mark.parametrize("lang", LANGUAGES)
def test_legal_moves_and_events_in_each_language(
    client: TestClient, game: str, lang: Lang
) -> None:
    match = create(client, game, players=2, seed=5)
    moves = client.get(f"{match.url}/legal-moves?lang={lang}", headers=match.auth(0)).json()
    assert len(moves["texts"]) == len(moves["moves"]) > 0
    move_word, event_word = WORDS[game][lang]
    assert any(move_word in text for text in moves["texts"]), moves["texts"][:5]
    assert len(set(moves["texts"])) == len(moves["texts"])  # one sentence per move
    acted = client.post(f"{match.url}/actions?lang={lang}", json={"action": moves["moves"][0]},
                        headers=match.auth(0))
    assert acted.status_code == 200, acted.text
    events = acted.json()["events"]
    assert events and all(e["text"] for e in events)
    assert any(event_word in e["text"] for e in events), events
    log = client.get(f"{match.url}/log?after=0&lang={lang}", headers=match.auth(0)).json()
    assert [e["text"] for e in log["entries"][-1]["events"]] == [e["text"] for e in events]


def test_new_york_names_players_by_their_characters(client: TestClient) -> None:
    match = create(client, "ny1901", players=2, seed=5)
    view = client.get(match.url).json()["view"]
    move = client.get(f"{match.url}/legal-moves", headers=match.auth(0)).json()["moves"][0]
    events = client.post(f"{match.url}/actions", json={"action": move},
                         headers=match.auth(0, **{"Accept-Language": "cs"})).json()["events"]
    assert events[0]["text"] == f"{view['seats'][0]['character']} pořizuje pozemek {move['lot']}."


def _random_game(game: str, players: int, seed: int, options: dict[str, Any]
                 ) -> Iterator[tuple[Event, Any]]:
    """Every event of a random game, with the state after it."""
    engine = games.get(game)
    chooser = random.Random(seed)
    parsed = engine.Options.model_validate(options) if options else None
    state = engine.setup(players, parsed, seed)
    while engine.result(state) is None:
        seat = chooser.choice(sorted(engine.active_seats(state)))
        state, events = engine.apply(state, seat, chooser.choice(engine.legal_actions(state, seat)))
        for event in events:
            yield event, state


def _labels(value: Any) -> set[str]:
    """Every card label anywhere in an event's data (a token's letter names the
    urbanization card of that letter too: "Žeton Urbanizace J")."""
    if isinstance(value, str):
        return {value} if value in LABELS else set()
    if isinstance(value, dict):
        tokens = {f"urbanization-{v}" for k, v in value.items() if k == "token"}
        return tokens.union(*(_labels(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_labels(v) for v in value)) if value else set()
    return set()


LABELS = {gk.card_label(card) for card in range(gk.N_CARDS)}


@pytest.mark.parametrize(("players", "options"), [
    (1, {}), (2, {"characters": "draft"}), (3, {}), (4, {"characters": "draft"}),
])
@pytest.mark.parametrize("lang", ["en", "cs"])
def test_ginkgopolis_texts_never_tell_a_seat_what_its_data_does_not(
    players: int, options: dict[str, Any], lang: Lang
) -> None:
    engine = games.get("ginkgopolis")
    names = {label: card_name(label).render(lang) for label in LABELS}
    hidden_seen = 0
    for index, (event, state) in enumerate(_random_game("ginkgopolis", players, 11 + players,
                                                        options)):
        if index > 1500:
            break
        spectator = events_for(None, [event], "ginkgopolis", lang=lang,
                               view=engine.view(state, None))[0]
        for seat in range(players):
            seen = events_for(seat, [event], "ginkgopolis", lang=lang,
                              view=engine.view(state, seat))[0]
            # The text is said from the seat's data only: equal data, equal text...
            if seen.data == spectator.data:
                assert seen.text == spectator.text, (event.kind, seat)
            else:
                hidden_seen += 1
            # ... and it names no card that data does not.
            told = _labels(seen.data)
            for label, name in names.items():
                if label not in told and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])",
                                                   seen.text):
                    # A name can be a prefix of another (Red 1 / Red 12): the regex rules
                    # that out; a card of the same name elsewhere in the data would not.
                    raise AssertionError((event.kind, seat, label, seen.text, seen.data))
        assert spectator.text == texts.event_text(
            "ginkgopolis", event.kind, {k: v for k, v in event.for_seat(None).items()
                                        if k != "kind"},
            texts.seat_names("ginkgopolis", engine.view(state, None)), lang)
    assert hidden_seen > 0  # the games did deal private information


def test_new_york_texts_are_the_same_for_every_viewer() -> None:
    engine = games.get("ny1901")
    for index, (event, state) in enumerate(_random_game("ny1901", 3, 4, {})):
        if index > 400:
            break
        said = {events_for(viewer, [event], "ny1901", lang="de",
                           view=engine.view(state, viewer))[0].text for viewer in (0, 1, 2, None)}
        assert len(said) == 1, said


EVENT_UNIONS = {"ny1901": Ny1901Event, "ginkgopolis": GkEvent}


@pytest.mark.parametrize("game", sorted(EVENT_UNIONS))
def test_every_kind_has_a_sentence_of_its_own(game: str) -> None:
    names = texts.seat_names(game, None)
    for kind in kinds(EVENT_UNIONS[game]):
        said = texts.event_message(game, kind, {}, names)
        assert "Event:" not in said.render("en"), kind
        for lang in ("cs", "de"):
            assert said.render(lang) != said.render("en"), (kind, lang)
