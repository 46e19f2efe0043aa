"""Issue 11.4: memory is honest with every model. The embedded model, offered no tools, is not told of memory
tools; `hearth chat` lets the person remember and forget with any model."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model

TOOL_WORDS = ("memory_note", "memory_recall", "memory_correct", "memory_forget")


def _chat(data_dir: Path, agent: str, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hearth", "chat", agent, "--data-dir", str(data_dir)],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
    )


def test_remember_and_forget_in_chat_are_the_persons_own_memory_acts(tmp_path: Path) -> None:
    async def prepare() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model({"match": ".*", "reply": "ok"})})

    asyncio.run(prepare())
    script = (
        "/remember The user's bicycle is green.\n"
        "/remember The user likes oolong tea.\n"
        "/remember The user likes oolong tea.\n"
        "/forget bicycle\n"
        "/forget nothing-like-this\n"
        "hello\n"
    )
    done = _chat(tmp_path, "ann", script)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Remembered as m-") and lines[0].endswith("The user's bicycle is green.")
    assert lines[2].startswith("Already remembered as m-")
    assert lines[3].startswith("Forgotten: m-") and "bicycle" in lines[3]
    assert lines[4].startswith("No fact holds every word of 'nothing-like-this'"), "no guess at a weak match"
    assert lines[-1] == "ok", "a line that is not a memory command still goes to the agent"

    async def check() -> None:
        async with HostProcess(tmp_path) as host:
            current = await host.call("memory.list", {"agentId": "ann", "view": "current"})
            assert [r["text"] for r in current["records"]] == ["The user likes oolong tea."]
            history = await host.call("memory.history", {"agentId": "ann"})
            assert [r["source"] for r in history["records"]] == ["human", "human", "human"]
            assert [r["op"] for r in history["records"]] == ["assert", "assert", "retract"]

    asyncio.run(check())
    transcript = (tmp_path / "agents/ann/transcript.jsonl").read_text(encoding="utf-8")
    assert "remember" not in transcript, "memory commands are not sent to the model"


@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None and not os.environ.get("CI"),
    reason="the embedded model needs `bash scripts/setup.sh` (HEARTH_LOCAL_MODEL=1)",
)
def test_the_embedded_model_is_told_of_no_memory_tools_while_a_tool_model_is(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "pip", "settings": {"model": {"maxOutputTokens": 4}}})
            await host.call("agent.create", {"name": "sam", "settings": scripted_model({"match": ".*", "reply": "ok"})})
            for agent in ("pip", "sam"):
                await host.call("memory.note", {"agentId": agent, "text": "The user's name is Ada."})
                await host.idle_turn(agent, "Hello.", timeout=240)

    asyncio.run(main())
    local = json.dumps(json.loads((tmp_path / "agents/pip/prompt-cache.json").read_text(encoding="utf-8")))
    scripted = json.dumps(json.loads((tmp_path / "agents/sam/prompt-cache.json").read_text(encoding="utf-8")))
    assert "The user's name is Ada." in local and "/remember" in local
    assert not [word for word in TOOL_WORDS if word in local]
    assert all(word in scripted for word in ("memory_note", "memory_forget"))
