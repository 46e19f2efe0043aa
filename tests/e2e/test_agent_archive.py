"""Issue 11.6 through the real host and CLI: an agent you can carry. One archive holds its profile, settings,
transcript and ledger (no secrets, nothing derived, no erased text) and this installation's signature. Import
verifies the chain, refuses a tampered, unsafe or oversized archive (issue 21.3: read in a worker thread, so
the host answers other clients meanwhile, and never held whole in memory); an archive from this installation
keeps its trust, one from elsewhere brings its facts as proposals (issue 21.2), and the agent answers at once."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import shutil
import tarfile
import threading
import zlib
from pathlib import Path

import pytest

from desktop.client import attach_or_start
from protocol.dispatch import Router
from protocol.errors import CONFLICT, INVALID_PARAMS, JsonRpcError
from tests.support.archives import hearth_async, hearth_cli, members, pack
from tests.support.host_process import HostProcess, scripted_model

ERASED = "The user's childhood nickname was Pippin."
KEPT = "The user grows quinces in the garden."
RULES = [{"match": ".*", "reply": "ok"}]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir with an agent that has a kept fact, an erased one, a secret and a turn."""
    data = tmp_path_factory.mktemp("source") / "data"

    async def prepare() -> None:
        async with HostProcess(data) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(*RULES)})
            await host.call("secrets.set", {"name": "openai", "value": "sk-test-not-a-real-key-0000000000"})
            kept = await host.call("memory.note", {"agentId": "ann", "text": KEPT})
            gone = await host.call("memory.note", {"agentId": "ann", "text": ERASED})
            await host.call("memory.erase", {"agentId": "ann", "recordId": gone["record"]["id"]})
            await host.send_and_wait("ann", "What grows in my garden?")
            assert kept["outcome"] == "recorded"

    asyncio.run(prepare())
    return data


@pytest.fixture(scope="module")
def exported(source: Path) -> Path:
    """ann's archive, written with `hearth export`."""
    archive = source.parent / "ann.hearth"
    done = hearth_cli(source, "export", "ann", str(archive), wait=True)
    assert done.returncode == 0, done.stderr
    assert "memory records" in done.stdout
    return archive


def test_the_archive_holds_profile_settings_transcript_ledger_and_signature_and_nothing_else(exported: Path) -> None:
    contents = members(exported)
    assert sorted(contents) == [
        "hearth-agent.json",
        "memory/ledger.jsonl",
        "profile.json",
        "settings.json",
        "signature.json",
        "transcript.jsonl",
    ]
    everything = b"".join(contents.values()) + gzip.decompress(exported.read_bytes())
    assert b"Pippin" not in everything, "an erased fact's text is in no part of the archive"
    assert b"sk-test" not in everything and KEPT.encode() in contents["memory/ledger.jsonl"]
    key = (exported.parent / "data" / "signing.key").read_bytes().strip()
    assert key not in everything and bytes.fromhex(key.decode()) not in everything, "the signing key never travels"
    assert exported.stat().st_mode & 0o777 == 0o600
    again = hearth_cli(exported.parent / "data", "export", "ann", str(exported), wait=True)
    assert again.returncode == 1 and "exists" in again.stderr, "an archive is never written over a file"


def test_an_archive_imported_where_it_was_exported_keeps_its_trust_and_answers_from_its_memory_at_once(
    source: Path, exported: Path, tmp_path: Path
) -> None:
    home = shutil.copytree(source, tmp_path / "home")  # the same installation, its signing key included

    async def main() -> None:
        async with HostProcess(home) as host:
            done = await hearth_async(home, "import", str(exported), "--agent-id", "ann-copy")
            assert done.returncode == 0, done.stderr
            assert "memory: signed by this installation; its facts keep their trust" in done.stdout
            assert "model" in done.stdout and "hearth adopt ann-copy" in done.stdout
            hits = await host.call("memory.search", {"agentId": "ann-copy", "query": "quinces"})
            assert [(h["record"]["text"], h["record"]["trust"]) for h in hits["hits"]] == [(KEPT, "confirmed")]
            assert (await host.call("memory.verify", {"agentId": "ann-copy"}))["ok"]
            page = await host.call("agent.transcript", {"agentId": "ann-copy"})
            assert [e["type"] for e in page["events"]][:2] == ["user", "context"]
            assert (await host.call("agent.get", {"agentId": "ann-copy"}))["settings"]["model"]["provider"] == "local"
            adopted = await hearth_async(home, "adopt", "ann-copy", "model")
            assert adopted.returncode == 0 and "adopted for ann-copy: model" in adopted.stdout, adopted.stderr
            ended = await host.send_and_wait("ann-copy", "And now?")
            assert ended["reason"] == "idle" and host.texts("ann-copy", ended["runId"]) == "ok"
            with pytest.raises(JsonRpcError) as taken:
                await host.call("agent.import", {"path": str(exported)})
            assert taken.value.code == CONFLICT
            assert (await host.call("agent.get", {"agentId": "ann"}))["settings"]["model"]["provider"] == "scripted"

    asyncio.run(main())
    assert KEPT in (home / "agents/ann-copy/prompt-cache.json").read_text(encoding="utf-8")
    agent = home / "agents/ann-copy"
    assert (agent / "memory/index.sqlite").is_file() and (agent / "memory/MEMORY.md").is_file()


def test_an_archive_from_another_installation_brings_its_facts_as_proposals_a_person_can_confirm(
    exported: Path, tmp_path: Path
) -> None:
    target = tmp_path / "target"
    done = hearth_cli(target, "import", str(exported), wait=True)
    assert done.returncode == 0, done.stderr
    assert "memory: not signed by this installation: it is signed by another installation" in done.stdout
    assert "every fact it brings waits for your review (1): hearth memory ann review" in done.stdout

    async def main() -> None:
        async with HostProcess(target) as host:
            assert (await host.call("memory.list", {"agentId": "ann"}))["records"] == []
            queue = (await host.call("memory.list", {"agentId": "ann", "view": "proposed"}))["records"]
            assert [(r["text"], r["source"]) for r in queue] == [(KEPT, "tool:archive")]
            assert (await host.call("memory.verify", {"agentId": "ann"}))["ok"]
            await host.call("memory.review", {"agentId": "ann", "recordId": queue[0]["id"], "decision": "confirm"})
            current = (await host.call("memory.list", {"agentId": "ann"}))["records"]
            assert [(r["text"], r["trust"]) for r in current] == [(KEPT, "confirmed")]
            assert (await host.call("secrets.list", {}))["names"] == []

    asyncio.run(main())


def test_a_tampered_archive_is_refused_naming_the_first_bad_record(exported: Path, tmp_path: Path) -> None:
    contents = members(exported)
    lines = contents["memory/ledger.jsonl"].splitlines(keepends=True)
    record = json.loads(lines[0])
    record["text"] = "The user grows lemons in the garden."
    lines[0] = (json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n").encode()
    bad = pack({**contents, "memory/ledger.jsonl": b"".join(lines)}, tmp_path / "bad.hearth")
    target = tmp_path / "target"

    async def main() -> None:
        async with HostProcess(target) as host:
            with pytest.raises(JsonRpcError) as refused:
                await host.call("agent.import", {"path": str(bad)})
            assert refused.value.code == INVALID_PARAMS
            assert refused.value.data["firstBadSeq"] == 1 and refused.value.data["firstBadId"] == record["id"]
            assert (await host.call("agent.list", {}))["agents"] == []
            done = await hearth_async(target, "import", str(bad))
            assert done.returncode == 1 and record["id"] in done.stderr

    asyncio.run(main())


def _entry(name: str, kind: bytes, size: int = 0, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname = kind, size, link
    return info


@pytest.mark.parametrize(
    "extra",
    [
        _entry("../escaped.txt", tarfile.REGTYPE, 4),
        _entry("/tmp/absolute.txt", tarfile.REGTYPE, 4),
        _entry("memory/MEMORY.md", tarfile.SYMTYPE, link="/etc/passwd"),
        _entry("scratch/hard", tarfile.LNKTYPE, link="profile.json"),
        _entry("dev-null", tarfile.CHRTYPE),
    ],
    ids=["dot-dot", "absolute", "symlink", "hardlink", "device"],
)
def test_an_archive_member_that_could_escape_is_refused_and_nothing_is_written(
    exported: Path, tmp_path: Path, extra: tarfile.TarInfo
) -> None:
    unsafe = pack(members(exported), tmp_path / "unsafe.hearth", [extra])
    target = tmp_path / "deep" / "target"

    async def main() -> None:
        async with HostProcess(target) as host:
            with pytest.raises(JsonRpcError) as refused:
                await host.call("agent.import", {"path": str(unsafe)})
            assert refused.value.code == INVALID_PARAMS
            assert (await host.call("agent.list", {}))["agents"] == []

    asyncio.run(main())
    assert not (tmp_path / "deep" / "escaped.txt").exists() and not Path("/tmp/absolute.txt").exists()
    assert not list((target / "agents").iterdir())


HOSTILE_MEMBER = 200 << 20


def _hostile_archive() -> tuple[bytes, bytes]:
    """A gzipped tar whose transcript is 200 MiB of one endless line, cut in two: the first part (every small
    member and the transcript's header) and the rest (about 200 KiB of compressed zeros)."""
    head = b""
    for name, data in {
        "hearth-agent.json": b'{"format": "hearth-agent", "version": 2, "agentId": "hostile"}',
        "profile.json": b'{"name": "hostile"}',
        "settings.json": b"{}",
    }.items():
        info = tarfile.TarInfo(name)
        info.size = len(data)
        head += info.tobuf() + data + b"\0" * (-len(data) % 512)
    info = tarfile.TarInfo("transcript.jsonl")
    info.size = HOSTILE_MEMBER
    head += info.tobuf()
    packer = zlib.compressobj(wbits=31)  # the gzip format, written as a stream
    first = packer.compress(head) + packer.flush(zlib.Z_SYNC_FLUSH)
    zeros = b"0" * (1 << 20)
    rest = b"".join(packer.compress(zeros) for _ in range(HOSTILE_MEMBER >> 20)) + packer.flush()
    return first, rest


def _peak_rss(pid: int) -> int:
    """The process's peak resident memory so far, in bytes (VmHWM)."""
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    return next(int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmHWM:"))


def test_the_host_answers_another_client_while_it_reads_a_hostile_archive_and_does_not_hold_it(tmp_path: Path) -> None:
    """The archive comes through a pipe, so the import is still reading, for certain, while the pings are answered."""
    pipe = tmp_path / "hostile.hearth"
    os.mkfifo(pipe)
    first, rest = _hostile_archive()
    started, more = threading.Event(), threading.Event()

    def write() -> None:
        with open(pipe, "wb") as out:  # opens once the host opens the pipe to read it
            out.write(first)
            out.flush()
            started.set()
            more.wait(120)
            try:
                out.write(rest)
            except BrokenPipeError:
                pass  # the host stopped reading once it had seen enough to refuse

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    data = tmp_path / "data"

    async def main() -> None:
        async with HostProcess(data) as host:
            assert host.process is not None
            before = _peak_rss(host.process.pid)
            importing = asyncio.create_task(host.call("agent.import", {"path": str(pipe)}, timeout=120))
            assert await asyncio.to_thread(started.wait, 60)
            second = await attach_or_start(data, Router(), client="second")
            try:
                for _ in range(3):
                    assert await second.peer.request("ping", {}, timeout=10) == {}
                assert (await second.peer.request("agent.list", {}, timeout=10))["agents"] == []
                assert not importing.done(), "the import waits for the rest of the archive"
            finally:
                await second.close()
            more.set()
            with pytest.raises(JsonRpcError) as refused:
                await importing
            assert refused.value.code == INVALID_PARAMS
            assert refused.value.data["member"] == "transcript.jsonl" and refused.value.data["cap"] == 16 << 20
            assert _peak_rss(host.process.pid) - before < 64 << 20, "the member is never held whole"
            assert (await host.call("agent.list", {}))["agents"] == []

    asyncio.run(main())
    writer.join(30)
    assert [p.name for p in (data / "agents").iterdir()] == []
