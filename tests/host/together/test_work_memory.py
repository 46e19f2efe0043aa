"""A Work's memory is read in its members' Work runs: an erase there scrubs each member's Work-run transcript
and frozen prompt, and each member's next turn renders its prompt afresh (issue 22.1)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from host.memory import Evidence
from host.prompt.cache import assemble_prompt, load_frozen
from host.prompt.identity import AgentIdentity
from host.together.work_tools import WorkMemories

PLAN = "The launch date is the ninth of Quintember."
KEPT = "The launch needs two reviewers."


def test_an_erase_of_a_works_memory_leaves_no_members_transcript_or_prompt_cache_holding_it(tmp_path: Path) -> None:
    works = tmp_path / "works"
    members = [works / "w" / "members" / name for name in ("ann", "bob")]
    for member in members:
        member.mkdir(parents=True)
    memories = WorkMemories(works)

    async def main() -> None:
        store = memories.get("w")
        plan = await store.note(PLAN, evidence=Evidence("agent"))
        await store.note(KEPT, evidence=Evidence("agent"))
        assert plan.fact is not None
        for member in members:
            identity = AgentIdentity(member.name, member.name, "", in_work=True)
            assert PLAN in assemble_prompt(member, identity, [], store, "when?").system
            reply = {"seq": 1, "type": "tool", "name": "memory_recall", "toolCallId": "c", "content": f"{PLAN}\n{KEPT}"}
            said = {"seq": 2, "type": "assistant", "runId": "r", "text": f"It is {PLAN}"}
            (member / "transcript.jsonl").write_text("".join(json.dumps(e) + "\n" for e in (reply, said)), "utf-8")
        erased = await store.erase(plan.fact.id)
        assert erased.erasure is not None and erased.erasure.held == 2
        for member in members:
            assert b"Quintember" not in (member / "prompt-cache.json").read_bytes()
            frozen = load_frozen(member)
            assert frozen is not None and frozen.memory_mark != store.epoch_mark, "the erase moved the mark"
            identity = AgentIdentity(member.name, member.name, "", in_work=True)
            after = assemble_prompt(member, identity, [], store, "when?")
            assert "Quintember" not in after.system and KEPT in after.system and after.epoch == frozen.epoch + 1
            events = [json.loads(line) for line in (member / "transcript.jsonl").read_bytes().splitlines()]
            assert events[0]["content"] == f"[erased]\n{KEPT}" and events[1]["text"] == f"It is {PLAN}"
        assert not (works / "w" / "prompt-cache.json").exists(), "the Work itself has no prompt of its own"

    try:
        asyncio.run(main())
    finally:
        memories.close()
