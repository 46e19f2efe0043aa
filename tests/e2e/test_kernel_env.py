"""The real kernel starts with an allowlisted environment: a credential in the host's is in neither the
kernel's nor its shell tool's (issue 10 item 12)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.support.host_process import HostProcess, scripted_model

SECRET = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"


def _environ_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = [item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item]
    return {key.decode(): value.decode(errors="replace") for key, value in pairs}


def test_a_credential_in_the_hosts_environment_reaches_neither_the_kernel_nor_the_shell(tmp_path: Path) -> None:
    rules = [
        {"match": r"^run (.+)$", "on": "user", "toolCalls": [{"name": "shell", "arguments": {"command": r"\1"}}]},
        {"match": r"(?s)^(.*)$", "on": "tool", "reply": r"SHELL SAID: \1"},
    ]
    env = {"AWS_SECRET_ACCESS_KEY": SECRET, "HEARTH_TEST_MARKER": "kept", "LC_TIME": "C.UTF-8"}

    async def main() -> None:
        async with HostProcess(tmp_path, env=env) as host:
            up = await host.wait_for("kernel.up")
            kernel_env = _environ_of(up["pid"])
            assert "AWS_SECRET_ACCESS_KEY" not in kernel_env
            assert SECRET not in "".join(kernel_env.values())
            assert kernel_env["HEARTH_TEST_MARKER"] == "kept" and kernel_env["LC_TIME"] == "C.UTF-8"
            assert kernel_env["PATH"]
            host_pid = (await host.call("host.status"))["pid"]
            assert _environ_of(host_pid)["AWS_SECRET_ACCESS_KEY"] == SECRET, "the host itself did have it"

            await host.call("agent.create", {"name": "ann", "settings": scripted_model(*rules)})
            sent = await host.call("agent.send", {"agentId": "ann", "text": "run env; echo END-OF-ENV"})
            pending = await host.wait_for("agent.tool", lambda p: p["status"] == "pending")
            await host.call(
                "agent.decideTool", {"agentId": "ann", "toolCallId": pending["toolCallId"], "decision": "allow_once"}
            )
            await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            said = host.texts("ann", sent["runId"])
            assert "END-OF-ENV" in said and "PATH=" in said
            assert SECRET not in said and "AWS_SECRET_ACCESS_KEY" not in said

    asyncio.run(main())
