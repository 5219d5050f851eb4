"""The planted bugs: where, what the line becomes, and which tests must catch it.

Each ``Mutant`` replaces one exact snippet (it must occur exactly once in its file, else the
mutant is *stale* and the campaign says so: update it when the code moves). The first seven
are the survivors of the audit in the "tests that bite" issue; the rest guard the same code
(scoring, visibility, the stores' compare-and-set, the write path).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    original: str
    mutated: str
    tests: tuple[str, ...]


HIDDEN = ("tests/test_hidden_information_property.py", "tests/api/test_hidden_information.py")
NY = ("tests/ny1901",)
GK = ("tests/ginkgopolis",)
RACES = ("tests/api/test_races.py", "tests/api/test_errors.py")
DELIVERY = ("tests/bots_service/test_delivery.py", "tests/bots_service/test_embedded.py")
STORE = ("tests/store/test_contract.py", "tests/store/test_sqlite.py")

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "1 NY market shift lists the removed cards in their order under the future market",
        "service/games/ny1901/rules.py",
        '"removed": [kind_name(k) for k in removed],',
        '"removed": [kind_name(k) for k in under],',
        (*HIDDEN, *NY),
    ),
    Mutant(
        "2 GK cards_drawn shows the drawn cards to everyone",
        "service/games/ginkgopolis/rules.py",
        '{"seat": seat, "count": len(drawn)},\n'
        '            {seat: {"cards": [card_label(c) for c in drawn]}},',
        '{"seat": seat, "count": len(drawn), "cards": [card_label(c) for c in drawn]},\n'
        "            {},",
        (*HIDDEN, *GK),
    ),
    Mutant(
        "3 NY Gold Prestige also scores adjacent opponent gold buildings",
        "service/games/ny1901/rules.py",
        "if placed & around and TILES[tile].level < data.GOLD:",
        "if placed & around and TILES[tile].level <= data.GOLD:",
        NY,
    ),
    Mutant(
        "4 the bot worker acknowledges a due signal before playing (at most once)",
        "service/workers/bots.py",
        "                done = await self.play(match_id)\n",
        "                await self.store.ack_due(list(self._running[match_id]))\n"
        "                done = await self.play(match_id)\n",
        DELIVERY,
    ),
    Mutant(
        "5 a watched match's timeline ignores seat-to-bot hand-overs",
        "service/matches/timeline.py",
        "record = with_handover(record, logged)",
        "record = record",
        DELIVERY,
    ),
    Mutant(
        "6 SSE: ?after= takes precedence over Last-Event-ID",
        "service/api/rest/match_stream.py",
        "    if last_event_id:\n"
        '        after = non_negative_int(last_event_id, "Last-Event-ID")\n',
        "    if after is None and last_event_id:\n"
        '        after = non_negative_int(last_event_id, "Last-Event-ID")\n',
        ("tests/api/test_e2e.py",),
    ),
    Mutant(
        "7a a lost compare-and-set is treated as success",
        "service/matches/act.py",
        "if await storage.write(match_id, version, new_record, entry):",
        "if await storage.write(match_id, version, new_record, entry) or True:",
        RACES,
    ),
    Mutant(
        "7b an unpinned move that loses the race is answered 409 instead of retried",
        "service/matches/act.py",
        "            if expected_version is not None or if_match is not None:\n"
        "                current, _ = await storage.load(match_id)\n"
        "                check_pins(current, expected_version, if_match)\n",
        "            current, _ = await storage.load(match_id)\n"
        "            check_pins(current, version, if_match)\n",
        RACES,
    ),
    Mutant(
        "7c an idempotent replay answers the current version",
        "service/matches/act.py",
        "return ActResponse(match_id=match_id, version=first.version, events=events, "
        "state=state)",
        "return ActResponse(match_id=match_id, version=version, events=events, state=state)",
        RACES,
    ),
    Mutant(
        "SQLite: a retried compare-and-set matches on the write tag alone",
        "service/store/sqlite.py",
        "return landed is not None and landed[1] == write_tag(write_id) and landed[0] == entry",
        "return landed is not None and landed[1] == write_tag(write_id)",
        STORE,
    ),
    Mutant(
        "SQLite: a stale compare-and-set (an older expected version) writes",
        "service/store/sqlite.py",
        "        if version != expected_version:\n",
        "        if version < expected_version:\n",
        STORE,
    ),
    Mutant(
        "the log shows a seat another seat's actions",
        "service/matches/read.py",
        "if seat is not None and logged.seat == seat else None),",
        "if seat is not None else None),",
        ("tests/api/test_hidden_information.py", "tests/graphql/test_visibility.py"),
    ),
    Mutant(
        "a spectator's events carry the private part of seat 0",
        "service/games/base.py",
        "        if seat is not None and seat in self.private:\n"
        "            seen.update(self.private[seat])",
        "        if (seat if seat is not None else 0) in self.private:\n"
        "            seen.update(self.private[seat if seat is not None else 0])",
        HIDDEN,
    ),
    Mutant(
        "problem codes: createMatch lists a code it cannot answer (invalid_action)",
        "service/api/problem_codes.py",
        '"unknown_game", "bad_player_count", "bad_options", "bad_bots", "busy",',
        '"unknown_game", "bad_player_count", "bad_options", "bad_bots", "busy", "invalid_action",',
        ("tests/api/test_problem_codes.py",),
    ),
    Mutant(
        "problem codes: a New York 1901 refusal code goes unpublished",
        "service/games/ny1901/codes.py",
        '    "lot_not_staffed": Refusal(("NY-A8",), "That lot holds none of your workers."),\n',
        "",
        ("tests/test_refusal_codes.py",),
    ),
    Mutant(
        "problem codes: Problem.code becomes a closed enum",
        "service/api/openapi.py",
        '    code["x-extensible-enum"] = known\n',
        '    code["x-extensible-enum"] = code["enum"] = known\n',
        ("tests/api/test_problem_codes.py",),
    ),
    Mutant(
        "docs: MatchState.bots answers any string, not the bot kinds",
        "service/matches/models.py",
        "    bots: dict[str, BotKind] = Field(",
        "    bots: dict[str, str] = Field(",
        ("tests/docs/test_schema_text.py",),
    ),
    Mutant(
        "docs: a description carries reStructuredText",
        "service/errors.py",
        "machine-readable `code`.",
        "machine-readable ``code``.",
        ("tests/docs/test_schema_text.py",),
    ),
    Mutant(
        "GraphQL: createMatch takes one game's typed options for another game",
        "service/api/graphql/mutations.py",
        "                    if named != game:",
        "                    if named == NotImplemented:",
        ("tests/graphql/test_options.py",),
    ),
    Mutant(
        "docs: GraphQL `games` refuses a header that is not a bearer token",
        "service/api/graphql/queries.py",
        "            return [Game.from_model(g) for g in await info.context.service.catalogue()]",
        "            info.context.credentials()\n"
        "            return [Game.from_model(g) for g in await info.context.service.catalogue()]",
        ("tests/docs/test_examples.py",),
    ),
    Mutant(
        "i18n: an event's sentence is said from everything, not from what the caller sees",
        "service/matches/views.py",
        "        text = texts.event_text(game, event.kind, seen, names, lang)",
        "        everything = {**event.public, **{k: v for p in event.private.values()\n"
        "                                         for k, v in p.items()}}\n"
        "        text = texts.event_text(game, event.kind, everything, names, lang)",
        ("tests/i18n/test_texts.py",),
    ),
    Mutant(
        "i18n: the ETag leaves the language out (a cache mixes languages)",
        "service/api/languages.py",
        "    return f'\"{opaque}\"' if lang == DEFAULT_LANGUAGE else f'\"{opaque};lang={lang}\"'",
        "    return f'\"{opaque}\"'",
        ("tests/i18n/test_http.py",),
    ),
    Mutant(
        "i18n: Accept-Language is read in order, q-values ignored",
        "service/i18n/negotiation.py",
        "    return [tag for _, _, tag in sorted(weighted)]",
        "    return [tag for _, _, tag in weighted]",
        ("tests/i18n/test_negotiation.py",),
    ),
    Mutant(
        "live: a frame encodes a version again for every watcher",
        "service/matches/timeline.py",
        "        found = self._json.get(seat)\n",
        "        found = None\n",
        ("tests/live/test_fanout.py",),
    ),
    Mutant(
        "live: an event stream stays open after its client left",
        "service/api/rest/sse.py",
        '                return cut("disconnected")',
        "                continue",
        ("tests/live/test_sse_response.py",),
    ),
    Mutant(
        "live: a quiet event stream is never pinged",
        "service/api/rest/sse.py",
        "            elif now - pulse.last_sent >= self.ping_seconds:",
        "            elif False:",
        ("tests/live/test_sse_response.py",),
    ),
    Mutant(
        "live: a stream that stopped reading is never cut",
        "service/api/rest/sse.py",
        "                if now - pulse.sending_since >= self.send_timeout:",
        "                if False:",
        ("tests/live/test_sse_response.py",),
    ),
    Mutant(
        "compression: an event stream's gzip keeps zlib's default window",
        "service/api/compression.py",
        "level, zlib.DEFLATED, 16 + STREAM_WINDOW_BITS, STREAM_MEM_LEVEL",
        "level, zlib.DEFLATED, 31",
        ("tests/api/test_compression.py",),
    ),
    Mutant(
        "compression: an event stream is answered in zstd or br",
        "service/api/compression.py",
        "        if stream:\n            codings",
        "        if False:\n            codings",
        ("tests/api/test_compression.py",),
    ),
    Mutant(
        "live: a resume far behind replays every version instead of one snapshot",
        "service/matches/watch.py",
        "            elif newest.version - after > self.resume_window:",
        "            elif newest.version - after > self.resume_window * 1000:",
        ("tests/live/test_fanout.py",),
    ),
    Mutant(
        "live: the per-client stream cap is never reached",
        "service/live/hub.py",
        "        if held >= self.max_watchers_per_client:",
        "        if held > self.max_watchers_per_client:",
        ("tests/live",),
    ),
    Mutant(
        "live: a patch skips the list elements that changed in place",
        "service/matches/patches.py",
        "                _diff(old, new, [*parts, index], out)",
        "                pass",
        ("tests/live/test_patches.py",),
    ),
    Mutant(
        "checkpoints: written one version late",
        "service/matches/storage.py",
        "        if checkpointed(version + 1) and entry.checkpoint is None:",
        "        if checkpointed(version) and entry.checkpoint is None:",
        ("tests/api/test_log_pages.py",),
    ),
    Mutant(
        "players: your_turn for every version the seat stays active",
        "service/players/feed_events.py",
        "        if (still_bound and seat in active and seat not in was_active",
        "        if (still_bound and seat in active",
        ("tests/players/test_feed.py",),
    ),
    Mutant(
        "players: a writer appends its version over a gap instead of filling it",
        "service/players/feed.py",
        "        if mark < version:\n            await self._fill(",
        "        if False:\n            await self._fill(",
        ("tests/players/test_feed.py",),
    ),
    Mutant(
        "players: a player token of another player is accepted",
        "service/identity/auth.py",
        "        if player.token is None or not credentials.same(token, player.token):",
        "        if player.token is None:",
        ("tests/players/test_guests.py",),
    ),
    Mutant(
        "players: the cursor repeats the page's last match",
        "service/store/sqlite.py",
        "member > ?",
        "member >= ?",
        ("tests/players/test_my_matches.py", "tests/store/test_docs.py"),
    ),
    Mutant(
        "players: a player writes to a match it has no seat in",
        "service/matches/views.py",
        "        if held is None and required:\n            raise no_seat()",
        "        if held is None and required and False:\n            raise no_seat()",
        ("tests/players/test_guests.py",),
    ),
    Mutant(
        "webhooks: an attempt has no deadline (a trickling receiver holds its slot for ever)",
        "service/webhooks/sender.py",
        "            async with asyncio.timeout(self.deadline):",
        "            async with asyncio.timeout(None):",
        ("tests/webhooks/test_isolation.py",),
    ),
    Mutant(
        "webhooks: one app may hold every slot of a worker",
        "service/workers/webhooks.py",
        "        self.per_app = max(1, per_app)",
        "        self.per_app = max(1, concurrency)",
        ("tests/webhooks/test_isolation.py",),
    ),
    Mutant(
        "webhooks: a lane served keeps its place (no turns: a backlog goes first)",
        "service/workers/webhooks.py",
        "            await outbox.settle_lane(member, lane_claim, now + 1)",
        "            await outbox.settle_lane(member, lane_claim, 0)",
        ("tests/webhooks/test_isolation.py",),
    ),
    Mutant(
        "webhooks: 6to4 and the other IPv4-carrying forms are judged as IPv6 only",
        "service/webhooks/ssrf.py",
        "        return all(self._allowed_itself(a) for a in (address, *embedded(address)))",
        "        return self._allowed_itself(address)",
        ("tests/webhooks/test_ssrf.py",),
    ),
    Mutant(
        "webhooks: deliveries about guests are not budgeted",
        "service/webhooks/service.py",
        "        if self.budget is not None:\n            messages = await self._within_budget",
        "        if False:\n            messages = await self._within_budget",
        ("tests/webhooks/test_guest_budget.py",),
    ),
    Mutant(
        "webhooks: a lane put back is not looked at again (a delivery added meanwhile is lost)",
        "service/webhooks/outbox.py",
        "        again = await self.lane_next(endpoint)",
        "        again = first",
        ("tests/webhooks/test_isolation.py",),
    ),
    Mutant(
        "GK rules v4 re-lettering: version 4 offers version 3's layouts only",
        "service/games/ginkgopolis/rules.py",
        "    every_layout = s.rules_version >= 4\n",
        "    every_layout = s.rules_version >= 5\n",
        ("tests/golden",),
    ),
    Mutant(
        "GK rules v4 re-lettering: version 3 matches get version 4's layouts",
        "service/games/ginkgopolis/rules.py",
        "    every_layout = s.rules_version >= 4\n",
        "    every_layout = s.rules_version >= 3\n",
        ("tests/golden", "tests/ginkgopolis/test_rules_v3.py"),
    ),
    Mutant(
        "GK rules v3 walk: the automatic token placement reads the angle order again",
        "service/games/ginkgopolis/rules.py",
        "    if s.rules_version >= 3:  # GK-T2 along the walk",
        "    if s.rules_version >= 5:  # GK-T2 along the walk",
        ("tests/golden",),
    ),
)
