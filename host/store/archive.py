"""The agent archive: one gzipped tar of an agent's profile, settings, transcript and memory ledger.

Writing is pure (files in, bytes out). Reading never extracts anything to disk: each member is checked
(a regular file with one of the known names: no absolute path, no `..`, no link, no device) and read into
memory, so a crafted archive cannot write outside where the importer puts it. The ledger's hash chain is
verified before anything is imported, and a tampered archive is refused with the first bad record named.
"""

from __future__ import annotations

import io
import json
import tarfile
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from host.errors import InvalidRequestError
from host.memory.ledger import verify_records
from host.memory.records import Record

__all__ = [
    "ARCHIVE_FORMAT",
    "MEMBERS",
    "AgentArchive",
    "ArchiveError",
    "TamperedArchiveError",
    "pack_archive",
    "unpack_archive",
]

ARCHIVE_FORMAT = "hearth-agent"
_VERSION = 1
MANIFEST = "hearth-agent.json"
MEMBERS = (MANIFEST, "profile.json", "settings.json", "transcript.jsonl", "memory/ledger.jsonl")
"""Every member an archive may hold; all are required."""
_MAX_MEMBER = 1 << 31


class ArchiveError(InvalidRequestError):
    """The file is not an agent archive this host can import (the message says what is wrong)."""


class TamperedArchiveError(ArchiveError):
    """The ledger's hash chain does not verify; `data` names the first bad record."""


@dataclass(frozen=True, slots=True)
class AgentArchive:
    """An archive's contents, checked: the manifest and the raw bytes of each member."""

    manifest: dict[str, Any]
    files: dict[str, bytes]
    records: int
    events: int


def pack_archive(manifest: dict[str, Any], files: dict[str, bytes]) -> bytes:
    """The archive bytes for `files` (member name → bytes) with `manifest` first. Pure."""
    buffer = io.BytesIO()
    head = {"format": ARCHIVE_FORMAT, "version": _VERSION, **manifest}
    members = {MANIFEST: (json.dumps(head, ensure_ascii=False, indent=1) + "\n").encode("utf-8"), **files}
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o600, 0
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _checked_name(member: tarfile.TarInfo) -> str:
    path = PurePosixPath(member.name)
    if path.is_absolute() or ".." in path.parts or "\\" in member.name:
        raise ArchiveError(f"the archive member {member.name!r} points outside the archive; nothing was imported")
    if not member.isreg():
        kind = "a link" if member.issym() or member.islnk() else "not a regular file"
        raise ArchiveError(f"the archive member {member.name!r} is {kind}; nothing was imported")
    name = path.as_posix()
    if name not in MEMBERS:
        raise ArchiveError(f"the archive member {member.name!r} is not part of an agent archive")
    if member.size > _MAX_MEMBER:
        raise ArchiveError(f"the archive member {name!r} is too large")
    return name


def _ledger_records(data: bytes) -> list[Record | None]:
    out: list[Record | None] = []
    for line in data.splitlines():
        try:
            out.append(Record.from_json(json.loads(line)))
        except ValueError:
            out.append(None)
    return out


def _count_events(data: bytes) -> int:
    last = 0
    for number, line in enumerate(data.splitlines(), start=1):
        try:
            event = json.loads(line)
        except ValueError:
            raise ArchiveError(f"transcript line {number} of the archive is not JSON") from None
        if not isinstance(event, dict) or not isinstance(event.get("seq"), int) or event["seq"] <= last:
            raise ArchiveError(f"transcript line {number} of the archive is out of order")
        last = event["seq"]
    return last


def unpack_archive(data: bytes) -> AgentArchive:
    """Read and check an archive held in memory.

    Raises:
        ArchiveError: not a readable archive, an unsafe or unknown member, a missing member, bad JSON.
        TamperedArchiveError: the ledger's hash chain does not verify (the first bad record is named).
    """
    files: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            for member in tar:
                name = _checked_name(member)
                if name in files:
                    raise ArchiveError(f"the archive holds {name!r} twice")
                handle = tar.extractfile(member)
                if handle is None:
                    raise ArchiveError(f"the archive member {name!r} cannot be read")
                files[name] = handle.read()
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ArchiveError(f"the file is not a readable agent archive ({exc})") from exc
    missing = [name for name in MEMBERS if name not in files]
    if missing:
        raise ArchiveError(f"the archive lacks {', '.join(missing)}")
    try:
        manifest = json.loads(files.pop(MANIFEST))
        profile = json.loads(files["profile.json"])
        json.loads(files["settings.json"])
    except ValueError as exc:
        raise ArchiveError(f"the archive's manifest, profile or settings is not JSON ({exc})") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != ARCHIVE_FORMAT:
        raise ArchiveError("the file is not a Hearth agent archive")
    if manifest.get("version") != _VERSION:
        raise ArchiveError(f"archive version {manifest.get('version')!r} is not one this host reads")
    if not isinstance(profile, dict):
        raise ArchiveError("the archive's profile is not a JSON object")
    records = _ledger_records(files["memory/ledger.jsonl"])
    report = verify_records(records)
    if not report.ok:
        where = f"record {report.first_bad_seq}" + (f" ({report.first_bad_id})" if report.first_bad_id else "")
        raise TamperedArchiveError(
            f"the archive's memory does not verify at {where}: {report.problem}; nothing was imported",
            data={"firstBadSeq": report.first_bad_seq, "firstBadId": report.first_bad_id, "problem": report.problem},
        )
    return AgentArchive(manifest, files, report.count, _count_events(files["transcript.jsonl"]))
