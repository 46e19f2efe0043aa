"""Approval decisions: what happens to an action the policy answered with Ask.

Pure: (verdict, permission mode, remembered rules, exact action and canonical target) → allow, deny or ask the
person. A policy Deny is final under every mode, `always` included. A remembered rule matches only the exact
action and target and beats the mode (a remembered deny is never asked again); then `always` allows, `never`
denies and `ask` asks the person. An `Ask` with `always_ask` (a write in a session's project root) is never
allowed by the mode: only a person, or a person's remembered answer for that exact target, says yes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from protocol.models.policy import ApprovalRule, Permission
from sandbox.policy import Allow, Ask, Deny, Verdict

__all__ = ["Rule", "ApprovalOutcome", "decide_approval", "rules_from_wire", "rules_to_wire"]

ApprovalOutcome = Literal["allow", "deny", "ask"]


@dataclass(frozen=True, slots=True)
class Rule:
    """A remembered answer for exactly one (action, target)."""

    action: str
    target: str
    decision: Literal["allow", "deny"]


def decide_approval(
    verdict: Verdict,
    *,
    permission: Permission,
    rules: Iterable[Rule],
    action: str,
    target: str,
) -> ApprovalOutcome:
    """Turn the policy's verdict into what the tool does now.

    Args:
        verdict: the policy's answer for this action.
        permission: the agent's tool permission mode.
        rules: remembered approvals of this agent.
        action: the exact action (`read`, `list`, `write`, `shell`).
        target: the canonical path or the exact shell command.

    Returns:
        `allow`, `deny`, or `ask` (the person decides).
    """
    if isinstance(verdict, Allow):
        return "allow"
    if isinstance(verdict, Deny):
        return "deny"
    remembered = {rule.decision for rule in rules if rule.action == action and rule.target == target}
    if "deny" in remembered:
        return "deny"
    if "allow" in remembered:
        return "allow"
    if permission == "never":
        return "deny"
    if isinstance(verdict, Ask) and verdict.always_ask:
        return "ask"
    if permission == "always":
        return "allow"
    return "ask"


def rules_from_wire(rules: Iterable[ApprovalRule]) -> tuple[Rule, ...]:
    """Convert the `turn.start` approvals into internal rules."""
    return tuple(Rule(rule.action, rule.target, rule.decision) for rule in rules)


def rules_to_wire(rules: Iterable[Rule]) -> list[ApprovalRule]:
    """Convert internal rules into wire models for `turn.start`."""
    return [ApprovalRule(action=rule.action, target=rule.target, decision=rule.decision) for rule in rules]
