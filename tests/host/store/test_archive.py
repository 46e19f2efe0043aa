"""The archive format (`host/store/archive.py`): signed packing, and a streaming read that checks every member,
caps its size before reading it, and verifies the chain and the signature."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from host.memory.records import GENESIS, Record, canonical_json, content_signature, seal
from host.store import archive
from host.store.archive import (
    KNOWLEDGE,
    LEDGER,
    MANIFEST,
    SIGNATURE,
    TRANSCRIPT,
    ArchiveError,
    TamperedArchiveError,
    pack_archive,
    read_archive,
    signature_problem,
)
from host.store.signing import SigningKey
from protocol.errors import INVALID_PARAMS

NOW = "2026-01-02T03:04:05.000000Z"


def chain(*texts: str) -> bytes:
    """A ledger of one confirmed assert per text, sealed into a chain."""
    lines, prev = [], GENESIS
    for seq, text in enumerate(texts, start=1):
        draft = Record(
            seq=0, id=f"m-{seq:012x}", op="assert", source="user", observed_at=NOW, trust="confirmed",
            tier="note", text=text, sig=content_signature(text),
        )  # fmt: skip
        record = seal(draft, seq=seq, prev=prev)
        prev = record.hash
        lines.append(canonical_json(record.to_json()) + "\n")
    return "".join(lines).encode("utf-8")


TRANSCRIPT_BYTES = (
    b'{"seq":1,"ts":"t","type":"user","text":"hi"}\n{"seq":2,"ts":"t","type":"assistant","runId":"r","text":"hello"}\n'
)


def files(changes: dict[str, bytes] | None = None) -> dict[str, bytes]:
    base = {
        "profile.json": b'{"name": "ann"}',
        "settings.json": b"{}",
        TRANSCRIPT: TRANSCRIPT_BYTES,
        LEDGER: chain("The user grows quinces."),
    }
    return base | (changes or {})


def packed(tmp_path: Path, key: SigningKey, members: dict[str, bytes] | None = None) -> Path:
    path = tmp_path / "ann.hearth"
    tmp_path.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pack_archive({"agentId": "ann", "name": "ann"}, members or files(), key.sign))
    return path


def members_of(path: Path) -> dict[str, bytes]:
    with tarfile.open(path, "r:gz") as tar:
        return {m.name: (tar.extractfile(m) or io.BytesIO()).read() for m in tar}


def raw_tar(*entries: tuple[tarfile.TarInfo, bytes]) -> bytes:
    """A gzipped tar written block by block, so a header may declare more than follows it."""
    out = io.BytesIO()
    for info, data in entries:
        out.write(info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape"))
        out.write(data + b"\0" * (-len(data) % 512))
    return gzip.compress(out.getvalue() + b"\0" * 1024)


def entry(name: str, size: int, kind: bytes = tarfile.REGTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.type = size, kind
    return info


def staging(tmp_path: Path) -> Path:
    path = tmp_path / "staging"
    path.mkdir(parents=True)
    return path


def test_an_archive_read_back_on_the_installation_that_packed_it_carries_its_signature(tmp_path: Path) -> None:
    key = SigningKey(tmp_path)
    read = read_archive(packed(tmp_path, key), staging(tmp_path))
    assert signature_problem(read, key.check) is None
    assert [r.text for r in read.records] == ["The user grows quinces."] and read.events == 2
    assert (tmp_path / "staging" / TRANSCRIPT).read_bytes().count(b"\n") == 2
    assert key.path.read_bytes().strip() not in b"".join(members_of(packed(tmp_path / "x", key)).values())


def test_another_installation_or_a_missing_signature_is_named_as_the_reason(tmp_path: Path) -> None:
    key = SigningKey(tmp_path / "ours")
    path = packed(tmp_path, key)
    read = read_archive(path, staging(tmp_path))
    assert signature_problem(read, SigningKey(tmp_path / "theirs").check) == "it is signed by another installation"
    unsigned = {name: data for name, data in members_of(path).items() if name != SIGNATURE}
    plain = tmp_path / "plain.hearth"
    plain.write_bytes(raw_tar(*((entry(name, len(data)), data) for name, data in unsigned.items())))
    again = read_archive(plain, staging(tmp_path / "again"))
    assert signature_problem(again, key.check) == "it carries no signature"


@pytest.mark.parametrize(
    ("change", "phrase"),
    [
        (lambda m: {LEDGER: chain("Evil Bank, account 666.")}, "another memory"),
        (lambda m: {"settings.json": b'{"toolPermission": "always"}'}, "settings.json was changed"),
        (lambda m: {SIGNATURE: m[SIGNATURE].replace(b'"mac": "', b'"mac": "0')}, "does not verify"),
        (lambda m: {SIGNATURE: b"not json"}, "not one this installation makes"),
    ],
    ids=["resealed-ledger", "edited-settings", "forged-mac", "unreadable-signature"],
)
def test_an_archive_changed_after_it_was_signed_is_not_this_installations(
    tmp_path: Path, change: Callable[[dict[str, bytes]], dict[str, bytes]], phrase: str
) -> None:
    key = SigningKey(tmp_path)
    path = packed(tmp_path, key)
    forged = tmp_path / "forged.hearth"
    members = members_of(path)
    forged.write_bytes(raw_tar(*((entry(n, len(d)), d) for n, d in (members | change(members)).items())))
    problem = signature_problem(read_archive(forged, staging(tmp_path)), key.check)
    assert problem is not None and phrase in problem


def test_a_member_declared_larger_than_its_cap_is_refused_before_a_byte_of_it_is_read(tmp_path: Path) -> None:
    huge = archive.MEMBER_CAPS[TRANSCRIPT] + 1
    path = tmp_path / "huge.hearth"
    path.write_bytes(raw_tar((entry(MANIFEST, 2), b"{}"), (entry(TRANSCRIPT, huge), b"")))
    with pytest.raises(ArchiveError) as refused:
        read_archive(path, staging(tmp_path))
    assert refused.value.code == INVALID_PARAMS
    assert refused.value.data == {"member": TRANSCRIPT, "size": huge, "cap": archive.MEMBER_CAPS[TRANSCRIPT]}
    assert not (tmp_path / "staging" / TRANSCRIPT).exists()


def test_members_together_over_the_total_cap_are_refused_naming_the_member_that_passes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archive, "TOTAL_CAP", 100)
    path = tmp_path / "big.hearth"
    path.write_bytes(raw_tar((entry("profile.json", 60), b" " * 60), (entry("settings.json", 60), b" " * 60)))
    with pytest.raises(ArchiveError) as refused:
        read_archive(path, staging(tmp_path))
    assert refused.value.data["member"] == "settings.json" and refused.value.data["cap"] == 100


def test_one_endless_transcript_line_is_refused_while_it_streams(tmp_path: Path) -> None:
    size = 40 << 20  # zeros compress to almost nothing; no line ends
    path = tmp_path / "endless.hearth"
    body = io.BytesIO()
    with tarfile.open(fileobj=body, mode="w:gz") as tar:
        for name, data in files().items():
            if name != TRANSCRIPT:
                tar.addfile(entry(name, len(data)), io.BytesIO(data))
        tar.addfile(entry(TRANSCRIPT, size), io.BytesIO(b"0" * size))
    path.write_bytes(body.getvalue())
    with pytest.raises(ArchiveError) as refused:
        read_archive(path, staging(tmp_path))
    assert refused.value.code == INVALID_PARAMS and "line 1" in refused.value.message


@pytest.mark.parametrize(
    "kind",
    [tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.GNUTYPE_LONGNAME, tarfile.SYMTYPE, tarfile.DIRTYPE],
    ids=["pax", "pax-global", "gnu-longname", "symlink", "directory"],
)
def test_an_entry_that_is_not_a_regular_file_is_refused_whatever_it_declares(tmp_path: Path, kind: bytes) -> None:
    path = tmp_path / "odd.hearth"
    path.write_bytes(
        raw_tar((entry("././@PaxHeader" if kind != tarfile.SYMTYPE else "profile.json", 1 << 30, kind), b""))
    )
    with pytest.raises(ArchiveError) as refused:
        read_archive(path, staging(tmp_path))
    assert refused.value.code == INVALID_PARAMS and refused.value.data is None


def test_a_damaged_header_or_a_cut_member_is_refused(tmp_path: Path) -> None:
    good = raw_tar((entry("profile.json", 10), b"0123456789"))
    header = bytearray(gzip.decompress(good))
    header[0] ^= 1
    for name, data in {
        "damaged": gzip.compress(bytes(header)),
        "cut": gzip.compress(gzip.decompress(good)[:520]),
    }.items():
        path = tmp_path / f"{name}.hearth"
        path.write_bytes(data)
        with pytest.raises(ArchiveError) as refused:
            read_archive(path, staging(tmp_path / name))
        assert refused.value.code == INVALID_PARAMS


def test_transcript_lines_keep_only_the_fields_of_their_event_and_an_unknown_event_is_refused(tmp_path: Path) -> None:
    key = SigningKey(tmp_path)
    smuggled = b'{"seq":1,"ts":"t","type":"user","text":"hi","toolPermission":"always","mcpServers":[{"name":"x"}]}\n'
    read_archive(packed(tmp_path, key, files({TRANSCRIPT: smuggled})), staging(tmp_path))
    written = json.loads((tmp_path / "staging" / TRANSCRIPT).read_text(encoding="utf-8"))
    assert written == {"seq": 1, "ts": "t", "type": "user", "text": "hi"}
    settings_line = b'{"seq":1,"ts":"t","type":"settings","toolPermission":"always"}\n'
    with pytest.raises(ArchiveError) as refused:
        read_archive(packed(tmp_path / "b", key, files({TRANSCRIPT: settings_line})), staging(tmp_path / "b"))
    assert refused.value.code == INVALID_PARAMS and "line 1" in refused.value.message


@pytest.mark.parametrize(
    "field", [("text", 7), ("salt", ["x"]), ("key", {"a": 1}), ("confidence", "high"), ("evidence", {"seq": "1"})]
)
def test_a_record_whose_fields_have_the_wrong_types_is_a_tampered_archive(
    tmp_path: Path, field: tuple[str, Any]
) -> None:
    line = json.loads(chain("The user grows quinces."))
    line[field[0]] = field[1]
    key = SigningKey(tmp_path)
    path = packed(tmp_path, key, files({LEDGER: (json.dumps(line) + "\n").encode()}))
    with pytest.raises(TamperedArchiveError) as refused:
        read_archive(path, staging(tmp_path))
    assert refused.value.code == INVALID_PARAMS and refused.value.data["firstBadSeq"] == 1


def test_packing_refuses_a_member_no_host_could_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(archive.MEMBER_CAPS, TRANSCRIPT, 10)
    with pytest.raises(ArchiveError) as refused:
        pack_archive({"agentId": "ann"}, files(), SigningKey(tmp_path).sign)
    assert refused.value.code == INVALID_PARAMS


def test_a_ledger_line_longer_than_any_record_is_not_read_whole_and_the_archive_is_tampered(tmp_path: Path) -> None:
    endless = b"0" * (2 << 20)
    path = packed(tmp_path, SigningKey(tmp_path), files({LEDGER: chain("The user grows quinces.") + endless}))
    with pytest.raises(TamperedArchiveError) as refused:
        read_archive(path, staging(tmp_path))
    assert refused.value.data["firstBadSeq"] == 2


KNOWN = b'{"source":{"id":"s-0a1b2c3d","path":"/docs","kind":"folder","pattern":null,"addedAt":"t"}}\n'


def test_carried_knowledge_is_signed_and_changing_or_dropping_it_is_named(tmp_path: Path) -> None:
    key = SigningKey(tmp_path)
    path = packed(tmp_path, key, files({KNOWLEDGE: KNOWN}))
    read = read_archive(path, staging(tmp_path))
    assert signature_problem(read, key.check) is None
    assert read.knowledge_file is not None and read.knowledge_file.read_bytes() == KNOWN
    members = members_of(path)
    for name, forged_members in (
        ("changed", members | {KNOWLEDGE: KNOWN.replace(b"/docs", b"/home")}),
        ("dropped", {n: d for n, d in members.items() if n != KNOWLEDGE}),
    ):
        forged = tmp_path / f"{name}.hearth"
        forged.write_bytes(raw_tar(*((entry(n, len(d)), d) for n, d in forged_members.items())))
        problem = signature_problem(read_archive(forged, staging(tmp_path / name)), key.check)
        assert problem == f"its {KNOWLEDGE} was changed after this installation signed it", name
    plain = read_archive(packed(tmp_path / "plain", key), staging(tmp_path / "plain"))
    assert plain.knowledge_file is None and signature_problem(plain, key.check) is None


@pytest.mark.parametrize("kind", [tarfile.SYMTYPE, tarfile.LNKTYPE], ids=["symlink", "hard link"])
def test_knowledge_that_is_a_link_or_larger_than_its_cap_is_refused_before_it_is_read(
    tmp_path: Path, kind: bytes
) -> None:
    huge = archive.MEMBER_CAPS[KNOWLEDGE] + 1
    for name, member in (("link", entry(KNOWLEDGE, 0, kind)), ("huge", entry(KNOWLEDGE, huge))):
        path = tmp_path / f"{name}.hearth"
        path.write_bytes(raw_tar((entry(MANIFEST, 2), b"{}"), (member, b"")))
        with pytest.raises(ArchiveError) as refused:
            read_archive(path, staging(tmp_path / name))
        assert refused.value.code == INVALID_PARAMS, name
        assert not (tmp_path / name / "staging" / ".archive-knowledge").exists()
    assert refused.value.data == {"member": KNOWLEDGE, "size": huge, "cap": archive.MEMBER_CAPS[KNOWLEDGE]}
