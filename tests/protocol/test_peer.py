"""The JSON-RPC peer over an in-memory pipe (and a real socket): calls both ways, errors, timeouts, ordering,
bad lines, and the bounds on what one connection may make it hold."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from typing import Any

import pytest

from protocol.dispatch import BATCH_GROUP, Router
from protocol.errors import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    NOT_FOUND,
    PARSE_ERROR,
    REQUEST_TIMEOUT,
    JsonRpcError,
)
from protocol.framing import CHUNK_BYTES, MAX_FRAME_BYTES
from protocol.models.base import EmptyParams, Params, WireModel
from protocol.peer import JsonRpcPeer
from protocol.transport import memory_transport_pair, stream_transport
from tests.support.raw_host import parse_strict


class AddParams(Params):
    left: int
    right_side: int


class Sum(WireModel):
    total: int


class MissingError(JsonRpcError):
    CODE = NOT_FOUND


def _router(log: list[Any]) -> Router:
    router = Router()

    async def add(p: AddParams) -> Sum:
        return Sum(total=p.left + p.right_side)

    async def missing(_: AddParams) -> Sum:
        raise MissingError("no such thing", data={"what": "thing"})

    async def broken(_: AddParams) -> Sum:
        raise RuntimeError("secret internals /etc/passwd")

    async def slow(_: AddParams) -> Sum:
        await asyncio.sleep(3600)
        return Sum(total=0)

    async def note(p: AddParams) -> None:
        log.append(p.left)

    for name, handler in (("add", add), ("missing", missing), ("broken", broken), ("slow", slow), ("note", note)):
        router.add(name, AddParams, handler)
    return router


async def _pair(log: list[Any]) -> tuple[JsonRpcPeer, JsonRpcPeer, list[asyncio.Task[None]]]:
    left, right = memory_transport_pair()
    a = JsonRpcPeer(left, _router(log), name="a", default_timeout=5)
    b = JsonRpcPeer(right, _router(log), name="b", default_timeout=5)
    tasks = [asyncio.create_task(a.serve()), asyncio.create_task(b.serve())]
    return a, b, tasks


def test_requests_go_both_ways_and_answers_find_their_callers() -> None:
    async def main() -> None:
        a, b, tasks = await _pair([])
        results = await asyncio.gather(
            *(a.request("add", {"left": i, "rightSide": 1}, Sum) for i in range(20)),
            b.request("add", AddParams(left=5, right_side=5), Sum),
        )
        assert [r.total for r in results] == [*(i + 1 for i in range(20)), 10]
        for task in tasks:
            task.cancel()

    asyncio.run(main())


def test_handler_errors_map_to_their_codes_without_internals_on_the_wire(caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> None:
        a, _, tasks = await _pair([])
        cases = [
            ("missing", {"left": 1, "rightSide": 2}, NOT_FOUND),
            ("broken", {"left": 1, "rightSide": 2}, INTERNAL_ERROR),
            ("add", {"left": "one"}, INVALID_PARAMS),
            ("add", {"left": 1, "rightSide": 2, "extra": 3}, INVALID_PARAMS),
            ("nope", {}, METHOD_NOT_FOUND),
        ]
        for method, params, code in cases:
            with pytest.raises(JsonRpcError) as info:
                await a.request(method, params)
            assert info.value.code == code
            assert "passwd" not in info.value.message and "Traceback" not in info.value.message
            assert "one" not in info.value.message
        with pytest.raises(JsonRpcError) as info:
            await a.request("missing", {"left": 1, "rightSide": 2})
        assert info.value.data == {"what": "thing"}
        for task in tasks:
            task.cancel()

    with caplog.at_level(logging.ERROR):
        asyncio.run(main())
    assert "secret internals" in caplog.text


def test_a_call_with_no_answer_times_out_and_the_peer_keeps_working() -> None:
    async def main() -> None:
        a, _, tasks = await _pair([])
        with pytest.raises(JsonRpcError) as info:
            await a.request("slow", {"left": 1, "rightSide": 1}, timeout=0.05)
        assert info.value.code == REQUEST_TIMEOUT
        assert (await a.request("add", {"left": 1, "rightSide": 1}, Sum)).total == 2
        for task in tasks:
            task.cancel()

    asyncio.run(main())


def test_notifications_are_handled_in_the_order_they_were_sent() -> None:
    async def main() -> None:
        log: list[Any] = []
        a, b, tasks = await _pair(log)
        for i in range(50):
            await a.notify("note", {"left": i, "rightSide": 0})
        await a.request("add", {"left": 0, "rightSide": 0})  # a round trip flushes the notifications
        assert log == list(range(50))
        for task in tasks:
            task.cancel()

    asyncio.run(main())


def test_pending_calls_fail_when_the_other_side_goes_away() -> None:
    async def main() -> None:
        left, right = memory_transport_pair()
        a = JsonRpcPeer(left, _router([]), name="a")
        serving = asyncio.create_task(a.serve())
        call = asyncio.create_task(a.request("add", {"left": 1, "rightSide": 1}))
        await asyncio.sleep(0)
        await right.close()
        with pytest.raises(JsonRpcError) as info:
            await call
        assert info.value.code == CONNECTION_CLOSED
        await serving

    asyncio.run(main())


def test_malformed_lines_get_error_answers_and_the_session_goes_on() -> None:
    async def main() -> None:
        left, right = memory_transport_pair()
        server = JsonRpcPeer(left, _router([]), name="server")
        serving = asyncio.create_task(server.serve())
        answers: list[dict[str, Any]] = []
        for line in (
            b"{oops\n",
            b"[1, 2]\n",
            b'{"jsonrpc":"2.0","id":9,"method":"add","params":{"left":2,"rightSide":3}}\n',
        ):
            await right.write(line)
        async with asyncio.timeout(5):
            while len(answers) < 4:
                raw = await right.reader.readline()
                message = json.loads(raw)
                answers.extend(message if isinstance(message, list) else [message])
        codes = sorted((a.get("error") or {}).get("code", 0) for a in answers)
        # Each member of a batch is answered on its own, as JSON-RPC 2.0 says.
        assert codes == sorted([PARSE_ERROR, INVALID_REQUEST, INVALID_REQUEST, 0])
        assert any(a.get("result") == {"total": 5} and a["id"] == 9 for a in answers)
        await right.close()
        await serving

    asyncio.run(main())


class Text(WireModel):
    text: str


def test_every_frame_written_is_strict_json_even_when_a_handler_returns_what_json_cannot_carry() -> None:
    """A result holding a lone surrogate becomes an internal error to the same id; nothing unstrict is written."""

    async def main() -> None:
        router = Router()

        async def leaky(_: EmptyParams) -> Text:
            return Text(text="a file name from disk: \udcff")

        router.add("leaky", EmptyParams, leaky)
        left, right = memory_transport_pair()
        server = JsonRpcPeer(left, router, name="server")
        serving = asyncio.create_task(server.serve())
        await server.notify("event", {"value": float("nan")})
        with pytest.raises(JsonRpcError) as info:
            await server.request("anything", {"value": float("inf")}, timeout=1)
        assert info.value.code == INTERNAL_ERROR
        await right.write(b'{"jsonrpc":"2.0","id":"l1","method":"leaky"}\n')
        await right.write(b'[{"jsonrpc":"2.0","id":"l2","method":"leaky"},{"jsonrpc":"2.0","id":"l3","method":"x"}]\n')
        async with asyncio.timeout(5):
            single = parse_strict(await right.reader.readline())
            batch = parse_strict(await right.reader.readline())
        assert (single["id"], single["error"]["code"]) == ("l1", INTERNAL_ERROR)
        codes = sorted((a["id"], a["error"]["code"]) for a in batch)
        assert codes == [("l2", INTERNAL_ERROR), ("l3", METHOD_NOT_FOUND)]
        await right.close()
        await serving

    asyncio.run(main())


def test_a_malformed_answer_fails_the_call_it_answers_instead_of_leaving_it_waiting() -> None:
    async def main() -> None:
        left, right = memory_transport_pair()
        client = JsonRpcPeer(left, Router(), name="client", default_timeout=5)
        serving = asyncio.create_task(client.serve())
        call = asyncio.create_task(client.request("m", {}))
        async with asyncio.timeout(5):
            sent = json.loads(await right.reader.readline())
        await right.write(b'{"jsonrpc":"2.0","id":[1],"result":{}}\n')  # no id: ignored, the call still waits
        await right.write(b'{"jsonrpc":"2.0","id":%d,"error":{"code":"abc","message":[]}}\n' % sent["id"])
        with pytest.raises(JsonRpcError) as info:
            await call
        assert info.value.code == INVALID_REQUEST
        assert not serving.done()
        await right.close()
        await serving

    asyncio.run(main())


class Held(Params):
    n: int


def test_past_max_in_flight_the_peer_reads_nothing_more_until_an_answer_is_written() -> None:
    """Issue 22.7: every request got a task of its own with no bound; now the reader waits, over a real socket."""

    async def main() -> None:
        gates = {n: asyncio.Event() for n in range(3)}
        held = asyncio.Semaphore(0)
        router = Router()

        async def hold(p: Held) -> Sum:
            held.release()
            await gates[p.n].wait()
            return Sum(total=p.n)

        async def add(p: AddParams) -> Sum:
            return Sum(total=p.left + p.right_side)

        router.add("hold", Held, hold)
        router.add("add", AddParams, add)
        server_sock, client_sock = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=server_sock, limit=CHUNK_BYTES)
        peer = JsonRpcPeer(stream_transport(reader, writer), router, name="server", max_in_flight=3)
        serving = asyncio.create_task(peer.serve())
        client_reader, client_writer = await asyncio.open_connection(sock=client_sock)
        calls = [{"jsonrpc": "2.0", "id": f"h{n}", "method": "hold", "params": {"n": n}} for n in range(3)]
        calls.append({"jsonrpc": "2.0", "id": "after", "method": "add", "params": {"left": 1, "rightSide": 1}})
        client_writer.write(b"".join(json.dumps(call).encode() + b"\n" for call in calls))
        await client_writer.drain()
        async with asyncio.timeout(5):
            for _ in range(3):
                await held.acquire()
            gates[1].set()
            first = [json.loads(await client_reader.readline())["id"] for _ in range(2)]
            assert first == ["h1", "after"]  # the fourth request was read only once an answer had gone out
            gates[0].set()
            gates[2].set()
            rest = [json.loads(await client_reader.readline())["id"] for _ in range(2)]
        assert sorted(rest) == ["h0", "h2"]
        client_writer.close()
        async with asyncio.timeout(5):
            await serving
        writer.close()
        await client_writer.wait_closed()

    asyncio.run(main())


def test_a_batch_runs_a_bounded_number_of_its_members_at_once_and_answers_them_all() -> None:
    async def main() -> None:
        running = 0
        most = 0
        router = Router()

        async def step(p: AddParams) -> Sum:
            nonlocal running, most
            running += 1
            most = max(most, running)
            await asyncio.sleep(0)
            running -= 1
            return Sum(total=p.left)

        router.add("step", AddParams, step)
        left, right = memory_transport_pair()
        serving = asyncio.create_task(JsonRpcPeer(left, router, name="server").serve())
        batch = [
            {"jsonrpc": "2.0", "id": n, "method": "step", "params": {"left": n, "rightSide": 0}} for n in range(300)
        ]
        await right.write(json.dumps(batch).encode() + b"\n")
        async with asyncio.timeout(5):
            answers = json.loads(await right.reader.readline())
        assert sorted(a["result"]["total"] for a in answers) == list(range(300))
        assert most == BATCH_GROUP
        await right.close()
        await serving

    asyncio.run(main())


def test_an_answer_longer_than_a_frame_may_be_fails_the_call_it_answers() -> None:
    async def main() -> None:
        left, right = memory_transport_pair()
        client = JsonRpcPeer(left, Router(), name="client", default_timeout=30)
        serving = asyncio.create_task(client.serve())
        call = asyncio.create_task(client.request("m", {}))
        async with asyncio.timeout(5):
            sent = json.loads(await right.reader.readline())
        huge = b'{"jsonrpc":"2.0","id":%d,"result":{"pad":"' % sent["id"] + b"y" * (MAX_FRAME_BYTES + 1) + b'"}}\n'
        await right.write(huge)
        with pytest.raises(JsonRpcError) as info:
            async with asyncio.timeout(30):
                await call
        assert info.value.code == INVALID_REQUEST
        await right.close()
        await serving

    asyncio.run(main())


def test_a_late_answer_to_a_call_given_up_on_is_expected_and_a_stray_answer_is_still_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> None:
        left, right = memory_transport_pair()
        a = JsonRpcPeer(left, _router([]), name="a", default_timeout=5)
        serving = asyncio.create_task(a.serve())
        with pytest.raises(JsonRpcError) as info:
            await a.request("add", {"left": 1, "rightSide": 1}, timeout=0.01)
        assert info.value.code == REQUEST_TIMEOUT
        asked = json.loads(await right.reader.readline())
        for answer_id in (asked["id"], 999):  # the late answer, then one to a call never made
            await right.write(json.dumps({"jsonrpc": "2.0", "id": answer_id, "result": {"total": 2}}).encode() + b"\n")
        await right.write(b'{"jsonrpc": "2.0", "id": 1000, "method": "add", "params": {"left": 1, "rightSide": 2}}\n')
        assert json.loads(await right.reader.readline())["result"] == {"total": 3}  # both answers were read
        serving.cancel()

    with caplog.at_level(logging.DEBUG, logger="protocol.peer"):
        asyncio.run(main())
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warned == ["a: answer to an unknown request id 999"]
    assert any("late answer to request id 1" in r.getMessage() for r in caplog.records)
