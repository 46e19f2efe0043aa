"""The store of an agent's document suggestions: bounded, never twice for one path, durable across a reopen,
and a damaged file refused by name, left as it was, with nothing of another agent's touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from host.errors import CorruptFileError
from host.knowledge.errors import SuggestionNotFoundError, TooManySuggestionsError
from host.knowledge.suggestions import MAX_PENDING, SUGGESTIONS_FILE, SuggestionStore
from protocol.errors import CONFLICT, CORRUPT_FILE, NOT_FOUND


def _store(tmp_path: Path, *agents: str) -> SuggestionStore:
    for agent_id in agents or ("ada",):
        (tmp_path / "agents" / agent_id).mkdir(parents=True, exist_ok=True)
    return SuggestionStore(tmp_path)


def test_a_suggestion_is_kept_as_given_and_survives_a_reopen(tmp_path: Path) -> None:
    store = _store(tmp_path)
    made, fresh = store.suggest("ada", "/home/ann/notes/../notes/garden.md", "the watering plan", "run-1")
    assert fresh and made.suggestion_id.startswith("d-")
    again = SuggestionStore(tmp_path).pending("ada")
    assert again == [made]
    assert again[0].path == "/home/ann/notes/../notes/garden.md"  # as given: never resolved
    assert (again[0].reason, again[0].run_id, again[0].agent_id) == ("the watering plan", "run-1", "ada")


def test_a_path_already_pending_is_not_added_twice(tmp_path: Path) -> None:
    store = _store(tmp_path)
    first, _ = store.suggest("ada", "/home/ann/notes/garden.md", "one", "run-1")
    same, fresh = store.suggest("ada", "/home/ann/notes//garden.md", "two", "run-2")
    assert (same, fresh) == (first, False)
    other, fresh = store.suggest("ada", "/home/ann/notes/roses.md", "three", "run-2")
    assert fresh and [s.suggestion_id for s in store.pending("ada")] == [first.suggestion_id, other.suggestion_id]


def test_past_the_cap_a_suggestion_is_refused_and_a_decision_makes_room(tmp_path: Path) -> None:
    store = _store(tmp_path)
    made = [store.suggest("ada", f"/home/ann/{n}.md", "why", "run-1")[0] for n in range(MAX_PENDING)]
    with pytest.raises(TooManySuggestionsError) as refused:
        store.suggest("ada", "/home/ann/one-more.md", "why", "run-1")
    assert refused.value.code == CONFLICT
    assert len(store.pending("ada")) == MAX_PENDING
    assert store.suggest("ada", "/home/ann/0.md", "why", "run-1")[1] is False  # a pending one is not refused
    store.remove("ada", made[0].suggestion_id)
    assert store.suggest("ada", "/home/ann/one-more.md", "why", "run-1")[1] is True


def test_removing_takes_one_suggestion_and_an_unknown_id_is_not_found(tmp_path: Path) -> None:
    store = _store(tmp_path)
    keep, _ = store.suggest("ada", "/a.md", "why", "run-1")
    drop, _ = store.suggest("ada", "/b.md", "why", "run-1")
    assert store.remove("ada", drop.suggestion_id) == drop
    assert SuggestionStore(tmp_path).pending("ada") == [keep]
    with pytest.raises(SuggestionNotFoundError) as missing:
        store.remove("ada", drop.suggestion_id)
    assert missing.value.code == NOT_FOUND


def test_each_agent_has_its_own_suggestions(tmp_path: Path) -> None:
    store = _store(tmp_path, "ada", "bo")
    made, _ = store.suggest("ada", "/a.md", "why", "run-1")
    assert store.pending("bo") == []
    with pytest.raises(SuggestionNotFoundError):
        store.remove("bo", made.suggestion_id)
    assert store.pending("ada") == [made]


def test_a_deleted_agent_is_not_brought_back_by_a_suggestion(tmp_path: Path) -> None:
    store = SuggestionStore(tmp_path)
    with pytest.raises(OSError):
        store.suggest("gone", "/a.md", "why", "run-1")
    assert not (tmp_path / "agents" / "gone").exists()


@pytest.mark.parametrize(
    "damage",
    [b"{not json", b"\xff\xfe", b'{"version": 1}', b'{"version": 1, "suggestions": [{"path": "/a.md"}]}'],
)
def test_a_damaged_file_is_refused_by_name_and_left_as_it_was(tmp_path: Path, damage: bytes) -> None:
    store = _store(tmp_path, "ada", "bo")
    kept, _ = store.suggest("bo", "/b.md", "why", "run-1")
    path = tmp_path / "agents" / "ada" / SUGGESTIONS_FILE
    path.write_bytes(damage)
    for act in (
        lambda: store.pending("ada"),
        lambda: store.suggest("ada", "/a.md", "why", "run-2"),
        lambda: store.remove("ada", "d-00000000"),
    ):
        with pytest.raises(CorruptFileError) as refused:
            act()
        assert refused.value.code == CORRUPT_FILE and str(path) in refused.value.message
    assert path.read_bytes() == damage  # never overwritten: a person can still read what it held
    assert store.pending("bo") == [kept]
    assert json.loads((tmp_path / "agents" / "bo" / SUGGESTIONS_FILE).read_text(encoding="utf-8"))["version"] == 1
