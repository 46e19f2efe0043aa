"""The approval callback a run's tools call, built from the permission mode and remembered rules.

`make_approver` wraps `sandbox.decide_approval`: remembered rules and the mode answer first, and only an
`ask` outcome reaches the person (through the host). A person's `allow_always` / `deny_always` is remembered
for the rest of the run, so the same exact action and target is not asked twice.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from kernel.tools.context import Approve
from protocol.ids import Decision
from protocol.models.policy import Permission
from sandbox import Ask, Rule, decide_approval

__all__ = ["PersonDecision", "AskPerson", "make_approver"]

PersonDecision = Decision
AskPerson = Callable[[str, str, str], Awaitable[PersonDecision]]
"""`ask_person(action, target, summary)`: the host's `approval.request`; a failure should answer `deny`."""


def make_approver(permission: Permission, rules: Iterable[Rule], ask_person: AskPerson) -> Approve:
    """Build `approve(action, target, summary) -> bool` for one run.

    Args:
        permission: the agent's tool permission mode.
        rules: the remembered approvals sent with `turn.start`.
        ask_person: asks the person; called only when neither a rule nor the mode decides.

    Returns:
        The callback for `ToolContext.approve`.
    """
    known = list(rules)

    async def approve(action: str, target: str, summary: str, *, always_ask: bool = False) -> bool:
        verdict = Ask(summary, always_ask=always_ask)
        outcome = decide_approval(verdict, permission=permission, rules=known, action=action, target=target)
        if outcome != "ask":
            return outcome == "allow"
        decision = await ask_person(action, target, summary)
        if decision in ("allow_always", "deny_always"):
            known.append(Rule(action, target, "allow" if decision == "allow_always" else "deny"))
        return decision in ("allow_once", "allow_always")

    return approve
