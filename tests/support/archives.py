"""Agent archives for the e2e suites: read one's members, pack members (honest or forged) back, re-seal a ledger
as a forger can (the chain is plain SHA-256), and run `hearth` against a data dir.

`hearth` here attaches to a host the test already runs on that data dir; where none runs, it starts one in
the background, and `hearth_cli(..., wait=True)` waits for that host to stop (it holds the data dir's lock).
"""

from __future__ import annotations

import asyncio
import gzip
import io
import json
import subprocess
import sys
import tarfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from host.memory.records import GENESIS, Record, canonical_json, content_signature, seal
from tests.support.background_host import wait_until_stopped
from tests.support.host_process import REPO_ROOT

__all__ = ["members", "pack", "reseal", "forged_record", "gunzipped", "hearth_cli", "hearth_async"]


def members(archive: Path) -> dict[str, bytes]:
    """Every regular member of `archive`, by name."""
    with tarfile.open(archive, "r:gz") as tar:
        return {m.name: (tar.extractfile(m) or io.BytesIO()).read() for m in tar if m.isfile()}


def pack(contents: dict[str, bytes], path: Path, extra: list[tarfile.TarInfo] | None = None) -> Path:
    """Write `contents` as a gzipped tar at `path`, then `extra` entries (regular ones filled with `x`)."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data in contents.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for info in extra or []:
            tar.addfile(info, io.BytesIO(b"x" * info.size) if info.isreg() else None)
    return path


def forged_record(**fields: Any) -> Record:
    """A draft as a forger writes it: any source, any trust; `seq`, `prev` and `hash` come from `reseal`."""
    text = fields.get("text")
    base: dict[str, Any] = {"seq": 0, "observed_at": "2026-01-01T00:00:00.000000Z", "source": "human"}
    if text is not None:
        base["sig"] = content_signature(text)
    return Record(**(base | fields))


def reseal(ledger: bytes, edit: Callable[[list[Record]], list[Record]]) -> bytes:
    """The ledger after `edit` changed its records, sealed again into a chain that verifies, as anyone can."""
    records = [Record.from_json(json.loads(line)) for line in ledger.splitlines()]
    lines, prev = [], GENESIS
    for seq, record in enumerate(edit(records), start=1):
        if record.is_fact and record.text is not None:
            record = replace(record, sig=content_signature(record.text))
        sealed = seal(record, seq=seq, prev=prev)
        prev = sealed.hash
        lines.append(canonical_json(sealed.to_json()) + "\n")
    return "".join(lines).encode("utf-8")


def hearth_cli(data_dir: Path, *args: str, wait: bool = False) -> subprocess.CompletedProcess[str]:
    """Run `hearth ARGS --data-dir DATA_DIR`; with `wait`, wait for the host it started to stop."""
    done = subprocess.run(
        [sys.executable, "-m", "hearth", *args, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
    )
    if wait:
        wait_until_stopped(data_dir)
    return done


async def hearth_async(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`hearth_cli` from a test's event loop, against the host the test runs (the loop stays free meanwhile)."""
    return await asyncio.to_thread(hearth_cli, data_dir, *args)


def gunzipped(archive: Path) -> bytes:
    """The archive's tar bytes."""
    return gzip.decompress(archive.read_bytes())
