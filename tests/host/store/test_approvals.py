"""The per-agent approval store: remembered exactly, persisted atomically, corrupt files survived."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from host.store.approvals import ApprovalStore
from sandbox import Rule


def test_a_remembered_decision_survives_a_reload(tmp_path: Path) -> None:
    store = ApprovalStore.for_agent(tmp_path, "ada")
    store.remember("shell", "make test", "allow")
    store.remember("read", "/etc/hosts", "deny")
    again = ApprovalStore(tmp_path / "agents" / "ada" / "tool-approvals.json")
    assert again.rules() == (Rule("shell", "make test", "allow"), Rule("read", "/etc/hosts", "deny"))


def test_a_new_decision_for_the_same_action_and_target_replaces_the_old_one(tmp_path: Path) -> None:
    store = ApprovalStore(tmp_path / "tool-approvals.json")
    store.remember("shell", "ls", "allow")
    store.remember("shell", "ls -la", "allow")
    store.remember("shell", "ls", "deny")
    assert store.rules() == (Rule("shell", "ls -la", "allow"), Rule("shell", "ls", "deny"))


def test_the_file_holds_only_the_rules_and_no_temp_file_is_left(tmp_path: Path) -> None:
    store = ApprovalStore(tmp_path / "tool-approvals.json")
    store.remember("write", "/home/p/x.txt", "allow")
    raw = json.loads((tmp_path / "tool-approvals.json").read_text(encoding="utf-8"))
    assert raw["version"] == 1
    assert [(r["action"], r["target"], r["decision"]) for r in raw["rules"]] == [("write", "/home/p/x.txt", "allow")]
    assert [p.name for p in tmp_path.iterdir()] == ["tool-approvals.json"]


@pytest.mark.parametrize("content", ["{not json", '{"rules": "nope"}', "[]", "\udcff"])
def test_a_corrupt_file_is_kept_aside_and_the_store_starts_empty_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, content: str
) -> None:
    path = tmp_path / "tool-approvals.json"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    with caplog.at_level(logging.WARNING, logger="host.store.approvals"):
        store = ApprovalStore(path)
    assert store.rules() == () and "approvals" in caplog.text
    store.remember("shell", "ls", "allow")
    assert ApprovalStore(path).rules() == (Rule("shell", "ls", "allow"),)
    (aside,) = tmp_path.glob("tool-approvals.json.corrupt-*")
    assert aside.read_bytes() == content.encode("utf-8", "surrogateescape")


def test_malformed_entries_are_skipped_and_good_ones_kept(tmp_path: Path) -> None:
    path = tmp_path / "tool-approvals.json"
    rules = [
        {"action": "shell", "target": "ls", "decision": "maybe"},
        7,
        {"action": "read", "target": "/x", "decision": "deny"},
    ]
    path.write_text(json.dumps({"version": 1, "rules": rules}), encoding="utf-8")
    assert ApprovalStore(path).rules() == (Rule("read", "/x", "deny"),)


def test_a_bad_decision_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    store = ApprovalStore(tmp_path / "tool-approvals.json")
    perhaps: Any = "perhaps"
    with pytest.raises(ValueError):
        store.remember("shell", "ls", perhaps)
    assert not (tmp_path / "tool-approvals.json").exists()


def test_a_failed_write_keeps_the_old_file_and_the_old_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "tool-approvals.json"
    store = ApprovalStore(path)
    store.remember("shell", "ls", "allow")
    before = path.read_bytes()

    def fail(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("host.store.approvals.os.replace", fail)
    with pytest.raises(OSError):
        store.remember("shell", "rm x", "deny")
    assert path.read_bytes() == before
    assert store.rules() == (Rule("shell", "ls", "allow"),)
    assert [p.name for p in tmp_path.iterdir()] == ["tool-approvals.json"]
