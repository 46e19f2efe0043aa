"""`/remember TEXT` and `/forget TEXT` in `hearth chat`: the person's own memory acts, with every model.

`/remember` is `memory.note` (source `human`, confirmed); `/forget` retracts the one fact that holds every
word typed (found with `memory.search`), or the record named by its id, and lists the candidates when
none or several do rather than guess. Anything else is not a memory command and goes to the agent.
"""

from __future__ import annotations

import re

from protocol.errors import JsonRpcError
from protocol.peer import JsonRpcPeer

__all__ = ["run_memory_command", "MEMORY_COMMANDS_HELP"]

MEMORY_COMMANDS_HELP = "/remember TEXT keeps a fact, /forget TEXT forgets one"

_COMMAND = re.compile(r"^/(remember|forget)(?:\s+(.*))?$", re.DOTALL)
_RECORD_ID = re.compile(r"^m-[0-9a-f]{12}$")


async def run_memory_command(peer: JsonRpcPeer, agent_id: str, line: str) -> str | None:
    """Carry out a memory command typed in the chat.

    Returns:
        What to tell the person, or None when `line` is not a memory command.
    """
    match = _COMMAND.match(line.strip())
    if match is None:
        return None
    verb, text = match.group(1), (match.group(2) or "").strip()
    if not text:
        return f"Usage: /{verb} TEXT"
    try:
        if verb == "remember":
            result = await peer.request("memory.note", {"agentId": agent_id, "text": text})
            record = result.get("record") or {}
            if result["outcome"] == "duplicate":
                return f"Already remembered as {record.get('id')}."
            return f"Remembered as {record.get('id')}: {record.get('text')}"
        return await _forget(peer, agent_id, text)
    except JsonRpcError as exc:
        return f"Not done: {exc.message}"


def _holds_every_word(query: str, text: str) -> bool:
    """Whether every word of the person's query is in the fact (search also finds partial matches)."""
    words = [w for w in re.findall(r"\w+", query.casefold()) if len(w) > 2] or [query.casefold()]
    folded = text.casefold()
    return all(word in folded for word in words)


async def _forget(peer: JsonRpcPeer, agent_id: str, text: str) -> str:
    if _RECORD_ID.match(text):
        target = text
    else:
        hits = (await peer.request("memory.search", {"agentId": agent_id, "query": text, "limit": 5}))["hits"]
        matching = [h["record"] for h in hits if _holds_every_word(text, h["record"].get("text") or "")]
        if len(matching) != 1:
            shown = matching or [h["record"] for h in hits]
            if not shown:
                return f"Nothing in memory matches {text!r}."
            listed = "\n".join(f"  {r['id']}  {r['text']}" for r in shown)
            lead = "Several facts match" if matching else f"No fact holds every word of {text!r}; the closest"
            return f"{lead}; forget one by its id (/forget m-…):\n{listed}"
        target = matching[0]["id"]
    params = {"agentId": agent_id, "recordId": target, "reason": "forgotten with /forget in hearth chat"}
    result = await peer.request("memory.retract", params)
    record = result.get("record") or {}
    return f"Forgotten: {record.get('id')} {record.get('text') or ''}".rstrip()
