"""Local tools through the real host and kernel: the sandbox decides, a person approves, answers persist."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.support.host_process import HostProcess, scripted_model

TOOL_RULES = [
    {"match": r"^read (.+)$", "on": "user", "toolCalls": [{"name": "read_file", "arguments": {"path": r"\1"}}]},
    {"match": r"^run (.+)$", "on": "user", "toolCalls": [{"name": "shell", "arguments": {"command": r"\1"}}]},
    {"match": r"(?s)^(.*)$", "on": "tool", "reply": r"TOOL SAID: \1"},
]


async def _turn(host: HostProcess, agent_id: str, text: str) -> tuple[dict[str, Any], str]:
    ended = await host.send_and_wait(agent_id, text)
    return ended, host.texts(agent_id, ended["runId"])


def test_an_agent_reads_its_own_files_but_never_another_agents_memory(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            for name in ("ann", "bob"):
                await host.call("agent.create", {"name": name, "settings": scripted_model(*TOOL_RULES)})
            (tmp_path / "agents/ann/scratch/plan.txt").write_text("ann's plan: ship it", encoding="utf-8")
            (tmp_path / "agents/bob/memory/private-notes.txt").write_text("bob's secret fact\n", encoding="utf-8")
            ended, text = await _turn(host, "ann", "read plan.txt")
            assert ended["reason"] == "idle" and "ann's plan: ship it" in text
            ended, text = await _turn(host, "ann", f"read {tmp_path}/agents/bob/memory/private-notes.txt")
            assert "denied" in text and "bob's secret fact" not in text
            ended, text = await _turn(host, "bob", f"read {tmp_path}/agents/bob/memory/private-notes.txt")
            assert "bob's secret fact" in text

    asyncio.run(main())


def test_a_shell_command_waits_for_a_person_and_allow_always_is_remembered(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            info = await host.wait_for("kernel.up")
            assert info["pid"]
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(*TOOL_RULES)})
            sent = await host.call("agent.send", {"agentId": "ann", "text": "run echo hello-from-the-sandbox"})
            pending = await host.wait_for("agent.tool", lambda p: p["status"] == "pending")
            assert (pending["action"], pending["target"]) == ("shell", "echo hello-from-the-sandbox")
            decided = await host.call(
                "agent.decideTool",
                {"agentId": "ann", "toolCallId": pending["toolCallId"], "decision": "allow_always"},
            )
            assert decided == {"accepted": True}
            await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            assert "hello-from-the-sandbox" in host.texts("ann", sent["runId"])
            rules = json.loads((tmp_path / "agents/ann/tool-approvals.json").read_text(encoding="utf-8"))
            assert "echo hello-from-the-sandbox" in json.dumps(rules)
            asked = len([p for m, p in host.events if m == "agent.tool" and p["status"] == "pending"])
            ended, text = await _turn(host, "ann", "run echo hello-from-the-sandbox")
            assert "hello-from-the-sandbox" in text
            assert len([p for m, p in host.events if m == "agent.tool" and p["status"] == "pending"]) == asked

    asyncio.run(main())


def test_a_refused_command_does_not_run_and_deny_always_is_not_asked_again(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(*TOOL_RULES)})
            marker = tmp_path / "agents/ann/scratch/ran"
            sent = await host.call("agent.send", {"agentId": "ann", "text": "run touch ran"})
            pending = await host.wait_for("agent.tool", lambda p: p["status"] == "pending")
            await host.call(
                "agent.decideTool", {"agentId": "ann", "toolCallId": pending["toolCallId"], "decision": "deny_always"}
            )
            await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            assert "denied" in host.texts("ann", sent["runId"]) and not marker.exists()
            ended, text = await _turn(host, "ann", "run touch ran")
            assert "denied" in text and not marker.exists()
            assert len([p for m, p in host.events if m == "agent.tool" and p["status"] == "pending"]) == 1

    asyncio.run(main())


def test_the_shell_keeps_its_directory_and_environment_between_calls(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            settings = scripted_model(*TOOL_RULES)
            settings["toolPermission"] = "always"
            await host.call("agent.create", {"name": "ann", "settings": settings})
            ended, _ = await _turn(host, "ann", "run mkdir -p sub && cd sub && export GREETING=kept")
            assert ended["reason"] == "idle"
            ended, text = await _turn(host, "ann", "run pwd; echo $GREETING")
            assert "/sub" in text and "kept" in text

    asyncio.run(main())


def test_a_cancelled_run_answers_its_open_question_and_stops(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(*TOOL_RULES)})
            sent = await host.call("agent.send", {"agentId": "ann", "text": "run touch never"})
            await host.wait_for("agent.tool", lambda p: p["status"] == "pending")
            assert await host.call("agent.cancel", {"agentId": "ann"}) == {"cancelled": True}
            ended = await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            assert ended["reason"] == "cancelled"
            assert not (tmp_path / "agents/ann/scratch/never").exists()
            ended, text = await _turn(host, "ann", "read nothing-here.txt")
            assert ended["reason"] == "idle" and "error" in text

    asyncio.run(main())


def test_with_no_os_sandbox_the_shell_is_not_offered_and_status_says_why(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text(json.dumps({"shellSandbox": "off"}), encoding="utf-8")

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.wait_for("kernel.up")
            kernel = (await host.call("host.status"))["kernel"]
            assert kernel["shell"] == {"available": False, "reason": "the shell is turned off in Hearth's settings"}
            assert "shell" not in kernel["tools"] and "read_file" in kernel["tools"]
            settings = scripted_model(*TOOL_RULES)
            settings["toolPermission"] = "always"
            await host.call("agent.create", {"name": "ann", "settings": settings})
            ended, text = await _turn(host, "ann", "run touch should-not-exist")
            assert "no tool named 'shell'" in text
            assert not (tmp_path / "agents/ann/scratch/should-not-exist").exists()

    asyncio.run(main())


def _processes_mentioning(fragment: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if fragment.encode() in cmdline:
                found.append(int(entry.name))
    return found


def test_deleting_an_agent_ends_its_persistent_shell(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            settings = scripted_model(*TOOL_RULES)
            settings["toolPermission"] = "always"
            for name in ("ann", "bob"):
                await host.call("agent.create", {"name": name, "settings": settings})
                ended, text = await _turn(host, name, "run echo shell-is-up")
                assert "shell-is-up" in text
            ann_scratch, bob_scratch = (str(tmp_path / f"agents/{n}/scratch") for n in ("ann", "bob"))
            assert _processes_mentioning(ann_scratch) and _processes_mentioning(bob_scratch)
            await host.call("agent.delete", {"agentId": "ann"})
            async with asyncio.timeout(10):
                while _processes_mentioning(ann_scratch):
                    await asyncio.sleep(0.05)  # waiting on the OS to reap another process tree
            assert _processes_mentioning(bob_scratch), "the other agent's shell lives on"

    asyncio.run(main())
