"""A server's secrets withheld from what it says, as themselves and in their common encodings (issue 21.5)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from urllib.parse import quote, quote_plus

import pytest

from kernel.mcp.redact import MIN_ENCODED_CHARS, redact, secret_forms

SECRET = 'sk-live/7f+Qé "quoted" \\ end~~~>?'
SECRETS = (("TOKEN", SECRET),)
MARK = "[secret TOKEN withheld]"


@pytest.mark.parametrize(
    "leak",
    [
        SECRET,
        base64.b64encode(SECRET.encode()).decode(),
        base64.b64encode(SECRET.encode()).decode().rstrip("="),
        base64.urlsafe_b64encode(SECRET.encode()).decode(),
        base64.urlsafe_b64encode(SECRET.encode()).decode().rstrip("="),
        SECRET.encode().hex(),
        SECRET.encode().hex().upper(),
        quote(SECRET, safe=""),
        quote(SECRET),
        quote_plus(SECRET),
        re.sub("%[0-9A-F]{2}", lambda m: m[0].lower(), quote(SECRET, safe="")),
        json.dumps(SECRET)[1:-1],
        json.dumps(SECRET, ensure_ascii=False)[1:-1],
    ],
)
def test_each_common_encoding_of_a_secret_is_withheld(leak: str) -> None:
    said = redact(f"before {leak} after", SECRETS)
    assert said == f"before {MARK} after" or (MARK in said and leak not in said), said


@pytest.mark.parametrize("prefix", [b"", b"u", b"us", b"user:", b"Basic user:", b'{"key": "'])
@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
def test_a_secret_inside_a_longer_base64_blob_is_withheld_at_every_alignment(
    prefix: bytes, encode: Callable[[bytes], bytes]
) -> None:
    blob = encode(prefix + SECRET.encode() + b'" and the rest of the document').decode()
    said = redact(blob, SECRETS)
    assert MARK in said
    left, right = said.split(MARK)
    assert len(left) <= len(encode(prefix)) and len(right) < len(blob) // 2, "only what surrounds the secret stays"
    if len(prefix) >= 3:
        assert said.startswith(encode(prefix).decode()[:4]), "the text before the secret survives"


def test_text_without_the_secret_is_left_alone_and_another_servers_secret_is_not_this_ones() -> None:
    ordinary = "id 5f3a9c0e, blob " + base64.b64encode(b"nothing secret here at all").decode()
    assert redact(ordinary, SECRETS) == ordinary
    other = (("OTHER", "an-unrelated-value-123"),)
    assert redact(SECRET, other) == SECRET


def test_a_short_secret_is_withheld_only_as_itself() -> None:
    short = "k" * (MIN_ENCODED_CHARS - 1)
    assert secret_forms(short) == (short,)
    encoded = base64.b64encode(short.encode()).decode()
    assert redact(f"{short} {encoded} {short.encode().hex()}", (("PIN", short),)) == (
        f"[secret PIN withheld] {encoded} {short.encode().hex()}"
    )
    assert len(secret_forms("k" * MIN_ENCODED_CHARS)) > 5


def test_a_secret_that_contains_another_is_withheld_whole() -> None:
    secrets = (("INNER", "inner-secret-value"), ("OUTER", "outer-inner-secret-value-plus"))
    assert redact("x outer-inner-secret-value-plus y inner-secret-value", secrets) == (
        "x [secret OUTER withheld] y [secret INNER withheld]"
    )
    assert redact("nothing", ()) == "nothing" and redact("a", (("EMPTY", ""),)) == "a"
