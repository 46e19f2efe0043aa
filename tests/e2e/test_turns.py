"""Turn preparation through the real host and kernel: missing keys fail early, long histories compact."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from protocol.errors import PROVIDER_ERROR
from tests.support.host_process import HostProcess, scripted_model


def test_a_model_without_its_key_fails_before_any_call_and_says_how_to_add_one(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            settings = {"model": {"provider": "openai", "name": "gpt-4o-mini"}}
            await host.call("agent.create", {"name": "ann", "settings": settings})
            ended = await host.send_and_wait("ann", "hello")
            assert ended["reason"] == "error"
            assert "no API key for openai" in ended["error"] and "hearth secrets set openai" in ended["error"]
            error = await host.wait_for("agent.error", lambda p: p["runId"] == ended["runId"])
            assert error["code"] == PROVIDER_ERROR
            assert not [m for m, p in host.events if m == "agent.delta"]

    asyncio.run(main())


def test_a_history_past_three_quarters_of_the_window_is_compacted_and_the_turn_goes_on(tmp_path: Path) -> None:
    rules = [
        {"match": "<conversation>", "reply": "SUMMARY: the user sent many long notes."},
        {"match": "^note (\\d+)", "reply": "noted \\1"},
    ]
    settings = scripted_model(*rules)
    settings["model"]["contextWindow"] = 1000

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": settings})
            for i in range(6):
                ended = await host.idle_turn("ann", f"note {i} " + "words " * 100)
            assert host.texts("ann", ended["runId"]) == "noted 5"

    asyncio.run(main())
    lines = (tmp_path / "agents/ann/transcript.jsonl").read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    compacts = [e for e in events if e["type"] == "compact"]
    assert compacts and compacts[-1]["summary"].startswith("SUMMARY")
    assert sum(e["type"] == "user" for e in events) == 6, "compaction must never rewrite the transcript"
    assert compacts[-1]["throughSeq"] < max(e["seq"] for e in events if e["type"] == "user")
    contexts = [e for e in events if e["type"] == "context"]
    assert contexts[-1]["epoch"] > contexts[0]["epoch"], "a compaction starts a new prompt epoch"


def test_a_failed_compaction_does_not_block_the_users_turn(tmp_path: Path) -> None:
    settings = scripted_model({"match": "^note (\\d+)", "on": "user", "reply": "noted \\1"})
    settings["model"]["contextWindow"] = 1000

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": settings})
            for i in range(4):
                await host.idle_turn("ann", f"note {i} " + "words " * 100)

    asyncio.run(main())
    text = (tmp_path / "agents/ann/transcript.jsonl").read_text(encoding="utf-8")
    assert '"type":"compact"' not in text
    epochs = {json.loads(line)["epoch"] for line in text.splitlines() if '"type":"context"' in line}
    assert len(epochs) == 1, "no compaction, no new epoch"
