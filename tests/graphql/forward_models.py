"""Sample models whose annotations are strings referring to a class defined later."""

from __future__ import annotations

from pydantic import BaseModel


class SmpOuter(BaseModel):
    inner: SmpInner | None


class SmpInner(BaseModel):
    x: int
