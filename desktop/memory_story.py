"""Why a fact is believed: its record, the transcript line it rests on, and what happened to it since.

The host answers `memory.explain` with the fact as it stands, the transcript line it rests on, its reviews,
what it replaced, what replaced or removed it, and its history; this module turns that into lines a person
reads. Shared by `hearth memory AGENT why ID` and the shell's memory view.
"""

from __future__ import annotations

from typing import Any, Protocol

from desktop.describe import describe_trust

__all__ = ["Requester", "fact_story", "story_lines"]


class Requester(Protocol):
    """Whatever makes host calls: a `JsonRpcPeer`, or the shell's session."""

    async def request(self, method: str, params: dict[str, Any]) -> Any: ...


async def fact_story(peer: Requester, agent_id: str, record_id: str) -> dict[str, Any]:
    """The story of one fact, in wire form: the host's `memory.explain` answer.

    Raises:
        JsonRpcError: NOT_FOUND for an unknown agent or record.
    """
    story: dict[str, Any] = await peer.request("memory.explain", {"agentId": agent_id, "recordId": record_id})
    return story


def _actor(record: dict[str, Any]) -> str:
    return "a person" if record.get("source") == "human" else str(record.get("source"))


def story_lines(story: dict[str, Any]) -> list[str]:
    """The story as lines a person reads top to bottom."""
    record = story["record"]
    evidence = record.get("evidence") or {}
    lines = [
        f"{record['id']}: {record.get('text') if record.get('text') is not None else '(erased)'}",
        f"  believed: {describe_trust(record)}" + (f", key {record['key']}" if record.get("key") else ""),
        f"  source: {_actor(record)}, recorded {record['observedAt']}",
    ]
    if record.get("validFrom") or record.get("validUntil"):
        lines.append(f"  valid: {record.get('validFrom') or '…'} to {record.get('validUntil') or 'now'}")
    if evidence.get("basis") or evidence.get("toolCallId"):
        lines.append(f"  basis: {evidence.get('basis') or 'tool'} {evidence.get('toolCallId') or ''}".rstrip())
    line = story.get("evidenceLine")
    if line is not None:
        cut = " [cut]" if line.get("truncated") else ""
        lines.append(f"  evidence: transcript #{line['seq']}, {line['speaker']}: {line['text']!r}{cut}")
    elif evidence.get("seq"):
        lines.append(f"  evidence: transcript #{evidence['seq']} (no longer in the transcript)")
    else:
        lines.append("  evidence: none recorded (a person's own note or edit)")
    for review in story.get("reviews", []):
        lines.append(f"  reviewed: {review.get('decision')} by {_actor(review)} at {review['observedAt']}")
    if story.get("replaced") is not None:
        old = story["replaced"]
        lines.append(f"  it replaced {old['id']}: {old.get('text') or '(erased)'}")
    if story.get("replacedBy") is not None:
        newer = story["replacedBy"]
        lines.append(f"  replaced by {newer['id']}: {newer.get('text') or '(erased)'} ({_actor(newer)})")
    if story.get("removedBy") is not None:
        removed = story["removedBy"]
        lines.append(f"  removed: {removed['op']} by {_actor(removed)} at {removed['observedAt']}")
    lines.append("  history:")
    for step in story["history"]:
        reason = f": {step['reason']}" if step.get("reason") else ""
        decision = f" {step['decision']}" if step.get("op") == "review" and step.get("decision") else ""
        lines.append(f"    #{step['seq']} {step['op']}{decision} by {_actor(step)} at {step['observedAt']}{reason}")
    return lines
