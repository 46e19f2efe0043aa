"""Words for what the wire carries, shared by the terminal commands and the shell: a model, an agent's
settings, a transcript event, a memory record, each as one short line a person can read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from protocol.models.agents import AgentInfo, ModelSettings

__all__ = [
    "describe_model",
    "describe_settings",
    "describe_event",
    "describe_request",
    "describe_trust",
    "LOCAL_MODEL_NOTE",
]

LOCAL_MODEL_NOTE = "the embedded SmolLM2-135M model: tiny, for trying Hearth out"


def describe_model(model: ModelSettings | dict[str, Any]) -> str:
    """A model, typed or in wire form (a one-shot command reads the wire's JSON as it is)."""
    m = model if isinstance(model, dict) else model.model_dump(by_alias=True)
    provider = m.get("provider", "local")
    if provider == "local":
        return "local (embedded SmolLM2-135M)"
    if provider == "scripted":
        return f"scripted ({len(m.get('rules') or [])} rules)"
    where = f" at {m['baseUrl']}" if m.get("baseUrl") else ""
    return f"{provider} {m.get('name') or ''}".strip() + where


def describe_settings(agent: AgentInfo | dict[str, Any]) -> str:
    """An agent's switches, typed or in wire form."""
    s = agent["settings"] if isinstance(agent, dict) else agent.settings.model_dump(by_alias=True)
    memory, network = "on" if s.get("memory", True) else "off", "on" if s.get("network") else "off"
    knowledge = "on" if s.get("knowledge", True) else "off"
    return f"memory {memory}, knowledge {knowledge}, tools {s.get('toolPermission', 'ask')}, network {network}"


_VERBS = {"shell": "run", "read": "read", "list": "list", "write": "write", "mcp": "use"}


def describe_request(name: str, action: str | None, target: str | None) -> str:
    """What a tool call asks a person for, as `wants to run: ls -la` (the tool named when the verb does not)."""
    verb = _VERBS.get(action or "", action or "use")
    tool = "" if name in (action, "mcp_call") or action == "mcp" else f" ({name})"
    return f"wants to {verb}: {target or name}{tool}"


def describe_trust(record: dict[str, Any]) -> str:
    """A record's trust and, unless it is live, its status: `confirmed`, `proposed, retracted`."""
    state = str(record.get("trust") or record.get("op") or "")
    if record.get("status") not in (None, "live"):
        state += f", {record['status']}"
    return state


def describe_event(event: dict[str, Any]) -> str:
    """One transcript event (wire form) as `kind: what happened`."""
    kind = event.get("type", "?")
    if kind == "user":
        return f"you: {event.get('text', '')}"
    if kind == "wake":
        return f"{event.get('fromAgent', 'an agent')}: {event.get('text', '')}"
    if kind == "assistant":
        calls = ", ".join(c.get("name", "?") for c in event.get("toolCalls", []))
        text = event.get("text", "") + (" (cut short)" if event.get("partial") else "")
        return f"agent: {text}" + (f" [calls {calls}]" if calls else "")
    if kind == "tool":
        return f"tool {event.get('name', '?')}{' failed' if event.get('isError') else ''}: {event.get('content', '')}"
    if kind == "ended":
        error = f": {event['error']}" if event.get("error") else ""
        return f"run ended ({event.get('reason', '?')}){error}"
    if kind == "context":
        return f"context: prompt epoch {event.get('epoch', 0)}" + (", with recall" if event.get("recall") else "")
    if kind == "compact":
        return f"compacted through #{event.get('throughSeq', '?')}: {event.get('summary', '')}"
    return str(kind)
