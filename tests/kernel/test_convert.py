"""The kernel's wire models become the loop's values at the edge, field for field, and usage goes back."""

from __future__ import annotations

from kernel.convert import to_config, to_message, to_usage_info
from kernel.providers.base import Message, ToolCall, Usage
from protocol.models.kernel import ChatMessage, ModelSpec


def test_an_assistant_message_keeps_its_tool_calls_and_a_tool_result_its_call_id() -> None:
    asked = ChatMessage.model_validate(
        {
            "role": "assistant",
            "content": "looking",
            "toolCalls": [{"id": "c1", "name": "grep", "arguments": {"pattern": "x"}}],
            "cacheBreakpoint": True,
        }
    )
    answered = ChatMessage.model_validate({"role": "tool", "content": "found", "toolCallId": "c1"})
    assert to_message(asked) == Message(
        "assistant", "looking", (ToolCall("c1", "grep", {"pattern": "x"}),), cache_breakpoint=True
    )
    assert to_message(answered) == Message("tool", "found", (), "c1")


def test_a_model_spec_names_its_key_by_provider_unless_it_names_one_itself() -> None:
    plain = to_config(ModelSpec(provider="openai", name="m", api_key="sk-1"))
    named = to_config(ModelSpec(provider="openai", name="m", key_name="work-key"))
    assert plain.options["secret_name"] == "openai" and plain.api_key == "sk-1"
    assert named.options["secret_name"] == "work-key" and named.api_key is None
    assert plain.context_window == 8192 and plain.options["rules"] == []


def test_usage_goes_back_to_the_wire_with_its_cached_and_written_shares() -> None:
    info = to_usage_info(Usage(input_tokens=100, output_tokens=7, cached_input_tokens=80, cache_write_tokens=20))
    assert (info.input_tokens, info.output_tokens, info.cached_input_tokens, info.cache_write_tokens) == (
        100,
        7,
        80,
        20,
    )
