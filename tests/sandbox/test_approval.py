"""Approval decisions: the permission mode, remembered rules per exact target, and policy denials that stay."""

from __future__ import annotations

import pytest

from protocol.models.policy import ApprovalRule, Permission
from sandbox import Allow, Ask, Deny, Rule, decide_approval, rules_from_wire, rules_to_wire

ASK = Ask("outside the workspace")


@pytest.mark.parametrize(("permission", "expected"), [("ask", "ask"), ("always", "allow"), ("never", "deny")])
def test_the_permission_mode_answers_an_ask(permission: Permission, expected: str) -> None:
    assert decide_approval(ASK, permission=permission, rules=(), action="read", target="/etc/hosts") == expected


@pytest.mark.parametrize("permission", ["ask", "always", "never"])
def test_a_policy_denial_stays_denied_under_every_mode(permission: Permission) -> None:
    rules = [Rule("shell", "rm -rf /", "allow")]
    verdict = Deny("hard-denied")
    assert decide_approval(verdict, permission=permission, rules=rules, action="shell", target="rm -rf /") == "deny"
    assert decide_approval(Allow(), permission=permission, rules=(), action="read", target="/x") == "allow"


def test_a_remembered_deny_is_never_asked_again_even_under_always() -> None:
    rules = [Rule("read", "/etc/hosts", "deny")]
    assert decide_approval(ASK, permission="always", rules=rules, action="read", target="/etc/hosts") == "deny"
    assert decide_approval(ASK, permission="ask", rules=rules, action="read", target="/etc/hosts") == "deny"


def test_a_remembered_allow_matches_only_the_exact_action_and_target() -> None:
    rules = [Rule("read", "/etc/hosts", "allow")]
    assert decide_approval(ASK, permission="ask", rules=rules, action="read", target="/etc/hosts") == "allow"
    assert decide_approval(ASK, permission="ask", rules=rules, action="write", target="/etc/hosts") == "ask"
    assert decide_approval(ASK, permission="ask", rules=rules, action="read", target="/etc/hosts2") == "ask"


def test_rules_convert_to_and_from_the_wire() -> None:
    rules = (Rule("shell", "ls", "allow"), Rule("read", "/x", "deny"))
    wire = rules_to_wire(rules)
    assert all(isinstance(rule, ApprovalRule) for rule in wire)
    assert rules_from_wire(wire) == rules


@pytest.mark.parametrize(("permission", "expected"), [("ask", "ask"), ("always", "ask"), ("never", "deny")])
def test_an_always_ask_verdict_is_never_allowed_by_the_mode(permission: Permission, expected: str) -> None:
    """Issue 9: a write in a session's project root needs a person even under `always`."""
    verdict = Ask("write in the project root", always_ask=True)
    target = "/home/p/proj/x.py"
    assert decide_approval(verdict, permission=permission, rules=(), action="write", target=target) == expected
    remembered = [Rule("write", target, "allow")]
    assert decide_approval(verdict, permission="always", rules=remembered, action="write", target=target) == "allow"
