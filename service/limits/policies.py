"""The budgets, their defaults, and the quota of unfinished matches per creator."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Budget = Literal["create", "act", "read", "stream", "guests"]
BUDGETS: tuple[Budget, ...] = ("create", "act", "read", "stream", "guests")
"""Separate budgets: creating (matches, players), acting (moves, hand-overs, tickets, token
renewals, deletions), reading (everything else) and opening streams (event streams,
GraphQL WebSockets); and guests created, per address whatever the credential (issue 31,
item 6)."""


@dataclass(frozen=True)
class Policy:
    """``quota`` requests per ``window`` seconds (a fixed window, counted per client)."""

    name: str
    quota: int
    window: int

    def header(self) -> str:
        """Its ``RateLimit-Policy`` item (IETF httpapi RateLimit draft): ``"create";q=60;w=60``."""
        return f'"{self.name}";q={self.quota};w={self.window}'

    def spec(self) -> str:
        return f"{self.quota}/{self.window}"


DEFAULT_POLICIES: dict[str, Policy] = {
    # Ten creations a second from one client (a fuzzer such as schemathesis creates a few
    # hundred a minute), against the ~280/s an unlimited client managed.
    "create": Policy("create", 600, 60),
    # Twenty moves a second per seat token or player: more than a bot that waits for its
    # turn makes, against the fastest built-in bots.
    "act": Policy("act", 1200, 60),
    # Sixty reads a second: a polling client reads the state and the legal moves per turn.
    "read": Policy("read", 3600, 60),
    # Two streams opened a second (each then stays open; the live hub caps how many).
    "stream": Policy("stream", 120, 60),
    # Guest players created per address (on top of ``create``): a classroom of 30 behind one
    # NAT signs up within a minute; a script minting guests for fresh quotas does not.
    "guests": Policy("guests", 60, 60),
}


def parse_policy(name: str, raw: str) -> Policy:
    """``"60/60"`` (requests / seconds) -> the policy; ValueError when it is not that."""
    quota, slash, window = raw.strip().partition("/")
    if not slash or not (quota.isascii() and quota.isdigit()
                         and window.isascii() and window.isdigit()):
        raise ValueError(f"{raw!r} is not REQUESTS/SECONDS (e.g. 60/60)")
    policy = Policy(name, int(quota), int(window))
    if policy.quota <= 0 or policy.window <= 0:
        raise ValueError(f"{raw!r}: both numbers must be positive")
    return policy


@dataclass(frozen=True)
class Quotas:
    """Unfinished matches one creator may have at once (0: no cap)."""

    player: int = 100
    """Per player (a player token or an app's JWT)."""
    app: int = 10_000
    """Per app key (server-to-server creations for the app's players)."""
    address: int = 1000
    """Per client address, for creations without a credential."""


DEFAULT_QUOTAS = Quotas()
DEFAULT_WAITING_TABLES = 5  # service.tables.caps
DEFAULT_WAITING_TABLES_ADDRESS = 20


@dataclass(frozen=True)
class LimitSettings:
    """Everything ``skyline serve`` configures about limits."""

    enabled: bool = True
    """False (``--rate-limits off``): no budget and no quota is applied (tests, benchmarks)."""
    policies: dict[str, Policy] = field(default_factory=lambda: dict(DEFAULT_POLICIES))
    quotas: Quotas = DEFAULT_QUOTAS
    waiting_tables: int = DEFAULT_WAITING_TABLES
    """Public tables waiting for players in an app's lobby that one player may have created
    (``--max-waiting-tables``; 0: no cap). App keys are not capped: the app fills its own
    lobby."""
    waiting_tables_address: int = DEFAULT_WAITING_TABLES_ADDRESS
    """The same, for all the guest players (tokens minted anonymously) of one address
    together (``--max-waiting-tables-per-address``; 0: no cap)."""
