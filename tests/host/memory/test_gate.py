"""The sensitive-content gate refuses secrets with a reason that names the kind, and lets ordinary text pass."""

from __future__ import annotations

import pytest

from host.memory.errors import SensitiveContentError
from host.memory.gate import check_sensitive, ensure_not_sensitive, luhn_valid
from protocol.errors import SENSITIVE_CONTENT


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=", "private key"),
        ("-----BEGIN RSA PRIVATE KEY-----", "private key"),
        ("aws key AKIAIOSFODNN7EXAMPLE", "AWS access key"),
        ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "GitHub token"),
        ("use sk-ant-api03-abcdefghijklmnopqrstuvwx", "API key"),
        ("stripe sk_live_abcdefghijklmnop1234", "API key"),
        ("xoxb-123456789012-abcdefghijkl", "Slack token"),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "JSON web"),
        ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz123456", "bearer token"),
        ("https://sam:hunter2@example.com/repo.git", "password in a URL"),
        ("My password is hunter2", "password or secret"),
        ("wifi passphrase: correct-horse-battery", "password or secret"),
        ("我的密码是 abc12345", "password or secret"),
        ("Card 4111 1111 1111 1111 expires soon", "payment card"),
        ("card 5500-0000-0000-0004", "payment card"),
    ],
)
def test_secrets_are_refused_with_their_kind(text: str, kind: str) -> None:
    reason = check_sensitive(text)
    assert reason is not None and kind in reason


@pytest.mark.parametrize(
    "text",
    [
        "User forgot their password yesterday and reset it",
        "User's order number is 4111 1111 1111 1112",
        "Call the office on +44 20 7946 0958",
        "The meeting is in room 1234567890123 of the tower",
        "User prefers tokens of appreciation over gifts",
        "我住在柏林",
        "The commit is 3f9a2c1b9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6",
    ],
)
def test_ordinary_text_passes(text: str) -> None:
    assert check_sensitive(text) is None


def test_luhn_accepts_card_numbers_and_rejects_near_misses() -> None:
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")


def test_a_refusal_carries_its_code_and_reason_but_never_the_secret() -> None:
    with pytest.raises(SensitiveContentError) as caught:
        ensure_not_sensitive("fine text", "password: hunter2hunter2")
    assert caught.value.code == SENSITIVE_CONTENT
    assert caught.value.data == {"reason": "it looks like a password or secret"}
    assert "hunter2" not in caught.value.message
