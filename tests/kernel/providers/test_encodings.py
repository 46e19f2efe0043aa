"""Encoded messages kept with their list: a request encodes only the messages after the list it starts with."""

from __future__ import annotations

import json

from kernel.providers.base import Message, ModelConfig, ModelRequest
from kernel.providers.encodings import MessageEncodings, encode_messages
from kernel.providers.openai_compat import request_body

CONFIG = ModelConfig(provider="openai", name="m", base_url="http://127.0.0.1:1/v1", max_output_tokens=64)


class Counting:
    def __init__(self) -> None:
        self.encoded: list[str] = []

    def __call__(self, message: Message) -> bytes:
        self.encoded.append(message.content)
        return json.dumps({"c": message.content}).encode()


def test_a_lists_messages_are_encoded_once_across_requests_and_lists_that_follow_it() -> None:
    """Issue 22.12: every model call encoded every message of the conversation again."""
    held = tuple(Message("user", f"m{n}") for n in range(4))
    known = MessageEncodings(held)
    encode = Counting()
    first = encode_messages(ModelRequest(CONFIG, (*held, Message("assistant", "a")), known=known), "f", encode)
    second = encode_messages(ModelRequest(CONFIG, (*held, Message("assistant", "b")), known=known), "f", encode)
    assert sorted(encode.encoded) == ["a", "b", "m0", "m1", "m2", "m3"]
    longer = (*held[:3], Message("user", "new"))
    following = known.follow(3, longer)
    third = encode_messages(ModelRequest(CONFIG, longer, known=following), "f", encode)
    assert encode.encoded[6:] == ["new"]
    for joined, last in ((first, "a"), (second, "b")):
        assert json.loads(b"[" + joined + b"]") == [{"c": f"m{n}"} for n in range(4)] + [{"c": last}]
    assert json.loads(b"[" + third + b"]") == [{"c": "m0"}, {"c": "m1"}, {"c": "m2"}, {"c": "new"}]


def test_a_request_that_does_not_start_with_the_known_list_is_encoded_whole() -> None:
    known = MessageEncodings(tuple(Message("user", f"m{n}") for n in range(3)))
    others = tuple(Message("user", f"m{n}") for n in range(3))  # equal, but not the very messages
    encode = Counting()
    encode_messages(ModelRequest(CONFIG, others, known=known), "f", encode)
    assert encode.encoded == ["m0", "m1", "m2"]


def test_the_posted_body_is_the_chat_completions_json_with_or_without_known_encodings() -> None:
    messages = (Message("system", "You are terse."), Message("user", "ünï"), Message("assistant", "", ()))
    plain = json.loads(request_body(ModelRequest(CONFIG, messages)))
    known = MessageEncodings(messages[:2])
    assert json.loads(request_body(ModelRequest(CONFIG, messages, known=known))) == plain
    assert json.loads(request_body(ModelRequest(CONFIG, messages, known=known))) == plain
    assert plain == {
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
