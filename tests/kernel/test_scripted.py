"""The scripted model: the first matching rule answers, with groups substituted; no match is an error."""

from __future__ import annotations

import asyncio

import pytest

from kernel.errors import BadModelConfigError, ProviderError
from kernel.providers.base import Message, ModelConfig, ModelRequest, TextDelta, ToolCallReady
from kernel.providers.scripted import ScriptedProvider
from protocol.errors import INVALID_PARAMS, PROVIDER_ERROR


def _collect(rules: list[dict[str, object]], *messages: Message) -> list[object]:
    config = ModelConfig(provider="scripted", options={"rules": rules})
    provider = ScriptedProvider(config)

    async def main() -> list[object]:
        return [event async for event in provider.stream(ModelRequest(config, messages))]

    return asyncio.run(main())


def test_groups_are_substituted_in_text_and_tool_arguments() -> None:
    rules = [
        {
            "match": r"find (?P<what>\w+) in (\w+)",
            "reply": r"Looking for \g<what>.",
            "toolCalls": [{"name": "grep", "arguments": {"pattern": r"\g<what>", "path": r"\2", "n": 3}}],
        }
    ]
    events = _collect(rules, Message("user", "please find cats in notes"))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    (call,) = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert text == "Looking for cats."
    assert call.arguments == {"pattern": "cats", "path": "notes", "n": 3}


def test_rules_can_be_limited_to_tool_results_or_wakes() -> None:
    rules = [
        {"match": ".*", "on": "tool", "reply": "tool said: \\g<0>"},
        {"match": ".*", "on": "wake", "reply": "a peer wrote"},
        {"match": ".*", "on": "user", "reply": "you wrote"},
    ]

    def reply(message: Message) -> str:
        return "".join(e.text for e in _collect(rules, message) if isinstance(e, TextDelta))

    assert reply(Message("tool", "42", tool_call_id="c1")) == "tool said: 42"
    assert reply(Message("user", "hi", name="b1")) == "a peer wrote"
    assert reply(Message("user", "hi")) == "you wrote"


def test_no_matching_rule_is_a_clear_provider_error() -> None:
    with pytest.raises(ProviderError) as info:
        _collect([{"match": "^never$", "reply": "x"}], Message("user", "hello there"))
    assert info.value.code == PROVIDER_ERROR
    assert "no rule matches" in info.value.message and "hello there" in info.value.message


def test_a_bad_regex_is_a_bad_config_error() -> None:
    with pytest.raises(BadModelConfigError) as info:
        ScriptedProvider(ModelConfig(provider="scripted", options={"rules": [{"match": "("}]}))
    assert info.value.code == INVALID_PARAMS
