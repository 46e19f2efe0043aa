"""The system prompt, built stable-first: identity and rules, then the teammate roster, then the memory section.

Pure: values in, segments out, and the same values always give the same bytes (the roster is sorted by
id), so a provider's prompt cache holds across turns. Each segment ends where a cache breakpoint may go.
With memory off there is no memory segment at all: the capability is absent, not announced as disabled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["AgentIdentity", "PromptSegment", "build_system_prompt", "join_segments", "SEGMENT_SEPARATOR"]

SEGMENT_SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class AgentIdentity:
    """Who the agent is: its id, display name and the user's standing instructions."""

    agent_id: str
    name: str
    instructions: str = ""
    tools_note: str = ""


@dataclass(frozen=True, slots=True)
class PromptSegment:
    """One stable block of the system prompt: `identity`, `roster` or `memory`."""

    name: str
    text: str


def _identity(identity: AgentIdentity) -> str:
    lines = [
        f"You are {identity.name} (agent id {identity.agent_id}), a persistent assistant running in Hearth on the "
        "user's own computer. You keep a transcript across conversations and work in your own workspace.",
        "Be direct and accurate. When you use a tool, say briefly what you found. Never reveal secrets such as "
        "passwords or API keys, and do not ask the user for them.",
    ]
    if identity.tools_note:
        lines.append(identity.tools_note)
    if identity.instructions.strip():
        lines += ["", "Instructions from the user:", identity.instructions.strip()]
    return "\n".join(lines)


def _roster(roster: Sequence[tuple[str, str]]) -> str | None:
    mates = sorted(set(roster))
    if not mates:
        return None
    lines = ["## Teammates", "Other agents working for this user:"]
    lines += [f"- {name} (id {agent_id})" for agent_id, name in mates]
    return "\n".join(lines)


def build_system_prompt(
    identity: AgentIdentity, roster: Sequence[tuple[str, str]], memory_section: str | None
) -> tuple[PromptSegment, ...]:
    """The system prompt's segments in stable-first order.

    Args:
        identity: the agent's identity and instructions.
        roster: teammates as (agent id, name) pairs, in any order; the agent itself should not be listed.
        memory_section: the rendered memory section, or None when memory is off.

    Returns:
        identity, then roster (when there are teammates), then memory (when memory is on).
    """
    segments = [PromptSegment("identity", _identity(identity))]
    roster_text = _roster(roster)
    if roster_text is not None:
        segments.append(PromptSegment("roster", roster_text))
    if memory_section is not None:
        segments.append(PromptSegment("memory", memory_section))
    return tuple(segments)


def join_segments(segments: Sequence[PromptSegment]) -> str:
    """The system prompt text: the segments in order, separated by a blank line."""
    return SEGMENT_SEPARATOR.join(segment.text for segment in segments)
