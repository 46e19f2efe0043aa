"""Anthropic Messages, streamed through the official `anthropic` SDK, its own retries off (`retry.py` decides).

Leading system messages become the `system` blocks; a message with `cache_breakpoint=True` gets
`cache_control: ephemeral` on its last block, and when none is marked the last system block gets it, so
the frozen prefix is served from the provider's prompt cache. At most four breakpoints are sent (the
API's limit), the earliest ones. Tool results travel as `tool_result` blocks in a user message; a tool
call is emitted when its block closes. Usage adds cache reads and writes to the prompt tokens. The body
is JSON made here and posted as bytes, as for the OpenAI-compatible provider.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message as ApiMessage
from anthropic.types import RawMessageStreamEvent

from kernel.providers._common import (
    error_detail,
    map_sdk_errors,
    parse_tool_arguments,
    require_model_name,
    retry_after_seconds,
)
from kernel.providers._remote import RemoteProvider
from kernel.providers.base import (
    Message,
    ModelEvent,
    ModelRequest,
    StreamEnd,
    TextDelta,
    ToolCall,
    ToolCallReady,
    Usage,
    UsageReport,
)
from kernel.providers.retry import Failure

__all__ = ["AnthropicProvider", "DEFAULT_BASE_URL", "build_request_body"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
_MAX_BREAKPOINTS = 4
_EPHEMERAL = {"type": "ephemeral"}

# Errors reported inside a 200 stream carry a type instead of a status.
_ERROR_TYPES: dict[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


class AnthropicProvider(RemoteProvider):
    """A Claude model through the Messages API."""

    DEFAULT_BASE_URL = DEFAULT_BASE_URL

    def open_client(self, api_key: str, base_url: str, timeout: httpx2.Timeout) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)

    def request_body(self, request: ModelRequest) -> bytes:
        body = build_request_body(request)
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")

    def attempt(self, client: Any, body: bytes) -> AsyncGenerator[ModelEvent, None]:
        return _attempt(client, body)


async def _attempt(client: anthropic.AsyncAnthropic, body: bytes) -> AsyncGenerator[ModelEvent, None]:
    tool_blocks: dict[int, tuple[str, str, list[str]]] = {}
    usage = _UsageCounter()
    stop_reason: str | None = None
    finished = False
    with map_sdk_errors(anthropic, _status_failure):
        stream = await client.post(
            "/v1/messages",
            cast_to=ApiMessage,
            content=body,
            stream=True,
            stream_cls=anthropic.AsyncStream[RawMessageStreamEvent],
        )
        async with stream:
            async for event in stream:
                if event.type == "message_start":
                    usage.update(event.message.usage)
                elif event.type == "content_block_start":
                    block = event.content_block
                    if block.type == "tool_use":
                        tool_blocks[event.index] = (block.id, block.name, [])
                elif event.type == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta" and delta.text:
                        yield TextDelta(delta.text)
                    elif delta.type == "input_json_delta" and event.index in tool_blocks:
                        tool_blocks[event.index][2].append(delta.partial_json)
                elif event.type == "content_block_stop" and event.index in tool_blocks:
                    call_id, name, parts = tool_blocks.pop(event.index)
                    yield ToolCallReady(ToolCall(call_id, name, parse_tool_arguments(name, "".join(parts))))
                elif event.type == "message_delta":
                    stop_reason = event.delta.stop_reason or stop_reason
                    usage.update(event.usage)
                elif event.type == "message_stop":
                    finished = True
    if not finished:
        raise Failure("ended_early")
    yield UsageReport(usage.usage())
    yield StreamEnd(stop_reason or "end_turn")


class _UsageCounter:
    """Anthropic's counts are cumulative and split over `message_start` and `message_delta`; the latest wins."""

    _FIELDS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")

    def __init__(self) -> None:
        self.counts = dict.fromkeys(self._FIELDS, 0)

    def update(self, raw: Any) -> None:
        for name in self._FIELDS:
            value = getattr(raw, name, None)
            if value is not None:
                self.counts[name] = value

    def usage(self) -> Usage:
        read = self.counts["cache_read_input_tokens"]
        written = self.counts["cache_creation_input_tokens"]
        return Usage(
            input_tokens=self.counts["input_tokens"] + read + written,
            output_tokens=self.counts["output_tokens"],
            cached_input_tokens=read,
            cache_write_tokens=written,
        )


def build_request_body(request: ModelRequest) -> dict[str, Any]:
    """The Messages API body for `request` (without `stream`'s transport details).

    Raises:
        BadModelConfigError: the model has no name.
    """
    config = request.config
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    marked: list[dict[str, Any]] = []
    leading = True
    for message in request.messages:
        if message.role == "system" and leading:
            blocks = [{"type": "text", "text": message.content}] if message.content else []
            system.extend(blocks)
        else:
            leading = False
            blocks = _blocks(message)
            role = "assistant" if message.role == "assistant" else "user"
            if turns and turns[-1]["role"] == role:
                turns[-1]["content"].extend(blocks)
            elif blocks:
                turns.append({"role": role, "content": blocks})
        if message.cache_breakpoint and blocks:
            marked.append(blocks[-1])
    if not marked and system:
        marked.append(system[-1])
    for block in marked[:_MAX_BREAKPOINTS]:
        block["cache_control"] = dict(_EPHEMERAL)
    body: dict[str, Any] = {
        "model": require_model_name(config),
        "max_tokens": config.max_output_tokens,
        "messages": turns,
        "stream": True,
    }
    if system:
        body["system"] = system
    if config.temperature is not None:
        body["temperature"] = config.temperature
    if request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in request.tools
        ]
    return body


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [{"type": "tool_result", "tool_use_id": message.tool_call_id or "", "content": message.content}]
    # The API refuses empty text blocks; a later system message reads as text in the user's turn.
    blocks: list[dict[str, Any]] = [{"type": "text", "text": message.content}] if message.content else []
    if message.role == "assistant":
        blocks.extend(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
            for call in message.tool_calls
        )
    return blocks


def _status_failure(exc: anthropic.APIStatusError) -> Failure:
    status = exc.status_code
    if status < 400:
        # An `event: error` inside the stream: the status is the stream's 200, the type says what failed.
        status = _ERROR_TYPES.get(str(exc.type or ""), 500)
    return Failure(
        status,
        status=status,
        retry_after=retry_after_seconds(exc.response.headers),
        detail=exc.api_message or error_detail(exc.body, f"HTTP {status}"),
    )
