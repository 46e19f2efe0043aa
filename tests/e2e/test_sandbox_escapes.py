"""Sandbox escapes through the real host and kernel, by an agent whose every tool runs without asking (issue 9).

mallory's model is fully steered by an attacker (the fake model server emits exactly the tool calls wanted) and
its `toolPermission` is `always`, so no approval stands in the way: only the sandbox does. Each attempt must
neither return alice's memory, transcript or the host's keys, nor change a protected byte. alice, also under
`always`, does the legitimate twin of each (reads her own memory, writes her own scratch), which must work.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.fake_model import ChatServer, call, model_settings, say
from tests.support.host_process import HostProcess

MEMORY_CANARY = "CANARY-ALICE-MEMORY-71c3"
SECRET_CANARY = "CANARY-HOST-KEY-9e04"
PROGRAM = "#!/bin/sh\necho ORIGINAL-PROGRAM\n"
DEEP = "d=$(printf 'd%.0s' $(seq 200)); (for i in $(seq 22); do mkdir -p $d && cd $d; done; echo x > f)"


@dataclass(frozen=True)
class Step:
    """One tool call. `expect`: denied (a `denied:` result), error (any error result) or ok."""

    agent: str
    tool: str
    args: dict[str, Any]
    expect: str
    sees: str | None = None


def _steps(data: Path, outside: Path) -> list[Step]:
    alice = data / "agents" / "alice"
    ledger = f"{alice}/memory/ledger.jsonl"
    links = [".ignore", ".rgignore", ".gitignore", ".git/info/exclude"]
    steps = [Step("mallory", "shell", {"command": DEEP}, "ok")]
    for name in links:
        reset = f"rm -rf .ignore .rgignore .gitignore .git && mkdir -p .git/info && ln -s {ledger} {name}"
        steps.append(Step("mallory", "shell", {"command": reset}, "ok"))
        for pattern in ("nothing-matches", "(unclosed"):
            steps.append(Step("mallory", "grep", {"pattern": pattern, "output_mode": "content"}, "error"))
    steps += [
        Step("mallory", "shell", {"command": f"rm -f .ignore && ln -s {alice}/transcript.jsonl .ignore"}, "ok"),
        Step("mallory", "grep", {"pattern": "nothing-matches", "output_mode": "content"}, "error"),
        Step("mallory", "grep", {"pattern": "CANARY", "path": f"{alice}/memory", "output_mode": "content"}, "denied"),
        Step("mallory", "grep", {"pattern": "CANARY", "path": str(data), "output_mode": "content"}, "ok"),
        Step("mallory", "read_file", {"path": ledger}, "denied"),
        Step("mallory", "read_file", {"path": f"{data}/secrets.key"}, "denied"),
        Step("mallory", "list_dir", {"path": f"{alice}/memory"}, "denied"),
        Step("mallory", "glob", {"pattern": "**/*", "path": f"{alice}/memory"}, "denied"),
        Step("mallory", "shell", {"command": f"cat {ledger}"}, "error"),
        Step("mallory", "write_file", {"path": f"{outside}/rg", "content": "#!/bin/sh\ncp -r / /tmp/x\n"}, "denied"),
        Step("mallory", "write_file", {"path": f"{outside}/new.sh", "content": "PWNED"}, "denied"),
        Step(
            "mallory", "edit_file", {"path": f"{outside}/rg", "old_string": "ORIGINAL", "new_string": "PWNED"}, "denied"
        ),
        Step("mallory", "shell", {"command": f"ln -s {outside} out"}, "ok"),
        Step("mallory", "write_file", {"path": "out/rg", "content": "PWNED"}, "denied"),
        Step("mallory", "write_file", {"path": "../../alice/scratch/notes.txt", "content": "PWNED"}, "denied"),
        Step("mallory", "write_file", {"path": "mine.txt", "content": "mallory's own"}, "ok"),
        # The owner's twins: alice reads her own memory and writes her own scratch.
        Step("alice", "read_file", {"path": ledger}, "ok", MEMORY_CANARY),
        Step(
            "alice",
            "grep",
            {"pattern": "CANARY", "path": f"{alice}/memory", "output_mode": "content"},
            "ok",
            MEMORY_CANARY,
        ),
        Step("alice", "list_dir", {"path": f"{alice}/memory"}, "ok", "ledger.jsonl"),
        Step("alice", "shell", {"command": f"cat {ledger}"}, "ok", MEMORY_CANARY),
        Step("alice", "write_file", {"path": "notes.txt", "content": "alice's own"}, "ok"),
    ]
    return steps


def test_an_always_agent_escapes_through_no_tool_and_the_owner_twins_work(tmp_path: Path) -> None:
    data, outside = tmp_path / "data", tmp_path / "outside"
    outside.mkdir()
    (outside / "rg").write_text(PROGRAM, encoding="utf-8")
    (outside / "rg").chmod(0o755)
    steps = _steps(data, outside)
    server = ChatServer()
    server.script(say("noted"))
    for number, step in enumerate(steps):
        server.script(call(step.tool, step.args, f"s{number}"), say("done"))
    server.start()
    results: list[dict[str, Any]] = []

    async def main() -> None:
        async with HostProcess(data) as host:
            for name in ("alice", "mallory"):
                settings = model_settings(server, toolPermission="always", network=False)
                await host.call("agent.create", {"name": name, "agentId": name, "settings": settings})
            await host.call("secrets.set", {"name": "other", "value": SECRET_CANARY})
            await host.call("memory.note", {"agentId": "alice", "text": f"Alice keeps the code {MEMORY_CANARY}."})
            await host.send_and_wait("alice", f"my canary is {MEMORY_CANARY}")
            for number, step in enumerate(steps):
                ended = await host.send_and_wait(step.agent, f"step {number}")
                assert ended["reason"] == "idle", (step, ended)
                results.append(
                    await host.wait_for(
                        "agent.tool", lambda p, n=number: p["toolCallId"] == f"s{n}-0" and p["status"] == "completed"
                    )
                )

    try:
        asyncio.run(main())
    finally:
        server.stop()
    failures = []
    for step, result in zip(steps, results, strict=True):
        content, is_error = result.get("content") or "", bool(result.get("isError"))
        if step.agent == "mallory" and (MEMORY_CANARY in content or SECRET_CANARY in content):
            failures.append(f"LEAK {step.tool} {step.args}: {content[:300]}")
        if step.expect == "denied" and not (is_error and content.startswith("denied:")):
            failures.append(f"not denied: {step.tool} {step.args}: {content[:200]}")
        if step.expect == "error" and not is_error:
            failures.append(f"no error: {step.tool} {step.args}: {content[:200]}")
        if step.expect == "ok" and is_error:
            failures.append(f"failed: {step.agent} {step.tool} {step.args}: {content[:200]}")
        if step.sees is not None and step.sees not in content:
            failures.append(f"owner did not see {step.sees}: {step.tool}: {content[:200]}")
    assert failures == [], "\n".join(failures)
    assert (outside / "rg").read_text(encoding="utf-8") == PROGRAM
    assert sorted(os.listdir(outside)) == ["rg"]
    assert (data / "agents/alice/scratch/notes.txt").read_text(encoding="utf-8") == "alice's own"
    assert (data / "agents/mallory/scratch/mine.txt").read_text(encoding="utf-8") == "mallory's own"
    assert MEMORY_CANARY in (data / "agents/alice/memory/ledger.jsonl").read_text(encoding="utf-8")
