"""The hub opens each agent's memory once, refuses unknown agents, and releases a memory on close."""

from __future__ import annotations

from pathlib import Path

import pytest

from host.memory.errors import UnknownAgentError
from host.memory.hub import MemoryHub
from protocol.errors import NOT_FOUND


def test_a_memory_is_opened_once_and_kept(tmp_path: Path) -> None:
    (tmp_path / "agents" / "ada").mkdir(parents=True)
    hub = MemoryHub(tmp_path)
    try:
        assert hub.get("ada") is hub.get("ada")
        assert hub.open_agent_ids() == ["ada"]
    finally:
        hub.close()


@pytest.mark.parametrize("agent_id", ["bob", "../ada", "Ada", ""])
def test_an_unknown_or_malformed_agent_is_not_found(tmp_path: Path, agent_id: str) -> None:
    (tmp_path / "agents" / "ada").mkdir(parents=True)
    hub = MemoryHub(tmp_path)
    with pytest.raises(UnknownAgentError) as caught:
        hub.get(agent_id)
    assert caught.value.code == NOT_FOUND
    assert hub.opened(agent_id) is None


def test_closing_an_agent_releases_its_memory_for_another_opener(tmp_path: Path) -> None:
    (tmp_path / "agents" / "ada").mkdir(parents=True)
    first, second = MemoryHub(tmp_path), MemoryHub(tmp_path)
    first.get("ada")
    first.close_agent("ada")
    try:
        assert second.get("ada").agent_id == "ada"
        assert first.opened("ada") is None
    finally:
        second.close()
        first.close()
