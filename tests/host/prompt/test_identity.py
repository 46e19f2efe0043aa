"""The system prompt is stable-first and byte-stable: identity, then roster, then memory."""

from __future__ import annotations

from host.prompt.identity import AgentIdentity, build_system_prompt, join_segments, roster_line

ADA = AgentIdentity("ada", "Ada", "Answer in British English.")


def test_segments_come_identity_then_roster_then_memory() -> None:
    segments = build_system_prompt(ADA, [("bob", "Bob", "")], "## Memory\n- [m-1] User likes tea")
    assert [s.name for s in segments] == ["identity", "roster", "memory"]
    text = join_segments(segments)
    assert text.index("You are Ada (agent id ada)") < text.index("Bob (id bob)") < text.index("User likes tea")
    assert "Answer in British English." in segments[0].text


def test_the_roster_is_byte_stable_whatever_the_order_it_comes_in() -> None:
    one = join_segments(build_system_prompt(ADA, [("bob", "Bob", "Finds sources"), ("cy", "Cy", "")], None))
    two = join_segments(build_system_prompt(ADA, [("cy", "Cy", ""), ("bob", "Bob", "Finds sources")], None))
    assert one == two


def test_the_roster_has_one_line_per_teammate_and_never_the_agent_itself() -> None:
    roster = build_system_prompt(ADA, [("bob", "Bob", "Finds sources"), ("ada", "Ada", ""), ("cy", "Cy", "")], None)[1]
    mates = [line for line in roster.text.splitlines() if line.startswith("- ")]
    assert mates == ["- Bob (id bob): Finds sources", "- Cy (id cy)"]
    assert "send_to_agent" in roster.text and "ask_agent" in roster.text and "not from the user" in roster.text


def test_a_lone_agent_is_told_how_to_get_teammates() -> None:
    segments = build_system_prompt(AgentIdentity("ada", "Ada"), [("ada", "Ada", "")], None)
    assert [s.name for s in segments] == ["identity", "roster"]
    assert "no teammates yet" in segments[1].text and "create_agent" in segments[1].text


def test_a_work_run_lists_the_members_and_names_no_messaging_tool() -> None:
    member = AgentIdentity("ada", "Ada", in_work=True)
    roster = build_system_prompt(member, [("bob", "Bob", "")], None)[1]
    assert "Bob (id bob)" in roster.text and "send_to_agent" not in roster.text
    assert [s.name for s in build_system_prompt(member, [], None)] == ["identity"]


def test_a_roster_line_is_the_first_line_of_the_instructions_cut_short() -> None:
    assert roster_line("\n  Finds sources.\nSecond line") == "Finds sources."
    assert len(roster_line("x" * 300)) == 100 and roster_line("") == ""


def test_memory_off_leaves_no_memory_segment() -> None:
    segments = build_system_prompt(AgentIdentity("ada", "Ada"), [], None)
    assert "memory" not in [s.name for s in segments]
    assert "## Memory" not in join_segments(segments)
