"""Delivery across crashes, through a whole host in memory and crash images of its data directory: an inbox
write is never overtaken by an older one, and a run interrupted at any point is delivered again as a new
attempt under a new run id, so each run id ends once."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from host.runs.scheduler import Run
from host.together.inbox import Inbox
from tests.support.crash_image import crash_image, restarted
from tests.support.host_process import scripted_model
from tests.support.memory_host import MemoryHost

STREAM = {"match": r"^stream$", "on": "user", "reply": "z" * 600, "chunkChars": 4, "delayMs": 25}
HELLO = {"match": r"^(hello|later|stream)$", "on": "user", "reply": r"hi to \1"}
HEARD = {"match": r"(?s)^\[answer from agent bob.*?\]\n(.*)$", "on": "wake", "reply": r"heard \1"}


def quiet(*rules: dict[str, Any]) -> dict[str, Any]:
    settings = scripted_model(*rules)
    settings["memory"] = False  # nothing but the runs writes while an image is copied
    return settings


def transcript(data: Path, agent_id: str) -> list[dict[str, Any]]:
    lines = (data / "agents" / agent_id / "transcript.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def ends(events: list[dict[str, Any]]) -> Counter[str]:
    return Counter(e["runId"] for e in events if e["type"] == "ended")


async def until_idle(host: MemoryHost, agent_id: str) -> None:
    """Wait until the agent has no run and nothing waits for it (runs a restart began before we listened too)."""
    while True:
        mark = len(host.events)
        status = await host.call("host.status")
        if not status["runs"] and not (await host.call("agent.get", {"agentId": agent_id}))["queue"]:
            return
        await host.wait_for("agent.ended", after=mark)


class HeldLock:
    """An inbox's write lock whose first taker in a worker thread is held back until `release`: a delay between
    the moment a write has its items and the moment it writes them."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self._held = False
        self.entered = threading.Event()
        self.release = threading.Event()

    def __enter__(self) -> HeldLock:
        if threading.current_thread() is not threading.main_thread() and not self._held:
            self._held = True
            self.entered.set()
            self.release.wait(30)
        self._real.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._real.release()


def test_an_outcome_sent_while_another_inbox_write_is_held_is_on_disk_before_it_is_marked_delivered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, marks = tmp_path / "data", []

    async def main() -> Path:
        async with MemoryHost(data) as host:
            await host.call("agent.create", {"name": "ann", "settings": quiet(STREAM, HELLO, HEARD)})
            await host.call("agent.create", {"name": "bob", "settings": quiet(HELLO)})
            busy = await host.call("agent.send", {"agentId": "ann", "text": "stream"})
            await host.wait_for("agent.delta", lambda p: p["runId"] == busy["runId"])
            together = host.server.together
            inbox = together.deliveries.inbox("ann")
            held = HeldLock(inbox._writing)
            monkeypatch.setattr(inbox, "_writing", held)
            book = together.desk.book
            request = book.open_request("ann", "bob", "ready?", 600, 1)
            mark = book.mark_delivered

            def checked(request_id: str) -> None:
                marks.append([item.kind for item in Inbox(inbox.path).items])
                mark(request_id)

            monkeypatch.setattr(book, "mark_delivered", checked)
            later = asyncio.create_task(host.call("agent.send", {"agentId": "ann", "text": "later"}))
            await asyncio.to_thread(held.entered.wait, 30)  # the message's write has its items, and waits
            outcome = asyncio.create_task(together.desk.close(request, "answered", "yes"))
            await asyncio.sleep(0)  # the outcome goes as far as it can while that write is held
            held.release.set()
            await later
            await outcome
            assert [item.kind for item in Inbox(inbox.path).items] == ["user", "user", "answer"], "nothing was lost"
            return crash_image(data, tmp_path / "image")

    image = asyncio.run(main())
    assert marks == [["user", "user", "answer"]], "the outcome was on disk when it was marked delivered"

    async def after_a_crash() -> None:
        async with MemoryHost(restarted(image)) as host:
            await host.wait_for("agent.message", lambda p: p["message"]["text"] == "heard yes", timeout=60)

    asyncio.run(after_a_crash())


def test_a_host_killed_after_a_run_ended_but_before_its_item_left_runs_it_again_under_a_new_id(
    tmp_path: Path,
) -> None:
    data, images = tmp_path / "data", []

    async def snapshot(run: Run) -> None:  # the end is written; the inbox still holds the item
        images.append(crash_image(data, tmp_path / "image"))

    async def main() -> str:
        async with MemoryHost(data) as host:
            await host.call("agent.create", {"name": "ann", "settings": quiet(HELLO)})
            host.server.runs.end_records.insert(0, snapshot)
            return str((await host.idle_turn("ann", "hello"))["runId"])

    first = asyncio.run(main())
    image = restarted(images[0])

    async def again() -> None:
        async with MemoryHost(image) as host:
            await until_idle(host, "ann")

    asyncio.run(again())
    events = transcript(image, "ann")
    assert [e["text"] for e in events if e["type"] == "user"] == ["hello", "hello"], "delivered again"
    assert max(ends(events).values()) == 1, f"a run ended twice: {ends(events)}"
    messages = [e.get("runId") for e in events if e["type"] == "user"]
    assert messages[0] == first and messages[1] != first, "the second attempt has its own id"
    assert ends(events) == {first: 1, messages[1]: 1}
    assert Inbox(image / "agents/ann/inbox.json").items == []


def test_a_host_killed_mid_run_and_again_during_its_recovery_ends_each_run_once(tmp_path: Path) -> None:
    data, first = tmp_path / "data", tmp_path / "first"

    async def main() -> str:
        async with MemoryHost(data) as host:
            await host.call("agent.create", {"name": "ann", "settings": quiet(STREAM, HELLO)})
            sent = await host.call("agent.send", {"agentId": "ann", "text": "stream"})
            await host.wait_for("agent.delta", lambda p: p["runId"] == sent["runId"])
            crash_image(data, first)
            return str(sent["runId"])

    run_id = asyncio.run(main())
    # Killed again as it recovered: the interrupted run is closed, the inbox not yet written.
    restarted(first)
    assert ends(transcript(first, "ann")) == {run_id: 1}
    settings = json.loads((first / "agents/ann/settings.json").read_text(encoding="utf-8"))
    settings["model"]["rules"] = [HELLO]
    (first / "agents/ann/settings.json").write_text(json.dumps(settings), encoding="utf-8")

    async def again() -> None:
        async with MemoryHost(restarted(first)) as host:
            await until_idle(host, "ann")

    asyncio.run(again())
    events = transcript(first, "ann")
    assert max(ends(events).values()) == 1, f"a run ended twice: {ends(events)}"
    messages = [e.get("runId") for e in events if e["type"] == "user"]
    assert len(messages) == 2 and messages[0] == run_id and messages[1] != run_id
    assert ends(events) == {run_id: 1, messages[1]: 1}
    last = [e for e in events if e["type"] == "ended"][-1]
    assert (last["runId"], last["reason"]) == (messages[1], "idle")
    assert json.loads((first / "agents/ann/inbox.json").read_text(encoding="utf-8"))["items"] == []


def test_a_waiting_run_cancelled_just_as_its_turn_comes_is_cancelled_and_never_also_run(tmp_path: Path) -> None:
    async def main() -> None:
        async with MemoryHost(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "settings": quiet(STREAM, HELLO)})
            busy = await host.call("agent.send", {"agentId": "ann", "text": "stream"})
            await host.wait_for("agent.delta", lambda p: p["runId"] == busy["runId"])
            queued = await host.call("agent.send", {"agentId": "ann", "text": "later"})
            assert queued["position"] == 1
            told, release = asyncio.Event(), asyncio.Event()

            async def slow_listener(item: Any, reason: str, run: Run | None) -> None:
                if item.run_id == queued["runId"]:
                    told.set()
                    await release.wait()  # the cancel is under way, the item not yet gone

            host.server.together.deliveries.end_listeners.append(slow_listener)
            cancelling = asyncio.create_task(host.call("agent.cancel", {"agentId": "ann", "runId": queued["runId"]}))
            await told.wait()
            await host.call("agent.cancel", {"agentId": "ann"})  # the turn before it ends: its turn comes
            release.set()
            assert (await cancelling)["cancelled"] is True
            await until_idle(host, "ann")
            heard = [(m, p["runId"]) for m, p in host.events if m in ("agent.started", "agent.ended")]
            assert heard.count(("agent.ended", queued["runId"])) == 1
            assert ("agent.started", queued["runId"]) not in heard, "a cancelled run never starts"

    asyncio.run(main())
