"""The webhook events table of docs/clocks-and-notifications.md names every field a delivery
carries beyond the common ones (issue 30 item 9: `timed_out` carried `policy` unlisted). A
delivery's `data` is the player feed's event (service/players/models.py), so each feed event
model is read against its row."""

from __future__ import annotations

import re
import typing
from pathlib import Path

from service.players.models import FeedEvent

DOC = Path(__file__).resolve().parents[2] / "docs" / "clocks-and-notifications.md"
COMMON = {"seq", "kind", "matchId", "version", "game", "seat"}
"""Told once for every delivery, below the table (and ``seq`` is the feed's own)."""


def _rows() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8").split("### Events", 1)[1]
    rows: dict[str, str] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`"):
            for kind in re.findall(r"`(\w+)`", cells[0]):
                rows[kind] = cells[2]
    return rows


def test_every_field_a_delivery_carries_is_in_the_events_table() -> None:
    rows = _rows()
    assert {"timed_out", "match_finished", "seat_changed"} <= set(rows)
    members = typing.get_args(typing.get_args(FeedEvent)[0]) or typing.get_args(FeedEvent)
    checked = 0
    for model in members:
        kind = model.model_fields["kind"].default
        if kind not in rows:
            continue  # not a webhook event (the feed's own `reset`)
        fields = {f.alias or name for name, f in model.model_fields.items()}
        named = set(re.findall(r"`(\w+)`", rows[kind]))
        assert fields - COMMON <= named, (kind, fields - COMMON - named)
        checked += 1
    assert checked >= 9
