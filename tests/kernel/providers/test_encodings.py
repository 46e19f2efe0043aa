"""Encoded messages kept with their list: a request encodes only the messages after the list it starts with.

Issue 22.12: every model call encoded every message of the conversation again (and the SDK walked them all).
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from kernel.providers import anthropic, openai_compat
from kernel.providers.base import Message, ModelConfig, ModelRequest, ToolCall
from kernel.providers.encodings import MessageEncodings, encode_messages

CONFIG = ModelConfig(provider="openai", name="m", base_url="http://127.0.0.1:1/v1", max_output_tokens=64)


class Counting:
    """A stateless format that records which messages it encoded."""

    name = "counting"

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def start(self) -> None:
        return None

    def step(self, state: None, message: Message) -> tuple[bytes, None]:
        self.encoded.append(message.content)
        return json.dumps({"c": message.content}).encode() + b",", None


def _decoded(joined: bytes) -> list[Any]:
    return list(json.loads(b"[" + joined.rstrip(b",") + b"]"))


def test_a_lists_messages_are_encoded_once_across_requests_and_lists_that_follow_it() -> None:
    held = tuple(Message("user", f"m{n}") for n in range(4))
    known = MessageEncodings(held)
    encode = Counting()
    first, _ = encode_messages(ModelRequest(CONFIG, (*held, Message("assistant", "a")), known=known), encode)
    second, _ = encode_messages(ModelRequest(CONFIG, (*held, Message("assistant", "b")), known=known), encode)
    assert sorted(encode.encoded) == ["a", "b", "m0", "m1", "m2", "m3"]
    longer = (*held[:3], Message("user", "new"))
    third, _ = encode_messages(ModelRequest(CONFIG, longer, known=known.follow(3, longer)), encode)
    assert encode.encoded[6:] == ["new"]
    for joined, last in ((first, "a"), (second, "b")):
        assert _decoded(joined) == [{"c": f"m{n}"} for n in range(4)] + [{"c": last}]
    assert _decoded(third) == [{"c": "m0"}, {"c": "m1"}, {"c": "m2"}, {"c": "new"}]


def test_a_request_that_does_not_start_with_the_known_list_is_encoded_whole() -> None:
    known = MessageEncodings(tuple(Message("user", f"m{n}") for n in range(3)))
    others = tuple(Message("user", f"m{n}") for n in range(3))  # equal, but not the very messages
    encode = Counting()
    encode_messages(ModelRequest(CONFIG, others, known=known), encode)
    assert encode.encoded == ["m0", "m1", "m2"]


def _random_messages(rng: random.Random, n: int) -> tuple[Message, ...]:
    messages: list[Message] = [Message("system", "rules", cache_breakpoint=rng.random() < 0.5)]
    if rng.random() < 0.3:
        messages.append(Message("system", rng.choice(["", "memory"]), cache_breakpoint=rng.random() < 0.5))
    for k in range(n):
        role = rng.choice(["user", "user", "assistant", "tool", "system"])
        calls = (ToolCall(f"c{k}", "grep", {"q": "ü"}),) if role == "assistant" and rng.random() < 0.4 else ()
        messages.append(
            Message(
                role,
                rng.choice(["", "text", "ünï\n"]),
                calls,
                tool_call_id=f"c{k}" if role == "tool" else None,
                cache_breakpoint=rng.random() < 0.1,
            )
        )
    return tuple(messages)


@pytest.mark.parametrize("provider", [openai_compat, anthropic])
def test_a_body_built_on_kept_encodings_is_the_body_built_from_nothing(provider: Any) -> None:
    rng = random.Random(4)
    for _ in range(150):
        messages = _random_messages(rng, rng.randrange(0, 12))
        keep = rng.randrange(0, len(messages) + 1)
        known = MessageEncodings(messages[:keep])
        if rng.random() < 0.5:  # encoded earlier, for a request of its own
            provider.request_body(ModelRequest(CONFIG, messages[:keep], known=known))
        whole = provider.request_body(ModelRequest(CONFIG, messages))
        assert provider.request_body(ModelRequest(CONFIG, messages, known=known)) == whole
        json.loads(whole)


def test_the_openai_body_is_the_chat_completions_json() -> None:
    messages = (Message("system", "You are terse."), Message("user", "ünï"), Message("assistant", "", ()))
    assert json.loads(openai_compat.request_body(ModelRequest(CONFIG, messages))) == {
        "model": "m",
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 64,
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "ünï"},
            {"role": "assistant", "content": ""},
        ],
    }


def test_the_anthropic_body_merges_a_roles_messages_and_marks_at_most_four_breakpoints() -> None:
    marked = [Message("user", f"q{n}", cache_breakpoint=True) for n in range(5)]
    messages = (
        Message("system", "rules"),
        Message("user", "a"),
        Message("assistant", "", (ToolCall("c1", "grep", {"q": "x"}),)),
        Message("tool", "hit", tool_call_id="c1"),
        Message("user", ""),
        Message("system", "late"),
        *marked,
    )
    body = json.loads(anthropic.request_body(ModelRequest(CONFIG, messages)))
    ephemeral = {"type": "ephemeral"}
    assert body["system"] == [{"type": "text", "text": "rules"}]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "a"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "grep", "input": {"q": "x"}}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "hit"},
                {"type": "text", "text": "late"},
                *({"type": "text", "text": f"q{n}", "cache_control": ephemeral} for n in range(4)),
                {"type": "text", "text": "q4"},
            ],
        },
    ]
