"""What a local tool returns: text for the model, and whether it is an error. Tools never raise."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ToolResult"]


@dataclass(frozen=True, slots=True)
class ToolResult:
    content: str
    is_error: bool = False
