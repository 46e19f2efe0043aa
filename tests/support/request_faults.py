"""Requests under random faults, through a whole host in memory: every request must end with an outcome.

One asker sends `ask_agent` to a fresh receiver per request; each receiver answers, answers through
`reply_to_agent`, fails, stays silent past the deadline (the clock is moved by hand), is stopped by a
teammate, or is deleted. The result counts outcomes from the durable book and the outcome wakes the
asker received, so a request left without an outcome, or delivered twice, shows.
"""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.host_process import scripted_model
from tests.support.memory_host import MemoryHost

__all__ = ["FAULTS", "FakeClock", "FaultReport", "run_requests_with_faults"]

FAULTS = ("answer", "reply", "fail", "timeout", "stop", "delete")

DONE = {"match": ".", "on": "tool", "reply": "done"}
SILENT = {"match": ".", "on": "wake", "reply": "s" * 2000, "chunkChars": 1, "delayMs": 50}


class FakeClock:
    def __init__(self) -> None:
        self.t = 1_000_000.0

    def now(self) -> float:
        return self.t


@dataclass(frozen=True, slots=True)
class FaultReport:
    faults: Counter[str]
    statuses: Counter[str]
    without_outcome: int
    outcome_wakes: int
    seconds: tuple[float, ...]
    """Per request: from sending the question to the asker's outcome message."""


def _receiver(fault: str) -> dict[str, Any]:
    if fault == "answer":
        return scripted_model({"match": r"(?m)^question (\d+)$", "on": "wake", "reply": r"answer \1"})
    if fault == "reply":
        call = {"name": "reply_to_agent", "arguments": {"requestId": r"\1", "answer": "through the tool"}}
        return scripted_model({"match": r"request (q-[0-9a-f]{12})", "on": "wake", "toolCalls": [call]}, DONE)
    if fault == "fail":
        return scripted_model({"match": r"^nothing matches this$", "reply": "x"})
    return scripted_model(SILENT)


async def run_requests_with_faults(data_dir: Path, count: int, seed: int) -> FaultReport:
    """Send `count` requests, each meeting a fault drawn with `seed`, and report how they all ended."""
    chooser = random.Random(seed)
    clock = FakeClock()
    asker = scripted_model(
        {
            "match": r"^ask (\S+) (.*)$",
            "on": "user",
            "toolCalls": [
                {"name": "ask_agent", "arguments": {"agentId": r"\1", "question": r"\2", "timeoutSeconds": 60}}
            ],
        },
        {"match": r"request (q-[0-9a-f]{12})", "on": "wake", "reply": r"outcome \1"},
        DONE,
    )
    boss = scripted_model(
        {
            "match": r"^stop (\S+)$",
            "on": "user",
            "toolCalls": [{"name": "stop_agent", "arguments": {"agentId": r"\1"}}],
        },
        DONE,
    )
    faults: Counter[str] = Counter()
    seconds: list[float] = []
    async with MemoryHost(data_dir, clock=clock) as host:
        await host.call("settings.set", {"maxConcurrentRuns": 64})
        await host.call("agent.create", {"name": "asker", "settings": asker})
        await host.call("agent.create", {"name": "boss", "settings": boss})
        desk = host.server.together.desk
        for number in range(count):
            fault = chooser.choice(FAULTS)
            faults[fault] += 1
            receiver = f"r-{number}"
            await host.call("agent.create", {"name": receiver, "settings": _receiver(fault)})
            mark = len(host.events)
            start = time.perf_counter()
            await host.send_and_wait("asker", f"ask {receiver} question {number}")
            asked = await host.wait_for(
                "agent.tool", lambda p: p["name"] == "ask_agent" and p["status"] == "completed", after=mark
            )
            found = re.search(r"q-[0-9a-f]{12}", asked["content"] or "")
            assert found is not None, asked
            request_id = found.group(0)
            if fault in ("timeout", "stop", "delete"):
                await host.wait_for("agent.delta", lambda p, r=receiver: p["agentId"] == r, after=mark)
            if fault == "timeout":
                clock.t += 61
                await desk.expire_due()
                await host.call("agent.cancel", {"agentId": receiver})
            elif fault == "stop":
                await host.send_and_wait("boss", f"stop {receiver}")
            elif fault == "delete":
                await host.call("agent.delete", {"agentId": receiver})
            await host.wait_for(
                "agent.message", lambda p, q=request_id: p["message"]["text"] == f"outcome {q}", after=mark, timeout=60
            )
            seconds.append(time.perf_counter() - start)
        book = desk.book.all()
        transcript = host.server.store.transcript("asker").read_all()
    statuses = Counter(str(r.status) for r in book if r.status is not None)
    wakes = sum(1 for e in transcript if e["type"] == "wake" and e.get("status"))
    left = sum(1 for r in book if r.status is None or not r.delivered)
    return FaultReport(faults, statuses, left, wakes, tuple(seconds))
