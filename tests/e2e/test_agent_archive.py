"""Issue 11.6 through the real host and CLI: an agent you can carry. One archive holds its profile, settings,
transcript and ledger (no secrets, nothing derived, no erased text); import verifies the chain, refuses a
tampered or unsafe archive, and the imported agent answers from its memory at once."""

from __future__ import annotations

import asyncio
import gzip
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from protocol.errors import CONFLICT, INVALID_PARAMS, JsonRpcError
from tests.support.background_host import wait_until_stopped
from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model

ERASED = "The user's childhood nickname was Pippin."
KEPT = "The user grows quinces in the garden."
RULES = [{"match": ".*", "reply": "ok"}]


def _hearth(*args: str) -> subprocess.CompletedProcess[str]:
    """Run a `hearth` command, then wait for the background host it started to stop (it holds the lock)."""
    done = subprocess.run(
        [sys.executable, "-m", "hearth", *args], capture_output=True, text=True, cwd=REPO_ROOT, timeout=120
    )
    if "--data-dir" in args:
        wait_until_stopped(Path(args[args.index("--data-dir") + 1]))
    return done


def _members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive, "r:gz") as tar:
        return {m.name: (tar.extractfile(m) or io.BytesIO()).read() for m in tar if m.isfile()}


def _repack(members: dict[str, bytes], path: Path, extra: list[tarfile.TarInfo] | None = None) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for info in extra or []:
            tar.addfile(info, io.BytesIO(b"x" * info.size) if info.isreg() else None)
    return path


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An agent with a kept fact, an erased one, a secret and a turn, exported with `hearth export`."""
    tmp_path = tmp_path_factory.mktemp("exported")
    source = tmp_path / "source"

    async def prepare() -> None:
        async with HostProcess(source) as host:
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(*RULES)})
            await host.call("secrets.set", {"name": "openai", "value": "sk-test-not-a-real-key-0000000000"})
            kept = await host.call("memory.note", {"agentId": "ann", "text": KEPT})
            gone = await host.call("memory.note", {"agentId": "ann", "text": ERASED})
            await host.call("memory.erase", {"agentId": "ann", "recordId": gone["record"]["id"]})
            await host.send_and_wait("ann", "What grows in my garden?")
            assert kept["outcome"] == "recorded"

    asyncio.run(prepare())
    archive = tmp_path / "ann.hearth"
    done = _hearth("export", "ann", str(archive), "--data-dir", str(source))
    assert done.returncode == 0, done.stderr
    assert "memory records" in done.stdout
    return archive


def test_the_archive_holds_profile_settings_transcript_and_ledger_and_nothing_else(exported: Path) -> None:
    members = _members(exported)
    assert sorted(members) == [
        "hearth-agent.json",
        "memory/ledger.jsonl",
        "profile.json",
        "settings.json",
        "transcript.jsonl",
    ]
    everything = b"".join(members.values()) + gzip.decompress(exported.read_bytes())
    assert b"Pippin" not in everything, "an erased fact's text is in no part of the archive"
    assert b"sk-test" not in everything and KEPT.encode() in members["memory/ledger.jsonl"]
    assert exported.stat().st_mode & 0o777 == 0o600
    again = _hearth("export", "ann", str(exported), "--data-dir", str(exported.parent / "source"))
    assert again.returncode == 1 and "exists" in again.stderr, "an archive is never written over a file"


def test_an_imported_agent_answers_from_its_memory_at_once(exported: Path, tmp_path: Path) -> None:
    target = tmp_path / "target"
    done = _hearth("import", str(exported), "--data-dir", str(target))
    assert done.returncode == 0, done.stderr
    wait_until_stopped(target)  # the host `hearth import` started stops once idle; this test starts its own

    async def main() -> None:
        async with HostProcess(target) as host:
            hits = await host.call("memory.search", {"agentId": "ann", "query": "quinces"})
            assert [h["record"]["text"] for h in hits["hits"]] == [KEPT]
            assert (await host.call("memory.verify", {"agentId": "ann"}))["ok"]
            page = await host.call("agent.transcript", {"agentId": "ann"})
            assert [e["type"] for e in page["events"]][:2] == ["user", "context"]
            await host.send_and_wait("ann", "And now?")
            assert (await host.call("secrets.list", {}))["names"] == []
            with pytest.raises(JsonRpcError) as taken:
                await host.call("agent.import", {"path": str(exported)})
            assert taken.value.code == CONFLICT
            other = await host.call("agent.import", {"path": str(exported), "agentId": "ann-copy"})
            assert other["agent"]["agentId"] == "ann-copy" and other["records"] >= 3

    asyncio.run(main())
    assert KEPT in (target / "agents/ann/prompt-cache.json").read_text(encoding="utf-8")
    assert (target / "agents/ann/memory/index.sqlite").is_file() and (target / "agents/ann/memory/MEMORY.md").is_file()


def test_a_tampered_archive_is_refused_naming_the_first_bad_record(exported: Path, tmp_path: Path) -> None:
    members = _members(exported)
    lines = members["memory/ledger.jsonl"].splitlines(keepends=True)
    record = json.loads(lines[0])
    record["text"] = "The user grows lemons in the garden."
    lines[0] = (json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n").encode()
    bad = _repack({**members, "memory/ledger.jsonl": b"".join(lines)}, tmp_path / "bad.hearth")
    target = tmp_path / "target"

    async def main() -> None:
        async with HostProcess(target) as host:
            with pytest.raises(JsonRpcError) as refused:
                await host.call("agent.import", {"path": str(bad)})
            assert refused.value.code == INVALID_PARAMS
            assert refused.value.data["firstBadSeq"] == 1 and refused.value.data["firstBadId"] == record["id"]
            assert (await host.call("agent.list", {}))["agents"] == []

    asyncio.run(main())
    done = _hearth("import", str(bad), "--data-dir", str(target))
    assert done.returncode == 1 and record["id"] in done.stderr


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
    unsafe = _repack(_members(exported), tmp_path / "unsafe.hearth", [extra])
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
