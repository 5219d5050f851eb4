"""The in-state random generator (service/games/rng.py)."""

from collections import Counter

from service.games import rng


def test_same_seed_same_sequence_and_different_seeds_differ() -> None:
    def run(seed: int) -> list[int]:
        state, out = rng.seed_state(seed), []
        for _ in range(5):
            value, state = rng.next_u64(state)
            out.append(value)
        return out

    assert run(7) == run(7)
    assert run(7) != run(8)


def test_randbelow_is_in_range_and_roughly_uniform() -> None:
    state = rng.seed_state(1)
    counts: Counter[int] = Counter()
    for _ in range(6000):
        value, state = rng.randbelow(state, 6)
        counts[value] += 1
    assert set(counts) == set(range(6))
    assert all(800 < c < 1200 for c in counts.values())


def test_shuffled_is_a_permutation_and_leaves_the_input_alone() -> None:
    items = list(range(20))
    out, _ = rng.shuffled(rng.seed_state(3), items)
    assert sorted(out) == items and out != items
    assert items == list(range(20))


def test_randbelow_refuses_empty_range() -> None:
    import pytest

    with pytest.raises(ValueError):
        rng.randbelow(0, 0)
