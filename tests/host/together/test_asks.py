"""The request desk when the disk refuses a write: a deadline it could not close, or an outcome it could not
put in the asker's inbox, is tried again once there is room; the host goes on meanwhile and nothing is lost."""

from __future__ import annotations

import asyncio
import errno
from pathlib import Path
from typing import Any

import pytest

import host.together.asks as asks
import host.together.inbox as inbox_module
from host.store.durable import storage_error
from host.together.requests import RequestBook
from tests.support.host_process import scripted_model
from tests.support.memory_host import MemoryHost
from tests.support.request_faults import FakeClock

OUTCOME = {"match": r"(?s)^\[your request (q-\w+) to agent bob ended without an answer: (\w+)", "on": "wake"}
ANN = scripted_model({**OUTCOME, "reply": r"outcome \2"})
SILENT_BOB = scripted_model({"match": ".", "on": "wake", "reply": "s" * 2000, "chunkChars": 1, "delayMs": 50})


def test_a_deadline_the_disk_refuses_to_close_is_closed_once_there_is_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(asks, "RETRY_SECONDS", 0.05, raising=False)
    clock = FakeClock()
    full = asyncio.Event()
    append = RequestBook._append

    def refusing(book: RequestBook, entry: dict[str, Any], *rest: Any) -> None:
        if entry["op"] == "close" and not full.is_set():
            full.set()
            raise storage_error(book.path, OSError(errno.ENOSPC, "No space left on device"), "the outcome")
        append(book, entry, *rest)

    async def main() -> None:
        async with MemoryHost(tmp_path, clock=clock) as host:
            await host.call("agent.create", {"name": "ann", "settings": ANN})
            await host.call("agent.create", {"name": "bob", "settings": SILENT_BOB})
            desk = host.server.together.desk
            request, _ = await desk.ask("ann", "bob", "ready?", 60, 1)
            monkeypatch.setattr(RequestBook, "_append", refusing)
            clock.t += 61
            await desk.expire_due()  # refused: the request stays open
            still = desk.book.get(request.request_id)
            assert full.is_set() and still is not None and still.open
            assert await host.call("ping") == {}
            await host.wait_for("agent.message", lambda p: p["message"]["text"] == "outcome timeout", timeout=30)
            closed = desk.book.get(request.request_id)
            assert closed is not None and (closed.status, closed.delivered) == ("timeout", True)
            assert not host.stopped

    asyncio.run(main())


def test_an_outcome_the_asker_inbox_refuses_is_sent_once_there_is_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(asks, "RETRY_SECONDS", 0.05, raising=False)
    clock = FakeClock()

    async def main() -> None:
        async with MemoryHost(tmp_path, clock=clock) as host:
            await host.call("agent.create", {"name": "ann", "settings": ANN})
            await host.call("agent.create", {"name": "bob", "settings": SILENT_BOB})
            together = host.server.together
            request, _ = await together.desk.ask("ann", "bob", "ready?", 60, 1)
            inbox_path = together.deliveries.inbox("ann").path
            write, refused = inbox_module.write_json_atomic, []

            def refusing(path: Path, value: Any) -> None:
                if path == inbox_path and not refused:
                    refused.append(value)
                    raise storage_error(path, OSError(errno.ENOSPC, "No space left on device"), "the inbox")
                write(path, value)

            monkeypatch.setattr(inbox_module, "write_json_atomic", refusing)
            clock.t += 61
            await together.desk.expire_due()
            closed = together.desk.book.get(request.request_id)
            assert refused and closed is not None and (closed.status, closed.delivered) == ("timeout", False)
            await host.wait_for("agent.message", lambda p: p["message"]["text"] == "outcome timeout", timeout=30)
            delivered = together.desk.book.get(request.request_id)
            assert delivered is not None and delivered.delivered
            wakes = [e for e in host.server.store.transcript("ann").read_all() if e["type"] == "wake"]
            assert [e["status"] for e in wakes] == ["timeout"], "sent once"

    asyncio.run(main())
