"""Display names (service/identity/names.py)."""

from __future__ import annotations

import unicodedata

import pytest

from service.errors import ApiError
from service.identity.names import NEUTRAL_NAME, clean_name


def refusal(raw: object) -> ApiError:
    with pytest.raises(ApiError) as caught:
        clean_name(raw)
    assert caught.value.code == "bad_name"
    assert caught.value.status == 400
    return caught.value


def test_names_are_nfc_normalized() -> None:
    decomposed = "Rene\u0301e"
    assert decomposed != "Renée"
    assert clean_name(decomposed) == "Renée"
    assert unicodedata.is_normalized("NFC", clean_name("A\u030a"))
    assert clean_name("A\u030a") == "\u00c5"


def test_surrounding_whitespace_is_stripped_inner_kept() -> None:
    assert clean_name("  Ann Lee \t") == "Ann Lee"
    assert clean_name("\u3000Ann\u00a0Lee\u3000") == "Ann\u00a0Lee"


def test_32_code_points_after_normalizing() -> None:
    assert clean_name("x" * 32) == "x" * 32
    assert clean_name("e\u0301" * 32) == "é" * 32  # 64 code points before NFC
    assert clean_name(" " * 40 + "y" * 32 + " " * 40) == "y" * 32
    error = refusal("x" * 33)
    assert "33" in error.detail and "32" in error.detail
    refusal("e\u0301" * 33)
    refusal("🐉" * 33)


@pytest.mark.parametrize("raw", ["", " ", "\t\n", "\u3000", "\u2003 \u00a0"])
def test_empty_names_are_refused(raw: str) -> None:
    assert "empty" in refusal(raw).detail


@pytest.mark.parametrize(
    ("char", "category"),
    [("\x00", "Cc"), ("\x07", "Cc"), ("\t", "Cc"), ("\x7f", "Cc"), ("\x85", "Cc"),
     ("\u200b", "Cf"), ("\u200d", "Cf"), ("\u202e", "Cf"), ("\u2066", "Cf"), ("\ufeff", "Cf"),
     ("\U000e0041", "Cf"), ("\ud800", "Cs"), ("\ue000", "Co"), ("\U000f0000", "Co"),
     ("\u0378", "Cn"), ("\uffff", "Cn"), ("\u2028", "Zl"), ("\u2029", "Zp")],
)
def test_invisible_and_control_characters_are_refused(char: str, category: str) -> None:
    assert unicodedata.category(char) == category
    error = refusal(f"Ann{char}Lee")
    assert f"U+{ord(char):04X}" in error.detail
    assert "Ann" not in error.detail


@pytest.mark.parametrize(
    "raw", ["🐉", "👍🏽", "🇨🇿", "❤️", "Zoë", "Łukasz", "Дмитрий", "李小龍", "عائشة", "O'Brien-Smith",
            "R2-D2 (bot?)", "ǅ"],
)
def test_letters_symbols_and_emoji_are_fine(raw: str) -> None:
    assert clean_name(raw) == unicodedata.normalize("NFC", raw)


@pytest.mark.parametrize("raw", [None, 5, 3.5, b"Ann", ["Ann"], {"name": "Ann"}, True])
def test_a_name_must_be_a_string(raw: object) -> None:
    assert "string" in refusal(raw).detail


def test_the_detail_never_repeats_much_of_the_input() -> None:
    raw = "SECRET-" + "z" * 5000
    error = refusal(raw)
    assert "SECRET" not in error.detail and "zzzz" not in error.detail
    assert len(error.detail) < 100


def test_the_neutral_name_is_a_valid_name() -> None:
    assert clean_name(NEUTRAL_NAME) == NEUTRAL_NAME == "Former player"
