"""A stream that ends when the credential it was opened with stops being accepted.

An app-signed JWT is accepted until its ``exp`` (plus the service's leeway). A stream
opened with one used to be checked only when it was about to send something, so on a quiet
match it outlived the token by as long as nothing happened (issue 31, item 12).
``until(items, deadline, clock, expired)`` passes ``items`` on and, once ``clock()`` reaches
``deadline``, raises ``expired()`` -- while waiting for the next item too, not only when one
comes. Without a deadline it is ``items`` itself (no timer per item).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

T = TypeVar("T")


async def until(items: AsyncIterator[T], deadline: float | None, clock: Callable[[], float],
                expired: Callable[[], BaseException]) -> AsyncIterator[T]:
    """``items`` until ``clock()`` reaches ``deadline`` (then ``expired()`` is raised)."""
    if deadline is None:
        async for item in items:
            yield item
        return
    while True:
        left = deadline - clock()
        if left <= 0:
            raise expired()
        waiting = asyncio.ensure_future(anext(items))
        try:
            done, _ = await asyncio.wait({waiting}, timeout=left)
        finally:
            if not waiting.done():  # timed out, or the stream itself was cancelled
                waiting.cancel()
                await asyncio.wait({waiting})
        if not done:
            raise expired()
        try:
            item = waiting.result()
        except StopAsyncIteration:
            return
        yield item
