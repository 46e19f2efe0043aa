"""OpenAI-compatible chat completions (OpenAI, DeepSeek, Ollama, llama.cpp server, vLLM) at any base URL.

One streamed call per attempt through the official `openai` SDK, its own retries off (`retry.py` decides).
The body is JSON made here and posted as bytes, each message's JSON kept with the conversation
(`encodings.py`): the SDK's own request building walks every message on every call, which grows with the
conversation. Tool calls arrive as fragments keyed by index; they are assembled and emitted once the model
finishes, with arguments parsed (a malformed one is a clear `ProviderError`). Usage is requested in the
stream (`stream_options.include_usage`) and cached prompt tokens are read from `prompt_tokens_details`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

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
    ToolDefinition,
    Usage,
    UsageReport,
)
from kernel.providers.encodings import encode_messages
from kernel.providers.retry import Failure

__all__ = ["OpenAICompatProvider", "DEFAULT_BASE_URL", "request_body"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"

_STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


class OpenAICompatProvider(RemoteProvider):
    """A chat-completions model: OpenAI, DeepSeek, Ollama, llama.cpp server, vLLM, any `baseUrl`."""

    DEFAULT_BASE_URL = DEFAULT_BASE_URL

    def open_client(self, api_key: str, base_url: str, timeout: httpx2.Timeout) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)

    def request_body(self, request: ModelRequest) -> bytes:
        return request_body(request)

    def attempt(self, client: Any, body: bytes) -> AsyncGenerator[ModelEvent, None]:
        return _attempt(client, body)


async def _attempt(client: openai.AsyncOpenAI, body: bytes) -> AsyncGenerator[ModelEvent, None]:
    calls = _ToolCallAssembler()
    finish: str | None = None
    usage = Usage()
    with map_sdk_errors(openai, _status_failure):
        stream = await client.post(
            "/chat/completions",
            cast_to=ChatCompletion,
            content=body,
            options={"security": {"bearer_auth": True}},
            stream=True,
            stream_cls=openai.AsyncStream[ChatCompletionChunk],
        )
        async with stream:
            async for chunk in stream:
                if chunk.usage is not None:
                    usage = _usage(chunk.usage)
                for choice in chunk.choices[:1]:
                    delta = choice.delta
                    if delta.content:
                        yield TextDelta(delta.content)
                    for fragment in delta.tool_calls or ():
                        calls.add(fragment.index, fragment.id, fragment.function)
                    if choice.finish_reason:
                        finish = choice.finish_reason
    if finish is None:
        raise Failure("ended_early")
    ready = calls.finish()
    for call in ready:
        yield ToolCallReady(call)
    # Some servers (Ollama among them) say "stop" even when the answer is tool calls.
    yield UsageReport(usage)
    yield StreamEnd("tool_use" if ready else _STOP_REASONS.get(finish, finish))


@dataclass(slots=True)
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class _ToolCallAssembler:
    """Tool calls stream as fragments: the first for an index carries id and name, the rest argument text."""

    def __init__(self) -> None:
        self._calls: dict[int, _PartialCall] = {}

    def add(self, index: int, call_id: str | None, function: Any) -> None:
        call = self._calls.setdefault(index, _PartialCall())
        if call_id:
            call.id = call_id
        if function is not None:
            if function.name and not call.name:
                call.name = function.name
            if function.arguments:
                call.arguments.append(function.arguments)

    def finish(self) -> list[ToolCall]:
        ready = []
        for index in sorted(self._calls):
            call = self._calls[index]
            name = call.name or "(unnamed tool)"
            arguments = parse_tool_arguments(name, "".join(call.arguments))
            ready.append(ToolCall(call.id or f"call_{index}", name, arguments))
        return ready


def _usage(raw: Any) -> Usage:
    details = getattr(raw, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None)
    if cached is None:
        # DeepSeek reports its cache hits under its own name.
        cached = (getattr(raw, "model_extra", None) or {}).get("prompt_cache_hit_tokens")
    return Usage(
        input_tokens=raw.prompt_tokens or 0,
        output_tokens=raw.completion_tokens or 0,
        cached_input_tokens=int(cached or 0),
    )


def request_body(request: ModelRequest) -> bytes:
    """The chat-completions body for `request`, as the JSON bytes posted.

    Raises:
        BadModelConfigError: the model has no name.
    """
    config = request.config
    body: dict[str, Any] = {"model": require_model_name(config), "stream": True}
    if config.options.get("stream_usage", True):
        body["stream_options"] = {"include_usage": True}
    # OpenAI's own API wants the newer name; compatible servers mostly know only the older one.
    token_field = config.options.get("max_tokens_field") or (
        "max_completion_tokens" if config.base_url is None else "max_tokens"
    )
    body[str(token_field)] = config.max_output_tokens
    if config.temperature is not None:
        body["temperature"] = config.temperature
    if request.tools:
        body["tools"] = [_tool(t) for t in request.tools]
    messages, _ = encode_messages(request, _MESSAGES)
    return b'{"messages":[' + messages + b"]," + json_bytes(body)[1:]


class _MessagesEncoder:
    """Each message's piece of the `messages` array: its JSON, after a comma but for the first."""

    name = "openai"

    def start(self) -> bool:
        return False

    def step(self, after_first: bool, message: Message) -> tuple[bytes, bool]:
        return (b"," if after_first else b"") + json_bytes(_message(message)), True


_MESSAGES = _MessagesEncoder()


def _message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content}
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.name and message.role == "user":
        out["name"] = message.name
    if message.role == "assistant" and message.tool_calls:
        out["content"] = message.content or None
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)},
            }
            for call in message.tool_calls
        ]
    return out


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.input_schema},
    }


def _status_failure(exc: openai.APIStatusError) -> Failure:
    return Failure(
        exc.status_code,
        status=exc.status_code,
        retry_after=retry_after_seconds(exc.response.headers),
        detail=error_detail(exc.body, f"HTTP {exc.status_code}"),
    )
