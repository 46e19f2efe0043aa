"""The model provider seam: what the model loop asks of any model, local or remote.

A provider turns one `ModelRequest` into a stream of `ModelEvent`s: text deltas, complete tool calls
(arguments already parsed), a usage report and an end marker. Providers own no state between calls;
retries live in the provider, and a failure that should reach the user raises `ProviderError`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from kernel.providers.encodings import MessageEncodings

__all__ = [
    "Role",
    "ToolCall",
    "Message",
    "ToolDefinition",
    "ModelConfig",
    "ModelRequest",
    "Usage",
    "TextDelta",
    "ToolCallReady",
    "UsageReport",
    "StreamEnd",
    "ModelEvent",
    "Provider",
    "Warmable",
]

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message. `cache_breakpoint` marks the end of a stable prefix (Anthropic cache_control)."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    cache_breakpoint: bool = False


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """Which model to call and how. `api_key` is resolved by the host from its secrets; never log it."""

    provider: str
    name: str = ""
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    context_window: int = 8192
    max_output_tokens: int = 1024
    temperature: float | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One model call. `known`, when given, holds the encodings of the list `messages` starts with (the
    session's conversation, the same message objects), so a provider encodes only the messages after it."""

    config: ModelConfig
    messages: tuple[Message, ...]
    tools: tuple[ToolDefinition, ...] = ()
    known: MessageEncodings | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallReady:
    call: ToolCall


@dataclass(frozen=True, slots=True)
class UsageReport:
    usage: Usage


@dataclass(frozen=True, slots=True)
class StreamEnd:
    stop_reason: str = "end_turn"


ModelEvent = TextDelta | ToolCallReady | UsageReport | StreamEnd


class Provider(Protocol):
    """A model behind one call. Raise `kernel.errors.ProviderError` for failures the user should see."""

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream the model's answer to `request`."""
        ...


@runtime_checkable
class Warmable(Protocol):
    """A provider with something to load before its first answer (the embedded model)."""

    async def warm(self) -> bool:
        """Load what the first call would load; True when this call did the loading."""
        ...
