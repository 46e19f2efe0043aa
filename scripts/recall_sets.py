"""The long-conversation sets `bench_recall.py` measures recall on, read into one shape: turns and questions.

LoCoMo (Maharana et al., 2024; snap-research/locomo, `data/locomo10.json`, CC BY-NC 4.0): ten conversations
written by language models, 5,882 turns, 1,986 questions with evidence turns. REALTALK (Lee et al., 2025,
"REALTALK: A 21-Day Real-World Dataset for Long-Term Conversation"; github.com/danny911kr/REALTALK, the
`data/Chat_*.json` files): ten chats between real people over 21 days in a messaging app, 8,944 messages,
728 questions in LoCoMo's categories 1-3, 695 of them with evidence messages. Its repository states no licence, so
neither set is copied into this project: both are read from where they were put (see docs/memory.md).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

__all__ = ["Conversation", "Question", "CATEGORIES", "DATA_SWITCH", "data_folder", "load_locomo", "load_realtalk"]

DATA_SWITCH = "HEARTH_BENCH_DATA"
"""Environment variable: the folder holding `locomo10.json` and `realtalk/` (the default is below)."""


def data_folder(root: Path, environ: dict[str, str] | None = None) -> Path:
    """Where the sets were put: $HEARTH_BENCH_DATA, else `shared/bench` beside the repository.

    The repository is the main checkout, also when `root` is a worktree of it (its `.git` is then a file
    naming the main checkout's `.git/worktrees/<name>`), so a worktree finds the data its main checkout does.
    """
    chosen = (os.environ if environ is None else environ).get(DATA_SWITCH)
    if chosen:
        return Path(chosen)
    repository = root
    marker = root / ".git"
    if marker.is_file():
        text = marker.read_text(encoding="utf-8").strip()
        if text.startswith("gitdir:"):
            gitdir = (root / text.removeprefix("gitdir:").strip()).resolve()
            common = gitdir / "commondir"
            if common.is_file():
                gitdir = (gitdir / common.read_text(encoding="utf-8").strip()).resolve()
            repository = gitdir.parent
    return repository.parent / "shared" / "bench"


CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
"""Question categories as both sets' data and their own evaluation code number them."""


@dataclass(frozen=True, slots=True)
class Question:
    category: int
    text: str
    evidence: tuple[str, ...]
    """The ids of the turns that hold the answer (only ids of turns the conversation has)."""


@dataclass(frozen=True, slots=True)
class Conversation:
    name: str
    turns: tuple[tuple[str, str, str], ...]
    """(turn id, "Speaker: text" with a shared image's caption, valid time as ISO 8601), in order."""
    questions: tuple[Question, ...]
    """Every question that has at least one evidence turn."""


def _turn_text(speaker: object, text: object, caption: object) -> str:
    line = f"{speaker}: {text}"
    return f"{line} [shares {caption}]" if caption else line


def _evidence_ids(raw: Sequence[str]) -> list[str]:
    """Evidence ids, split and trimmed: a few strings hold two ids ("D1:3; D2:4") or stray spaces."""
    ids: list[str] = []
    for item in raw:
        ids += [part.strip().replace(" ", "") for part in re.split(r"[;,]", item) if part.strip()]
    return ids


def _questions(raw: Sequence[dict[str, object]], turn_ids: set[str]) -> tuple[Question, ...]:
    out = []
    for qa in raw:
        evidence = qa.get("evidence")
        wanted = [dia for dia in _evidence_ids(evidence if isinstance(evidence, list) else []) if dia in turn_ids]
        if wanted:
            out.append(Question(int(str(qa["category"])), str(qa["question"]), tuple(dict.fromkeys(wanted))))
    return tuple(out)


def _sessions(conversation: dict[str, object]) -> list[tuple[int, list[dict[str, object]]]]:
    found = [
        (int(key.split("_")[1]), value) for key, value in conversation.items() if re.fullmatch(r"session_\d+", key)
    ]
    return sorted(((number, value) for number, value in found if isinstance(value, list)), key=lambda pair: pair[0])


def load_locomo(path: Path) -> list[Conversation]:
    """LoCoMo's conversations: each turn dated by its session."""
    out = []
    for position, sample in enumerate(json.loads(path.read_text(encoding="utf-8")), start=1):
        conversation = sample["conversation"]
        turns = []
        for number, session in _sessions(conversation):
            stamp = str(conversation[f"session_{number}_date_time"]).strip()
            when = datetime.strptime(stamp, "%I:%M %p on %d %B, %Y").isoformat()
            for turn in session:
                turns.append(
                    (str(turn["dia_id"]), _turn_text(turn["speaker"], turn["text"], turn.get("blip_caption")), when)
                )
        out.append(Conversation(f"locomo-{position}", tuple(turns), _questions(sample["qa"], {t[0] for t in turns})))
    return out


def load_realtalk(folder: Path) -> list[Conversation]:
    """REALTALK's chats (`Chat_<n>_<A>_<B>.json`, in the order of n): each message dated by its own time."""
    files = sorted(folder.glob("Chat_*.json"), key=lambda path: int(path.name.split("_")[1]))
    out = []
    for path in files:
        chat = json.loads(path.read_text(encoding="utf-8"))
        turns = []
        for _, session in _sessions(chat):
            for message in session:
                when = datetime.strptime(str(message["date_time"]), "%d.%m.%Y, %H:%M:%S").isoformat()
                text = _turn_text(message["speaker"], message["clean_text"], message.get("blip_caption"))
                turns.append((str(message["dia_id"]), text, when))
        out.append(Conversation(path.stem, tuple(turns), _questions(chat["qa"], {t[0] for t in turns})))
    return out
