"""`bench_long_conversation.py` on one short conversation in LoCoMo's shape (the set itself is never copied
here): with extraction before a compaction every dropped fact is in memory before it is dropped and found;
extracted only later, it lands after; with extraction reading only the context, some are never kept."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PETS = ["parrot", "tortoise", "ferret", "goldfish", "hamster", "iguana", "rabbit", "gecko", "canary", "axolotl"]
NAMES = ["Kiwi", "Boulder", "Zigzag", "Bubbles", "Nugget", "Spike", "Clover", "Pixel", "Sunny", "Wobble"]
FIGURES = re.compile(
    r"\((?P<mode>\s*\w+)\): recall@10\s+(?P<recall>[\d.]+)% over (?P<questions>\d+) questions; "
    r"(?P<compactions>\d+) compactions .* dropped (?P<dropped>\d+) evidence turns, "
    r"(?P<kept>\d+) of them in memory at the end, (?P<in_time>\d+) already when dropped"
)


def _conversation() -> list[dict[str, object]]:
    """Two sessions: Ann names one pet a turn, Bo answers; one question per pet, its evidence Ann's turn."""
    sessions: dict[str, object] = {"speaker_a": "Ann", "speaker_b": "Bo"}
    qa = []
    for session in (1, 2):
        turns = []
        for n, (pet, name) in enumerate(list(zip(PETS, NAMES, strict=True))[(session - 1) * 5 : session * 5]):
            ann = f"D{session}:{2 * n + 1}"
            turns.append({"speaker": "Ann", "dia_id": ann, "text": f"My {pet} is called {name}, and I adore it."})
            turns.append({"speaker": "Bo", "dia_id": f"D{session}:{2 * n + 2}", "text": "What a lovely companion."})
            qa.append({"question": f"What is Ann's {pet} called?", "answer": name, "evidence": [ann], "category": 4})
        sessions[f"session_{session}_date_time"] = f"1:56 pm on {session + 7} May, 2023"
        sessions[f"session_{session}"] = turns
    return [{"conversation": sessions, "qa": qa}]


def test_only_extraction_before_a_compaction_has_every_dropped_fact_in_memory_before_the_drop(tmp_path: Path) -> None:
    locomo = tmp_path / "locomo.json"
    locomo.write_text(json.dumps(_conversation()), encoding="utf-8")
    command = [sys.executable, str(ROOT / "scripts" / "bench_long_conversation.py"), "--locomo", str(locomo)]
    options = ["--conversations", "1", "--window", "800", "--every", "10", "--variants", "on,late,off"]
    done = subprocess.run([*command, *options], capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    figures = {found["mode"].strip(): found for found in FIGURES.finditer(done.stdout)}
    assert set(figures) == {"on", "late", "off"}, done.stdout
    on, late, off = figures["on"], figures["late"], figures["off"]
    assert int(on["compactions"]) > 0 and int(on["dropped"]) > 0, "the window is small enough to drop turns"
    assert int(on["kept"]) == int(on["in_time"]) == int(on["dropped"]), done.stdout
    assert float(on["recall"]) == 100.0, done.stdout
    assert int(late["kept"]) == int(late["dropped"]), f"the next extraction still reads dropped lines: {done.stdout}"
    assert int(late["in_time"]) < int(late["dropped"]), f"but only after they were dropped: {done.stdout}"
    assert int(off["kept"]) < int(off["dropped"]), f"without it some dropped turns never reach memory: {done.stdout}"
    assert float(on["recall"]) >= float(off["recall"]), done.stdout
    assert "with / without item 1:" in done.stdout
