"""A small deterministic random generator whose whole state is one integer.

Engines keep that integer inside their game state, so a match is reproducible from its seed
and its action log, and the state serializes in a few bytes (``random.Random`` would need
about 2.5 KB). SplitMix64: fast, well distributed, and simple enough to read in one go.
Functions are pure: they take the state and return ``(value, new_state)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def seed_state(seed: int) -> int:
    """The generator state for a seed (any integer, negative and huge ones included)."""
    return (seed ^ 0x5DEECE66D) & _MASK


def next_u64(state: int) -> tuple[int, int]:
    """One 64-bit value and the next state."""
    state = (state + _GOLDEN) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31), state


def randbelow(state: int, n: int) -> tuple[int, int]:
    """A uniform integer in ``range(n)`` (n >= 1), without modulo bias."""
    if n <= 0:
        raise ValueError("randbelow needs n >= 1")
    limit = _MASK + 1 - ((_MASK + 1) % n)
    while True:
        value, state = next_u64(state)
        if value < limit:
            return value % n, state


def shuffled(state: int, items: Sequence[T]) -> tuple[list[T], int]:
    """A Fisher-Yates shuffled copy of ``items`` and the next state."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j, state = randbelow(state, i + 1)
        out[i], out[j] = out[j], out[i]
    return out, state


def choice(state: int, items: Sequence[T]) -> tuple[T, int]:
    """One uniformly chosen element of a non-empty sequence and the next state."""
    index, state = randbelow(state, len(items))
    return items[index], state
