"""A run ends exactly once whatever the interleaving, and its end is announced whatever fails after it (issue 10)."""

from __future__ import annotations

import asyncio
import errno
import os
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from host.errors import CorruptFileError, StorageError
from host.runs.run import Run
from protocol.errors import RUN_FAILED, STORAGE_FULL
from protocol.models.kernel import TurnDeltaEvent, TurnEndedEvent, TurnMessageEvent
from tests.support.run_doubles import RunBench, hold_run_tasks


def _ended(bench: RunBench, agent_id: str, run_id: str) -> list[dict[str, object]]:
    return [e for e in bench.transcript(agent_id) if e["type"] == "ended" and e["runId"] == run_id]


def _drive(bench: RunBench, body: Callable[[], Awaitable[None]]) -> None:
    async def main() -> None:
        serving = asyncio.create_task(bench.manager.serve())
        try:
            async with asyncio.timeout(10):
                await body()
        finally:
            serving.cancel()

    asyncio.run(main())


def test_a_cancel_between_leaving_the_queue_and_the_task_starting_ends_the_run_once(tmp_path: Path) -> None:
    """Issue 10 item 7: the run task used to overwrite `ended` with `running`; the agent then stayed BUSY."""
    bench = RunBench(tmp_path)
    bench.agent("a1")
    bench.agent("b1")

    async def body() -> None:
        with hold_run_tasks() as gate:
            run_id, _ = await bench.manager.send("a1", "hello")
            await gate.dequeued.wait()  # off the queue, its task made but not yet begun
            assert await bench.manager.cancel("a1") is True
            gate.opened.set()
            await asyncio.gather(*gate.tasks)
        assert bench.manager.status("a1") == "idle"
        assert bench.manager.active_run("a1") is None
        assert await bench.manager.cancel("a1") is False, "a second cancel finds nothing to cancel"
        assert ("turn.start", run_id) not in [(m, getattr(p, "run_id", None)) for m, p in bench.kernel.requests]
        again, _ = await bench.manager.send("a1", "hello again")
        await bench.kernel.started.wait()
        assert bench.manager.status("a1") == "running" and again != run_id
        # The other agent's run is untouched by all this.
        other, _ = await bench.manager.send("b1", "hi")
        await bench.kernel.wait_requests("turn.start", 2)
        await bench.manager.deliver(TurnEndedEvent(run_id=other, reason="idle"))
        await bench.wait_for("agent.ended", other)

    _drive(bench, body)
    first = bench.transcript("a1")
    ended_first = [e for e in first if e["type"] == "ended"]
    assert len(ended_first) == 1 and ended_first[0]["reason"] == "cancelled"
    assert [e["type"] for e in first] == ["user", "ended", "user"]
    assert len([p for p in bench.named("agent.ended") if p["agentId"] == "a1"]) == 1


def test_a_cancel_while_turn_start_is_on_its_way_also_stops_the_turn_in_the_kernel(tmp_path: Path) -> None:
    bench = RunBench(tmp_path)
    bench.agent("a1")
    release = asyncio.Event()
    bench.kernel.start_gate = release

    async def body() -> None:
        run_id, _ = await bench.manager.send("a1", "hello")
        await bench.kernel.started.wait()
        assert await bench.manager.cancel("a1") is True
        await bench.wait_for("agent.ended", run_id)
        release.set()
        # The kernel did not know the run when the first cancel came; it is told again once it does.
        await bench.kernel.wait_requests("turn.cancel", 2)

    _drive(bench, body)
    assert len([e for e in bench.transcript("a1") if e["type"] == "ended"]) == 1


def test_the_kernels_late_end_after_a_cancel_is_not_written_a_second_time(tmp_path: Path) -> None:
    bench = RunBench(tmp_path)
    bench.agent("a1")

    async def body() -> None:
        run_id, _ = await bench.manager.send("a1", "hello")
        await bench.kernel.started.wait()
        await bench.manager.deliver(TurnDeltaEvent(run_id=run_id, text="half an ans"))
        await bench.manager.deliver(TurnEndedEvent(run_id=run_id, reason="cancelled"))
        await bench.wait_for("agent.ended", run_id)
        await bench.manager.deliver(TurnEndedEvent(run_id=run_id, reason="idle"))
        assert await bench.manager.cancel("a1") is False

    _drive(bench, body)
    events = bench.transcript("a1")
    assert [e["type"] for e in events] == ["user", "assistant", "ended"]
    assert events[1]["partial"] is True and events[1]["text"] == "half an ans"
    assert events[2]["reason"] == "cancelled"


def test_a_failing_end_hook_never_loses_the_runs_end_or_the_hooks_after_it(tmp_path: Path) -> None:
    """Issue 10 item 9: a hook that raised (a corrupt agent file read by the memory hook) lost `agent.ended`."""
    bench = RunBench(tmp_path)
    bench.agent("a1")
    later: list[str] = []

    async def broken_hook(run: Run) -> None:
        raise CorruptFileError(f"agents/{run.agent_id}/settings.json is not valid JSON")

    async def later_hook(run: Run) -> None:
        later.append(run.run_id)

    bench.manager.end_hooks.extend([broken_hook, later_hook])
    bench.status_error = CorruptFileError("agents/a1/profile.json is not valid JSON")  # the status announcement too

    async def body() -> None:
        run_id, _ = await bench.manager.send("a1", "hello")
        await bench.kernel.started.wait()
        await bench.manager.deliver(TurnMessageEvent(run_id=run_id, text="hi there"))
        await bench.manager.deliver(TurnEndedEvent(run_id=run_id, reason="idle"))
        ended = await bench.wait_for("agent.ended", run_id)
        assert ended["reason"] == "idle"
        assert later == [run_id]
        assert bench.manager.status("a1") == "idle"
        again, _ = await bench.manager.send("a1", "next")
        assert again != run_id

    _drive(bench, body)
    events = bench.transcript("a1")
    assert [e["type"] for e in events] == ["user", "assistant", "ended", "user"]


def test_runs_of_other_agents_stream_in_their_own_order_while_one_is_stopped(tmp_path: Path) -> None:
    bench = RunBench(tmp_path)
    bench.agent("a1")
    bench.agent("b1")

    async def body() -> None:
        a, _ = await bench.manager.send("a1", "one")
        b, _ = await bench.manager.send("b1", "two")
        await bench.kernel.wait_requests("turn.start", 2)
        for text in ("x", "y", "z"):
            await bench.manager.deliver(TurnDeltaEvent(run_id=a, text=text))
            await bench.manager.deliver(TurnDeltaEvent(run_id=b, text=text.upper()))
        await bench.manager.deliver(TurnEndedEvent(run_id=b, reason="error", error="boom", error_code=RUN_FAILED))
        await bench.manager.end_all_running("error", "the kernel stopped")
        await bench.wait_for("agent.ended", a)
        # b's task ends b on its own (its end came first), and may still be writing it on a busy machine
        await bench.wait_for("agent.ended", b)

    _drive(bench, body)
    deltas = [(p["runId"], p["text"]) for p in bench.named("agent.delta")]
    assert [t for r, t in deltas if r.startswith("run-") and t.islower()] == ["x", "y", "z"]
    a_events = bench.transcript("a1")
    assert a_events[-2]["text"] == "xyz" and a_events[-2]["partial"] is True
    assert a_events[-1]["reason"] == "error" and a_events[-1]["error"] == "the kernel stopped"
    b_events = bench.transcript("b1")
    assert b_events[-2]["text"] == "XYZ" and b_events[-1]["error"] == "boom"


def test_an_end_the_disk_refuses_is_announced_and_written_before_the_next_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = RunBench(tmp_path)
    bench.agent("a1")
    path = str(bench.store.transcript("a1").path)
    refusing = [b'"type":"ended"']
    real_write = os.write

    def write(fd: int, data: bytes | memoryview) -> int:
        if refusing and refusing[0] in bytes(data) and os.readlink(f"/proc/self/fd/{fd}") == path:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)

    async def body() -> None:
        run_id, _ = await bench.manager.send("a1", "hello")
        await bench.kernel.started.wait()
        await bench.manager.deliver(TurnDeltaEvent(run_id=run_id, text="par"))
        await bench.manager.deliver(TurnEndedEvent(run_id=run_id, reason="idle"))
        assert (await bench.wait_for("agent.ended", run_id))["reason"] == "idle"
        assert (await bench.wait_for("agent.error", run_id))["code"] == STORAGE_FULL
        with pytest.raises(StorageError) as refused:
            await bench.manager.send("a1", "while the disk is still full")
        assert refused.value.code == STORAGE_FULL
        refusing.clear()
        await bench.manager.send("a1", "after space was freed")

    _drive(bench, body)
    events = bench.transcript("a1")
    assert [(e["type"], e.get("text")) for e in events] == [
        ("user", "hello"),
        ("assistant", "par"),
        ("ended", None),
        ("user", "after space was freed"),
    ]


def test_one_agents_slow_disk_never_holds_up_another_agents_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Transcript writes run in a worker thread: while a1's fsync hangs, b1 streams and ends (issue 10 item 16)."""
    bench = RunBench(tmp_path)
    bench.agent("a1")
    bench.agent("b1")
    slow = str(bench.store.transcript("a1").path)
    entered, release = threading.Event(), threading.Event()
    real_fsync = os.fsync

    def hanging_fsync(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}") == slow:
            entered.set()
            release.wait(10)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", hanging_fsync)

    async def body() -> None:
        stuck = asyncio.create_task(bench.manager.send("a1", "this write hangs"))
        assert await asyncio.to_thread(entered.wait, 5)
        run_id, _ = await bench.manager.send("b1", "hello")
        await bench.kernel.started.wait()
        for text in ("one ", "two"):
            await bench.manager.deliver(TurnDeltaEvent(run_id=run_id, text=text))
        await bench.manager.deliver(TurnMessageEvent(run_id=run_id, text="one two"))
        await bench.manager.deliver(TurnEndedEvent(run_id=run_id, reason="idle"))
        assert (await bench.wait_for("agent.ended", run_id))["reason"] == "idle"
        assert not stuck.done(), "a1's write is still hanging while b1 finished"
        release.set()
        await stuck

    _drive(bench, body)
    assert [e["type"] for e in bench.transcript("b1")] == ["user", "assistant", "ended"]
    assert [e["text"] for e in bench.transcript("a1")] == ["this write hangs"]
