"""The sensitive-content gate refuses secrets, naming the rule and never the value, and lets ordinary text pass."""

from __future__ import annotations

import pytest

from host.memory.errors import SensitiveContentError
from host.memory.gate import (
    check_sensitive,
    ensure_not_sensitive,
    find_sensitive,
    luhn_valid,
    normalise_for_gate,
    redact_arguments,
)
from protocol.errors import SENSITIVE_CONTENT
from tests.support.secret_shapes import ORDINARY, SECRETS, ZWSP


@pytest.mark.parametrize(("name", "text", "value"), SECRETS, ids=[name for name, _, _ in SECRETS])
def test_every_secret_shape_is_refused(name: str, text: str, value: str) -> None:
    """Issue 9: each of these got through the old hand-written list, or is a variant of one that did."""
    assert find_sensitive(text) is not None


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_facts_pass(text: str) -> None:
    assert find_sensitive(text) is None


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("-----BEGIN RSA PRIVATE KEY-----", "PrivateKeyDetector"),
        ("aws key AKIAIOSFODNN7EXAMPLE", "AWSKeyDetector"),
        ("The GitLab token is glpat-VVrLvHdgwHvpsbgh5AXL", "GitLabTokenDetector"),
        ("Card 4111 1111 1111 1111 expires soon", "CardNumber"),
        ("My password is hunter2", "ProsePassword"),
        ("I log in to the NAS as admin with Lemon3f2a!", "ProsePassword"),
    ],
)
def test_a_refusal_names_the_rule_that_matched(text: str, rule: str) -> None:
    finding = find_sensitive(text)
    assert finding is not None and finding.rule == rule


def test_text_is_normalised_before_the_detectors_read_it() -> None:
    assert normalise_for_gate(f"sk-{ZWSP}proj\u00ad-x") == "sk-proj-x"
    assert normalise_for_gate("ｇｈｐ＿") == "ghp_"


def test_near_misses_of_cards_pass() -> None:
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    assert check_sensitive("User's order number is 4111 1111 1111 1112") is None


def test_a_refusal_carries_its_code_rule_and_reason_but_never_the_secret() -> None:
    with pytest.raises(SensitiveContentError) as caught:
        ensure_not_sensitive("fine text", "password: hunter2hunter2")
    assert caught.value.code == SENSITIVE_CONTENT
    assert caught.value.data == {"reason": "it looks like a key or secret", "rule": "SecretAssignment"}
    assert "hunter2" not in caught.value.message and "SecretAssignment" in caught.value.message


def test_redacted_arguments_keep_what_may_be_stored_and_withhold_the_rest() -> None:
    redacted = redact_arguments({"text": "pw: hunter2!", "key": "user.email", "tier": "note", "reassert": True})
    assert "hunter2" not in redacted["text"] and redacted["text"].startswith("[withheld")
    assert redacted | {"text": "x"} == {"text": "x", "key": "user.email", "tier": "note", "reassert": True}
