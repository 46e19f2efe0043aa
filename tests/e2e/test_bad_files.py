"""Bad files through the real host (issue 10 items 9 and 14): one agent's unreadable file is its own error,
named, while every other agent works; a failing end hook never loses `agent.ended`; host settings of
binary garbage are refused with the same clear line as text damage."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from protocol.errors import CORRUPT_FILE, JsonRpcError
from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model

RULES = [
    {"match": "^slow", "on": "user", "reply": "a slow and thoughtful answer", "chunkChars": 3, "delayMs": 40},
    {"match": "^hi", "on": "user", "reply": "hello"},
]


def test_one_agents_bad_files_are_its_own_error_and_every_other_agent_works(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            for name in ("good", "badsettings", "badprofile"):
                await host.call("agent.create", {"name": name, "agentId": name, "settings": scripted_model(*RULES)})
            (tmp_path / "agents/badsettings/settings.json").write_bytes(b'{"memory": \xff\xfe}')
            (tmp_path / "agents/badprofile/profile.json").write_text('["not", "an", "object"]', encoding="utf-8")

            listed = {a["agentId"]: a for a in (await host.call("agent.list"))["agents"]}
            assert sorted(listed) == ["badprofile", "badsettings", "good"]
            assert listed["good"]["error"] is None
            assert "agents/badsettings/settings.json" in listed["badsettings"]["error"]
            assert listed["badsettings"]["name"] == "badsettings"
            assert "agents/badprofile/profile.json" in listed["badprofile"]["error"]
            status = await host.call("host.status")
            assert status["agents"] == 3

            for broken, file in (("badsettings", "settings.json"), ("badprofile", "profile.json")):
                with pytest.raises(JsonRpcError) as refused:
                    await host.call("agent.send", {"agentId": broken, "text": "hi"})
                assert refused.value.code == CORRUPT_FILE
                assert refused.value.data == {"path": str(tmp_path / "agents" / broken / file)}

            sent = await host.call("agent.send", {"agentId": "good", "text": "hi"})
            ended = await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            assert ended["reason"] == "idle" and host.texts("good", sent["runId"]) == "hello"

    asyncio.run(main())


def test_an_agent_file_broken_mid_run_still_ends_the_run_and_announces_it(tmp_path: Path) -> None:
    """The memory end hook reads the agent's settings; when that raised, `agent.ended` was never sent."""

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "agentId": "ann", "settings": scripted_model(*RULES)})
            sent = await host.call("agent.send", {"agentId": "ann", "text": "slow please"})
            await host.wait_for("agent.delta", lambda p: p["runId"] == sent["runId"])
            (tmp_path / "agents/ann/settings.json").write_bytes(b"\x00\xff binary")
            ended = await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"], timeout=20)
            assert ended["reason"] == "idle"
            assert host.texts("ann", sent["runId"]) == "a slow and thoughtful answer"
            assert await host.call("ping") == {}

    asyncio.run(main())
    transcript = (tmp_path / "agents/ann/transcript.jsonl").read_text(encoding="utf-8")
    assert transcript.count('"type":"ended"') == 1


@pytest.mark.parametrize(
    "damage", [b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", b'{"maxConcurrentRuns": '], ids=["binary", "text"]
)
def test_host_settings_that_cannot_be_read_are_one_clear_line_not_a_traceback(tmp_path: Path, damage: bytes) -> None:
    (tmp_path / "settings.json").write_bytes(damage)
    done = subprocess.run(
        [sys.executable, "-m", "host", "--data-dir", str(tmp_path)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=60,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("hearth: ")]
    assert line.startswith(f"hearth: {tmp_path / 'settings.json'} is not valid JSON")
    assert (tmp_path / "settings.json").read_bytes() == damage
    assert not (tmp_path / "host.lock").exists()
