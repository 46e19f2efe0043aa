"""The agent store: readable ids, settings patches, and deletion into the trash."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from host.errors import ConflictError, CorruptFileError, NotFoundError
from host.store.agents import AgentStore, slugify
from protocol.errors import CONFLICT, NOT_FOUND
from protocol.models.agents import AgentSettings, AgentSettingsPatch


def test_ids_come_from_names_and_never_collide(tmp_path: Path) -> None:
    store = AgentStore(tmp_path)
    assert slugify("Research Bot!") == "research-bot"
    assert slugify("???") == "agent"
    first = store.create("Research Bot", None, AgentSettings())
    second = store.create("Research Bot", None, AgentSettings())
    assert (first.agent_id, second.agent_id) == ("research-bot", "research-bot-2")
    assert {p.name for p in first.directory.iterdir()} == {"memory", "scratch", "settings.json", "profile.json"}


def test_an_explicit_id_that_is_taken_is_a_conflict(tmp_path: Path) -> None:
    store = AgentStore(tmp_path)
    store.create("A", "a1", AgentSettings())
    with pytest.raises(ConflictError) as info:
        store.create("B", "a1", AgentSettings())
    assert info.value.code == CONFLICT


def test_a_settings_patch_changes_only_the_fields_given(tmp_path: Path) -> None:
    store = AgentStore(tmp_path)
    store.create("A", "a1", AgentSettings(instructions="be brief"))
    updated = store.update("a1", None, AgentSettingsPatch(memory=False))
    assert (updated.settings.memory, updated.settings.instructions) == (False, "be brief")
    assert store.get("a1").settings.memory is False


def test_a_lifetime_setting_names_tiers_and_whole_days_and_a_patch_replaces_the_whole_mapping(tmp_path: Path) -> None:
    store = AgentStore(tmp_path)
    store.create("A", "a1", AgentSettings.model_validate({"ttl": {"log": 30, "note": 365}}))
    assert store.get("a1").settings.ttl == {"log": 30, "note": 365}
    assert store.update("a1", None, AgentSettingsPatch.model_validate({"ttl": {"log": 7}})).settings.ttl == {"log": 7}
    assert store.update("a1", None, AgentSettingsPatch(memory=True)).settings.ttl == {"log": 7}, "kept unless given"
    assert store.update("a1", None, AgentSettingsPatch.model_validate({"ttl": {}})).settings.ttl == {}
    for wrong in ({"logs": 30}, {"log": 0}, {"log": 36_501}, {"log": 1.5}):
        with pytest.raises(ValidationError):
            AgentSettingsPatch.model_validate({"ttl": wrong})
    assert AgentSettings().ttl == {}, "no lifetime unless a person sets one"


def test_a_deleted_agent_is_gone_from_the_store_but_kept_in_the_trash(tmp_path: Path) -> None:
    store = AgentStore(tmp_path)
    store.create("A", "a1", AgentSettings())
    store.create("B", "b1", AgentSettings())
    store.transcript("a1").append({"type": "user", "text": "keep me"})
    store.delete("a1")
    with pytest.raises(NotFoundError) as info:
        store.get("a1")
    assert info.value.code == NOT_FOUND
    assert [a.agent_id for a in store.list()] == ["b1"]
    (trashed,) = (tmp_path / "trash").iterdir()
    assert "keep me" in (trashed / "transcript.jsonl").read_text(encoding="utf-8")


def test_an_id_with_path_tricks_is_simply_not_found(tmp_path: Path) -> None:
    store = AgentStore(tmp_path)
    for bad in ("../etc", "a/b", "", ".hidden"):
        with pytest.raises(NotFoundError):
            store.get(bad)


def test_an_agent_with_a_corrupt_settings_file_is_named_and_does_not_hide_the_others(tmp_path: Path) -> None:
    store = AgentStore(tmp_path)
    store.create("A", "a1", AgentSettings())
    store.create("B", "b1", AgentSettings())
    (tmp_path / "agents/a1/settings.json").write_text('{"memory": "perhaps"}', encoding="utf-8")
    assert [a.agent_id for a in store.list()] == ["b1"]
    with pytest.raises(CorruptFileError) as info:
        store.get("a1")
    assert "agents/a1/settings.json" in info.value.message
    assert (tmp_path / "agents/a1/settings.json").read_text(encoding="utf-8") == '{"memory": "perhaps"}'
