"""A real host on a real, full 2 MiB tmpfs (issue 10 item 13): it stays up, the failure is named, and every
write it acknowledged is still there after a restart."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from protocol.errors import STORAGE_FULL, JsonRpcError
from tests.support.host_process import HostProcess, scripted_model
from tests.support.small_disk import fill, small_tmpfs

BIG_REPLY = "b" * 20000  # five pages of tmpfs: more than the disk has left when it comes
RULES = [
    {"match": r"^msg (\d+)", "on": "user", "reply": r"ok \1"},
    {"match": r"^big", "on": "user", "reply": BIG_REPLY, "chunkChars": 5000},
]
PADDING = "p" * 300
PAGE = 4096


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    with small_tmpfs(tmp_path / "disk", "size=2m") as mount_point:
        yield mount_point


async def _turn(host: HostProcess, text: str) -> tuple[dict[str, Any] | None, JsonRpcError | None]:
    """Send `text`; (the acknowledgement, None) once its run ended, or (None, the refusal)."""
    try:
        sent = await host.call("agent.send", {"agentId": "ann", "text": text})
    except JsonRpcError as exc:
        return None, exc
    await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
    return sent, None


def test_a_full_disk_is_a_named_error_the_host_survives_and_acknowledged_writes_survive(
    small_disk: Path, tmp_path: Path
) -> None:
    data_dir, log = small_disk / "hearth", tmp_path / "host.log"
    ann_dir = data_dir / "agents" / "ann"
    acknowledged: list[str] = []
    refused: list[tuple[str, JsonRpcError]] = []

    async def main() -> None:
        async with HostProcess(data_dir, stderr_to=log) as host:
            settings = scripted_model(*RULES)
            settings["memory"] = False
            await host.call("agent.create", {"name": "ann", "settings": settings})
            sent, _ = await _turn(host, "msg 0")
            assert sent is not None
            acknowledged.append("msg 0")

            # A turn whose reply does not fit: three pages are left, the reply needs five.
            (small_disk / "reserve").write_bytes(b"r" * 3 * PAGE)
            fill(small_disk / "filler")
            (small_disk / "reserve").unlink()
            for i in (1, 2):
                sent, refusal = await _turn(host, f"big {i}")
                assert refusal is None and sent is not None, "the message itself fitted"
                acknowledged.append(f"big {i}")
                ended = await host.wait_for("agent.ended", lambda p, r=sent["runId"]: p["runId"] == r)
                assert ended["reason"] == "error"
                error = await host.wait_for("agent.error", lambda p, r=sent["runId"]: p["runId"] == r)
                assert error["code"] == STORAGE_FULL, "the run ended with the storage error, and the host went on"

            # Nothing left at all: messages are refused, named, and not stored.
            fill(small_disk / "filler-2")
            for i in range(3, 6):
                text = f"msg {i} {PADDING}"
                sent, refusal = await _turn(host, text)
                if refusal is None:
                    acknowledged.append(text)
                else:
                    refused.append((text, refusal))
            assert refused, "the disk filled up and something was refused"
            for _, refusal in refused:
                assert refusal.code == STORAGE_FULL
                assert refusal.data["path"] in (str(ann_dir / "transcript.jsonl"), str(ann_dir / "inbox.json"))
            assert await host.call("ping") == {}
            assert (await host.call("host.status"))["kernel"]["state"] == "up"

            for name in ("filler", "filler-2"):
                (small_disk / name).unlink()
            sent, refusal = await _turn(host, "msg 99 after space was freed")
            assert refusal is None and sent is not None
            acknowledged.append("msg 99 after space was freed")
            assert host.process is not None and host.process.returncode is None, "the host stayed up throughout"

        async with HostProcess(data_dir, stderr_to=log) as host:
            page = await host.call("agent.transcript", {"agentId": "ann", "limit": 1000})
            users = [e["text"] for e in page["events"] if e["type"] == "user"]
            for text in acknowledged:
                assert users.count(text) == 1, f"an acknowledged message is there exactly once: {text[:8]}"
            for text, refusal in refused:
                # Refused before the agent's inbox held it: never stored. Held by the inbox but refused by the
                # transcript: it waited in its place and ran once there was room, once.
                expected = (0,) if refusal.data["path"] == str(ann_dir / "inbox.json") else (0, 1)
                assert users.count(text) in expected
            assert BIG_REPLY not in json.dumps(page["events"]), "no reply was stored half-written"
            seqs = [e["seq"] for e in page["events"]]
            assert seqs == list(range(1, len(seqs) + 1)), "no seq was given twice or skipped"
            ends = [e for e in page["events"] if e["type"] == "ended"]
            assert len(ends) == len({e["runId"] for e in ends}), "every run ended once"

    asyncio.run(main())
    lines = (data_dir / "agents/ann/transcript.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(line) for line in lines[:-1]), "every line is whole"
    # No failure fell through to "Internal error": each was named where it happened.
    assert "unhandled error in a request handler" not in log.read_text(encoding="utf-8")
