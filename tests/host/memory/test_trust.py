"""Trust and tombstone rules: the user's word and a person's act stand; peers, tools and files are proposed."""

from __future__ import annotations

import pytest

from host.memory.trust import (
    CLEAN,
    Provenance,
    correction_trust,
    decide_trust,
    is_explicit,
    is_suppressible,
    may_reassert,
    note_basis,
    retraction_waits,
    valid_source,
)


@pytest.mark.parametrize(
    ("source", "basis", "trust"),
    [
        ("user", None, "confirmed"),
        ("human", None, "confirmed"),
        ("agent", None, "confirmed"),
        ("agent", "user", "confirmed"),
        ("agent", "file", "proposed"),
        ("agent", "tool:read_file", "proposed"),
        ("extractor", "user", "confirmed"),
        ("extractor", "agent", "proposed"),
        ("extractor", "tool:web_search", "proposed"),
        ("peer:bob", None, "proposed"),
        ("tool:web_search", None, "proposed"),
    ],
)
def test_trust_follows_where_the_content_came_from(source: str, basis: str | None, trust: str) -> None:
    assert decide_trust(source, basis) == trust


def test_only_the_user_a_person_or_an_explicit_reassertion_passes_a_tombstone() -> None:
    assert not is_suppressible("user", False) and not is_suppressible("human", False)
    assert not is_suppressible("agent", True)
    assert is_suppressible("agent", False) and is_suppressible("extractor", True) and is_suppressible("peer:bob", True)


def test_sources_are_the_designed_set() -> None:
    assert all(valid_source(s) for s in ("user", "agent", "extractor", "human", "peer:bob", "tool:grep"))
    assert not any(valid_source(s) for s in ("admin", "peer:", "tool", "system"))
    assert is_explicit("agent") and not is_explicit("extractor")


EXPOSED = Provenance(user_words=("my dentist is Dr Silva",), untrusted=("tool:read_file",))


def test_a_clean_run_confirms_and_an_exposed_one_confirms_only_the_users_words() -> None:
    """Issue 9: the host decides the basis from what the run has read, not from the model's label."""
    assert note_basis("The museum opens at nine.", None, CLEAN) == "user"
    assert note_basis("The user's dentist is Dr Silva.", None, EXPOSED) == "user"
    assert note_basis("The user's bank is Evilbank.", None, EXPOSED) == "tool:read_file"
    assert note_basis("The user's bank is Evilbank.", "user", EXPOSED) == "tool:read_file"


def test_the_models_label_can_lower_trust_never_raise_it() -> None:
    assert note_basis("The user's dentist is Dr Silva.", "file", EXPOSED) == "file"
    assert note_basis("Anything at all.", "peer", CLEAN) == "peer"
    assert decide_trust("agent", note_basis("The user's bank is Evilbank.", "user", EXPOSED)) == "proposed"


def test_only_the_users_words_bring_a_forgotten_fact_back_in_an_exposed_run() -> None:
    assert may_reassert("The user's dentist is Dr Silva.", EXPOSED)
    assert not may_reassert("The user's bank is Evilbank.", EXPOSED)
    assert may_reassert("The user's bank is Evilbank.", CLEAN)


def test_a_retraction_of_a_confirmed_fact_after_untrusted_content_waits_unless_the_user_asked() -> None:
    cat = "The user's cat is called Miso."
    assert retraction_waits("confirmed", cat, "m-1", EXPOSED)
    assert not retraction_waits("proposed", cat, "m-1", EXPOSED)
    assert not retraction_waits("confirmed", cat, "m-1", CLEAN)
    asked = Provenance(user_words=("forget my cat",), untrusted=("tool:read_file",))
    assert not retraction_waits("confirmed", cat, "m-1", asked)


def test_a_correction_is_never_more_trusted_than_what_it_corrects() -> None:
    assert correction_trust("agent", "user", "confirmed") == "confirmed"
    assert correction_trust("agent", "user", "proposed") == "proposed"
    assert correction_trust("extractor", "user", "proposed") == "proposed"
    assert correction_trust("agent", "tool:grep", "confirmed") == "proposed"
    assert correction_trust("human", None, "proposed") == "confirmed"
