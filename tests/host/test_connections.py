"""The connection hub in memory: no event waits for a slow client, a socket client too far behind is let go,
the stdio shell that falls behind is told what it missed, and events keep their place among the answers."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from host.connections import ConnectionHub, Origin, current_connection
from protocol.dispatch import Router
from protocol.limits import OUTBOX_BYTES
from protocol.models.base import EmptyParams
from protocol.models.host import AgentDeltaEvent
from protocol.transport import Transport

PIECE = "d" * (64 * 1024)


class Client:
    """One connection's far end: feeds the hub request lines; its reading waits while `reading` is clear."""

    def __init__(self) -> None:
        self.reader = asyncio.StreamReader()
        self.reading = asyncio.Event()
        self.reading.set()
        self.frames: list[dict[str, Any]] = []
        self.arrived = asyncio.Condition()
        self.aborted = False

    async def _write(self, frame: bytes) -> None:
        await self.reading.wait()
        async with self.arrived:
            self.frames.append(json.loads(frame))
            self.arrived.notify_all()

    async def _close(self) -> None:
        self.reader.feed_eof()

    async def _abort(self) -> None:
        self.aborted = True
        self.reader.feed_eof()

    def transport(self) -> Transport:
        return Transport(self.reader, self._write, self._close, self._abort)

    def call(self, request_id: str, method: str) -> None:
        self.reader.feed_data(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method}).encode() + b"\n")

    async def answer(self, request_id: str) -> dict[str, Any]:
        return await self.first(lambda frame: frame.get("id") == request_id)

    async def first(self, where: Any) -> dict[str, Any]:
        async with asyncio.timeout(10), self.arrived:
            while True:
                for frame in self.frames:
                    if where(frame):
                        return frame
                await self.arrived.wait()


def _hub() -> ConnectionHub:
    router = Router()
    hub = ConnectionHub(router, asyncio.Event())

    async def initialize(_: EmptyParams) -> None:
        conn = current_connection()
        assert conn is not None
        conn.initialized = True

    async def emit(_: EmptyParams) -> None:
        await hub.notify("agent.delta", AgentDeltaEvent(agent_id="ann", run_id="r1", text="raised by a request"))

    router.add("initialize", EmptyParams, initialize)
    router.add("emit", EmptyParams, emit)
    return hub


async def _connect(hub: ConnectionHub, tasks: asyncio.TaskGroup, origin: Origin) -> Client:
    client = Client()
    tasks.create_task(hub.serve(client.transport(), origin))
    client.call("init", "initialize")
    await client.answer("init")
    return client


async def _flood(hub: ConnectionHub, count: int, agent_id: str = "ann", *, start: int = 0) -> None:
    for n in range(start, start + count):
        await hub.notify("agent.delta", AgentDeltaEvent(agent_id=agent_id, run_id="r1", text=f"{n} {PIECE}"))


def _deltas(client: Client) -> list[str]:
    return [f["params"]["text"].split()[0] for f in client.frames if f.get("method") == "agent.delta"]


def test_a_socket_client_that_stops_reading_holds_up_no_one_and_is_let_go_once_too_far_behind() -> None:
    count = OUTBOX_BYTES // len(PIECE) + 4

    async def main() -> None:
        hub = _hub()
        async with asyncio.TaskGroup() as tasks:
            fast = await _connect(hub, tasks, "socket")
            slow = await _connect(hub, tasks, "socket")
            slow.reading.clear()
            await _flood(hub, count // 2)
            assert not slow.aborted and len(hub) == 2  # behind, but not too far
            await _flood(hub, count - count // 2, start=count // 2)
            await fast.first(lambda f: f.get("params", {}).get("text", "").startswith(f"{count - 1} "))
            assert _deltas(fast) == [str(n) for n in range(count)]
            assert slow.aborted and len(hub) == 1
            fast.reader.feed_eof()

    asyncio.run(main())


def test_the_stdio_shell_that_falls_too_far_behind_misses_events_and_is_told_once_it_has_caught_up() -> None:
    count = OUTBOX_BYTES // len(PIECE) + 4

    async def main() -> None:
        hub = _hub()
        async with asyncio.TaskGroup() as tasks:
            shell = await _connect(hub, tasks, "stdio")
            shell.reading.clear()
            await _flood(hub, count - 2)
            await _flood(hub, 2, agent_id="bob", start=count - 2)
            assert not shell.aborted and len(hub) == 1
            shell.reading.set()
            told = await shell.first(lambda f: f.get("method") == "host.eventsDropped")
            received = _deltas(shell)
            assert told["params"]["count"] == count - len(received) > 0
            assert told["params"]["agentIds"] == ["ann", "bob"][: 1 + (len(received) < count - 2)]
            assert received == [str(n) for n in range(len(received))]  # what it got, it got in order
            await _flood(hub, 1, agent_id="carol")
            after = await shell.first(lambda f: f.get("params", {}).get("agentId") == "carol")
            assert shell.frames.index(after) > shell.frames.index(told)
            shell.reader.feed_eof()

    asyncio.run(main())


def test_an_event_raised_while_a_request_runs_goes_out_before_its_answer_and_only_to_initialized_clients() -> None:
    async def main() -> None:
        hub = _hub()
        async with asyncio.TaskGroup() as tasks:
            shell = await _connect(hub, tasks, "stdio")
            early = Client()
            tasks.create_task(hub.serve(early.transport(), "socket"))
            shell.call("e1", "emit")
            answer = await shell.answer("e1")
            event = await shell.first(lambda f: f.get("method") == "agent.delta")
            assert shell.frames.index(event) < shell.frames.index(answer)
            early.call("p1", "emit")  # handled (emit is not guarded here) but no event reaches it
            await early.answer("p1")
            assert [f for f in early.frames if "method" in f] == []
            shell.reader.feed_eof()
            early.reader.feed_eof()

    asyncio.run(main())
