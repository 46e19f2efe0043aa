"""Anthropic Messages, streamed through the official `anthropic` SDK, its own retries off (`retry.py` decides).

Leading system messages become the `system` blocks; a message with `cache_breakpoint=True` gets
`cache_control: ephemeral` on its last block, and when none is marked the last system block gets it, so
the frozen prefix is served from the provider's prompt cache. At most four breakpoints are sent (the
API's limit), the earliest ones. Tool results travel as `tool_result` blocks in a user message; a tool
call is emitted when its block closes. Usage adds cache reads and writes to the prompt tokens. The body
is JSON made here and posted as bytes, each message's piece of it kept with the conversation
(`encodings.py`), as for the OpenAI-compatible provider.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass, replace
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message as ApiMessage
from anthropic.types import RawMessageStreamEvent

from kernel.providers._common import (
    error_detail,
    json_bytes,
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
from kernel.providers.encodings import encode_messages
from kernel.providers.retry import Failure

__all__ = ["AnthropicProvider", "DEFAULT_BASE_URL", "request_body"]

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
        return request_body(request)

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


def request_body(request: ModelRequest) -> bytes:
    """The Messages API body for `request`, as the JSON bytes posted.

    Raises:
        BadModelConfigError: the model has no name.
    """
    config = request.config
    messages, turns = encode_messages(request, _TURNS)
    body: dict[str, Any] = {"model": require_model_name(config), "max_tokens": config.max_output_tokens, "stream": True}
    system = [dict(block) for block in turns.system]
    if system:
        if not turns.marked:
            system[-1]["cache_control"] = dict(_EPHEMERAL)
        body["system"] = system
    if config.temperature is not None:
        body["temperature"] = config.temperature
    if request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in request.tools
        ]
    return b'{"messages":[' + messages + (b"]}" if turns.role else b"") + b"]," + json_bytes(body)[1:]


@dataclass(frozen=True, slots=True)
class _Turns:
    """Where the Messages API's JSON of a list stands after some of its messages."""

    system: tuple[dict[str, Any], ...] = ()  # the blocks of the leading system messages
    leading: bool = True  # only system messages so far
    role: str | None = None  # the role of the turn still open
    marked: int = 0  # blocks marked as cache breakpoints so far (the first four get `cache_control`)


class _TurnsEncoder:
    """Each message's piece of the `messages` array: a new turn, or more blocks of the open one (same role)."""

    name = "anthropic"

    def start(self) -> _Turns:
        return _Turns()

    def step(self, state: _Turns, message: Message) -> tuple[bytes, _Turns]:
        if message.role == "system" and state.leading:
            blocks = [{"type": "text", "text": message.content}] if message.content else []
            marked = _mark(blocks, message, state.marked)
            return b"", replace(state, system=state.system + tuple(blocks), marked=marked)
        blocks = _blocks(message)
        marked = _mark(blocks, message, state.marked)
        if not blocks:
            return b"", replace(state, leading=False, marked=marked)
        role = "assistant" if message.role == "assistant" else "user"
        content = b",".join(json_bytes(block) for block in blocks)
        if state.role == role:
            piece = b"," + content
        else:
            opened = b'{"role":"' + role.encode("ascii") + b'","content":['
            piece = (b"]}," if state.role else b"") + opened + content
        return piece, replace(state, leading=False, role=role, marked=marked)


_TURNS = _TurnsEncoder()


def _mark(blocks: list[dict[str, Any]], message: Message, marked: int) -> int:
    """Mark the message's last block as a cache breakpoint when it asks for one and fewer than four are marked."""
    if not (message.cache_breakpoint and blocks):
        return marked
    if marked < _MAX_BREAKPOINTS:
        blocks[-1]["cache_control"] = dict(_EPHEMERAL)
    return marked + 1


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
