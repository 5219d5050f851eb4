"""``skyline selfplay``: bots against bots, in parallel processes, with a results table.

    skyline selfplay --game ny1901 --players 2 --bots search,greedy --games 200 --seed 1

Match ``i`` is set up with seed ``seed + i``; its seats get the bot kinds rotated by ``i``
(seat ``s`` plays ``kinds[(s + i) % len(kinds)]``), so over a multiple of ``len(kinds)``
matches every kind sits in every seat equally often. Each bot gets its own seed derived from
the run seed, the match and the seat, so a run is reproducible (with an iteration budget).
The table shows per kind: seats played, wins (a shared win counts 1/k for each of the k
winners), win rate, mean and standard deviation of the final scores and the thinking time per
move; then the average game length in moves.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from .base import Budget
from .registry import KINDS, get_bot


@dataclass(frozen=True, slots=True)
class MatchSpec:
    game: str
    players: int
    kinds: tuple[str, ...]
    """Bot kind per seat."""
    seed: int
    bot_seeds: tuple[int, ...]
    budget: Budget
    options: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    kinds: tuple[str, ...]
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    moves: int
    think_seconds: tuple[float, ...]
    """Per seat, total time spent in ``choose``."""
    decisions: tuple[int, ...]
    """Per seat, the number of ``choose`` calls."""


@dataclass(slots=True)
class KindStats:
    seats: int = 0
    wins: float = 0.0
    scores: list[int] = field(default_factory=list)
    think: float = 0.0
    decisions: int = 0

    @property
    def win_rate(self) -> float:
        return self.wins / self.seats if self.seats else 0.0

    @property
    def mean(self) -> float:
        return sum(self.scores) / len(self.scores) if self.scores else 0.0

    @property
    def stdev(self) -> float:
        if len(self.scores) < 2:
            return 0.0
        mean = self.mean
        return math.sqrt(sum((s - mean) ** 2 for s in self.scores) / (len(self.scores) - 1))

    @property
    def ms_per_move(self) -> float:
        return 1000.0 * self.think / self.decisions if self.decisions else 0.0


@dataclass(slots=True)
class Summary:
    game: str
    players: int
    games: int
    budget: Budget
    stats: dict[str, KindStats]
    mean_moves: float
    outcomes: list[MatchOutcome]


def engine_for(game: str) -> Any:
    """The registered engine, or the package's ``ENGINE`` of a game not yet registered."""
    import importlib

    from service import games

    try:
        return games.get(game)
    except games.UnknownGame:
        try:
            return importlib.import_module(f"service.games.{game}").ENGINE
        except ImportError:
            raise games.UnknownGame(game) from None


def play_match(spec: MatchSpec) -> MatchOutcome:
    """One match between bots; only views and legal moves reach the bots."""
    try:
        return _play(spec)
    except Exception as error:
        # Exceptions cross the process pool pickled; keep them simple and say which match.
        raise RuntimeError(f"match seed {spec.seed} {spec.kinds}: {error!r}") from None


def _play(spec: MatchSpec) -> MatchOutcome:
    engine = engine_for(spec.game)
    options = engine.Options.model_validate(spec.options) if spec.options else None
    bots = [get_bot(kind, seed, spec.budget) for kind, seed in zip(spec.kinds, spec.bot_seeds,
                                                                      strict=True)]
    state = engine.setup(spec.players, options, spec.seed)
    think = [0.0] * spec.players
    decisions = [0] * spec.players
    moves = 0
    while engine.result(state) is None:
        active = sorted(engine.active_seats(state))
        if not active:
            raise RuntimeError("no seat may act in an unfinished game")
        seat = active[0]
        legal = engine.legal_actions(state, seat)
        view = engine.view(state, seat)
        started = time.perf_counter()
        action = bots[seat].choose(engine, view, legal, seat)
        think[seat] += time.perf_counter() - started
        decisions[seat] += 1
        if action not in legal:
            raise RuntimeError(f"{spec.kinds[seat]} bot chose an illegal move {action!r}")
        state, _ = engine.apply(state, seat, action)
        moves += 1
    result = engine.result(state)
    assert result is not None
    scores = tuple(seat.score for seat in sorted(result.seats, key=lambda s: s.seat))
    return MatchOutcome(spec.kinds, scores, tuple(result.winners), moves, tuple(think),
                        tuple(decisions))


def match_specs(game: str, players: int, kinds: Sequence[str], games: int, seed: int,
                budget: Budget, options: dict[str, Any] | None = None) -> list[MatchSpec]:
    specs = []
    for i in range(games):
        seat_kinds = tuple(kinds[(s + i) % len(kinds)] for s in range(players))
        bot_seeds = tuple((seed * 1_000_003 + i) * 16 + s for s in range(players))
        specs.append(MatchSpec(game, players, seat_kinds, seed + i, bot_seeds, budget, options))
    return specs


def summarize(game: str, players: int, budget: Budget, kinds: Sequence[str],
              outcomes: list[MatchOutcome]) -> Summary:
    stats = {kind: KindStats() for kind in dict.fromkeys(kinds)}
    for outcome in outcomes:
        share = 1.0 / len(outcome.winners) if outcome.winners else 0.0
        for seat, kind in enumerate(outcome.kinds):
            entry = stats[kind]
            entry.seats += 1
            entry.scores.append(outcome.scores[seat])
            entry.think += outcome.think_seconds[seat]
            entry.decisions += outcome.decisions[seat]
            if seat in outcome.winners:
                entry.wins += share
    mean_moves = sum(o.moves for o in outcomes) / len(outcomes) if outcomes else 0.0
    return Summary(game, players, len(outcomes), budget, stats, mean_moves, outcomes)


class _Progress:
    """tqdm when installed, else a one-line counter on stderr."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.done = 0
        self.stream = stream
        self.started = time.monotonic()
        try:
            from tqdm import tqdm  # type: ignore[import-untyped]
        except ImportError:
            self.bar: Any = None
        else:
            self.bar = tqdm(total=total, file=stream, unit="game")

    def step(self) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)
            return
        elapsed = time.monotonic() - self.started
        width = 30
        filled = width * self.done // max(self.total, 1)
        self.stream.write(f"\rselfplay [{'#' * filled}{'.' * (width - filled)}] "
                          f"{self.done}/{self.total} games, {elapsed:.0f}s")
        self.stream.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        else:
            self.stream.write("\n")
            self.stream.flush()


def run(game: str, players: int, kinds: Sequence[str], games: int, seed: int,
        budget: Budget, workers: int = 1, options: dict[str, Any] | None = None,
        progress: TextIO | None = None) -> Summary:
    """Play ``games`` matches (in ``workers`` processes) and summarize them."""
    for kind in kinds:
        if kind not in KINDS:
            raise ValueError(f"unknown bot kind {kind!r} (known: {', '.join(KINDS)})")
    engine = engine_for(game)
    if not engine.min_players <= players <= engine.max_players:
        raise ValueError(f"{game} is for {engine.min_players}-{engine.max_players} players")
    specs = match_specs(game, players, kinds, games, seed, budget, options)
    bar = _Progress(len(specs), progress) if progress is not None else None
    outcomes: list[MatchOutcome] = []
    if workers <= 1:
        for spec in specs:
            outcomes.append(play_match(spec))
            if bar:
                bar.step()
    else:
        context = multiprocessing.get_context("spawn" if sys.platform == "darwin" else None)
        with context.Pool(workers) as pool:
            for outcome in pool.imap(play_match, specs):
                outcomes.append(outcome)
                if bar:
                    bar.step()
    if bar:
        bar.close()
    return summarize(game, players, budget, kinds, outcomes)


def format_table(summary: Summary) -> str:
    budget = summary.budget
    parts = []
    if budget.iterations is not None:
        parts.append(f"{budget.iterations} iterations")
    if budget.seconds is not None:
        parts.append(f"{budget.seconds:g} s")
    head = f"{summary.game}, {summary.players} players, {summary.games} games"
    if "search" in summary.stats:
        head += f", search budget {' / '.join(parts) or 'default'} per move"
    lines = [
        head,
        "",
        f"{'bot':<8} {'seats':>6} {'wins':>7} {'win %':>6} {'mean':>7} {'sd':>6} {'ms/move':>8}",
    ]
    for kind, s in summary.stats.items():
        lines.append(
            f"{kind:<8} {s.seats:>6} {s.wins:>7.1f} {100 * s.win_rate:>6.1f} {s.mean:>7.1f} "
            f"{s.stdev:>6.1f} {s.ms_per_move:>8.1f}"
        )
    lines.append("")
    lines.append(f"average game length: {summary.mean_moves:.1f} moves")
    return "\n".join(lines)


# ------------------------------------------------------------------ command line
def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Register ``selfplay`` on the ``skyline`` sub-command parser."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "selfplay", help="play bots against each other and print a results table")
    parser.add_argument("--game", required=True, help="game id (ny1901, ginkgopolis)")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--bots", default="greedy,random",
                        help="comma-separated bot kinds, rotated over the seats "
                             f"(kinds: {', '.join(KINDS)})")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", default=None,
                        help="search budget per move: iterations (200), seconds (0.5s) or "
                             "both (200,0.5s)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="parallel processes (default: one per CPU)")
    parser.add_argument("--options", default=None, help="game options as JSON")
    parser.add_argument("--json", action="store_true",
                        help="print the summary as JSON instead of a table")
    parser.set_defaults(handler=main)
    return parser


def main(args: argparse.Namespace) -> int:
    kinds = [k.strip() for k in args.bots.split(",") if k.strip()]
    try:
        summary = run(args.game, args.players, kinds, args.games, args.seed,
                      Budget.parse(args.budget), workers=args.workers,
                      options=json.loads(args.options) if args.options else None,
                      progress=sys.stderr)
    except ValueError as error:
        print(f"skyline selfplay: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({
            "game": summary.game, "players": summary.players, "games": summary.games,
            "mean_moves": summary.mean_moves,
            "bots": {k: {"seats": s.seats, "wins": s.wins, "win_rate": s.win_rate,
                         "mean": s.mean, "sd": s.stdev, "ms_per_move": s.ms_per_move}
                     for k, s in summary.stats.items()},
        }, indent=2))
    else:
        print(format_table(summary))
    return 0
