"""One agent's unreadable file is that agent's error alone, named, and never another's (issue 10 item 14)."""

from __future__ import annotations

from pathlib import Path

import pytest

from host.errors import CorruptFileError
from host.store import agents as agents_module
from host.store.agents import AgentStore, BrokenAgent
from host.store.host_settings import load_host_settings
from protocol.errors import CORRUPT_FILE
from protocol.models.agents import AgentSettings, AgentSettingsPatch, ModelSettings


def _three(tmp_path: Path) -> AgentStore:
    store = AgentStore(tmp_path)
    for agent_id in ("a1", "b1", "c1"):
        store.create(agent_id.upper(), agent_id, AgentSettings(instructions=f"I am {agent_id}"))
    return store


def test_settings_that_are_not_utf8_name_the_file_for_that_agent_alone(tmp_path: Path) -> None:
    store = _three(tmp_path)
    (tmp_path / "agents/a1/settings.json").write_bytes(b'\xff\xfe{"memory": true}')
    with pytest.raises(CorruptFileError) as info:
        store.get("a1")
    assert info.value.code == CORRUPT_FILE
    assert info.value.data == {"path": str(tmp_path / "agents/a1/settings.json")}
    assert [a.agent_id for a in store.list()] == ["b1", "c1"]
    assert store.get("b1").settings.instructions == "I am b1"
    assert (tmp_path / "agents/a1/settings.json").read_bytes() == b'\xff\xfe{"memory": true}'


def test_a_profile_that_is_json_but_not_an_object_is_a_broken_agent_not_a_missing_one(tmp_path: Path) -> None:
    store = _three(tmp_path)
    (tmp_path / "agents/b1/profile.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(CorruptFileError) as info:
        store.get("b1")
    assert info.value.code == CORRUPT_FILE and "agents/b1/profile.json" in info.value.message
    assert [a.agent_id for a in store.list()] == ["a1", "c1"]


def test_a_scan_lists_every_agent_with_what_could_be_read_of_a_broken_one(tmp_path: Path) -> None:
    store = _three(tmp_path)
    (tmp_path / "agents/a1/settings.json").write_bytes(b"\x80\x81")
    (tmp_path / "agents/c1/profile.json").write_bytes(b"\xc3\x28")
    entries = {entry.agent_id: entry for entry in store.scan()}
    assert list(entries) == ["a1", "b1", "c1"]
    a1, c1 = entries["a1"], entries["c1"]
    assert isinstance(a1, BrokenAgent) and a1.name == "A1" and a1.settings is None
    assert "agents/a1/settings.json" in a1.error.message
    assert isinstance(c1, BrokenAgent) and c1.name == "c1" and c1.settings is not None
    assert c1.settings.instructions == "I am c1"
    assert not isinstance(entries["b1"], BrokenAgent)


def test_a_broken_agents_transcript_can_still_be_read_and_written(tmp_path: Path) -> None:
    store = _three(tmp_path)
    store.transcript("a1").append({"type": "user", "text": "before"})
    (tmp_path / "agents/a1/settings.json").write_bytes(b"\xff")
    reopened = AgentStore(tmp_path).transcript("a1")
    reopened.append({"type": "user", "text": "after"})
    assert [e["text"] for e in reopened.read_all()] == ["before", "after"]


def test_a_read_agent_is_cached_until_one_of_its_files_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _three(tmp_path)
    reads: list[Path] = []
    real = agents_module.read_json

    def counting(path: Path, default: object = None) -> object:
        reads.append(path)
        return real(path, default)

    monkeypatch.setattr(agents_module, "read_json", counting)
    first = store.get("a1")
    for _ in range(30):
        assert store.get("a1") is first
    assert len(reads) == 2, "profile and settings are read once"
    (tmp_path / "agents/a1/settings.json").write_text('{"instructions": "edited by hand"}', encoding="utf-8")
    assert store.get("a1").settings.instructions == "edited by hand"
    updated = store.update("a1", "Ann", AgentSettingsPatch(model=ModelSettings(provider="scripted")))
    assert store.get("a1") == updated and store.get("a1").name == "Ann"
    assert store.get("b1").settings.instructions == "I am b1"


def test_host_settings_of_binary_garbage_are_named_like_text_damage(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b"\x00\xff\xfe garbage \x9c")
    with pytest.raises(CorruptFileError) as binary:
        load_host_settings(path)
    path.write_text('{"maxConcurrentRuns": ', encoding="utf-8")
    with pytest.raises(CorruptFileError) as text:
        load_host_settings(path)
    assert binary.value.code == text.value.code == CORRUPT_FILE
    for error in (binary.value, text.value):
        assert error.message.startswith(f"{path} is not valid JSON")


def test_the_listing_shows_an_agent_created_changed_or_deleted_through_the_store_at_once(tmp_path: Path) -> None:
    store = _three(tmp_path)
    assert [a.agent_id for a in store.list()] == ["a1", "b1", "c1"]
    store.create("D", "d1", AgentSettings())
    assert [a.agent_id for a in store.list()] == ["a1", "b1", "c1", "d1"]
    store.update("b1", "Bee", None)
    assert [a.name for a in store.list()] == ["A1", "Bee", "C1", "D"]
    store.delete("a1")
    assert [a.agent_id for a in store.list()] == ["b1", "c1", "d1"]
    (tmp_path / "agents/e1").mkdir()  # the directory itself changed: the listing is read again
    assert [a.agent_id for a in store.list()] == ["b1", "c1", "d1"]


def test_a_listing_taken_while_an_agent_is_half_written_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `create` and `update` run in a thread while turns list the roster on the event loop: a listing taken
    # between the new directory and its profile, or between two changed files, must not outlive the change.
    store = _three(tmp_path)
    store.list()
    write = agents_module.write_json_atomic
    seen: list[list[str]] = []

    def write_and_list(path: Path, value: object) -> None:
        write(path, value)
        seen.append([f"{a.agent_id}:{a.name}" for a in store.list()])

    monkeypatch.setattr(agents_module, "write_json_atomic", write_and_list)
    store.create("D", "d1", AgentSettings())
    assert [a.agent_id for a in store.list()] == ["a1", "b1", "c1", "d1"]
    store.update("b1", "Bee", AgentSettingsPatch())
    assert [a.name for a in store.list()] == ["A1", "Bee", "C1", "D"]
