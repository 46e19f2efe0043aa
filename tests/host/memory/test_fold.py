"""The projection rule, pure: which facts stand at an instant, and which records move the prompt epoch."""

from __future__ import annotations

from host.memory.fold import MemoryState, classify, replay
from host.memory.records import Record, content_signature, seal

T0 = "2026-01-01T00:00:00.000000Z"
NOW = "2026-06-01T00:00:00.000000Z"


def chain(*drafts: Record) -> list[Record]:
    records, prev = [], "0" * 64
    for seq, item in enumerate(drafts, start=1):
        record = seal(item, seq=seq, prev=prev)
        records.append(record)
        prev = record.hash
    return records


def assertion(
    rid: str,
    text: str,
    *,
    key: str | None = None,
    tier: str = "note",
    source: str = "user",
    trust: str = "confirmed",
    valid_until: str | None = None,
) -> Record:
    return Record(
        seq=0,
        id=rid,
        op="assert",
        source=source,
        observed_at=T0,
        trust=trust,
        key=key,
        tier=tier,
        text=text,
        sig=content_signature(text),
        valid_until=valid_until,
    )


def act(rid: str, op: str, target: str, *, source: str = "user", sig: str | None = None) -> Record:
    return Record(seq=0, id=rid, op=op, source=source, observed_at=T0, target=target, sig=sig)


def test_keyless_copies_stand_once_preferring_the_profile_tier() -> None:
    state = replay(chain(assertion("m-1", "User is vegan"), assertion("m-2", "user is vegan.", tier="profile")))
    assert [(f.id, f.tier) for f in classify(state.facts.values(), NOW).current] == [("m-2", "profile")]


def test_a_keyless_copy_of_a_keyed_fact_is_hidden_behind_it() -> None:
    state = replay(chain(assertion("m-1", "User is vegan"), assertion("m-2", "User is vegan", key="user.diet")))
    assert [f.id for f in classify(state.facts.values(), NOW).current] == ["m-2"]


def test_proposed_rejected_and_expired_facts_do_not_stand() -> None:
    state = replay(
        chain(
            assertion("m-1", "Acme is big", source="peer:bob", trust="proposed"),
            assertion("m-2", "User is in Rome", valid_until="2026-02-01"),
            assertion("m-3", "User likes tea"),
        )
    )
    assert [f.id for f in classify(state.facts.values(), NOW).current] == ["m-3"]
    assert [f.id for f in classify(state.facts.values(), "2026-01-15T00:00:00.000000Z").current] == ["m-2", "m-3"]


def test_the_same_text_twice_for_one_key_is_not_a_conflict() -> None:
    state = replay(chain(assertion("m-1", "Lives in Oslo", key="k"), assertion("m-2", "lives in oslo", key="k")))
    standing = classify(state.facts.values(), NOW)
    assert ([f.id for f in standing.current], standing.conflicts) == (["m-1"], ())


def test_explicit_writes_retractions_and_reviews_move_the_epoch_and_background_additions_do_not() -> None:
    state = MemoryState()
    records = chain(
        assertion("m-1", "User likes tea"),
        assertion("m-2", "User likes jazz", source="extractor"),
        assertion("m-3", "Acme is big", source="peer:bob", trust="proposed"),
        act("m-4", "suppress", "m-9", source="extractor", sig="x"),
        act("m-5", "retract", "m-2", source="extractor"),
        Record(seq=0, id="m-6", op="review", source="human", observed_at=T0, target="m-3", decision="confirm"),
    )
    marks = []
    for record in records:
        state.apply(record)
        marks.append(state.epoch_mark)
    assert marks == [1, 1, 1, 1, 5, 6]


def test_a_record_about_an_unknown_fact_changes_nothing() -> None:
    state = replay(chain(assertion("m-1", "User likes tea"), act("m-2", "retract", "m-404")))
    assert [f.status for f in state.facts.values()] == ["live"] and state.tombstones == {}


def test_replay_stops_at_the_transaction_time_asked_for() -> None:
    early = assertion("m-1", "User likes tea")
    late = Record(seq=0, id="m-2", op="retract", source="user", observed_at="2026-03-01T00:00:00.000000Z", target="m-1")
    state = replay(chain(early, late), known_at="2026-02-01T00:00:00.000000Z")
    assert state.facts["m-1"].status == "live" and state.last_seq == 1
