"""Erase removes a fact's text physically everywhere, while the chain still verifies and the audit remains."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from host.memory import Evidence, MemoryStore
from host.memory.ledger import Ledger
from host.prompt.cache import assemble_prompt
from host.prompt.identity import AgentIdentity

USER = Evidence("user")
SECRET_TEXT = "User's sister is called Philippa Quarrington"
KEPT_TEXT = "User likes green tea"


def memory_files(agent_dir: Path) -> dict[str, bytes]:
    files = {path.name: path.read_bytes() for path in (agent_dir / "memory").iterdir() if path.is_file()}
    files["prompt-cache.json"] = (agent_dir / "prompt-cache.json").read_bytes()
    return files


def test_after_erase_no_file_holds_the_text_and_the_chain_still_verifies(store: MemoryStore, agent_dir: Path) -> None:
    async def main() -> None:
        doomed = await store.note(SECRET_TEXT, evidence=USER, key="user.sister")
        await store.note(KEPT_TEXT, evidence=USER)
        assert doomed.fact is not None
        await store.retract(doomed.fact.id, evidence=USER, reason="asked to forget")
        await store.note("users sister is called philippa quarrington", evidence=Evidence("peer:bob"))  # suppressed
        await store.note(SECRET_TEXT, evidence=USER)  # brought back by the user, then erased with the rest
        prompt = assemble_prompt(agent_dir, AgentIdentity("ada", "Ada"), [], store, "who is my sister?")
        assert SECRET_TEXT in prompt.system
        assert any(SECRET_TEXT.encode() in data for data in memory_files(agent_dir).values())

        erased = await store.erase(doomed.fact.id, reason="the user asked")
        assert erased.kind == "erased"
        for name, data in memory_files(agent_dir).items():
            assert b"Philippa" not in data, name
            assert doomed.fact.sig is not None and doomed.fact.sig.encode() not in data, name
        assert KEPT_TEXT.encode() in (agent_dir / "memory" / "ledger.jsonl").read_bytes()
        assert KEPT_TEXT.encode() in (agent_dir / "memory" / "MEMORY.md").read_bytes()
        assert store.verify().ok
        after = assemble_prompt(agent_dir, AgentIdentity("ada", "Ada"), [], store, "who is my sister?")
        assert "Philippa" not in after.system and "Philippa" not in (after.recall_block or "")
        assert KEPT_TEXT in after.system
        assert store.search("Philippa Quarrington", include_retracted=True) == []

    asyncio.run(main())


def test_the_audit_still_shows_that_an_erased_record_existed_and_who_erased_it(store: MemoryStore) -> None:
    async def main() -> None:
        doomed = await store.note(SECRET_TEXT, evidence=USER)
        assert doomed.fact is not None
        await store.erase(doomed.fact.id, reason="the user asked")
        assert store.list_facts("all").facts == ()
        trail = store.history(doomed.fact.id)
        assert [(r.op, r.source) for r in trail] == [("assert", "user"), ("erase", "human")]
        assert trail[0].text is None and dict(trail[0].commit)["text"]
        assert trail[1].targets == (doomed.fact.id,) and trail[1].reason == "the user asked"
        assert (await store.erase(doomed.fact.id)).kind == "unchanged"

    asyncio.run(main())


def test_removing_text_without_an_erase_record_fails_verification(
    agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    async def main() -> None:
        store = MemoryStore(agent_dir, clock=clock)
        await store.note(KEPT_TEXT, evidence=USER)
        second = await store.note(SECRET_TEXT, evidence=USER)
        store.close()
        assert second.fact is not None
        path = agent_dir / "memory" / "ledger.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines()
        record = json.loads(lines[1])
        del record["text"], record["salt"]
        path.write_text("\n".join([lines[0], json.dumps(record)]) + "\n", encoding="utf-8")
        ledger = Ledger(path)
        report = ledger.verify()
        ledger.close()
        assert not report.ok and report.first_bad_id == second.fact.id and report.first_bad_seq == 2

    asyncio.run(main())


def test_an_erase_cut_short_by_a_crash_is_finished_when_the_memory_opens(
    agent_dir: Path, clock: Callable[[], datetime], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def main() -> None:
        store = MemoryStore(agent_dir, clock=clock)
        doomed = await store.note(SECRET_TEXT, evidence=USER)
        await store.note(KEPT_TEXT, evidence=USER)
        assert doomed.fact is not None

        def crash(self: Ledger, doomed: object) -> None:
            raise OSError("power cut")

        with monkeypatch.context() as patch:
            patch.setattr(Ledger, "erase_content", crash)
            with pytest.raises(OSError):
                await store.erase(doomed.fact.id)
        assert b"Philippa" not in store.committed_ledger(), "readers never see it once the erase has folded"
        store.close()
        assert b"Philippa" in (agent_dir / "memory" / "ledger.jsonl").read_bytes()
        with MemoryStore(agent_dir, clock=clock) as reopened:
            assert b"Philippa" not in (agent_dir / "memory" / "ledger.jsonl").read_bytes()
            assert b"Philippa" not in (agent_dir / "memory" / "index.sqlite").read_bytes()
            assert reopened.verify().ok
            assert [f.text for f in reopened.standing().current] == [KEPT_TEXT]

    asyncio.run(main())


_ON_LOOP: list[str] | None = None  # while a test watches: the files opened on the main thread


def _watch_opens(event: str, args: tuple[object, ...]) -> None:
    if _ON_LOOP is not None and event == "open" and threading.current_thread() is threading.main_thread():
        _ON_LOOP.append(str(args[0]))


sys.addaudithook(_watch_opens)


def test_an_erase_reads_and_writes_no_file_and_vacuums_nothing_on_the_event_loop(
    agent_dir: Path, clock: Callable[[], datetime]
) -> None:
    """Issue 22.2: the ledger's search and rewrite, the transcript's scrub, the views kept aside and the index's
    compaction run in the disk worker; the loop folds, swaps the compacted index in and starts the epoch."""

    async def main() -> None:
        global _ON_LOOP
        with MemoryStore(agent_dir, clock=clock) as store:
            doomed = await store.note(SECRET_TEXT, evidence=USER)
            await store.note(KEPT_TEXT, evidence=USER)
            assert doomed.fact is not None
            reply = {"seq": 1, "type": "tool", "name": "memory_recall", "toolCallId": "c", "content": SECRET_TEXT}
            (agent_dir / "transcript.jsonl").write_text(json.dumps(reply) + "\n", encoding="utf-8")
            (agent_dir / "memory" / "MEMORY.md.kept-20260101T000000000000Z").write_text(SECRET_TEXT, encoding="utf-8")
            on_the_loop_connection: list[str] = []
            store._index._db.set_trace_callback(on_the_loop_connection.append)
            _ON_LOOP = []
            try:
                await store.erase(doomed.fact.id)
            finally:
                opened, _ON_LOOP = _ON_LOOP, None
            assert not [sql for sql in on_the_loop_connection if "VACUUM" in sql or "optimize" in sql]
            names = ("ledger.jsonl", "transcript.jsonl", "MEMORY.md", "index.sqlite")
            assert [path for path in opened if any(name in path for name in names)] == []
            for path in (
                agent_dir / "transcript.jsonl",
                agent_dir / "memory" / "index.sqlite",
                *agent_dir.rglob("*.kept-*"),
            ):
                assert b"Philippa" not in path.read_bytes(), path.name
            assert store.verify().ok and [f.text for f in store.standing().current] == [KEPT_TEXT]

    asyncio.run(main())
