"""Rate limits and quotas (issue 20, item 1): how much one client may ask of the service.

One job: decide whether a client's next request fits its budget (``rates``) and whether a
creator may have one more unfinished match (``quotas``). The budgets are counted by the
maintained ``limits`` library in storage every replica shares (Redis, or memory on the
one-process embedded store); the quota is a document of the store written by
compare-and-set. The transport applies both (``service/api/rate_limits.py``).
"""

from .policies import (
    BUDGETS,
    DEFAULT_POLICIES,
    DEFAULT_QUOTAS,
    LimitSettings,
    Policy,
    Quotas,
    parse_policy,
)
from .quotas import ActiveMatchQuota, Creator
from .rates import Decision, RateLimiter, client_key, storage_uri

__all__ = [
    "BUDGETS",
    "DEFAULT_POLICIES",
    "DEFAULT_QUOTAS",
    "ActiveMatchQuota",
    "Creator",
    "Decision",
    "LimitSettings",
    "Policy",
    "Quotas",
    "RateLimiter",
    "client_key",
    "parse_policy",
    "storage_uri",
]
