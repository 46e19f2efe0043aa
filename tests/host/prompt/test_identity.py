"""The system prompt is stable-first and byte-stable: identity, then roster, then memory."""

from __future__ import annotations

from host.prompt.identity import AgentIdentity, build_system_prompt, join_segments

ADA = AgentIdentity("ada", "Ada", "Answer in British English.")


def test_segments_come_identity_then_roster_then_memory() -> None:
    segments = build_system_prompt(ADA, [("bob", "Bob")], "## Memory\n- [m-1] User likes tea")
    assert [s.name for s in segments] == ["identity", "roster", "memory"]
    text = join_segments(segments)
    assert text.index("You are Ada (agent id ada)") < text.index("Bob (id bob)") < text.index("User likes tea")
    assert "Answer in British English." in segments[0].text


def test_the_roster_is_byte_stable_whatever_the_order_it_comes_in() -> None:
    one = join_segments(build_system_prompt(ADA, [("bob", "Bob"), ("cy", "Cy")], None))
    two = join_segments(build_system_prompt(ADA, [("cy", "Cy"), ("bob", "Bob")], None))
    assert one == two


def test_no_teammates_and_memory_off_leave_only_the_identity() -> None:
    segments = build_system_prompt(AgentIdentity("ada", "Ada"), [], None)
    assert [s.name for s in segments] == ["identity"]
    assert "memory" not in join_segments(segments).lower()
