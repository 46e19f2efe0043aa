"""Every client is served on its own (issue 22, items 6-8): real host processes, real pipes and sockets.

A client that reads nothing holds up nobody else and is dropped once too far behind; the stdio shell that
falls behind is told what it missed and is never cut off; a client that floods requests without reading
costs the host a bounded amount; a socket client that never initializes is let go; a frame that takes
seconds to check does not hold up the others, and `agent.started` carries a bounded preview of the message.
Nothing here is timed: each effect is shown by the order in which things arrive.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

from desktop.client import HostLink, attach_or_start
from protocol.endpoint import read_endpoint
from protocol.errors import INVALID_PARAMS
from protocol.limits import OUTBOX_BYTES
from protocol.models.host import PROTOCOL_VERSION, STARTED_PREVIEW_CHARS
from tests.support.host_process import HostProcess, scripted_model
from tests.support.raw_host import RawHost
from tests.support.raw_socket import RawSocket
from tests.support.shell import TestShell

BIG = OUTBOX_BYTES * 3 // 8
"""A reply of 3 MiB: its deltas and its completed message make about 6 MiB of events for every client, so one
such turn fits in what a client may fall behind, and two do not."""

RULES = scripted_model(
    {"match": "^stream$", "reply": "s" * 60, "chunkChars": 2},
    {"match": "^say (.*)$", "reply": r"\1", "chunkChars": 64 * 1024},
)


async def _attach(data_dir: Path, name: str) -> tuple[TestShell, HostLink]:
    """A well-behaved socket client (the desktop's own link) that reads and records everything."""
    shell = TestShell()
    link = await attach_or_start(data_dir, shell.router, client=name)
    shell.peer = link.peer
    return shell, link


async def _big_turns(shell: TestShell, agents: list[str]) -> None:
    """One turn of a `BIG` reply on each agent (a fresh agent each, so no history grows)."""
    for agent_id in agents:
        await shell.call("agent.create", {"name": agent_id, "agentId": agent_id, "settings": RULES})
        await shell.idle_turn(agent_id, "say " + "z" * BIG, timeout=120)


def _ended(messages: list[dict[str, Any]], run_id: str) -> bool:
    return any(m.get("method") == "agent.ended" and m["params"]["runId"] == run_id for m in messages)


async def _read_until_closed(client: RawSocket) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    async with asyncio.timeout(120):
        while (message := await client.next_message()) is not None:
            messages.append(message)
    return messages


def test_a_client_that_reads_nothing_holds_up_no_one_and_is_dropped_once_too_far_behind(tmp_path: Path) -> None:
    """Issue 22.6: the 5 s rule made every client wait for a stuck one, then dropped it however little behind."""

    async def main() -> None:
        async with HostProcess(tmp_path) as host, RawSocket(tmp_path) as stuck:
            await stuck.initialize("stuck")
            await host.call("agent.create", {"name": "ann", "agentId": "ann", "settings": RULES})
            # The stuck client reads nothing from here on: 6 MiB of events fill its socket and wait for it.
            await _big_turns(host, ["a0"])
            streamed = await host.idle_turn("ann", "stream")
            assert host.texts("ann", streamed["runId"]) == "s" * 60
            # It was held, not dropped: reading now, it gets every event of both turns, in order.
            seen: list[dict[str, Any]] = []
            async with asyncio.timeout(120):
                while not _ended(seen, streamed["runId"]):
                    message = await stuck.next_message()
                    assert message is not None, "the stuck client was disconnected"
                    seen.append(message)
            deltas = [m["params"]["text"] for m in seen if m.get("method") == "agent.delta"]
            assert "".join(deltas) == "z" * BIG + "s" * 60

            # Now it stops reading for good: two more such turns are more than it may fall behind.
            second, link = await _attach(tmp_path, "second")
            try:
                await _big_turns(second, ["b0", "b1"])
                last = await second.idle_turn("ann", "stream")
                # The client that reads got its stream whole. (The stdio test client may itself fall behind
                # 12 MiB on a busy machine and miss events, as the next test shows, so it is not asked here.)
                assert second.texts("ann", last["runId"]) == "s" * 60
            finally:
                await link.close()
            rest = await _read_until_closed(stuck)
            assert not _ended(rest, last["runId"])
            assert not any(m.get("method") == "host.eventsDropped" for m in rest)
            assert (await host.call("ping")) == {}

    asyncio.run(main())


def test_the_stdio_shell_that_falls_too_far_behind_is_told_what_it_missed_and_is_never_cut_off(
    tmp_path: Path,
) -> None:
    """Issue 22.6: the launching shell was cut off silently by the 5 s rule; it owns the host's life."""

    async def main() -> None:
        async with RawHost(tmp_path, read_limit=64 * 1024) as shell:
            await shell.initialize()
            other, link = await _attach(tmp_path, "other")
            try:
                # The stdio shell reads nothing while two turns send it 12 MiB of events.
                await _big_turns(other, ["b0", "b1"])
                async with asyncio.timeout(120):
                    while not any(m["method"] == "host.eventsDropped" for m in shell.notifications):
                        await shell.next_line()
                told = next(m["params"] for m in shell.notifications if m["method"] == "host.eventsDropped")
                assert told["count"] > 0 and set(told["agentIds"]) <= {"b0", "b1"}
                assert told["agentIds"] and str(OUTBOX_BYTES) in told["reason"]
                assert "result" in await shell.call("ping")
                # Caught up, it gets events again: a turn another client starts reaches it whole.
                await other.call("agent.create", {"name": "ann", "agentId": "ann", "settings": RULES})
                after = await other.idle_turn("ann", "stream")
                async with asyncio.timeout(60):
                    while not _ended(shell.notifications, after["runId"]):
                        await shell.next_line()
            finally:
                await link.close()
            assert shell.alive and shell.not_json == []

    asyncio.run(main())


def _requests(count: int) -> bytes:
    pad = "x" * 1000  # a long id: each answer carries it back, so answers are as big as the requests
    return b"".join(
        json.dumps({"jsonrpc": "2.0", "id": f"{pad}-{n}", "method": "ping"}).encode() + b"\n" for n in range(count)
    )


def _memory_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


def _read_answers(sock: socket.socket, count: int) -> list[str]:
    ids: list[str] = []
    buffered = b""
    while len(ids) < count:
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        buffered += chunk
        *lines, buffered = buffered.split(b"\n")
        answers = [json.loads(line) for line in lines]
        ids.extend(answer["id"].rsplit("-", 1)[1] for answer in answers if "id" in answer)
    return ids


def test_a_client_that_floods_requests_without_reading_costs_the_host_a_bounded_amount(tmp_path: Path) -> None:
    """Issue 22.7: 20,000 unread requests grew the host by over 100 MB; now it stops reading that client.

    The host's peak resident memory (its high-water mark, reset before the flood) is the measure; the
    flooding client reads nothing until a second client has been served, then reads every answer.
    """
    count = 20_000

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call("agent.create", {"name": "ann", "agentId": "ann", "settings": RULES})
            await host.idle_turn("ann", "stream")
            pid = (await host.call("host.status"))["pid"]
            endpoint = read_endpoint(tmp_path)
            assert endpoint is not None
            flood = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            flood.connect(endpoint.socket)
            init = {"client": {"name": "flood"}, "protocolVersion": PROTOCOL_VERSION, "token": endpoint.token}
            flood.sendall(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}).encode())
            flood.sendall(b"\n")
            assert b'"result"' in await asyncio.to_thread(flood.recv, 65536)
            Path(f"/proc/{pid}/clear_refs").write_text("5", encoding="utf-8")  # reset the high-water mark
            before = _memory_kib(pid, "VmRSS")
            sending = asyncio.create_task(asyncio.to_thread(flood.sendall, _requests(count)))
            try:
                # While the flood waits unread, the other client is served (with calls that raise no event,
                # so that nothing but the flood's own answers waits for the flooding client).
                for _ in range(20):
                    assert (await host.call("ping")) == {}
                    assert (await host.call("agent.get", {"agentId": "ann"}))["name"] == "ann"
                answered = await asyncio.to_thread(_read_answers, flood, count)
                await sending
            finally:
                flood.close()
            assert answered == [str(n) for n in range(count)]
            grown = _memory_kib(pid, "VmHWM") - before
            assert grown < 30 * 1024, f"the host grew by {grown} KiB"
            assert (await host.call("ping")) == {}

    asyncio.run(main())


def test_a_socket_client_that_does_not_initialize_in_time_is_let_go_and_the_stdio_shell_is_exempt(
    tmp_path: Path,
) -> None:
    """Issue 22.7: a connection that never initialized stayed as long as it liked."""

    async def main() -> None:
        async with RawHost(tmp_path) as shell:
            assert "result" in await shell.call("ping")  # answered once the host listens on its socket
            async with RawSocket(tmp_path) as kept, RawSocket(tmp_path) as idle, RawSocket(tmp_path) as pinging:
                await kept.initialize("kept")
                assert await _read_until_closed(idle) == []
                # `ping` is open before initializing, but it does not stand for it.
                while (answer := await _ping_or_none(pinging)) is not None:
                    assert "result" in answer
                assert "result" in await kept.call("ping")
            await shell.initialize()  # the stdio shell, later than any deadline, is still served
            assert "result" in await shell.call("host.status")

    asyncio.run(main())


async def _ping_or_none(client: RawSocket) -> dict[str, Any] | None:
    try:
        return await client.call("ping")
    except ConnectionError:
        return None


def test_other_clients_are_served_while_a_frame_that_is_costly_to_check_is_decoded(tmp_path: Path) -> None:
    """Issue 22.8: a huge frame was decoded and checked on the loop, stalling every other client meanwhile.

    A 10 MB frame of five million numbers, one of them beyond a double, takes seconds to check. Another
    client's change reaches the stdio shell as an event before the answer to the shell's own frame: it was
    handled while that frame was being checked.
    """
    numbers = b"1e400" + b",1" * 5_000_000
    frame = b'{"jsonrpc":"2.0","id":"huge","method":"ping","params":{"pad":[' + numbers + b"]}}\n"

    async def main() -> None:
        async with RawHost(tmp_path) as shell:
            await shell.initialize()
            assert "result" in await shell.call("agent.create", {"name": "ann", "agentId": "ann"})
            async with RawSocket(tmp_path) as other:
                await other.initialize("other")
                await shell.send(frame)
                renamed = await other.call("agent.update", {"agentId": "ann", "name": "Ann Again"})
                assert renamed["result"]["name"] == "Ann Again"
            async with asyncio.timeout(120):
                answer = await shell.answer_to("huge")
            assert answer["error"]["code"] == INVALID_PARAMS
            names = [m["params"]["agent"]["name"] for m in shell.notifications if m["method"] == "agent.updated"]
            assert "Ann Again" in names
            assert shell.not_json == []

    asyncio.run(main())


def test_agent_started_carries_a_bounded_preview_and_the_transcript_the_whole_message(tmp_path: Path) -> None:
    """Issue 22.8: `agent.started` sent a whole 5 MB message to every client."""
    text = "long " + "w" * (5 * 1024 * 1024)

    async def main() -> None:
        async with HostProcess(tmp_path) as host:
            await host.call(
                "agent.create",
                {"name": "ann", "agentId": "ann", "settings": scripted_model({"match": "^long", "reply": "ok"})},
            )
            other, link = await _attach(tmp_path, "other")
            try:
                sent = await other.call("agent.send", {"agentId": "ann", "text": text}, timeout=120)
                for shell in (host, other):
                    started = await shell.wait_for("agent.started", lambda p: p["runId"] == sent["runId"])
                    assert started["truncated"] is True and started["textLength"] == len(text)
                    assert started["message"]["text"] == text[:STARTED_PREVIEW_CHARS]
                    assert started["message"]["seq"] == sent["seq"]
                await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
                page = await host.call("agent.transcript", {"agentId": "ann", "limit": 10}, timeout=120)
                stored = next(e for e in page["events"] if e["seq"] == sent["seq"])
                assert stored["text"] == text
                short = await other.call("agent.send", {"agentId": "ann", "text": "long enough"})
                started = await host.wait_for("agent.started", lambda p: p["runId"] == short["runId"])
                assert started["message"]["text"] == "long enough"
                assert started["truncated"] is False and started["textLength"] == len("long enough")
            finally:
                await link.close()

    asyncio.run(main())
