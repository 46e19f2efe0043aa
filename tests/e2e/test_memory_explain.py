"""Issue 11.5 through the real host: a belief you can ask about (`memory.explain`, `hearth memory why`,
ids in `memory_recall`), and recall blocks bounded in bytes and in what replays may take of the window."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from tests.support.fake_model import NO_OPERATIONS, ChatServer, recall_blocks, say
from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model

PLAN = {
    "operations": [
        {"op": "assert", "text": "The user works at Initech.", "key": "user.employer", "seq": 1, "source": "user"}
    ]
}
RULES = [
    {"match": "You keep the long-term memory", "reply": json.dumps(PLAN)},
    {
        "match": r"^what do you recall about (\w+)\?$",
        "on": "user",
        "toolCalls": [{"name": "memory_recall", "arguments": {"query": r"\1"}}],
    },
    {"match": r"(?s)^(.*)$", "on": "tool", "reply": "noted"},
    {"match": ".*", "reply": "ok"},
]


def test_explain_names_source_evidence_trust_what_it_replaced_and_what_replaced_it(tmp_path: Path) -> None:
    said = "I have worked at Initech since last spring, on the billing team."

    async def main() -> dict[str, str]:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(*RULES)})
            await host.idle_turn("ann", said)
            await host.wait_for("memory.changed", lambda p: p["op"] == "assert")
            (old,) = (await host.call("memory.list", {"agentId": "ann"}))["records"]
            fixed = await host.call(
                "memory.correct",
                {
                    "agentId": "ann",
                    "recordId": old["id"],
                    "text": "The user works at Globex.",
                    "validFrom": "2026-01-01",
                },
            )
            new_id = fixed["record"]["id"]
            story = await host.call("memory.explain", {"agentId": "ann", "recordId": old["id"]})
            assert story["record"]["source"] == "extractor" and story["record"]["trust"] == "confirmed"
            assert story["evidenceLine"] == {
                "seq": 1,
                "type": "user",
                "speaker": "user",
                "text": said,
                "truncated": False,
            }
            assert story["replacedBy"]["id"] == new_id and story["record"]["validUntil"].startswith("2026-01-01")
            assert [r["op"] for r in story["history"]] == ["assert", "correct"]
            assert said in story["summary"] and new_id in story["summary"]
            newer = await host.call("memory.explain", {"agentId": "ann", "recordId": new_id})
            assert newer["replaced"]["id"] == old["id"] and newer["record"]["source"] == "human"
            assert newer["evidenceLine"] is None and newer["replacedBy"] is None
            run_id = (await host.idle_turn("ann", "what do you recall about Globex?"))["runId"]
            page = await host.call("agent.transcript", {"agentId": "ann"})
            (result,) = [e for e in page["events"] if e["type"] == "tool" and e["runId"] == run_id]
            assert f"[{new_id}]" in result["content"] and "from human" in result["content"]
            return {"old": old["id"], "new": new_id}

    ids = asyncio.run(main())
    done = subprocess.run(
        [sys.executable, "-m", "hearth", "memory", "why", "ann", ids["old"], "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert said in done.stdout and ids["new"] in done.stdout and "Initech" in done.stdout


def test_a_recall_block_is_capped_and_old_epochs_blocks_give_way_within_the_replay_budget(tmp_path: Path) -> None:
    server = ChatServer(otherwise=say(NO_OPERATIONS))
    server.start()
    window = 8192  # a tenth of it at four bytes a token: 3276 bytes for blocks of earlier epochs

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            settings = {"model": {"provider": "openai", "name": "m", "baseUrl": server.url, "contextWindow": window}}
            await host.call("agent.create", {"name": "ann", "settings": settings, "agentId": "ann"})
            for n in range(10):
                text = f"Orchard note {n}: " + " ".join(f"the orchard row {n} tree {k} bears apples" for k in range(40))
                await host.call("memory.note", {"agentId": "ann", "text": text[:1500]})
            for n in range(4):
                await host.idle_turn("ann", f"Tell me about the orchard, question {n}.")
            await host.call("memory.note", {"agentId": "ann", "text": "The user sold the tractor."})
            await host.idle_turn("ann", "And the orchard now?")

    try:
        asyncio.run(main())
    finally:
        server.stop()
    first = recall_blocks(server.requests[0].body)
    assert len(first) == 1 and len(first[0].encode("utf-8")) <= 4000
    assert "did not fit in this block" in first[0], "a cut is stated in the block"
    assert len(recall_blocks(server.requests[3].body)) == 4, "within an epoch every block of it is replayed"
    last = recall_blocks(server.requests[4].body)
    assert 1 <= len(last) < 5, "old epochs' blocks give way at the next epoch"
    assert sum(len(b.encode("utf-8")) for b in last[:-1]) <= window * 4 // 10
