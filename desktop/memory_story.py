"""Why a fact is believed: its record, the transcript line it rests on, and what happened to it since.

Built from the wire only: `memory.history` (every ledger record touching the fact), `memory.list` (how it
stands now) and `agent.transcript` (the evidence line by its seq). Shared by `hearth memory AGENT why ID`
and the shell's memory view.
"""

from __future__ import annotations

from typing import Any, Protocol

from desktop.describe import describe_event, describe_trust

__all__ = ["Requester", "fact_story", "story_lines"]


class Requester(Protocol):
    """Whatever makes host calls: a `JsonRpcPeer`, or the shell's session."""

    async def request(self, method: str, params: dict[str, Any]) -> Any: ...


async def _evidence_event(peer: Requester, agent_id: str, seq: int) -> dict[str, Any] | None:
    page = await peer.request("agent.transcript", {"agentId": agent_id, "beforeSeq": seq + 1, "limit": 1})
    events: list[dict[str, Any]] = page["events"]
    return events[0] if events and events[0].get("seq") == seq else None


async def fact_story(peer: Requester, agent_id: str, record_id: str) -> dict[str, Any]:
    """The story of one fact, in wire form.

    Returns:
        `{record, evidenceEvent, replaces, replacedBy, trail}`: the fact as it stands (or its first ledger
        record), the transcript event its evidence names (or None), the record it replaced, the records
        that replaced it, and every ledger record touching it, oldest first.

    Raises:
        JsonRpcError: NOT_FOUND for an unknown agent or record.
    """
    trail: list[dict[str, Any]] = (await peer.request("memory.history", {"agentId": agent_id, "recordId": record_id}))[
        "records"
    ]
    everything = await peer.request("memory.list", {"agentId": agent_id, "view": "all"})
    standing = {r["id"]: r for r in everything["records"]}
    record = standing.get(record_id) or next((r for r in trail if r["id"] == record_id), trail[0])
    evidence = record.get("evidence") or {}
    event = await _evidence_event(peer, agent_id, evidence["seq"]) if evidence.get("seq") else None
    replaces = standing.get(record["replaces"]) if record.get("replaces") else None
    replaced_by = [standing.get(r["id"], r) for r in trail if r.get("replaces") == record_id and r["id"] != record_id]
    return {"record": record, "evidenceEvent": event, "replaces": replaces, "replacedBy": replaced_by, "trail": trail}


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
    if story["evidenceEvent"] is not None:
        lines.append(f"  evidence: transcript #{evidence['seq']}: {describe_event(story['evidenceEvent'])}")
    elif evidence.get("seq"):
        lines.append(f"  evidence: transcript #{evidence['seq']} (no longer in the transcript)")
    else:
        lines.append("  evidence: none recorded (a person's own note or edit)")
    if story["replaces"] is not None:
        old = story["replaces"]
        lines.append(f"  it replaced {old['id']}: {old.get('text') or '(erased)'}")
    for newer in story["replacedBy"]:
        lines.append(f"  replaced by {newer['id']}: {newer.get('text') or '(erased)'} ({_actor(newer)})")
    lines.append("  history:")
    for step in story["trail"]:
        reason = f": {step['reason']}" if step.get("reason") else ""
        decision = f" {step['decision']}" if step.get("op") == "review" and step.get("decision") else ""
        lines.append(f"    #{step['seq']} {step['op']}{decision} by {_actor(step)} at {step['observedAt']}{reason}")
    return lines
