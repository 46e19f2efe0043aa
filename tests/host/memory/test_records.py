"""Records: canonical form, hash over the chained fields, salted commitments, signatures, instants."""

from __future__ import annotations

import json

import pytest

from host.memory.records import (
    RECORD_FIELDS,
    RECORD_KEYS,
    Record,
    canonical_json,
    chain_hash,
    commitment,
    content_signature,
    is_record_id,
    new_record_id,
    seal,
    to_instant,
)


def draft(text: str = "User likes tea") -> Record:
    return Record(
        seq=0,
        id="m-0123456789ab",
        op="assert",
        source="user",
        observed_at="2026-01-01T00:00:00.000000Z",
        trust="confirmed",
        tier="note",
        text=text,
        sig=content_signature(text),
    )


def test_a_sealed_record_commits_to_its_text_with_a_salt_and_round_trips() -> None:
    record = seal(draft(), seq=1, prev="0" * 64)
    assert record.salt is not None and dict(record.commit)["text"] == commitment(record.salt, "User likes tea")
    assert record.hash == chain_hash(record)
    assert Record.from_json(json.loads(json.dumps(record.to_json()))) == record


def test_the_hash_does_not_cover_the_text_so_erasing_it_keeps_the_hash() -> None:
    record = seal(draft(), seq=1, prev="0" * 64)
    erased = record.without_content()
    assert erased.text is None and erased.salt is None and chain_hash(erased) == record.hash
    assert "User likes tea" not in json.dumps(erased.to_json())


def test_the_hash_covers_everything_else() -> None:
    record = seal(draft(), seq=1, prev="0" * 64)
    assert chain_hash(Record.from_json({**record.to_json(), "tier": "profile"})) != record.hash
    assert chain_hash(Record.from_json({**record.to_json(), "prev": "1" * 64})) != record.hash


def test_two_salts_give_two_commitments_for_the_same_text() -> None:
    one, two = seal(draft(), seq=1, prev="0" * 64), seal(draft(), seq=1, prev="0" * 64)
    assert dict(one.commit)["text"] != dict(two.commit)["text"]


def test_the_signature_ignores_case_punctuation_and_spacing_but_not_words() -> None:
    assert content_signature("User's cat is  Miso.") == content_signature("users CAT is miso")
    assert content_signature("User's cat is Miso") != content_signature("User's dog is Miso")


def test_instants_are_normalised_to_one_comparable_utc_form() -> None:
    assert to_instant("2024-03-01") == "2024-03-01T00:00:00.000000Z"
    assert to_instant("2024-03-01T10:00:00+02:00") == "2024-03-01T08:00:00.000000Z"
    with pytest.raises(ValueError):
        to_instant("last spring")


def test_record_ids_are_short_and_recognisable() -> None:
    assert is_record_id(new_record_id()) and not is_record_id("m-XYZ")


def test_a_line_without_required_fields_is_refused() -> None:
    with pytest.raises(ValueError):
        Record.from_json({"seq": 1, "op": "assert"})
    with pytest.raises(ValueError):
        Record.from_json({**seal(draft(), seq=1, prev="0" * 64).to_json(), "op": "delete"})


_STORED_LINE = (
    '{"commit":{"sig":"96a7a2a9ee5a73c293f7de5c28e2bb45c9556693911a99ceaa4fd903add2a331","text":"b4b942d4c733c72a3576'
    'dc31a3e9921b7b664fa87fc857e6e3777eefe373d21c"},"confidence":0.5,"conflictsWith":["m-111111111111"],"decision":'
    '"supersede","evidence":{"basis":"user","seq":4,"toolCallId":"c1"},"hash":"26a5387e29a1a1438d6c51d788e9fb920021b6'
    '4e1c434739bfffed69a14eb89b","id":"m-0123456789ab","key":"user.city","observedAt":"2024-01-01T00:00:00.000000Z",'
    '"op":"correct","prev":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","reassert":true,'
    '"replaces":"m-222222222222","salt":"6a3e2cf43729ff4ca75078b002a92a7d","scope":"private","seq":3,"sig":"sssssss'
    'sssssssssssssssssssssssssssssssssssssssssssssssssssssssss","source":"user","targets":["m-333333333333"],"text":'
    '"Lives in Oslo.","tier":"note","trust":"confirmed","validFrom":"2024-02-01T00:00:00.000000Z"}'
)


def test_a_line_written_by_an_earlier_version_parses_hashes_and_writes_back_byte_for_byte() -> None:
    """Deriving the field lists from the dataclass must not change a stored line's hash or form."""
    record = Record.from_json(json.loads(_STORED_LINE))
    assert chain_hash(record) == record.hash
    assert commitment(record.salt or "", record.text or "") == dict(record.commit)["text"]
    assert canonical_json(record.to_json()) == _STORED_LINE


def test_every_record_field_but_the_evidence_parts_is_a_ledger_key() -> None:
    assert {"observedAt", "conflictsWith", "validUntil", "evidence", "salt"} <= RECORD_KEYS
    assert "evidenceSeq" not in RECORD_KEYS and "extra" not in RECORD_KEYS
    assert len(RECORD_FIELDS) == len(set(RECORD_FIELDS))
