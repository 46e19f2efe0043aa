"""The protected files by inode (issue 21.6): every file the policy denies is known by what it is, so a hard link
anywhere to it is refused when opened; a file replaced with a new inode is known by its new one at once."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from sandbox import AccessDeniedError, ProtectedFiles, open_read, opened
from sandbox import protected as protected_module


def _inode(path: Path) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_dev, info.st_ino


def test_every_file_the_policy_denies_is_protected_and_none_it_allows(world: Any) -> None:
    alice, mallory = world.agent("alice"), world.agent("mallory")
    protected = ProtectedFiles(world.policy("mallory")).current()
    assert protected.complete
    for path in (
        alice / "memory" / "ledger.jsonl",
        alice / "memory" / "secret.md",
        alice / "transcript.jsonl",
        alice / "prompt-cache.json",
        alice / "tool-approvals.json",
        world.data / "secrets.key",
        world.data / "secrets.bin",
        world.data / "settings.json",
        world.data / "host.lock",
    ):
        assert _inode(path) in protected.inodes, path
    for path in (
        alice / "scratch" / "notes.txt",
        alice / "profile.json",
        alice / "settings.json",
        mallory / "memory" / "ledger.jsonl",
        mallory / "transcript.jsonl",
        mallory / "scratch" / "notes.txt",
    ):
        assert _inode(path) not in protected.inodes, path
    assert _inode(alice / "memory" / "ledger.jsonl") not in ProtectedFiles(world.policy("alice")).current().inodes


def test_a_hard_link_to_a_protected_file_is_refused_and_a_link_between_project_files_is_read(
    world: Any, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    os.link(world.agent("alice") / "memory" / "ledger.jsonl", project / "l")
    os.link(world.data / "secrets.key", project / "k")
    (project / "a.py").write_text("shared = 1\n", encoding="utf-8")
    os.link(project / "a.py", project / "b.py")
    protected = ProtectedFiles(world.policy("mallory"))
    for name in ("l", "k"):
        with pytest.raises(AccessDeniedError):
            open_read(str(project / name), protected=protected)
    with opened(open_read(str(project / "b.py"), protected=protected)) as fd:
        assert os.read(fd, 100) == b"shared = 1\n"
    with opened(open_read(str(project / "l"), protected=ProtectedFiles(world.policy("alice")))) as fd:
        assert world.memory_canary.encode() in os.read(fd, 1000), "alice may read her own memory by any name"


@pytest.mark.parametrize("settle_ns", [0, 10**18])
def test_a_protected_file_replaced_with_a_new_inode_is_known_by_the_new_one(
    world: Any, tmp_path: Path, monkeypatch: Any, settle_ns: int
) -> None:
    """With listings trusted at once (0) the changed directory's stamp sends it to be listed again; with every
    listing too recent to be trusted it is listed again anyway. Either way the new inode is known."""
    monkeypatch.setattr(protected_module, "_SETTLE_NS", settle_ns)
    cache = world.agent("alice") / "prompt-cache.json"
    protected = ProtectedFiles(world.policy("mallory"))
    before = protected.current()
    assert _inode(cache) in before.inodes
    again = protected.current()
    assert again.inodes == before.inodes
    if settle_ns == 0:
        assert again.inodes is before.inodes, "nothing changed: no directory was listed again"
    fresh = cache.with_name("prompt-cache.json.tmp")
    fresh.write_text(world.prompt_canary + " again", encoding="utf-8")
    os.replace(fresh, cache)
    after = protected.current().inodes
    assert _inode(cache) in after
    project = tmp_path / "project"
    project.mkdir()
    os.link(cache, project / "cache")
    with pytest.raises(AccessDeniedError):
        open_read(str(project / "cache"), protected=protected)


def test_a_new_agents_files_are_protected_as_soon_as_they_exist(world: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(protected_module, "_SETTLE_NS", 0)
    protected = ProtectedFiles(world.policy("mallory"))
    protected.current()
    newcomer = world.data / "agents" / "newcomer" / "memory"
    newcomer.mkdir(parents=True)
    (newcomer / "ledger.jsonl").write_text("{}\n", encoding="utf-8")
    assert _inode(newcomer / "ledger.jsonl") in protected.current().inodes


def test_a_directory_that_cannot_be_listed_makes_every_file_with_two_names_suspect(
    world: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    real_list = ProtectedFiles._list

    def refuse_memory(self: ProtectedFiles, path: str) -> Any:
        if path.endswith("alice/memory"):
            raise PermissionError(13, "denied", path)
        return real_list(self, path)

    monkeypatch.setattr(ProtectedFiles, "_list", refuse_memory)
    project = tmp_path / "project"
    project.mkdir()
    (project / "one.txt").write_text("one name\n", encoding="utf-8")
    (project / "a.py").write_text("two names\n", encoding="utf-8")
    os.link(project / "a.py", project / "b.py")
    protected = ProtectedFiles(world.policy("mallory"))
    assert not protected.current().complete
    with pytest.raises(AccessDeniedError):
        open_read(str(project / "b.py"), protected=protected)
    with opened(open_read(str(project / "one.txt"), protected=protected)) as fd:
        assert os.read(fd, 100) == b"one name\n"
