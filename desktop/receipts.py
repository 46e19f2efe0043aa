"""Run receipts as a person reads them: which facts a reply saw, and which runs saw a fact.

A run's receipt is a `receipt` event in the agent's transcript (written by the host as the run's request is
built); this module reads them over the wire (`agent.transcript`, paged newest first) and says them in words.
Shared by `hearth inspect AGENT --run RUN`, `hearth memory AGENT why ID` and the shell's chat.
"""

from __future__ import annotations

from typing import Any

from desktop.memory_story import Requester

__all__ = ["transcript_events", "run_events", "runs_that_saw", "saw_line", "receipt_ids"]

_PAGE = 1000


async def transcript_events(peer: Requester, agent_id: str) -> list[dict[str, Any]]:
    """Every event of the agent's transcript, oldest first (paged from the newest)."""
    pages: list[list[dict[str, Any]]] = []
    before: int | None = None
    while True:
        params: dict[str, Any] = {"agentId": agent_id, "limit": _PAGE}
        if before is not None:
            params["beforeSeq"] = before
        page = await peer.request("agent.transcript", params)
        events = list(page["events"])
        pages.append(events)
        if not page["hasMore"] or not events:
            break
        before = min(int(event["seq"]) for event in events)
    return sorted((event for page in pages for event in page), key=lambda event: int(event["seq"]))


def run_events(events: list[dict[str, Any]], run_id: str) -> list[dict[str, Any]]:
    """The lines of run `run_id`: the message it answered, then its own lines (receipt, replies, tools, end)."""
    mine = [event for event in events if event.get("runId") == run_id]
    if not mine:
        return []
    start = int(mine[0]["seq"])
    asked = [event for event in events if event.get("type") in ("user", "wake") and int(event["seq"]) < start]
    return [asked[-1], *mine] if asked and asked[-1] not in mine else mine


def receipt_ids(receipt: dict[str, Any]) -> list[str]:
    """The fact ids a receipt lists, the memory section's first, each once."""
    return list(dict.fromkeys([*receipt.get("section", []), *receipt.get("recall", [])]))


def saw_line(receipt: dict[str, Any] | None) -> str:
    """`this reply saw m-…, m-…` (or that it saw no fact, or that the run has no receipt)."""
    if receipt is None:
        # A receipt is written before the request is sent: a run without one sent none (or is older than receipts).
        return "this run has no receipt: it ended before its request was built, or ran before receipts were kept"
    ids = receipt_ids(receipt)
    return f"this reply saw {', '.join(ids)}" if ids else "this reply saw no fact from memory"


def runs_that_saw(events: list[dict[str, Any]], fact_id: str) -> list[dict[str, Any]]:
    """The receipts (oldest first) of the runs whose request carried `fact_id`."""
    return [e for e in events if e.get("type") == "receipt" and fact_id in receipt_ids(e)]
