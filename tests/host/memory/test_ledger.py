"""The ledger file: fsynced appends, one writer, torn-line repair, chain verification, and crash safety."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from host.memory import Evidence, MemoryStore
from host.memory.errors import MemoryLockedError
from host.memory.ledger import Ledger
from host.memory.records import Record
from protocol.errors import BUSY

USER = Evidence("user")


def write_facts(agent_dir: Path, clock: Callable[[], datetime], texts: list[str]) -> list[str]:
    async def main() -> list[str]:
        with MemoryStore(agent_dir, clock=clock) as store:
            return [(await store.note(text, evidence=USER)).records[0].id for text in texts]

    return asyncio.run(main())


def test_records_chain_and_survive_reopening(agent_dir: Path, clock: Callable[[], datetime]) -> None:
    ids = write_facts(agent_dir, clock, ["User likes tea", "User likes jazz"])
    ledger = Ledger(agent_dir / "memory" / "ledger.jsonl")
    try:
        records = list(ledger.records())
        assert [r.id for r in records] == ids
        assert records[1].prev == records[0].hash and ledger.head_hash == records[1].hash
        assert ledger.verify().ok and ledger.verify().count == 2
    finally:
        ledger.close()


def test_a_torn_last_line_is_cut_on_open_and_the_chain_continues(
    agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    write_facts(agent_dir, clock, ["User likes tea", "User likes jazz"])
    path = agent_dir / "memory" / "ledger.jsonl"
    intact = path.stat().st_size
    with open(path, "ab") as handle:
        handle.write(b'{"seq":3,"id":"m-00000000')
    write_facts(agent_dir, clock, ["User likes rain"])
    ledger = Ledger(path)
    try:
        assert [r.seq for r in ledger.records()] == [1, 2, 3]
        assert ledger.verify().ok
    finally:
        ledger.close()
    assert path.stat().st_size > intact


def test_an_unreadable_complete_last_line_is_cut_too(agent_dir: Path, clock: Callable[[], datetime]) -> None:
    write_facts(agent_dir, clock, ["User likes tea"])
    path = agent_dir / "memory" / "ledger.jsonl"
    intact = path.read_bytes()
    path.write_bytes(intact + b"\x00\x00\x00garbage\n")
    Ledger(path).close()
    assert path.read_bytes() == intact


def test_an_intact_ledger_is_left_as_it_is(agent_dir: Path, clock: Callable[[], datetime]) -> None:
    write_facts(agent_dir, clock, ["User likes tea", "User likes jazz"])
    path = agent_dir / "memory" / "ledger.jsonl"
    before = path.read_bytes()
    Ledger(path).close()
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [("hash", "0" * 64, "hash"), ("text", "User likes coffee", "text"), ("key", "user.drink", "hash")],
)
def test_verify_names_the_first_bad_record(
    agent_dir: Path, clock: Callable[[], datetime], field: str, value: str, problem: str
) -> None:
    ids = write_facts(agent_dir, clock, ["User likes tea", "User likes jazz", "User likes rain"])
    path = agent_dir / "memory" / "ledger.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record[field] = value
    lines[1] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ledger = Ledger(path)
    try:
        report = ledger.verify()
    finally:
        ledger.close()
    assert not report.ok
    assert (report.first_bad_seq, report.first_bad_id) == (2, ids[1])
    assert report.problem is not None and problem in report.problem


def test_a_missing_line_breaks_the_chain_at_the_next_record(agent_dir: Path, clock: Callable[[], datetime]) -> None:
    ids = write_facts(agent_dir, clock, ["User likes tea", "User likes jazz", "User likes rain"])
    path = agent_dir / "memory" / "ledger.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([lines[0], lines[2]]) + "\n", encoding="utf-8")
    ledger = Ledger(path)
    try:
        report = ledger.verify()
    finally:
        ledger.close()
    assert not report.ok and report.first_bad_id == ids[2]


def test_a_second_writer_is_refused_while_the_memory_is_open(agent_dir: Path, clock: Callable[[], datetime]) -> None:
    with MemoryStore(agent_dir, clock=clock):
        with pytest.raises(MemoryLockedError) as caught:
            MemoryStore(agent_dir, clock=clock)
        assert caught.value.code == BUSY
    MemoryStore(agent_dir, clock=clock).close()


_BURST = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from host.memory import Evidence, MemoryStore

    async def main():
        store = MemoryStore(Path(sys.argv[1]))
        number = 0
        while True:
            outcome = await store.note(f"Burst fact number {number}", evidence=Evidence("user"))
            print(outcome.records[0].id, flush=True)
            number += 1

    asyncio.run(main())
    """
)


def test_a_kill_during_a_burst_of_writes_loses_no_acknowledged_write(agent_dir: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _BURST, str(agent_dir)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert child.stdout is not None
    acknowledged: list[str] = []
    try:
        while len(acknowledged) < 60:
            line = child.stdout.readline()
            assert line, "the writer died before it was killed"
            acknowledged.append(line.decode().strip())
        os.kill(child.pid, signal.SIGKILL)
        acknowledged += [line.decode().strip() for line in child.stdout.read().splitlines() if line.strip()]
    finally:
        child.kill()
        child.wait(timeout=30)
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL

    with MemoryStore(agent_dir) as store:
        for record_id in acknowledged:
            assert store.fact(record_id).status == "live"
        assert store.verify().ok
        assert store.last_seq >= len(acknowledged)
    lines = (agent_dir / "memory" / "ledger.jsonl").read_bytes().splitlines()
    records = [Record.from_json(json.loads(line)) for line in lines]
    assert [r.seq for r in records] == list(range(1, len(records) + 1))
