"""Strict JSON frames: what decodes, what is refused, what is marked UNSAFE, and that only strict JSON is written."""

from __future__ import annotations

import pytest

from protocol.codec import UNSAFE, UNSAFE_TEXT, FrameDecodeError, FrameEncodeError, decode_frame, encode_frame


@pytest.mark.parametrize(
    "line",
    [
        b'{"a":"\xff"}',
        b'{"a":"\xed\xa0\x80"}',
        b'{"a":"\xc0\xaf"}',
        b"\xef\xbb\xbf{}",
        b'{"a":NaN}',
        b'{"a":-Infinity}',
        b'{"a":"x\x00"}',
        b"{" + b'"a":' * 3,
        b"[" * 1000 + b"]" * 1000,
        b"9" * 5000,
    ],
)
def test_lines_that_are_not_strict_json_are_refused(line: bytes) -> None:
    with pytest.raises(FrameDecodeError):
        decode_frame(line)


def test_a_bad_value_in_a_readable_message_is_replaced_at_the_top_level_only() -> None:
    message = decode_frame(b'{"jsonrpc":"2.0","id":3,"method":"m","params":{"deep":{"s":"\\udc80"}}}')
    assert message == {"jsonrpc": "2.0", "id": 3, "method": "m", "params": UNSAFE}
    assert decode_frame(b'{"id":2,"method":"pi\\ud800ng"}') == {"id": 2, "method": UNSAFE_TEXT}
    assert decode_frame(b'{"id":1e400,"method":"m"}') == {"id": UNSAFE, "method": "m"}
    assert decode_frame(b'{"id":4,"params":[' + b"[" * 400 + b"]" * 400 + b"]}") == {"id": 4, "params": UNSAFE}
    assert decode_frame(b'{"\\udc80":1,"id":5}') == {UNSAFE: 1, "id": 5}
    assert decode_frame(b'[{"id":1,"x":"\\ud800"},"\\udfff",{"id":2}]') == [
        {"id": 1, "x": UNSAFE_TEXT},
        UNSAFE_TEXT,
        {"id": 2},
    ]


def test_a_number_beyond_a_double_is_found_wherever_it_sits_in_a_long_frame() -> None:
    pad = "y" * 1_000_000
    for number in (b"-1e400", b"9" * 320 + b".5", b"1E+309"):
        line = b'{"id":3,"params":{"pad":"' + pad.encode() + b'","a":[1,{"b":' + number + b"}]}}"
        assert decode_frame(line) == {"id": 3, "params": UNSAFE}
    assert decode_frame(b'{"id":3,"params":{"pad":"' + pad.encode() + b'e999"}}') == {
        "id": 3,
        "params": {"pad": pad + "e999"},
    }


def test_strict_values_decode_as_they_are() -> None:
    assert decode_frame(b'{"s":"\\ud83d\\ude00 \xc3\xa9","n":1.5e300,"i":' + b"7" * 400 + b"}") == {
        "s": "\U0001f600 é",
        "n": 1.5e300,
        "i": int("7" * 400),
    }
    assert decode_frame(b'{"a":1,"a":2}') == {"a": 2}  # duplicate members: the last one wins
    assert decode_frame(b"[" * 150 + b"]" * 150) is not None


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "\udc80", {"k\ud800": 1}, b"bytes", object()])
def test_anything_strict_json_cannot_carry_is_never_encoded(value: object) -> None:
    with pytest.raises(FrameEncodeError):
        encode_frame({"jsonrpc": "2.0", "id": 1, "result": value})


def test_an_encoded_frame_is_one_line_of_utf8() -> None:
    frame = encode_frame({"text": "two\nlines \u2028 \U0001f525"})
    assert frame.count(b"\n") == 1 and frame.endswith(b"\n")
    assert decode_frame(frame.rstrip(b"\n")) == {"text": "two\nlines \u2028 \U0001f525"}
