"""The agent archive: one gzipped tar of an agent's profile, settings, transcript and ledger, and a signature
(and its knowledge, `knowledge.jsonl`, when the person asked for it).

Packing is pure; `signature.json` signs the chain head and every other member's SHA-256. Reading streams the
file (call it in a worker thread): each member is checked from its tar header (a known name, a regular file,
within its cap and the total cap) before a byte of it is read, then read in chunks; nothing is extracted by
name. The chain is verified before anything is imported; a tampered archive is refused, the bad record named.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import stat
import tarfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from host.errors import InvalidRequestError, StorageError
from host.memory.ledger import verify_records
from host.memory.records import GENESIS, Record
from host.store.archive_transcript import TranscriptCopy
from host.store.durable import NewFile
from host.store.tar_reader import Readable, TarFormatError, TarReader

__all__ = [
    "ARCHIVE_FORMAT",
    "KNOWLEDGE",
    "LEDGER",
    "MANIFEST",
    "MEMBER_CAPS",
    "MEMBERS",
    "SIGNATURE",
    "TOTAL_CAP",
    "TRANSCRIPT",
    "AgentArchive",
    "ArchiveError",
    "TamperedArchiveError",
    "pack_archive",
    "read_archive",
    "signature_problem",
]

ARCHIVE_FORMAT = "hearth-agent"
_VERSION = 2  # 2 added signature.json; version 1 archives read as unsigned
_READABLE = (1, 2)
MANIFEST = "hearth-agent.json"
TRANSCRIPT = "transcript.jsonl"
LEDGER = "memory/ledger.jsonl"
SIGNATURE = "signature.json"
KNOWLEDGE = "knowledge.jsonl"
MEMBERS = (MANIFEST, "profile.json", "settings.json", TRANSCRIPT, LEDGER)
"""The members every archive holds; `signature.json` and `knowledge.jsonl` are the optional ones."""
_SIGNED_FORMAT = "hearth-agent-signature"
_MiB = 1 << 20
MEMBER_CAPS = {MANIFEST: _MiB, "profile.json": _MiB, "settings.json": _MiB, SIGNATURE: _MiB}
MEMBER_CAPS |= {TRANSCRIPT: 512 * _MiB, LEDGER: 64 * _MiB, KNOWLEDGE: 256 * _MiB}
"""The most bytes each member may hold; the ledger is held in memory while it is checked."""
TOTAL_CAP = 512 * _MiB
"""The most bytes all members together may hold, once decompressed."""


class ArchiveError(InvalidRequestError):
    """The file is not an agent archive this host can import (the message says what is wrong)."""


class TamperedArchiveError(ArchiveError):
    """The ledger's hash chain does not verify; `data` names the first bad record."""


@dataclass(frozen=True, slots=True)
class AgentArchive:
    """An archive's contents, checked. `ledger_file` is the ledger as it came, in the staging directory;
    `events` counts the transcript written there; `digests` has the SHA-256 of every member as read,
    `signature` the signature file if any (an empty dict when it is not a JSON object); `knowledge_file` the
    knowledge as it came, when the archive carries it (checked as it is loaded, `host.knowledge.carry`)."""

    manifest: dict[str, Any]
    profile: dict[str, Any]
    settings: dict[str, Any]
    signature: dict[str, Any] | None
    digests: dict[str, str]
    records: tuple[Record, ...]
    head: str
    events: int
    ledger_file: Path
    knowledge_file: Path | None = None


def _size(value: int) -> str:
    return f"{value / _MiB:.0f} MiB" if value >= _MiB else f"{value} bytes"


def _manifest_bytes(manifest: dict[str, Any]) -> bytes:
    head = {"format": ARCHIVE_FORMAT, "version": _VERSION, **manifest}
    return (json.dumps(head, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def _statement(digests: dict[str, str], head: str, records: int) -> dict[str, Any]:
    members = {name: digests[name] for name in (*MEMBERS, KNOWLEDGE) if name in digests}
    return {"format": _SIGNED_FORMAT, "version": 1, "head": head, "records": records, "members": members}


def pack_archive(
    manifest: dict[str, Any], files: dict[str, bytes], sign: Callable[[dict[str, Any]], dict[str, Any]]
) -> bytes:
    """The archive bytes for `files` (every member but the manifest) with `manifest` first, signed by `sign`.

    Raises:
        ArchiveError: a member is larger than an archive may carry (no host could import it).
    """
    members = {MANIFEST: _manifest_bytes(manifest), **files}
    for name, data in members.items():
        if len(data) > MEMBER_CAPS[name]:
            raise ArchiveError(
                f"the agent's {name} is {_size(len(data))}, more than an archive carries ({_size(MEMBER_CAPS[name])})"
            )
    if sum(len(data) for data in members.values()) > TOTAL_CAP:
        raise ArchiveError(f"the agent is more than an archive carries ({_size(TOTAL_CAP)} in all)")
    lines = files[LEDGER].splitlines()
    head = _last_hash(lines[-1]) if lines else GENESIS
    digests = {name: hashlib.sha256(data).hexdigest() for name, data in members.items()}
    signed = sign(_statement(digests, head, len(lines)))
    members[SIGNATURE] = (json.dumps(signed, indent=1, sort_keys=True) + "\n").encode("utf-8")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o600, 0
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _last_hash(line: bytes) -> str:
    """The chain head a ledger's last line names (what import compares with the head it computes)."""
    try:
        return str(json.loads(line)["hash"])
    except (ValueError, KeyError, TypeError):
        return ""  # not a record: the chain check refuses such a ledger before any signature counts


def _checked_name(name: str, kind: str) -> str:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or "\\" in name:
        raise ArchiveError(f"the archive member {name!r} points outside the archive; nothing was imported")
    if kind != "file":
        what = {"link": "a link", "extended": "an extended tar header"}.get(kind, "not a regular file")
        raise ArchiveError(f"the archive member {name!r} is {what}; nothing was imported")
    clean = path.as_posix()
    if clean not in MEMBER_CAPS:
        raise ArchiveError(f"the archive member {name!r} is not part of an agent archive")
    return clean


_LEDGER_FILE = ".archive-ledger"
_KNOWLEDGE_FILE = ".archive-knowledge"


def read_archive(path: Path, staging: Path) -> AgentArchive:
    """Stream and check the archive at `path` (a file or a pipe) into `staging`, the new agent's directory to be.

    The transcript is written there as `transcript.jsonl` (checked, see `TranscriptCopy`), the ledger as it
    came as `.archive-ledger` (`ledger_file`); the caller removes `staging` when anything fails.

    Raises:
        ArchiveError: unreadable, not an archive, an unsafe, unknown, repeated, missing or oversized member
            (`data` names the member and its cap), bad JSON, a record that is not a record.
        TamperedArchiveError: the ledger's hash chain does not verify (the first bad record is named).
        StorageError: the staging directory could not be written.
    """
    try:
        raw = path.expanduser().open("rb")
    except OSError as exc:
        raise ArchiveError(f"{path} cannot be read: {exc.strerror or exc}") from exc
    with raw:
        if not stat.S_ISREG(os.fstat(raw.fileno()).st_mode) and not stat.S_ISFIFO(os.fstat(raw.fileno()).st_mode):
            raise ArchiveError(f"{path} is not a file")
        try:
            stream: Readable = gzip.GzipFile(fileobj=raw, mode="rb") if raw.peek(2)[:2] == b"\x1f\x8b" else raw
            small, digests, events = _read_members(TarReader(stream), staging)
        except StorageError:
            raise
        except (TarFormatError, EOFError, zlib.error, OSError) as exc:
            raise ArchiveError(f"the file is not a readable agent archive ({exc}); nothing was imported") from exc
    missing = [name for name in MEMBERS if name not in digests]
    if missing:
        raise ArchiveError(f"the archive lacks {', '.join(missing)}")
    try:
        manifest, profile, settings = (json.loads(small[name]) for name in (MANIFEST, "profile.json", "settings.json"))
    except ValueError as exc:
        raise ArchiveError(f"the archive's manifest, profile or settings is not JSON ({exc})") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != ARCHIVE_FORMAT:
        raise ArchiveError("the file is not a Hearth agent archive")
    if manifest.get("version") not in _READABLE:
        raise ArchiveError(f"archive version {manifest.get('version')!r} is not one this host reads")
    if not isinstance(profile, dict) or not isinstance(settings, dict):
        raise ArchiveError("the archive's profile or settings is not a JSON object")
    records = _ledger_records(staging / _LEDGER_FILE)
    report = verify_records(records)
    if not report.ok:
        where = f"record {report.first_bad_seq}" + (f" ({report.first_bad_id})" if report.first_bad_id else "")
        raise TamperedArchiveError(
            f"the archive's memory does not verify at {where}: {report.problem}; nothing was imported",
            data={"firstBadSeq": report.first_bad_seq, "firstBadId": report.first_bad_id, "problem": report.problem},
        )
    checked = tuple(record for record in records if record is not None)
    signature = _signature(small.get(SIGNATURE))
    return AgentArchive(
        manifest,
        profile,
        settings,
        signature,
        digests,
        checked,
        report.head,
        events,
        staging / _LEDGER_FILE,
        staging / _KNOWLEDGE_FILE if KNOWLEDGE in digests else None,
    )


def _read_members(reader: TarReader, staging: Path) -> tuple[dict[str, bytes], dict[str, str], int]:
    """Every member checked and read: the small ones returned, the transcript and ledger written to `staging`;
    also the SHA-256 of each, and the number of transcript events."""
    small: dict[str, bytes] = {}
    digests: dict[str, str] = {}
    total = events = 0
    for entry in reader.entries():
        name = _checked_name(entry.name, entry.kind)
        if name in digests:
            raise ArchiveError(f"the archive holds {name!r} twice")
        cap = MEMBER_CAPS[name]
        if entry.size > cap:
            raise ArchiveError(
                f"the archive member {name!r} is {_size(entry.size)}, more than the {_size(cap)} it may hold; "
                "nothing was imported",
                data={"member": name, "size": entry.size, "cap": cap},
            )
        total += entry.size
        if total > TOTAL_CAP:
            raise ArchiveError(
                f"the archive holds more than {_size(TOTAL_CAP)} in all (member {name!r} passes it); "
                "nothing was imported",
                data={"member": name, "size": entry.size, "cap": TOTAL_CAP},
            )
        digest = hashlib.sha256()
        if name == TRANSCRIPT:
            copy = TranscriptCopy(staging / TRANSCRIPT, ArchiveError)
            try:
                for chunk in reader.chunks():
                    digest.update(chunk)
                    copy.feed(chunk)
                events = copy.close()
            finally:
                copy.discard()
        elif name in (LEDGER, KNOWLEDGE):
            ledger = NewFile(
                staging / (_LEDGER_FILE if name == LEDGER else _KNOWLEDGE_FILE), "the archive being imported"
            )
            try:
                for chunk in reader.chunks():  # read errors are the archive's, write errors the disk's
                    digest.update(chunk)
                    ledger.write(chunk)
                ledger.finish()
            finally:
                ledger.discard()
        else:
            parts = []
            for chunk in reader.chunks():
                digest.update(chunk)
                parts.append(chunk)
            small[name] = b"".join(parts)
        digests[name] = digest.hexdigest()
    return small, digests, events


_TEXT_FIELDS = ("source", "observed_at", "prev", "hash", "scope")
_OPTIONAL_TEXT = (
    *("trust", "key", "tier", "tool_call_id", "basis", "valid_from", "valid_until", "replaces", "target"),
    *("decision", "text", "reason", "sig", "salt"),
)


def _well_typed(record: Record) -> bool:
    """Whether every field has the type the memory code relies on (a parsed line may hold any JSON)."""
    if not all(isinstance(getattr(record, name), str) for name in _TEXT_FIELDS):
        return False
    if not all(isinstance(getattr(record, name), str | None) for name in _OPTIONAL_TEXT):
        return False
    lists = (
        *record.targets,
        *record.scrubbed,
        *record.conflicts_with,
        *(part for pair in record.commit for part in pair),
    )
    confidence = record.confidence
    return (
        all(isinstance(item, str) for item in lists)
        and (record.evidence_seq is None or type(record.evidence_seq) is int)
        and (confidence is None or (isinstance(confidence, int | float) and not isinstance(confidence, bool)))
    )


_LEDGER_LINE_CAP = _MiB  # a record is a few KiB at most (its text is at most 4000 characters)


def _ledger_records(path: Path) -> list[Record | None]:
    """The records of the ledger file; None for a line that is not one (the chain check names it), and nothing
    read past a line longer than any record, so no line is held whole beyond that."""
    out: list[Record | None] = []
    with path.open("rb") as lines:
        while line := lines.readline(_LEDGER_LINE_CAP + 1):
            if len(line) > _LEDGER_LINE_CAP:
                out.append(None)
                break
            try:
                record: Record | None = Record.from_json(json.loads(line))
            except (ValueError, TypeError):
                record = None
            out.append(record if record is not None and _well_typed(record) else None)
    return out


def _signature(data: bytes | None) -> dict[str, Any] | None:
    if data is None:
        return None
    try:
        value = json.loads(data)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def signature_problem(archive: AgentArchive, check: Callable[[dict[str, Any]], str | None]) -> str | None:
    """None when `archive` carries this installation's signature over exactly what it holds; else why not.

    Args:
        archive: a checked archive.
        check: the installation key's check (`SigningKey.check`): None when it made the signature.
    """
    if archive.signature is None:
        return "it carries no signature"
    problem = check(archive.signature)
    if problem is not None:
        return problem
    signed = archive.signature
    if signed.get("head") != archive.head or signed.get("records") != len(archive.records):
        return "its signature is for another memory: the ledger's chain head is not the one this installation signed"
    members = signed.get("members")
    for name in (*MEMBERS, KNOWLEDGE):  # knowledge signed and then taken out is a change too
        if not isinstance(members, dict) or members.get(name) != archive.digests.get(name):
            return f"its {name} was changed after this installation signed it"
    return None
