"""Issue 24: a SIGKILL around a run's receipt, through the real host, kernel and `hearth` CLI.

Two moments, each held at the scripted model until the test has killed the host: the run's model request (its
receipt is written just before it is sent), and the compaction summary its turn asks for while the request is
being built (its `context` event is written, its receipt not yet). After a restart on the same data dir the
transcript reads whole, every receipt lists exactly the fact ids of the request the model received for it, a
run without a receipt is said to have none (`hearth inspect AGENT --run RUN`), and `hearth memory AGENT why ID`
counts only the runs whose receipt carries the fact.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from host.recovery import HOST_STOPPED
from tests.e2e.test_memory_compaction import _events
from tests.e2e.test_run_receipts import BIKE, _ids_in
from tests.kernel.providers.fake_llm_server import Recorded, Reply
from tests.support.archives import hearth_async
from tests.support.fake_model import ChatServer, model_settings, say
from tests.support.host_process import HostProcess

HELD = "Which bike do I ride to the gym?"


class HoldOnce(ChatServer):
    """Answers "ok"; the first request whose body holds `mark` waits for `release` (the test kills the host)."""

    def __init__(self, mark: str) -> None:
        super().__init__(otherwise=say("ok"))
        self.mark = mark
        self.arrived = threading.Event()
        self.release = threading.Event()

    def _next(self, recorded: Recorded) -> Reply:
        if self.mark in json.dumps(recorded.body) and not self.arrived.is_set():
            self.arrived.set()
            self.release.wait(60)
        return super()._next(recorded)


def _turn_requests(server: ChatServer) -> list[dict[str, Any]]:
    """The bodies of the turns' requests, in order (not the compactions' summaries)."""
    return [body for body in server.chats() if "<conversation>" not in json.dumps(body)]


async def _kill_when_held(host: HostProcess, server: HoldOnce, text: str) -> str:
    """Send `text`, SIGKILL the host once the model holds a request; the run's id."""
    sent = await host.call("agent.send", {"agentId": "ann", "text": text})
    assert await asyncio.to_thread(server.arrived.wait, 60)
    assert host.process is not None
    host.process.kill()
    await host.process.wait()
    return str(sent["runId"])


async def _after_restart(data_dir: Path, killed: str, bike: str) -> dict[str, Any]:
    async with HostProcess(data_dir) as host:
        # The message the killed run never answered runs again first.
        ended = await host.wait_for("agent.ended", lambda p: p["agentId"] == "ann", timeout=60)
        assert ended["reason"] == "idle", ended
        return {
            "inspect": await hearth_async(data_dir, "inspect", "ann", "--run", killed),
            "why": await hearth_async(data_dir, "memory", "ann", "why", bike, "--json"),
            "again": ended["runId"],
        }


def _check_receipts(data_dir: Path, server: ChatServer, bike: str) -> list[dict[str, Any]]:
    """Every line reads; each receipt, in order, lists exactly the ids of the request the model received for it."""
    lines = (data_dir / "agents/ann/transcript.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(line) for line in lines[:-1]), "every line is whole"
    receipts = [e for e in _events(data_dir, "ann") if e["type"] == "receipt"]
    requests = _turn_requests(server)
    assert len(receipts) == len(requests), "a receipt for each request the model received, and no other"
    for receipt, body in zip(receipts, requests, strict=True):
        assert set(receipt["section"]) | set(receipt["recall"]) == _ids_in(body) == {bike}
    return receipts


def test_a_sigkill_while_the_model_holds_a_runs_request_leaves_its_receipt_true(tmp_path: Path) -> None:
    server = HoldOnce(HELD)
    server.start()

    async def killed() -> tuple[str, str, str]:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": model_settings(server, extraction="off")})
            bike = (await host.call("memory.note", {"agentId": "ann", "text": BIKE}))["record"]["id"]
            first = (await host.idle_turn("ann", "Hello there"))["runId"]
            return bike, first, await _kill_when_held(host, server, HELD)

    try:
        bike, first, killed_run = asyncio.run(killed())
        server.release.set()
        found = asyncio.run(_after_restart(tmp_path, killed_run, bike))
    finally:
        server.release.set()
        server.stop()
    receipts = _check_receipts(tmp_path, server, bike)
    assert [r["runId"] for r in receipts] == [first, killed_run, found["again"]]
    events = _events(tmp_path, "ann")
    (closed,) = [e for e in events if e["type"] == "ended" and e["runId"] == killed_run]
    assert (closed["reason"], closed["error"]) == ("error", HOST_STOPPED)
    assert not [e for e in events if e["type"] == "assistant" and e["runId"] == killed_run], "no reply was invented"
    shown = found["inspect"]
    assert shown.returncode == 0, shown.stderr
    assert f"this reply saw {bike}" in shown.stdout, "its request carried the fact, and the model received it"
    why = found["why"]
    assert why.returncode == 0, why.stderr
    assert [r["runId"] for r in json.loads(why.stdout)["seenBy"]] == [first, killed_run, found["again"]]


def test_a_sigkill_while_a_runs_request_is_built_leaves_no_receipt_and_why_does_not_count_it(tmp_path: Path) -> None:
    server = HoldOnce("<conversation>")  # the summary of a compaction, asked for while the request is built
    server.start()
    settings = model_settings(server, extraction="off")
    settings["model"]["contextWindow"] = 1000

    async def killed() -> tuple[str, list[str], str]:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": settings})
            bike = (await host.call("memory.note", {"agentId": "ann", "text": BIKE}))["record"]["id"]
            runs: list[str] = []
            for i in range(8):
                sent = await host.call("agent.send", {"agentId": "ann", "text": f"note {i} " + "words " * 100})
                ended = asyncio.ensure_future(host.wait_for("agent.ended", lambda p, r=sent["runId"]: p["runId"] == r))
                held = asyncio.ensure_future(asyncio.to_thread(server.arrived.wait, 60))
                done, _ = await asyncio.wait({ended, held}, return_when=asyncio.FIRST_COMPLETED)
                if held in done and held.result():
                    ended.cancel()
                    assert host.process is not None
                    host.process.kill()
                    await host.process.wait()
                    return bike, runs, str(sent["runId"])
                held.cancel()
                assert ended.result()["reason"] == "idle"
                runs.append(str(sent["runId"]))
            raise AssertionError("no compaction asked for a summary")

    try:
        bike, earlier, killed_run = asyncio.run(killed())
        before = _events(tmp_path, "ann")
        mine = [e["type"] for e in before if e.get("runId") == killed_run]
        assert mine == ["user", "context"], "the kill came while its request was built: no receipt, nothing sent"
        server.release.set()
        found = asyncio.run(_after_restart(tmp_path, killed_run, bike))
    finally:
        server.release.set()
        server.stop()
    receipts = _check_receipts(tmp_path, server, bike)
    assert [r["runId"] for r in receipts] == [*earlier, found["again"]], "the killed run has none"
    shown = found["inspect"]
    assert shown.returncode == 0, shown.stderr
    assert "has no receipt" in shown.stdout and "saw" not in shown.stdout, shown.stdout
    assert "it ended before its request was built" in shown.stdout, "not only said to be older than receipts"
    why = found["why"]
    assert why.returncode == 0, why.stderr
    assert [r["runId"] for r in json.loads(why.stdout)["seenBy"]] == [*earlier, found["again"]]
