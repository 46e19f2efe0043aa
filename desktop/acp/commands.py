"""The slash commands an ACP session offers: a person's own memory acts, answered by the host without a model turn.

`/remember TEXT` notes a fact in the person's own words (confirmed, source `human`); `/forget ID` retracts one;
`/memory` lists the current facts; `/review` lists what waits for review and `/review ID confirm|reject` decides;
`/why ID` tells why a fact is believed (`memory.explain`: its source, the line it rests on, its reviews and
history). Each is one `memory.*` call; a refusal (a secret, an unknown id) is the reply's text, never a failed prompt.
Any other text starting with `/` goes to the agent as a message.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from desktop.acp.host_link import HostLink
from desktop.memory_cmd import record_row
from protocol.errors import ConnectionClosedError, JsonRpcError

__all__ = ["COMMANDS", "run_command"]


def _command(name: str, description: str, hint: str | None = None) -> AvailableCommand:
    given = AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None
    return AvailableCommand(name=name, description=description, input=given)


COMMANDS = [
    _command("remember", "Remember a fact, in your own words", "the fact to remember"),
    _command("forget", "Forget a fact (its audit trail stays)", "the fact's id, then why"),
    _command("memory", "Show what this agent currently knows"),
    _command("review", "Show facts waiting for your review; /review ID confirm|reject decides", "ID confirm|reject"),
    _command("why", "Show where a fact came from and what happened to it", "the fact's id"),
]

Handler = Callable[[HostLink, str, str], Awaitable[str]]


def _line(record: dict[str, Any]) -> str:
    ident, trust, fact, key, source, recorded = record_row(record)
    slot = f" [{key}]" if key else ""
    return f"{ident}  {trust}  {fact}{slot}  (from {source}, {recorded})"


def _lines(records: list[dict[str, Any]], empty: str) -> str:
    return "\n".join(_line(record) for record in records) if records else empty


async def _remember(link: HostLink, agent_id: str, text: str) -> str:
    if not text:
        return "Usage: /remember TEXT"
    result = await link.call("memory.note", {"agentId": agent_id, "text": text})
    record = result.get("record") or {}
    return f"{result['outcome'].capitalize()}: {record.get('id', '')} {record.get('text', text)}".rstrip()


async def _forget(link: HostLink, agent_id: str, args: str) -> str:
    record_id, _, reason = args.partition(" ")
    if not record_id:
        return "Usage: /forget ID [why]"
    params = {"agentId": agent_id, "recordId": record_id}
    if reason.strip():
        params["reason"] = reason.strip()
    result = await link.call("memory.retract", params)
    return f"{result['outcome'].capitalize()}: {record_id}"


async def _memory(link: HostLink, agent_id: str, _: str) -> str:
    listing = await link.call("memory.list", {"agentId": agent_id, "view": "current"})
    text = _lines(listing["records"], "(nothing remembered yet)")
    for conflict in listing.get("conflicts", []):
        text += f"\nconflict on {conflict['key']}:\n" + _lines(conflict["records"], "")
    return text


async def _review(link: HostLink, agent_id: str, args: str) -> str:
    words = args.split()
    if not words:
        listing = await link.call("memory.list", {"agentId": agent_id, "view": "proposed"})
        text = _lines(listing["records"], "(nothing waits for review)")
        return text if not listing["records"] else text + "\nDecide with /review ID confirm or /review ID reject."
    if len(words) != 2 or words[1] not in ("confirm", "reject"):
        return "Usage: /review, or /review ID confirm|reject"
    result = await link.call("memory.review", {"agentId": agent_id, "recordId": words[0], "decision": words[1]})
    return f"{result['outcome'].capitalize()}: {words[0]}"


async def _why(link: HostLink, agent_id: str, args: str) -> str:
    record_id = args.strip()
    if not record_id:
        return "Usage: /why ID"
    told = await link.call("memory.explain", {"agentId": agent_id, "recordId": record_id})
    lines = [_line(told["record"]), told["summary"]]
    line = told.get("evidenceLine")
    if line:
        lines.append(f"it rests on #{line['seq']}, {line['speaker']}: {line['text']}")
    lines.append("history:")
    lines += [f"  {_line(step)}" for step in told.get("history", [])]
    return "\n".join(lines)


_HANDLERS: dict[str, Handler] = {
    "remember": _remember,
    "forget": _forget,
    "memory": _memory,
    "review": _review,
    "why": _why,
}


async def run_command(link: HostLink, agent_id: str, text: str) -> str | None:
    """The reply to `text` when it is one of the slash commands, else None (it is a message for the agent).

    Raises:
        ConnectionClosedError: the host cannot be reached (every other host refusal is the reply's text).
    """
    if not text.startswith("/"):
        return None
    name, _, rest = text[1:].partition(" ")
    handler = _HANDLERS.get(name.strip())
    if handler is None:
        return None
    try:
        return await handler(link, agent_id, rest.strip())
    except ConnectionClosedError:
        raise
    except JsonRpcError as exc:
        return f"Not done: {exc.message}"
