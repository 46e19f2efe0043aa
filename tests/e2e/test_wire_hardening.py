"""Hostile lines from a shell against the real host over real pipes (issue 10, items 1-5; issue 22.8, 22.11).

Each test sends lines that once killed the host, made it write frames that are not JSON, ran undecodable
text, coerced wrong types or answered to the wrong id; each checks the answer's code and id, that every
line the host wrote is strict JSON, that the host still serves, and that nothing bad reached the disk.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from protocol.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR
from protocol.framing import MAX_FRAME_BYTES
from tests.support.raw_host import RawHost, parse_strict
from tests.support.raw_socket import RawSocket

PING = b'{"jsonrpc":"2.0","id":%s,"method":"ping","params":{}}\n'


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


async def _answers(host: RawHost, lines: list[bytes]) -> list[tuple[Any, int | None]]:
    """(id, error code or None) of the answer to each line, in order; each line is followed by a ping."""
    codes: list[tuple[Any, int | None]] = []
    for n, line in enumerate(lines):
        await host.send(line)
        await host.send(PING % f'"after-{n}"'.encode())
        async with asyncio.timeout(30):
            answer = await host.next_answer()
            assert isinstance(answer, dict), answer
            codes.append((answer.get("id"), answer.get("error", {}).get("code")))
            assert (await host.answer_to(f"after-{n}")).get("result") == {}
    return codes


async def _silent(host: RawHost, line: bytes, marker: str) -> None:
    """`line` gets no answer at all: the next thing the host writes is the answer to the ping after it."""
    await host.send(line)
    await host.send(PING % f'"{marker}"'.encode())
    async with asyncio.timeout(30):
        answer = await host.next_answer()
    assert isinstance(answer, dict) and answer.get("id") == marker, answer


def _agent_files_are_clean(data_dir: Path) -> None:
    """No file of any agent holds a replacement character, a lone surrogate or text that is not UTF-8."""
    for path in (data_dir / "agents").rglob("*"):
        if not path.is_file() or path.suffix not in {".json", ".jsonl", ".md"}:
            continue
        data = path.read_bytes()
        text = data.decode("utf-8")  # raises on bytes that are not UTF-8 (surrogates included)
        assert "\ufffd" not in text, path
        if path.suffix == ".json":
            parse_strict(data)
        elif path.suffix == ".jsonl":
            for line in data.splitlines():
                parse_strict(line)


def test_frames_that_killed_the_host_get_their_errors_and_the_host_goes_on(tmp_path: Path) -> None:
    async def main() -> None:
        async with RawHost(tmp_path) as host:
            await host.initialize()
            codes = await _answers(
                host,
                [
                    b'{"jsonrpc":"2.0","id":"\\udc80","method":"ping"}\n',
                    b'{"jsonrpc":"2.0","id":"\xed\xa0\x80","method":"ping"}\n',
                    b'{"jsonrpc":"2.0","id":"m1","method":"pi\\ud800ng"}\n',
                    b'{"jsonrpc":"2.0","id":"m2","method":"\xed\xa0\x80"}\n',
                    b'{"jsonrpc":"2.0","id":"d1","method":"ping","params":{"x":' + _nested(1000) + b"}}\n",
                    b'{"jsonrpc":"2.0","id":"d2","method":"ping","params":{"x":' + _nested(500) + b"}}\n",
                    _nested(1000) + b"\n",
                ],
            )
            assert codes == [
                (None, INVALID_REQUEST),
                (None, PARSE_ERROR),
                ("m1", METHOD_NOT_FOUND),  # a string that names no method (issue 22.11)
                (None, PARSE_ERROR),
                (None, PARSE_ERROR),
                ("d2", INVALID_PARAMS),
                (None, PARSE_ERROR),
            ]
            # Answers nobody asked for, with ids that are no ids, are dropped without a word.
            await _silent(host, b'{"jsonrpc":"2.0","id":[1,2],"result":{}}\n', "s1")
            await _silent(host, b'{"jsonrpc":"2.0","id":{"a":1},"error":{"code":1,"message":"x"}}\n', "s2")
            await _silent(host, b'{"jsonrpc":"2.0","id":7,"error":{"code":"abc","message":[]}}\n', "s3")
            assert host.alive
            assert host.not_json == []

    asyncio.run(main())


def test_non_finite_numbers_are_refused_and_every_line_written_is_strict_json(tmp_path: Path) -> None:
    async def main() -> None:
        async with RawHost(tmp_path) as host:
            await host.initialize()
            codes = await _answers(
                host,
                [
                    PING % b"NaN",
                    PING % b"Infinity",
                    PING % b"-Infinity",
                    PING % b"1e400",
                    PING % b"-1e400",
                    b'{"jsonrpc":"2.0","id":"p1","method":"ping","params":{"x":1e400}}\n',
                    b'{"jsonrpc":"2.0","id":"p2","method":"ping","params":{"x":NaN}}\n',
                    PING % b"1.5e300",
                ],
            )
            assert codes == [
                (None, PARSE_ERROR),
                (None, PARSE_ERROR),
                (None, PARSE_ERROR),
                (None, INVALID_REQUEST),
                (None, INVALID_REQUEST),
                ("p1", INVALID_PARAMS),
                (None, PARSE_ERROR),
                (1.5e300, None),
            ]
            assert host.not_json == []
            assert host.lines > len(codes)

    asyncio.run(main())


def test_undecodable_text_and_lone_surrogates_are_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    async def main() -> None:
        async with RawHost(tmp_path) as host:
            await host.initialize()
            assert "result" in await host.call("agent.create", {"name": "Keeper", "agentId": "keeper"})
            assert "result" in await host.call("memory.note", {"agentId": "keeper", "text": "The first note."})
            note = b'{"jsonrpc":"2.0","id":"%s","method":"memory.note","params":{"agentId":"keeper","text":"%s"}}\n'
            create = b'{"jsonrpc":"2.0","id":"%s","method":"agent.create","params":{"name":"%s"}}\n'
            codes = await _answers(
                host,
                [
                    note % (b"n1", b"bad \xff byte"),
                    note % (b"n2", b"bad \xed\xa0\x80 surrogate bytes"),
                    note % (b"n3", b"bad \\udc80 escape"),
                    note % (b"n4", b"bad \\ud83d pair half"),
                    create % (b"c1", b"x\xffy"),
                    create % (b"c2", b"\\udc80"),
                ],
            )
            assert codes == [
                (None, PARSE_ERROR),
                (None, PARSE_ERROR),
                ("n3", INVALID_PARAMS),
                ("n4", INVALID_PARAMS),
                (None, PARSE_ERROR),
                ("c2", INVALID_PARAMS),
            ]
            listed = await host.call("memory.list", {"agentId": "keeper", "view": "all"})
            assert [r.get("text") for r in listed["result"]["records"]] == ["The first note."]
            agents = await host.call("agent.list")
            assert [a["agentId"] for a in agents["result"]["agents"]] == ["keeper"]
            assert host.not_json == []
        _agent_files_are_clean(tmp_path)

    asyncio.run(main())


def test_inbound_params_are_strict_and_a_wrong_type_changes_nothing(tmp_path: Path) -> None:
    async def main() -> None:
        async with RawHost(tmp_path) as host:
            await host.initialize()
            assert "result" in await host.call("agent.create", {"name": "Keeper", "agentId": "keeper"})
            refused = [
                ("memory.note", {"agentId": "keeper", "text": "Confident?", "confidence": True}),
                ("memory.note", {"agentId": "keeper", "text": "Confident?", "confidence": "0.5"}),
                ("settings.set", {"maxConcurrentRuns": "7"}),
                ("settings.set", {"maxConcurrentRuns": 7.0}),
                ("settings.set", {"maxConcurrentRuns": True}),
                ("agent.create", {"name": "T", "settings": {"model": {"provider": "scripted", "temperature": "1"}}}),
                ("agent.create", {"name": "M", "settings": {"memory": 0}}),
                ("agent.transcript", {"agentId": "keeper", "limit": "5"}),
            ]
            for method, params in refused:
                answer = await host.call(method, params)
                assert answer.get("error", {}).get("code") == INVALID_PARAMS, (method, params, answer)
            settings = await host.call("settings.get")
            assert settings["result"]["maxConcurrentRuns"] == 4
            listed = await host.call("memory.list", {"agentId": "keeper", "view": "all"})
            assert listed["result"]["records"] == []
            assert [a["agentId"] for a in (await host.call("agent.list"))["result"]["agents"]] == ["keeper"]
            # The same values with their right types are accepted (an int stands for a float, as JSON has it).
            accepted = await host.call("memory.note", {"agentId": "keeper", "text": "Sure.", "confidence": 1})
            assert accepted["result"]["record"]["confidence"] == 1.0
            assert "result" in await host.call("settings.set", {"maxConcurrentRuns": 7})
            assert (await host.call("settings.get"))["result"]["maxConcurrentRuns"] == 7

    asyncio.run(main())


def test_an_invalid_request_whose_id_can_be_read_is_answered_with_that_id(tmp_path: Path) -> None:
    async def main() -> None:
        async with RawHost(tmp_path) as host:
            await host.initialize()
            codes = await _answers(
                host,
                [
                    b'{"jsonrpc":"2.0","id":"x1"}\n',
                    b'{"id":1}\n',
                    b'{"jsonrpc":"1.0","id":"x2","method":"ping"}\n',
                    b'{"id":"x3","method":"ping"}\n',
                    b'{"jsonrpc":"2.0","id":"x4","method":5}\n',
                    b'{"jsonrpc":"2.0","id":"x5","method":"ping","params":"all"}\n',
                    b'{"jsonrpc":"2.0","id":"x6","method":"ping","extra":1}\n',
                    b'{"jsonrpc":"2.0","id":17,"method":null}\n',
                    b'{"jsonrpc":"2.0","id":true,"method":"ping"}\n',
                    b'{"jsonrpc":"2.0","id":["x7"],"method":"ping"}\n',
                    b"[]\n",
                ],
            )
            assert codes == [
                ("x1", INVALID_REQUEST),
                (1, INVALID_REQUEST),  # no method, no version: still answered to its id (issue 22.11)
                ("x2", INVALID_REQUEST),
                ("x3", INVALID_REQUEST),
                ("x4", INVALID_REQUEST),
                ("x5", INVALID_REQUEST),
                ("x6", INVALID_REQUEST),
                (17, INVALID_REQUEST),
                (None, INVALID_REQUEST),
                (None, INVALID_REQUEST),
                (None, INVALID_REQUEST),
            ]
            # A batch is answered member by member, each to its own id.
            await host.send(b'[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"1.0","id":"b2"},5]\n')
            async with asyncio.timeout(30):
                batch = await host.next_answer()
            assert sorted(json.dumps([a.get("id"), a.get("error", {}).get("code")]) for a in batch) == sorted(
                json.dumps(pair) for pair in (["b1", None], ["b2", INVALID_REQUEST], [None, INVALID_REQUEST])
            )
            assert host.not_json == []

    asyncio.run(main())


def test_a_frame_over_the_cap_is_refused_to_its_id_while_it_is_read_and_the_connection_goes_on(
    tmp_path: Path,
) -> None:
    """Issue 22.8: an oversized frame was refused to `id: null`; its id is now read from its first bytes."""
    over = b"y" * (MAX_FRAME_BYTES + 1)

    async def main() -> None:
        async with RawHost(tmp_path) as host:
            await host.initialize()
            codes = await _answers(
                host,
                [
                    b'{"jsonrpc":"2.0","id":"huge","method":"ping","params":{"pad":"' + over + b'"}}\n',
                    b'{"jsonrpc":"2.0","method":"ping","params":{"pad":"' + over + b'"},"id":"late"}\n',
                ],
            )
            assert codes == [("huge", INVALID_REQUEST), (None, INVALID_REQUEST)]
            async with RawSocket(tmp_path) as client:
                await client.initialize()
                await client.send(b'{"jsonrpc":"2.0","id":7,"method":"agent.list","params":{"pad":"' + over + b'"}}\n')
                assert (await client.call("ping"))["result"] == {}
                refused = next(m for m in client.seen if m.get("id") == 7)
                assert refused["error"]["code"] == INVALID_REQUEST
            assert host.not_json == []

    asyncio.run(main())
