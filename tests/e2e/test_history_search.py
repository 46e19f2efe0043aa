"""Issue 24.2: what a compaction dropped can be found again. Through the real host and kernel with the scripted
model: after a compaction summarised a turn away (the `compact` event says which seqs it covers), the agent
finds that turn with `search_history` and reads it back by seq; it cannot reach another agent's transcript
(no argument names one, and one that tries is refused), and a path in the words is only words."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.support.host_process import HostProcess, scripted_model

LOCKER = "My locker number is 4711 at the climbing gym."
VAULT = "The vault code is 9931."


def _call(**arguments: Any) -> dict[str, Any]:
    return {"name": "search_history", "arguments": arguments}


def _events(data_dir: Path, agent: str) -> list[dict[str, Any]]:
    lines = (data_dir / "agents" / agent / "transcript.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _settings(*rules: dict[str, Any]) -> dict[str, Any]:
    settings = scripted_model(
        *rules,
        {"match": "<conversation>", "reply": "SUMMARY: the user sent many long notes."},
        {"match": ".", "on": "tool", "reply": "done"},
        {"match": ".", "on": "user", "reply": "noted"},
    )
    settings["model"]["contextWindow"] = 1000
    settings["memory"] = False
    return settings


def test_the_agent_finds_a_turn_a_compaction_dropped_and_reaches_no_other_agents_transcript(tmp_path: Path) -> None:
    searches = [
        _call(query="LOCKER number"),
        _call(query="vault"),
        _call(query="../bob/transcript.jsonl"),
        _call(query="vault", agentId="bob"),
        _call(query="vault", path=str(tmp_path / "agents/bob/transcript.jsonl")),
        _call(fromSeq=1, limit=1),
    ]
    ann = _settings({"match": "^where is my locker", "on": "user", "toolCalls": searches})

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": ann})
            await host.call("agent.create", {"name": "bob", "settings": _settings()})
            await host.idle_turn("bob", VAULT)
            await host.idle_turn("ann", LOCKER)
            for i in range(6):
                await host.idle_turn("ann", f"note {i} " + "words " * 100)
            await host.idle_turn("ann", "where is my locker?")

    asyncio.run(main())
    events = _events(tmp_path, "ann")
    locker = next(e for e in events if e["type"] == "user" and e["text"] == LOCKER)
    compact = next(e for e in events if e["type"] == "compact")
    assert compact["fromSeq"] <= locker["seq"] <= compact["throughSeq"], "the compaction covered the locker turn"
    assert "4711" not in compact["summary"]
    results = [e for e in events if e["type"] == "tool" and e["name"] == "search_history"]
    found, vault, path_words, named, pathed, read = results
    assert f"#{locker['seq']} " in found["content"] and "user: My locker number is 4711" in found["content"]
    assert not found["isError"]
    assert "9931" not in json.dumps(results), "bob's transcript is reached by no call"
    assert vault["content"] == "Your transcript has no the words 'vault'." and not vault["isError"]
    assert "Your transcript has no" in path_words["content"]
    assert named["isError"] and "agentId" in named["content"]
    assert pathed["isError"] and "path" in pathed["content"]
    assert read["content"].startswith(f"#{locker['seq']} ") and "4711" in read["content"]
    assert read["content"].count("\n") == 0, "one line, as asked"
    assert VAULT in json.dumps(_events(tmp_path, "bob")), "bob's own line is there to be found, had it been reachable"
