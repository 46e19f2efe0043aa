"""`plan_notes` on its own: data in, a plan out."""

from __future__ import annotations

from dataclasses import replace

from host.memory.fold import Fact, fact_from_record
from host.memory.planner import NoteContext, plan_notes
from host.memory.records import Record, content_signature
from host.memory.values import NoteItem


def _fact(text: str, *, rid: str = "m-000000000001", key: str | None = None, trust: str = "confirmed") -> Fact:
    record = Record(
        seq=1, id=rid, op="assert", source="user", observed_at="2024-01-01T00:00:00.000000Z", trust=trust, key=key
    )
    return fact_from_record(replace(record, text=text, sig=content_signature(text)))


def test_a_new_fact_is_recorded_when_confirmed_and_proposed_otherwise() -> None:
    item = NoteItem("The user lives in Oslo.")
    confirmed = plan_notes([item], [NoteContext(content_signature(item.text))], trust="confirmed", suppressible=False)
    proposed = plan_notes([item], [NoteContext(content_signature(item.text))], trust="proposed", suppressible=True)
    assert [p.kind for p in confirmed] == ["recorded"]
    assert [p.kind for p in proposed] == ["proposed"]
    assert confirmed[0].writes and proposed[0].writes


def test_a_known_confirmed_fact_is_a_duplicate_and_writes_nothing() -> None:
    item = NoteItem("the user lives in oslo")
    known = _fact("The user lives in Oslo.")
    [plan] = plan_notes([item], [NoteContext(known.sig or "", live=(known,))], trust="confirmed", suppressible=False)
    assert plan.kind == "duplicate" and plan.fact == known and not plan.writes


def test_a_proposed_copy_does_not_make_a_confirmed_write_a_duplicate() -> None:
    item = NoteItem("The user lives in Oslo.")
    waiting = _fact(item.text, trust="proposed")
    sig = waiting.sig or ""
    [confirmed] = plan_notes([item], [NoteContext(sig, live=(waiting,))], trust="confirmed", suppressible=False)
    [proposed] = plan_notes([item], [NoteContext(sig, live=(waiting,))], trust="proposed", suppressible=True)
    assert confirmed.kind == "recorded"
    assert proposed.kind == "duplicate" and proposed.fact == waiting


def test_a_repeat_inside_one_batch_points_at_the_first_item() -> None:
    first, again, other = NoteItem("Tea, not coffee."), NoteItem("tea not coffee"), NoteItem("Likes rain.")
    contexts = [NoteContext(content_signature(i.text)) for i in (first, again, other)]
    plans = plan_notes([first, again, other], contexts, trust="confirmed", suppressible=False)
    assert [p.kind for p in plans] == ["recorded", "duplicate", "recorded"]
    assert plans[1].same_as == 0 and plans[1].fact is None


def test_a_tombstone_suppresses_only_a_suppressible_writer() -> None:
    item = NoteItem("The user smokes.")
    gone = _fact(item.text)
    context = NoteContext(gone.sig or "", tombstone="m-00000000000f", retired=(gone,))
    [extractor] = plan_notes([item], [context], trust="confirmed", suppressible=True)
    [person] = plan_notes([item], [context], trust="confirmed", suppressible=False)
    assert extractor.kind == "suppressed" and extractor.tombstone == "m-00000000000f"
    assert extractor.related == (gone,) and extractor.writes
    assert person.kind == "recorded" and person.tombstone is None


def test_a_keyed_fact_names_the_rivals_of_its_key_with_other_content() -> None:
    item = NoteItem("The user lives in Bergen.", key="user.home_city")
    oslo = _fact("The user lives in Oslo.", key="user.home_city")
    same = _fact(item.text, rid="m-000000000002", key="user.home_city", trust="proposed")
    context = NoteContext(content_signature(item.text), rivals=(oslo, same))
    [plan] = plan_notes([item], [context], trust="confirmed", suppressible=False)
    assert plan.kind == "recorded" and plan.related == (oslo,)


def test_a_fact_without_a_key_names_no_rivals() -> None:
    item = NoteItem("The user lives in Bergen.")
    oslo = _fact("The user lives in Oslo.", key="user.home_city")
    [plan] = plan_notes(
        [item], [NoteContext(content_signature(item.text), rivals=(oslo,))], trust="confirmed", suppressible=False
    )
    assert plan.related == ()


def test_the_same_text_valid_from_another_date_is_a_new_fact() -> None:
    item = NoteItem("The user works at Acme.", valid_from="2024-05-01T00:00:00.000000Z")
    known = _fact(item.text)
    [plan] = plan_notes([item], [NoteContext(known.sig or "", live=(known,))], trust="confirmed", suppressible=False)
    assert plan.kind == "recorded"
