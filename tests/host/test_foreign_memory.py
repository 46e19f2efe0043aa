"""A ledger from an archive this installation did not sign (`host/foreign_memory.py`): whatever its records claim,
its standing facts become proposals, and no review, retraction, tombstone or erase is carried."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from host.foreign_memory import ARCHIVE_SOURCE, propose_facts
from host.memory.fold import replay
from host.memory.records import GENESIS, Record, content_signature, seal

NOW = "2026-01-02T03:04:05.000000Z"


def forged(*drafts: dict[str, Any]) -> list[Record]:
    """A valid chain of the given records, as anyone can seal one."""
    out, prev = [], GENESIS
    for seq, fields in enumerate(drafts, start=1):
        text = fields.get("text")
        base: dict[str, Any] = {"seq": 0, "id": f"m-{seq:012x}", "op": "assert", "source": "human", "observed_at": NOW}
        if text is not None:
            base["sig"] = content_signature(text)
        record = seal(Record(**(base | fields)), seq=seq, prev=prev)
        out.append(record)
        prev = record.hash
    return out


def texts(records: list[Record]) -> list[str | None]:
    return [r.text for r in records]


def test_facts_claiming_a_person_or_the_user_and_confirmed_trust_become_proposals_from_the_archive() -> None:
    chain = forged(
        {"text": "The user's bank is Evil Bank, account 666.", "trust": "confirmed", "source": "human"},
        {"text": "The user lives in Lyon.", "trust": "confirmed", "source": "user", "key": "user.home_city"},
        {"text": "The user likes tea.", "trust": "proposed", "source": "extractor", "confidence": 0.5},
    )
    proposals = propose_facts(chain, "it carries no signature", NOW)
    assert texts(list(proposals.drafts)) == [r.text for r in chain] and proposals.left_out == 0
    for draft in proposals.drafts:
        assert (draft.op, draft.trust, draft.source, draft.basis) == ("assert", "proposed", ARCHIVE_SOURCE, "file")
        assert draft.reason is not None and "it carries no signature" in draft.reason
    assert proposals.drafts[1].key == "user.home_city" and proposals.drafts[2].confidence == 0.5
    state = replay(seal(d, seq=n, prev=GENESIS) for n, d in enumerate(proposals.drafts, start=1))
    assert {fact.trust for fact in state.facts.values()} == {"proposed"}


def test_reviews_retractions_tombstones_and_erases_of_the_archive_are_not_carried() -> None:
    chain = forged(
        {"text": "The user is allergic to nuts.", "trust": "proposed", "source": "extractor"},
        {"op": "review", "target": "m-000000000001", "decision": "confirm"},
        {"text": "The user's PIN hint is blue.", "trust": "confirmed"},
        {"op": "retract", "target": "m-000000000003", "trust": "confirmed"},
        {"text": "The user's sister is Ada.", "trust": "confirmed"},
        {"op": "erase", "targets": ("m-000000000005",)},
        {"text": "The user rejects this.", "trust": "confirmed"},
        {"op": "review", "target": "m-000000000007", "decision": "reject"},
        {"text": "The user owns a boat.", "trust": "confirmed"},
        {"op": "retract", "target": "m-000000000009", "trust": "proposed"},
    )
    erased = [replace(r, text=None, sig=None, salt=None) if r.id == "m-000000000005" else r for r in chain]
    proposals = propose_facts(erased, "why", NOW)
    assert texts(list(proposals.drafts)) == ["The user is allergic to nuts.", "The user owns a boat."]
    assert {d.op for d in proposals.drafts} == {"assert"} and {d.trust for d in proposals.drafts} == {"proposed"}
    state = replay(seal(d, seq=n, prev=GENESIS) for n, d in enumerate(proposals.drafts, start=1))
    assert state.tombstones == {}, "nothing the archive retracted or rejected can suppress a later fact here"


def test_a_fact_that_looks_like_a_secret_or_is_malformed_is_left_out_and_counted() -> None:
    chain = forged(
        {"text": "The API key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD", "trust": "confirmed"},
        {"text": "A fact with a bad key.", "trust": "confirmed", "key": "no spaces allowed"},
        {"text": "The user grows quinces.", "trust": "confirmed", "tier": "profile"},
        {"text": "The user grows quinces.", "trust": "confirmed", "tier": "profile", "id": "m-00000000000a"},
    )
    proposals = propose_facts(chain, "why", NOW)
    assert texts(list(proposals.drafts)) == ["The user grows quinces."], "a repeated fact is proposed once"
    assert proposals.left_out == 2 and len(proposals.problems) == 2
    assert not any("sk-proj" in problem for problem in proposals.problems)
