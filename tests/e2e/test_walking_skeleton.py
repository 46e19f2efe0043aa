"""The whole path with real processes over real pipes: shell -> `hearth host` -> `python -m kernel`."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from protocol.errors import NOT_INITIALIZED, JsonRpcError
from protocol.framing import READ_LIMIT
from protocol.models.host import PROTOCOL_VERSION
from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model

ECHO = {"match": r"^say (.*)$", "reply": r"\1 (from the model)"}
SLOW = {"match": r"^slow$", "reply": "x" * 400, "chunkChars": 4, "delayMs": 20}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_two_agents_answer_at_once_each_into_its_own_transcript(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            for name in ("ann", "bob"):
                await host.call("agent.create", {"name": name, "settings": scripted_model(ECHO)})
            sent = await asyncio.gather(
                host.call("agent.send", {"agentId": "ann", "text": "say hello ann"}),
                host.call("agent.send", {"agentId": "bob", "text": "say hello bob"}),
            )
            for agent_id, result in zip(("ann", "bob"), sent, strict=True):
                ended = await host.wait_for("agent.ended", lambda p, r=result: p["runId"] == r["runId"])
                assert ended["agentId"] == agent_id and ended["reason"] == "idle"
                assert host.texts(agent_id, result["runId"]) == f"hello {agent_id} (from the model)"
                message = await host.wait_for("agent.message", lambda p, r=result: p["runId"] == r["runId"])
                assert message["agentId"] == agent_id
            for agent_id, other in (("ann", "bob"), ("bob", "ann")):
                lines = (tmp_path / "agents" / agent_id / "transcript.jsonl").read_text(encoding="utf-8")
                events = [json.loads(line) for line in lines.splitlines()]
                assert [e["type"] for e in events] == ["user", "context", "receipt", "assistant", "ended"]
                assert [e["seq"] for e in events] == [1, 2, 3, 4, 5]
                assert f"hello {agent_id}" in lines and f"hello {other}" not in lines

    run(main())


def test_the_user_message_is_on_disk_when_send_returns(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(SLOW)})
            result = await host.call("agent.send", {"agentId": "ann", "text": "slow"})
            first = json.loads((tmp_path / "agents/ann/transcript.jsonl").read_text(encoding="utf-8").splitlines()[0])
            assert first == {**first, "type": "user", "text": "slow", "seq": result["seq"]}
            await host.call("agent.cancel", {"agentId": "ann"})

    run(main())


def test_a_second_message_to_a_busy_agent_is_queued_and_answered_in_order_and_the_other_agent_is_not_held(
    tmp_path: Path,
) -> None:
    """Issue 12: a person's message to a busy agent waits behind the running turn instead of being refused."""

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            for name in ("ann", "bob"):
                await host.call("agent.create", {"name": name, "settings": scripted_model(SLOW, ECHO)})
            first = await host.call("agent.send", {"agentId": "ann", "text": "slow"})
            second = await host.call("agent.send", {"agentId": "ann", "text": "say again"})
            assert first["position"] == 0 and second == {**second, "position": 1, "seq": None}
            info = await host.call("agent.get", {"agentId": "ann"})
            assert [q["runId"] for q in info["queue"]] == [second["runId"]]
            status = await host.call("host.status")
            assert {"runId": second["runId"], "agentId": "ann", "state": "queued"} in status["runs"]
            other = await host.call("agent.send", {"agentId": "bob", "text": "say hi"})
            await host.wait_for("agent.ended", lambda p: p["runId"] == other["runId"])
            await host.wait_for("agent.delta", lambda p: p["runId"] == first["runId"])
            cancelled = await host.call("agent.cancel", {"agentId": "ann"})
            assert cancelled == {"cancelled": True}
            ended = await host.wait_for("agent.ended", lambda p: p["runId"] == first["runId"])
            assert ended["reason"] == "cancelled"
            answered = await host.wait_for("agent.ended", lambda p: p["runId"] == second["runId"])
            assert answered["reason"] == "idle" and host.texts("ann", second["runId"]).startswith("again")
            page = await host.call("agent.transcript", {"agentId": "ann"})
            partial = [e for e in page["events"] if e["type"] == "assistant"]
            assert partial and partial[0]["partial"] is True and partial[0]["text"].startswith("xxxx")
            shown = [e for e in page["events"] if e["type"] not in ("context", "receipt")]
            kinds = [(e["type"], e.get("text", "")[:5], e.get("runId")) for e in shown]
            # Each message sits right before its own answer: never two user messages in a row.
            assert [k[:2] for k in kinds if k[0] == "user"] == [("user", "slow"), ("user", "say a")]
            users = [i for i, k in enumerate(kinds) if k[0] == "user"]
            assert kinds[users[1] - 1][0] == "ended" and kinds[users[1] + 1][2] == second["runId"]

    run(main())


def test_runs_beyond_the_concurrency_limit_wait_their_turn(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("settings.set", {"maxConcurrentRuns": 1})
            for name in ("ann", "bob"):
                await host.call("agent.create", {"name": name, "settings": scripted_model(SLOW)})
            a = await host.call("agent.send", {"agentId": "ann", "text": "slow"})
            b = await host.call("agent.send", {"agentId": "bob", "text": "slow"})
            status = await host.call("host.status")
            states = {run["agentId"]: run["state"] for run in status["runs"]}
            assert states == {"ann": "running", "bob": "queued"}
            await host.wait_for("agent.ended", lambda p: p["runId"] == a["runId"])
            ended_b = await host.wait_for("agent.ended", lambda p: p["runId"] == b["runId"])
            assert ended_b["reason"] == "idle"
            first_b_delta = next(
                i for i, (m, p) in enumerate(host.events) if m == "agent.delta" and p["runId"] == b["runId"]
            )
            end_a = next(i for i, (m, p) in enumerate(host.events) if m == "agent.ended" and p["runId"] == a["runId"])
            assert first_b_delta > end_a

    run(main())


def test_a_kernel_killed_mid_turn_ends_the_run_with_error_and_the_next_turn_works(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(SLOW, ECHO)})
            first = await host.call("agent.send", {"agentId": "ann", "text": "slow"})
            await host.wait_for("agent.delta", lambda p: p["runId"] == first["runId"])
            kernel_pid = (await host.call("host.status"))["kernel"]["pid"]
            os.kill(kernel_pid, signal.SIGKILL)
            ended = await host.wait_for("agent.ended", lambda p: p["runId"] == first["runId"])
            assert ended["reason"] == "error" and "kernel" in ended["error"]
            down = await host.wait_for("kernel.down")
            assert down["restarting"] is True
            up = await host.wait_for("kernel.up", lambda p: p["restarts"] == 1)
            assert up["pid"] != kernel_pid
            order = [m for m, _ in host.events if m in ("agent.ended", "kernel.down")]
            assert order[:2] == ["agent.ended", "kernel.down"]
            second = await host.call("agent.send", {"agentId": "ann", "text": "say alive"})
            again = await host.wait_for("agent.ended", lambda p: p["runId"] == second["runId"])
            assert again["reason"] == "idle"
            assert host.texts("ann", second["runId"]) == "alive (from the model)"
            page = await host.call("agent.transcript", {"agentId": "ann"})
            kinds = [(e["type"], e.get("partial"), e.get("reason")) for e in page["events"]]
            assert kinds[:5] == [
                ("user", None, None),
                ("context", None, None),
                ("receipt", None, None),
                ("assistant", True, None),
                ("ended", None, "error"),
            ]

    run(main())


def test_methods_before_initialize_are_refused(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path, initialize=False) as host:
            assert await host.call("ping") == {}
            try:
                await host.call("agent.list")
            except JsonRpcError as exc:
                assert exc.code == NOT_INITIALIZED
            else:
                raise AssertionError("agent.list worked before initialize")

    run(main())


async def _raw_exchange(tmp_path: Path, lines: list[bytes]) -> list[dict[str, Any]]:
    """Write raw lines to a real host and collect its answers (notifications skipped)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "host",
        "--data-dir",
        str(tmp_path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=REPO_ROOT,
        limit=READ_LIMIT,
    )
    assert process.stdin is not None and process.stdout is not None
    answers: list[dict[str, Any]] = []
    try:
        for line in lines:
            process.stdin.write(line)
            await process.stdin.drain()
            async with asyncio.timeout(30):
                while True:
                    message = json.loads(await process.stdout.readline())
                    if "method" not in message:
                        answers.append(message)
                        break
    finally:
        process.stdin.write(b'{"jsonrpc":"2.0","id":"bye","method":"shutdown"}\n')
        await process.stdin.drain()
        async with asyncio.timeout(30):
            await process.wait()
    return answers


def test_malformed_input_gets_json_rpc_errors_and_the_host_keeps_serving(tmp_path: Path) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"client": {"name": "raw"}, "protocolVersion": PROTOCOL_VERSION},
    }
    lines = [
        json.dumps(init).encode() + b"\n",
        b"this is not json\n",
        b'{"jsonrpc":"2.0","id":2}\n',
        b'{"jsonrpc":"2.0","id":3,"method":"no.such.method"}\n',
        b'{"jsonrpc":"2.0","id":4,"method":"agent.create","params":{"name":5,"color":"red"}}\n',
        b'{"jsonrpc":"2.0","id":5,"method":"agent.get","params":["positional"]}\n',
        b'{"jsonrpc":"2.0","id":6,"method":"ping","params":{"pad":"' + b"y" * (10 * 1024 * 1024) + b'"}}\n',
        b"z" * (10 * 1024 * 1024) + b"\n",
        b'{"jsonrpc":"2.0","id":7,"method":"ping"}\n',
    ]
    answers = asyncio.run(_raw_exchange(tmp_path, lines))
    codes = [(a.get("id"), a.get("error", {}).get("code")) for a in answers]
    assert codes == [
        (1, None),
        (None, -32700),
        (2, -32600),  # an invalid request whose id can be read is answered to that id (issue 10)
        (3, -32601),
        (4, -32602),
        (5, -32602),
        (6, -32602),
        (None, -32700),
        (7, None),
    ]
    assert "Traceback" not in json.dumps(answers)


def test_shutdown_stops_kernel_and_host_and_releases_the_lock(tmp_path: Path) -> None:
    async def main() -> None:
        host = HostProcess(tmp_path)
        async with host:
            kernel_pid = (await host.wait_for("kernel.up"))["pid"]
            status = await host.call("host.status")
            assert (status["kernel"]["state"], status["kernel"]["pid"], status["kernel"]["restarts"]) == (
                "up",
                kernel_pid,
                0,
            )
            assert (tmp_path / "host.lock").exists()
            assert json.loads((tmp_path / "host.lock").read_text(encoding="utf-8"))["pid"] == status["pid"]
        assert host.process is not None and host.process.returncode == 0
        assert not (tmp_path / "host.lock").exists()
        try:
            os.kill(kernel_pid, 0)
        except ProcessLookupError:
            pass
        else:
            raise AssertionError("the kernel outlived the host's shutdown")
        async with HostProcess(tmp_path) as again:
            await again.wait_for("kernel.up")
            assert (await again.call("host.status"))["kernel"]["state"] == "up"

    run(main())


def test_a_second_host_on_the_same_data_dir_is_refused_clearly(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            pid = (await host.call("host.status"))["pid"]
            second = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "host",
                "--data-dir",
                str(tmp_path),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=REPO_ROOT,
            )
            out, err = await asyncio.wait_for(second.communicate(), 30)
            assert second.returncode == 2
            assert out == b""
            assert f"another Hearth host (pid {pid})" in err.decode()
            assert (await host.call("ping")) == {}

    run(main())


def test_a_dead_hosts_lock_is_taken_over(tmp_path: Path) -> None:
    (tmp_path / "host.lock").write_text(json.dumps({"pid": 999_999_999, "startedAt": "then"}), encoding="utf-8")

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            status = await host.call("host.status")
            assert json.loads((tmp_path / "host.lock").read_text(encoding="utf-8"))["pid"] == status["pid"]

    run(main())


def test_a_transcript_with_a_torn_last_line_opens_with_every_complete_event(tmp_path: Path) -> None:
    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(ECHO)})
            result = await host.call("agent.send", {"agentId": "ann", "text": "say one"})
            await host.wait_for("agent.ended", lambda p: p["runId"] == result["runId"])
        path = tmp_path / "agents/ann/transcript.jsonl"
        with path.open("ab") as f:
            f.write(b'{"type":"user","text":"cut off mid-wr')
        async with HostProcess(tmp_path) as host:
            page = await host.call("agent.transcript", {"agentId": "ann"})
            assert [e["type"] for e in page["events"]] == ["user", "context", "receipt", "assistant", "ended"]
            result = await host.call("agent.send", {"agentId": "ann", "text": "say two"})
            assert result["seq"] == 6
            await host.wait_for("agent.ended", lambda p: p["runId"] == result["runId"])
        assert b"cut off mid-wr" in (tmp_path / "agents/ann/transcript.jsonl.torn").read_bytes()

    run(main())


def test_the_host_serves_frames_from_a_file_and_stops_cleanly_at_its_end(tmp_path: Path) -> None:
    """Not every launcher gives pipes: a file or /dev/null on stdin must work too."""
    frames = tmp_path / "frames.jsonl"
    frames.write_text('{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":2,"method":"nope"}\n', "utf-8")
    data = tmp_path / "data"
    for stdin in (frames, Path(os.devnull)):
        with stdin.open("rb") as source:
            done = subprocess.run(
                [sys.executable, "-m", "hearth", "host", "--data-dir", str(data)],
                stdin=source,
                capture_output=True,
                cwd=REPO_ROOT,
                timeout=60,
            )
        assert done.returncode == 0, done.stderr
        assert not (data / "host.lock").exists()
        if stdin == frames:
            answers = [json.loads(line) for line in done.stdout.splitlines()]
            assert [(a["id"], "error" in a) for a in answers if "id" in a] == [(1, False), (2, True)]
