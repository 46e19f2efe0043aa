"""The scripted model: rules that answer the latest message, for tests and demos.

A rule matches a regular expression against the latest message (a user message, a wake from another
agent, or a tool result) and replies with text and/or tool calls, with the match's groups substituted
(`\\1`, `\\g<name>`). The first matching rule wins. No match is a clear provider error, never silence.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from kernel.errors import BadModelConfigError, ProviderError
from kernel.providers.base import (
    Message,
    ModelConfig,
    ModelEvent,
    ModelRequest,
    StreamEnd,
    TextDelta,
    ToolCall,
    ToolCallReady,
    Usage,
    UsageReport,
)

__all__ = ["ScriptedProvider", "ScriptRule", "message_kind"]


@dataclass(frozen=True, slots=True)
class ScriptRule:
    pattern: re.Pattern[str]
    on: str
    reply: str
    tool_calls: tuple[tuple[str, dict[str, Any]], ...]
    chunk_chars: int
    delay_ms: int


def message_kind(message: Message) -> str:
    """`user`, `wake` (a user-role message from another agent, which carries its name) or `tool`."""
    if message.role == "tool":
        return "tool"
    if message.role == "user" and message.name:
        return "wake"
    return message.role


def _parse_rules(raw: list[dict[str, Any]]) -> list[ScriptRule]:
    rules = []
    for index, item in enumerate(raw):
        try:
            pattern = re.compile(item["match"], re.DOTALL)
        except (KeyError, re.error) as exc:
            raise BadModelConfigError(f"scripted rule {index} has a bad 'match' regex: {exc}") from exc
        calls = tuple((call["name"], dict(call.get("arguments", {}))) for call in item.get("toolCalls", []))
        rules.append(
            ScriptRule(
                pattern=pattern,
                on=item.get("on", "any"),
                reply=item.get("reply", ""),
                tool_calls=calls,
                chunk_chars=max(1, int(item.get("chunkChars", 8))),
                delay_ms=max(0, int(item.get("delayMs", 0))),
            )
        )
    return rules


def _expand(value: Any, match: re.Match[str]) -> Any:
    if isinstance(value, str):
        return match.expand(value)
    if isinstance(value, dict):
        return {key: _expand(item, match) for key, item in value.items()}
    if isinstance(value, list):
        return [_expand(item, match) for item in value]
    return value


def _tokens(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


class ScriptedProvider:
    """Serves `ModelConfig.options["rules"]` (the wire form of `ScriptRule`s from an agent's settings)."""

    def __init__(self, config: ModelConfig) -> None:
        self._rules = _parse_rules(list(config.options.get("rules", [])))

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        latest = next((m for m in reversed(request.messages) if m.role != "system"), None)
        if latest is None:
            raise ProviderError("scripted model: there is no message to answer")
        kind = message_kind(latest)
        for rule in self._rules:
            if rule.on not in ("any", kind):
                continue
            match = rule.pattern.search(latest.content)
            if match is None:
                continue
            reply = match.expand(rule.reply)
            for start in range(0, len(reply), rule.chunk_chars):
                if rule.delay_ms:
                    await asyncio.sleep(rule.delay_ms / 1000)
                yield TextDelta(reply[start : start + rule.chunk_chars])
            for index, (name, arguments) in enumerate(rule.tool_calls):
                call_id = f"call-{len(request.messages)}-{index}"
                yield ToolCallReady(ToolCall(call_id, name, _expand(arguments, match)))
            prompt = sum(_tokens(m.content) for m in request.messages)
            yield UsageReport(Usage(input_tokens=prompt, output_tokens=_tokens(reply)))
            yield StreamEnd("tool_use" if rule.tool_calls else "end_turn")
            return
        preview = latest.content if len(latest.content) <= 80 else latest.content[:77] + "..."
        raise ProviderError(f"scripted model: no rule matches the latest {kind} message: {preview!r}")
