"""The envelope check: which messages are requests, which are answered with an error, and to which id."""

from __future__ import annotations

from typing import Any

import pytest

from protocol.codec import UNSAFE, UNSAFE_TEXT
from protocol.envelope import Head, Ignored, Invalid, Notification, Request, Response, read_head, read_message
from protocol.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND


def test_a_well_formed_request_and_notification_pass() -> None:
    request = read_message({"jsonrpc": "2.0", "id": "a", "method": "m", "params": {"x": 1}})
    assert isinstance(request, Request) and request.id == "a" and request.method == "m"
    assert isinstance(read_message({"jsonrpc": "2.0", "id": None, "method": "m"}), Request)
    assert isinstance(read_message({"jsonrpc": "2.0", "method": "m", "params": [1]}), Notification)


@pytest.mark.parametrize(
    ("message", "answer_to", "code"),
    [
        ({"jsonrpc": "2.0", "id": "x1"}, "x1", INVALID_REQUEST),
        ({"id": 1}, 1, INVALID_REQUEST),
        ({"jsonrpc": "1.0", "id": "x2", "method": "m"}, "x2", INVALID_REQUEST),
        ({"id": 3, "method": "m"}, 3, INVALID_REQUEST),
        ({"jsonrpc": "2.0", "id": 4.5, "method": ["m"]}, 4.5, INVALID_REQUEST),
        ({"jsonrpc": "2.0", "id": 5, "method": "m", "params": "p"}, 5, INVALID_REQUEST),
        ({"jsonrpc": "2.0", "id": 6, "method": "m", "params": None}, 6, INVALID_REQUEST),
        ({"jsonrpc": "2.0", "id": 7, "method": "m", "more": 1}, 7, INVALID_REQUEST),
        ({"jsonrpc": "2.0", "id": 8, "method": UNSAFE}, 8, INVALID_REQUEST),
        ({"jsonrpc": "2.0", "id": 8, "method": UNSAFE_TEXT, "extra": 1}, 8, INVALID_REQUEST),
        ({"jsonrpc": "2.0", "id": 8, "method": UNSAFE_TEXT}, 8, METHOD_NOT_FOUND),
        ({"jsonrpc": "2.0", "id": 9, "method": "m", "params": UNSAFE}, 9, INVALID_PARAMS),
        ({"jsonrpc": "2.0", "id": 10, "method": "m", UNSAFE: 1}, 10, INVALID_REQUEST),
        ({"jsonrpc": "2.0", "id": UNSAFE, "method": "m"}, None, INVALID_REQUEST),
        ({"jsonrpc": "2.0", "id": True, "method": "m"}, None, INVALID_REQUEST),
        ({"jsonrpc": "2.0", "id": [1], "method": "m"}, None, INVALID_REQUEST),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "m"}, None, INVALID_REQUEST),
        ({"jsonrpc": "1.0", "method": "m"}, None, INVALID_REQUEST),
        ([1], None, INVALID_REQUEST),
        ("text", None, INVALID_REQUEST),
        (None, None, INVALID_REQUEST),
    ],
)
def test_an_invalid_message_is_answered_to_its_id_when_the_id_can_be_read(
    message: Any, answer_to: Any, code: int
) -> None:
    invalid = read_message(message)
    assert isinstance(invalid, Invalid)
    assert (invalid.id, invalid.code) == (answer_to, code)
    assert invalid.answer()["id"] == answer_to


def test_a_notification_with_params_that_are_not_strict_json_is_ignored() -> None:
    assert isinstance(read_message({"jsonrpc": "2.0", "method": "m", "params": UNSAFE}), Ignored)


def test_a_method_name_that_is_not_valid_unicode_names_no_method() -> None:
    """Issue 22.11: a lone surrogate in `method` is a string naming nothing (-32601), not a malformed request."""
    assert isinstance(read_message({"jsonrpc": "2.0", "method": UNSAFE_TEXT}), Ignored)
    answer = read_message({"jsonrpc": "2.0", "id": "s", "method": UNSAFE_TEXT, "params": {}})
    assert isinstance(answer, Invalid) and (answer.id, answer.code) == ("s", METHOD_NOT_FOUND)


def test_answers_without_a_readable_id_are_ignored_and_malformed_ones_reach_their_caller_as_errors() -> None:
    for bad_id in ([1], {"a": 1}, True, UNSAFE):
        assert isinstance(read_message({"jsonrpc": "2.0", "id": bad_id, "result": 1}), Ignored)
    good = read_message({"jsonrpc": "2.0", "id": 1, "result": {"ok": True}})
    assert good == Response(1, {"ok": True}, None)
    failed = read_message({"jsonrpc": "2.0", "id": 2, "error": {"code": -32004, "message": "gone", "data": 1}})
    assert failed == Response(2, None, {"code": -32004, "message": "gone", "data": 1})
    for malformed in (
        {"jsonrpc": "2.0", "id": 3, "error": {"code": "abc", "message": "x"}},
        {"jsonrpc": "2.0", "id": 3, "error": {"code": True, "message": "x"}},
        {"jsonrpc": "2.0", "id": 3, "error": "boom"},
        {"jsonrpc": "2.0", "id": 3, "result": 1, "error": {"code": 1, "message": "x"}},
        {"jsonrpc": "2.0", "id": 3, "result": UNSAFE},
        {"id": 3, "result": 1},
    ):
        answer = read_message(malformed)
        assert isinstance(answer, Response) and answer.error is not None
        assert answer.error["code"] == INVALID_REQUEST


@pytest.mark.parametrize(
    ("head", "request_id", "answer"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"yyy', 7, False),
        (b' { "id" : "a\\"b" , "method":"x", "params":[1', 'a"b', False),
        (b'{"jsonrpc":"2.0","id":5,"result":{"a', 5, True),
        (b'{"jsonrpc":"2.0","result":{"a', None, True),
        (b'{"method":"x","params":{"pad":"yy', None, False),
        (b'{"id":"\\ud800","method":"x","params":{', None, False),
        (b'{"id":1e400,"params":{', None, False),
        (b'{"id":true,"params":{', None, False),
        (b'{"id":"yyyyyyy', None, False),
        (b'[{"id":1,"method":"x"', None, False),
        (b"\xff\xfe", None, False),
    ],
)
def test_the_id_of_a_frame_too_long_to_decode_is_read_from_its_leading_members(
    head: bytes, request_id: Any, answer: bool
) -> None:
    assert read_head(head) == Head(request_id, answer)
