"""Where `bench_recall.py` looks for its data: beside the main checkout, also from a worktree, or $HEARTH_BENCH_DATA."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def recall_sets() -> ModuleType:
    spec = importlib.util.spec_from_file_location("recall_sets", ROOT / "scripts" / "recall_sets.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("recall_sets", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_a_worktree_finds_the_shared_bench_beside_its_main_checkout(tmp_path: Path) -> None:
    main, worktree = tmp_path / "work" / "main", tmp_path / "work" / "wt" / "busy"
    (main / ".git" / "worktrees" / "busy").mkdir(parents=True)
    (main / ".git" / "worktrees" / "busy" / "commondir").write_text("../..\n")
    worktree.mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'busy'}\n")
    module = recall_sets()
    assert module.data_folder(worktree, {}) == tmp_path / "work" / "shared" / "bench"
    assert module.data_folder(main, {}) == tmp_path / "work" / "shared" / "bench", "the main checkout too"


def test_the_environment_names_another_folder(tmp_path: Path) -> None:
    module = recall_sets()
    assert module.data_folder(tmp_path, {module.DATA_SWITCH: "/data/sets"}) == Path("/data/sets")
    assert module.data_folder(tmp_path, {}) == tmp_path.parent / "shared" / "bench"
