"""Messages render in a language: placeholders, plural forms, nested messages, lists; a
problem keeps its message until the transport knows the language (service/i18n)."""

from __future__ import annotations

from service.errors import ApiError
from service.i18n import TN, T, Text, render, sentences


def test_a_message_renders_in_each_language() -> None:
    seat = T("Seat {seat}", seat=2)
    assert [seat.render(lang) for lang in ("en", "cs", "de")] == ["Seat 2", "Hráč 2",
                                                                 "Spieler 2"]
    assert str(seat) == "Seat 2"


def test_plural_forms_follow_each_languages_rule() -> None:
    points = [TN("{n} point", "{n} points", n) for n in (1, 2, 5, 21)]
    assert [p.render("en") for p in points] == ["1 point", "2 points", "5 points", "21 points"]
    assert [p.render("cs") for p in points] == ["1 bod", "2 body", "5 bodů", "21 bodů"]
    assert [p.render("de") for p in points] == ["1 Punkt", "2 Punkte", "5 Punkte", "21 Punkte"]


def test_values_may_be_messages_and_lists_of_them() -> None:
    built = T("{player} built {tile} ({points}).", player=T("Seat {seat}", seat=0),
              tile="S3", points=TN("{n} point", "{n} points", 4))
    assert built.render("en") == "Seat 0 built S3 (4 points)."
    assert built.render("cs") == "Hráč 0 staví mrakodrap S3 (4 body)."
    drew = T("{player} drew {cards}.", player="Hal", cards=["A", T("Seat {seat}", seat=1), "C"])
    assert drew.render("cs") == "Hal si dobírá: A, Hráč 1 a\xa0C."  # Czech: no break after "a"
    assert drew.render("de") == "Hal zog A, Spieler 1 und C."
    both = sentences(T("The characters were revealed."), None, T("End the turn"))
    assert both.render("de") == "Die Charaktere wurden aufgedeckt. Den Zug beenden"


def test_a_message_the_catalogue_lacks_stays_as_it_is() -> None:
    assert render("Something nobody translated.", "cs") == "Something nobody translated."
    assert render("No such seat.", "cs") == "Takové místo neexistuje."
    assert T("Braces {stay} without values").render("de") == "Braces {stay} without values"


def test_values_that_do_not_fit_fall_back_to_english_never_fail() -> None:
    assert T("The match is at version {version}, not {expected}.", version=3).render("cs") == (
        "The match is at version 3, not {expected}.")
    engine = Text("The lot is already owned.", english="Lot rB is taken by seat 1.")
    assert (engine.render("en"), engine.render("cs")) == (
        "Lot rB is taken by seat 1.", "Pozemek už někomu patří.")


def test_a_problem_keeps_its_message_until_it_is_rendered() -> None:
    error = ApiError.of("version_conflict", T("The match is at version {version}, not "
                                              "{expected}.", version=2, expected=1),
                        currentVersion=2)
    assert error.detail == "The match is at version 2, not 1."  # English, for logs and tests
    assert error.to_json("de") == {
        "type": "urn:skyline:problem:version_conflict", "title": "Versionskonflikt",
        "status": 409, "detail": "Die Partie ist in Version 2, nicht 1.",
        "code": "version_conflict", "currentVersion": 2,
    }
    assert error.to_json()["title"] == "Version conflict"
