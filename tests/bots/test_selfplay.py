"""``skyline selfplay``: a few tiny matches, in parallel processes, and the results table."""

from __future__ import annotations

import pytest

from service.bots import Budget
from service.bots.selfplay import format_table, match_specs, run
from service.cli import main


def test_seats_rotate_so_every_kind_sits_everywhere() -> None:
    specs = match_specs("ny1901", 2, ["search", "greedy"], 4, seed=1, budget=Budget(3))
    assert [s.kinds for s in specs] == [("search", "greedy"), ("greedy", "search")] * 2
    assert [s.seed for s in specs] == [1, 2, 3, 4]
    assert len({seed for s in specs for seed in s.bot_seeds}) == 8


def test_run_summarizes_wins_scores_and_length() -> None:
    summary = run("ny1901", 2, ["greedy", "random"], 4, seed=2, budget=Budget(2))
    greedy, rnd = summary.stats["greedy"], summary.stats["random"]
    assert greedy.seats == rnd.seats == 4
    assert greedy.wins + rnd.wins == pytest.approx(4.0)  # ties are shared
    assert len(greedy.scores) == 4 and greedy.stdev >= 0
    assert summary.mean_moves > 10
    table = format_table(summary)
    assert "ny1901, 2 players, 4 games" in table
    assert "average game length" in table
    for header in ("bot", "seats", "wins", "win %", "mean", "sd", "ms/move"):
        assert header in table
    # Same seed, same iteration budget: the same games.
    again = run("ny1901", 2, ["greedy", "random"], 4, seed=2, budget=Budget(2))
    assert [o.scores for o in again.outcomes] == [o.scores for o in summary.outcomes]


def test_cli_runs_in_parallel_and_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["selfplay", "--game", "ginkgopolis", "--players", "2", "--bots",
                 "search,random", "--games", "2", "--seed", "5", "--budget", "3",
                 "--workers", "2"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "ginkgopolis, 2 players, 2 games, search budget 3 iterations per move" in out
    lines = {line.split()[0]: line.split() for line in out.splitlines() if line.strip()}
    assert lines["search"][1] == "2" and lines["random"][1] == "2"
    assert float(lines["search"][2]) + float(lines["random"][2]) == pytest.approx(2.0)
    assert "2/2 games" in err  # the progress line


def test_cli_refuses_unknown_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["selfplay", "--game", "ny1901", "--bots", "oracle", "--games", "1"]) == 2
    assert "unknown bot kind" in capsys.readouterr().err
