"""The edge between the kernel's wire models and the values its loop and providers use.

Turn requests arrive as wire models; the loop and the providers work on frozen values (`Message`,
`ModelConfig`, `Usage`). These functions convert at the edge, both ways, and nothing else does.
"""

from __future__ import annotations

from kernel.providers.base import Message, ModelConfig, ToolCall, Usage
from protocol.models.kernel import ChatMessage, ModelSpec
from protocol.models.transcript import UsageInfo

__all__ = ["to_message", "to_config", "to_usage_info"]


def to_message(message: ChatMessage) -> Message:
    calls = tuple(ToolCall(call.id, call.name, call.arguments) for call in message.tool_calls)
    return Message(message.role, message.content, calls, message.tool_call_id, message.name, message.cache_breakpoint)


def to_config(spec: ModelSpec) -> ModelConfig:
    return ModelConfig(
        provider=spec.provider,
        name=spec.name,
        base_url=spec.base_url,
        api_key=spec.api_key,
        context_window=spec.context_window,
        max_output_tokens=spec.max_output_tokens,
        temperature=spec.temperature,
        options={
            "rules": [rule.model_dump(mode="json") for rule in spec.rules],
            "secret_name": spec.key_name or spec.provider,
        },
    )


def to_usage_info(usage: Usage) -> UsageInfo:
    return UsageInfo(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_input_tokens=usage.cached_input_tokens,
        cache_write_tokens=usage.cache_write_tokens,
    )
