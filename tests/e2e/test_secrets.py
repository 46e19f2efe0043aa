"""A stored API key reaches its provider and nothing else: no response, event, log, file or tool."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.kernel.providers.fake_llm_server import FakeModelServer, error_reply
from tests.support.fake_model import call, say
from tests.support.host_process import HostProcess

SECRET = "sk-hearth-e2e-Zq8XvT3mLw5Ry"


def test_a_secret_is_used_for_its_provider_and_can_be_read_back_through_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    log = tmp_path / "host.log"
    server = FakeModelServer()
    server.script(
        call("shell", {"command": "env; cat ../../../secrets.bin; cat ../../../secrets.key"}, "c1"),
        call("read_file", {"path": str(data / "secrets.key")}, "c2"),
        call("grep", {"pattern": "sk-", "path": str(data)}, "c3"),
        say("done"),
        error_reply(401, "Incorrect API key provided: sk-hea***4242"),
    )
    server.start()

    async def main() -> list[object]:
        async with HostProcess(data, stderr_to=log) as host:
            answers: list[object] = [await host.call("secrets.set", {"name": "openai", "value": SECRET})]
            settings = {
                "model": {"provider": "openai", "name": "gpt-test", "baseUrl": server.url},
                "toolPermission": "always",
            }
            answers.append(await host.call("agent.create", {"name": "ann", "settings": settings}))
            for text in ("look around", "again"):
                answers.append(await host.send_and_wait("ann", text))
            for method, params in (
                ("secrets.list", {}),
                ("agent.get", {"agentId": "ann"}),
                ("host.status", {}),
                ("settings.get", {}),
                ("agent.transcript", {"agentId": "ann"}),
            ):
                answers.append(await host.call(method, params))
            answers.extend(host.events)
            return answers

    try:
        answers = asyncio.run(main())
    finally:
        server.stop()
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    ended = [a for a in answers if isinstance(a, dict) and "reason" in a]
    assert [e["reason"] for e in ended] == ["idle", "error"]
    assert "refused" in ended[1]["error"] or "401" in ended[1]["error"]
    assert SECRET not in json.dumps(answers)
    assert SECRET not in log.read_text(encoding="utf-8")
    tool_results = [r.body["messages"][-1]["content"] for r in server.requests[1:4]]
    assert "HEARTH_SANDBOX" in tool_results[0] and tool_results[1].startswith("denied")
    assert SECRET not in json.dumps(tool_results)
    leaks = [
        p for p in data.rglob("*") if p.is_file() and p.name != "secrets.bin" and SECRET.encode() in p.read_bytes()
    ]
    assert leaks == []
    assert SECRET.encode() not in (data / "secrets.bin").read_bytes(), "secrets.bin must be encrypted"
