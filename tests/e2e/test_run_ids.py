"""End to end: every delivery attempt is its own run. A real host and its kernel are SIGKILLed again and again
at different points of a turn (its message just written, mid-stream, as the host boots and recovers, a clean
stop); after every life each transcript has at most one `ended` per run id and none naming a run with no other
line, after the last every run id has exactly one, and no client ever hears two `agent.ended` for one run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections import Counter
from pathlib import Path
from typing import Any

from tests.support.host_process import HostProcess, scripted_model

STREAM = {"match": r"^stream$", "on": "user", "reply": "z" * 600, "chunkChars": 4, "delayMs": 25}
STALLS = {"match": r"^stall$", "on": "user", "reply": "late", "delayMs": 60_000}  # its message written, no reply yet
ASK = {
    "match": r"^ask$",
    "on": "user",
    "toolCalls": [{"name": "ask_agent", "arguments": {"agentId": "bob", "question": "ready?", "timeoutSeconds": 900}}],
}
DONE = {"match": ".", "on": "tool", "reply": "done"}


def slow(pattern: str, on: str) -> dict[str, Any]:
    return {"match": pattern, "on": on, "reply": "s" * 600, "chunkChars": 4, "delayMs": 25}


def fast(pattern: str, on: str) -> dict[str, Any]:
    return {"match": pattern, "on": on, "reply": "finished"}


SLOW_RULES = {
    "ann": [STREAM, STALLS, ASK, slow(r"answer from agent bob", "wake"), DONE],
    "bob": [slow(r"(?m)^ready\?$", "wake")],
    "carl": [slow(r"(?m)^survey$", "user")],
}
FAST_RULES = {
    "ann": [fast(r"^(stream|stall)$", "user"), ASK, fast(r"answer from agent bob", "wake"), DONE],
    "bob": [fast(r"(?m)^ready\?$", "wake")],
    "carl": [fast(r"(?m)^survey$", "user")],
}
POINTS = ("delta", "delta", "term", "message", "boot")
"""Where each life ends: mid-stream (twice: the second kill is in a run that a restart delivered again), a clean
stop whose ends the client hears, just after a message is written, and as the host boots and recovers."""


def transcripts(data: Path) -> dict[str, list[dict[str, Any]]]:
    paths = [*data.glob("agents/*/transcript.jsonl"), *data.glob("works/*/members/*/transcript.jsonl")]
    return {
        str(path.relative_to(data)): [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for path in paths
    }


def check_run_ids(data: Path, *, settled: bool) -> None:
    """Each run id ends at most once (exactly once when `settled`), and every `ended` names a run with other lines."""
    for name, events in transcripts(data).items():
        ends = Counter(e["runId"] for e in events if e["type"] == "ended")
        lines = Counter(e["runId"] for e in events if e["type"] != "ended" and e.get("runId"))
        twice = {run_id: n for run_id, n in ends.items() if n > 1}
        assert not twice, f"{name}: runs that ended more than once: {twice}"
        invented = set(ends) - set(lines)
        assert not invented, f"{name}: an `ended` names a run with no other line: {invented}"
        if settled:
            assert set(lines) == set(ends), f"{name}: runs that never ended: {set(lines) - set(ends)}"
            messages = [e for e in events if e["type"] in ("user", "wake")]
            assert all(e.get("runId") for e in messages), f"{name}: a message line without its run id"


async def _kernel_pid(host: HostProcess) -> int | None:
    return (await host.call("host.status"))["kernel"].get("pid")


async def _kill(host: HostProcess) -> None:
    """SIGKILL the host and its kernel at once, as a power cut would stop them."""
    assert host.process is not None
    kernel = await _kernel_pid(host)
    host.process.kill()
    if kernel is not None:
        try:
            os.kill(kernel, signal.SIGKILL)
        except ProcessLookupError:
            pass
    await host.process.wait()


async def _wait_for_a_run(host: HostProcess, method: str) -> None:
    """Wait until some run has its message written (`agent.started`) or is streaming (`agent.delta`)."""
    mark = len(host.events)
    if method == "agent.started" and (await host.call("host.status"))["runs"]:
        return  # started before this client was there to hear it
    await host.wait_for(method, after=mark, timeout=60)


async def _life(data: Path, point: str, first: bool, ended: list[str]) -> None:
    host = HostProcess(data, initialize=point != "boot")
    async with host:
        if point == "boot":
            assert host.process is not None
            host.process.kill()  # as it starts: before, during or just after its recovery
            await host.process.wait()
            return
        if first:
            for name, rules in SLOW_RULES.items():
                await host.call("agent.create", {"name": name, "settings": scripted_model(*rules)})
            work = await host.call("work.create", {"name": "Trip", "members": ["carl"]})
            await host.call("work.dispatch", {"workId": work["workId"], "agentId": "carl", "instruction": "survey"})
            await host.send_and_wait("ann", "ask")
            for text in ("stream", "stall"):
                await host.call("agent.send", {"agentId": "ann", "text": text})
        await _wait_for_a_run(host, "agent.started" if point == "message" else "agent.delta")
        if point == "term":
            assert host.process is not None
            host.process.send_signal(signal.SIGTERM)
            async with asyncio.timeout(30):
                assert await host.process.wait() == 0
        else:
            await _kill(host)
        ended += [p["runId"] for m, p in host.events if m == "agent.ended"]


async def _settle(data: Path, ended: list[str]) -> None:
    """A last life with fast models: everything still waiting runs to its end."""
    for name, rules in FAST_RULES.items():
        path = data / "agents" / name / "settings.json"
        settings = json.loads(path.read_text(encoding="utf-8"))
        settings["model"]["rules"] = rules
        path.write_text(json.dumps(settings), encoding="utf-8")
    async with HostProcess(data) as host:
        while True:
            mark = len(host.events)
            status = await host.call("host.status")
            queues = [(await host.call("agent.get", {"agentId": name}))["queue"] for name in FAST_RULES]
            if not status["runs"] and not any(queues):
                break
            await host.wait_for("agent.ended", after=mark, timeout=60)
        ended += [p["runId"] for m, p in host.events if m == "agent.ended"]


def test_after_kills_at_every_point_of_a_turn_each_run_id_ends_exactly_once(tmp_path: Path) -> None:
    ended: list[str] = []
    for number, point in enumerate(POINTS):
        asyncio.run(_life(tmp_path, point, number == 0, ended))
        check_run_ids(tmp_path, settled=False)
    asyncio.run(_settle(tmp_path, ended))
    check_run_ids(tmp_path, settled=True)
    heard_twice = {run_id: n for run_id, n in Counter(ended).items() if n > 1}
    assert not heard_twice, f"agent.ended heard more than once for {heard_twice}"
    events = transcripts(tmp_path)
    ann = events["agents/ann/transcript.jsonl"]
    idle = {e["runId"] for e in ann if e["type"] == "ended" and e["reason"] == "idle"}
    answered = [e["text"] for e in ann if e["type"] == "user" and e["runId"] in idle]
    assert {"ask", "stream", "stall"} <= set(answered), "every message was answered in the end"
    assert [e["status"] for e in ann if e["type"] == "wake"] == ["answered"], "the outcome came once"
    bob = events["agents/bob/transcript.jsonl"]
    assert any(e["type"] == "ended" and e["reason"] == "idle" for e in bob), "the question was answered"
    work = [name for name in events if name.startswith("works/")]
    assert len(work) == 1 and any(e["type"] == "ended" and e["reason"] == "idle" for e in events[work[0]])
