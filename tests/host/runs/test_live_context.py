"""The kept context: every build equals a build from scratch, byte for byte, and a turn reads only its new lines.

Issue 22.12: a turn used to read and rebuild the whole transcript, so its cost grew with the conversation.
The property test drives a real transcript file through many mixed turns (tool calls, runs that died, wakes,
recall blocks), compactions, erases (lines scrubbed in place, then a new epoch), memory removals, restarts
(a new host, a reopened file, a torn last line) and settings changes, and compares each build with
`build_messages` over `since_last_compact()` with the recall blocks chosen by the replay rule.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from host.memory.fold import Fact
from host.memory.recall import replayed_recall
from host.runs.compaction import estimate_tokens, split_for_compaction
from host.runs.context import build_messages
from host.runs.live_context import LiveContext, LiveContexts, RecallFor
from host.store.transcript import Transcript
from protocol.models.kernel import ChatMessage, chain_hashes
from tests.host.memory.test_recall import fact

TOOLS = ("grep", "read_file", "memory_recall", "write_file", "shell")


class World:
    """An agent's transcript and memory as a host would leave them, with the epoch it would be at."""

    def __init__(self, path: Path, rng: random.Random) -> None:
        self.path = path
        self.rng = rng
        self.transcript = Transcript(path)
        self.epoch = 1
        self.facts: dict[str, Fact] = {}
        self.memory = True
        self.budget = 400
        self.system = "You are A."
        self.runs = 0
        self.after_line: list[Any] = []  # called after a line is written (a build mid-run, as extraction does)
        for _ in range(8):
            self.add_fact()

    def add_fact(self) -> None:
        n = len(self.facts) + 1
        made = fact(n, f"fact {n}: " + "é" * self.rng.randrange(0, 40))
        self.facts[made.id] = made

    def append(self, event: dict[str, Any]) -> dict[str, Any]:
        stored = self.transcript.append(event)
        for hook in self.after_line:
            hook()
        return stored

    def text(self) -> str:
        return self.rng.choice(["", "hi", "ünïcödé ✓", "line\nbreak", "x" * self.rng.randrange(1, 200)])

    def turn(self) -> None:
        """A run: its start, its `context` event, then replies, tool calls and results, and mostly an end."""
        rng = self.rng
        self.runs += 1
        run = f"r{self.runs}"
        if rng.random() < 0.2:
            self.append({"type": "wake", "text": self.text(), "fromAgent": "b1", "hops": 1})
        else:
            self.append({"type": "user", "text": self.text()})
        ids = list(self.facts)
        recalled = rng.sample(ids, rng.randrange(0, 3))
        added = rng.sample(ids, rng.randrange(0, 2))
        self.append({"type": "context", "runId": run, "epoch": self.epoch, "recalled": recalled, "added": added})
        for step in range(rng.randrange(0, 3)):
            calls = [
                {"id": f"{run}-{step}-{k}", "name": rng.choice(TOOLS), "arguments": {"q": self.text(), "n": 1.5}}
                for k in range(rng.randrange(1, 3))
            ]
            self.append({"type": "assistant", "runId": run, "text": rng.choice(["", "looking"]), "toolCalls": calls})
            for call in calls:
                if rng.random() < 0.85:  # the rest died mid-call: a "did not complete" result stands in
                    content = self.text()
                    self.append({"type": "tool", "runId": run, "toolCallId": call["id"], "name": call["name"],
                                 "content": content, "isError": False})  # fmt: skip
        if rng.random() < 0.8:
            self.append({"type": "assistant", "runId": run, "text": self.text(), "partial": rng.random() < 0.1})
        if rng.random() < 0.9:
            self.append({"type": "ended", "runId": run, "reason": rng.choice(["idle", "idle", "error", "cancelled"])})

    def compact(self) -> None:
        older, _ = split_for_compaction(self.transcript.since_last_compact())
        if older:
            through = max(int(e["throughSeq"]) if e.get("type") == "compact" else int(e["seq"]) for e in older)
            self.append({"type": "compact", "summary": f"summary through {through}", "throughSeq": through})
            self.epoch += 1

    def erase(self) -> None:
        """What an erase does: rewrite some lines in place (the same length), then start a new epoch."""
        data = bytearray(self.path.read_bytes())
        for _ in range(3):
            start = self.rng.randrange(0, max(1, len(data)))
            key = data.find(b'"text":"', start)
            if key >= 0:
                end = data.find(b'"', key + 8)
                data[key + 8 : end] = b"#" * (end - key - 8)
        with open(self.path, "r+b") as f:
            f.write(data)
        erased = self.rng.choice(list(self.facts))
        self.facts[erased] = replace(self.facts[erased], status="erased", text=None)
        self.epoch += 1

    def retract(self) -> None:
        gone = self.rng.choice(list(self.facts))
        self.facts[gone] = replace(self.facts[gone], status="retracted")
        self.epoch += 1

    def torn_tail(self) -> None:
        """A host that died mid-write: a torn last line, moved aside when the transcript is opened again."""
        with open(self.path, "ab") as f:
            f.write(b'{"type":"user","seq":')
        self.transcript = Transcript(self.path)

    def recall(self) -> RecallFor | None:
        if not self.memory:
            return None
        epoch, budget, facts = self.epoch, self.budget, dict(self.facts)

        def rendered(contexts: list[dict[str, Any]]) -> dict[int, str]:
            return replayed_recall(contexts, epoch, budget, facts.get)

        return rendered

    def system_messages(self) -> list[ChatMessage]:
        return [ChatMessage(role="system", content=self.system, cache_breakpoint=True)]

    def from_scratch(self) -> list[ChatMessage]:
        events = self.transcript.since_last_compact()
        recall = self.recall()
        return build_messages(self.system_messages(), events, recall(events) if recall is not None else None)


def _wire(messages: list[ChatMessage]) -> list[str]:
    return [message.model_dump_json() for message in messages]


def _check(live: LiveContext, world: World) -> None:
    built = live.build(world.transcript, world.epoch, world.system_messages(), world.recall(), world.budget)
    expected = world.from_scratch()
    assert _wire(built.messages) == _wire(expected)
    assert built.chain == chain_hashes(expected)
    assert built.tokens == estimate_tokens(expected)


@pytest.mark.parametrize("seed", range(12))
def test_every_kept_build_equals_a_build_from_scratch_through_mixed_turns_compactions_erases_and_restarts(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    world = World(tmp_path / "transcript.jsonl", rng)
    live = LiveContext()

    def sometimes() -> None:
        if rng.random() < 0.1:
            _check(live, world)

    world.after_line.append(sometimes)
    for _ in range(120):
        roll = rng.random()
        if roll < 0.55:
            world.turn()
        elif roll < 0.62:
            world.compact()
        elif roll < 0.67:
            world.erase()
        elif roll < 0.72:
            world.retract()
        elif roll < 0.75:
            world.add_fact()
        elif roll < 0.78:
            live = LiveContext()  # the host restarted
        elif roll < 0.81:
            world.transcript = Transcript(world.path)  # the file opened again
        elif roll < 0.83:
            world.torn_tail()
        elif roll < 0.86:
            world.memory = not world.memory
        elif roll < 0.88:
            world.budget = rng.choice([0, 200, 400, 5000])
        elif roll < 0.90:
            world.system = f"You are A, version {rng.randrange(3)}."
        if rng.random() < 0.7:
            _check(live, world)
    _check(live, world)


def test_a_turn_reads_only_the_lines_appended_since_the_last_build(tmp_path: Path) -> None:
    """The seam counts transcript lines read: 300 turns in, a turn's build reads its own few lines, not 1,200."""
    world = World(tmp_path / "transcript.jsonl", random.Random(7))
    live = LiveContext()
    for _ in range(300):
        world.append({"type": "user", "text": "hello"})
        world.append({"type": "context", "runId": "r", "epoch": world.epoch, "recalled": [], "added": []})
        world.append({"type": "assistant", "runId": "r", "text": "hi"})
        world.append({"type": "ended", "runId": "r", "reason": "idle"})
        before = live.lines_read
        _check(live, world)
    assert live.lines_read - before == 4
    world.epoch += 1  # a new epoch reads the context afresh, once
    before = live.lines_read
    _check(live, world)
    assert live.lines_read - before == 1200


def test_a_line_rewritten_in_place_at_the_same_size_is_read_again(tmp_path: Path) -> None:
    """Even without a new epoch: a file the same size with a newer mtime may hold other bytes."""
    world = World(tmp_path / "transcript.jsonl", random.Random(3))
    world.append({"type": "user", "text": "my secret plan"})
    live = LiveContext()
    _check(live, world)
    data = world.path.read_bytes().replace(b"my secret plan", b"[scrubbed]    ")
    stat = world.path.stat()
    world.path.write_bytes(data)
    os.utime(world.path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    built = live.build(world.transcript, world.epoch, world.system_messages(), world.recall(), world.budget)
    assert "secret" not in json.dumps(_wire(built.messages))


def test_another_file_in_the_same_place_is_read_afresh(tmp_path: Path) -> None:
    world = World(tmp_path / "transcript.jsonl", random.Random(5))
    for text in ("one", "two", "three"):
        world.append({"type": "user", "text": text})
    live = LiveContext()
    _check(live, world)
    os.replace(world.path, tmp_path / "old.jsonl")
    world.transcript = Transcript(world.path)
    for text in ("four", "five", "six", "seven"):
        world.append({"type": "user", "text": text})
    _check(live, world)


def test_the_least_recently_built_contexts_are_let_go_past_the_bound(tmp_path: Path) -> None:
    contexts = LiveContexts(max_messages=10)
    worlds = {}
    for name in ("a", "b", "c"):
        worlds[name] = World(tmp_path / f"{name}.jsonl", random.Random(1))
        for n in range(8):
            worlds[name].append({"type": "user", "text": f"{name} {n}"})
    _check(contexts.of("a"), worlds["a"])
    _check(contexts.of("b"), worlds["b"])
    kept_a, kept_b = contexts.of("a"), contexts.of("b")
    _check(contexts.of("c"), worlds["c"])  # 18 messages were kept: a, the least recent, went
    assert contexts.of("b") is kept_b
    assert contexts.of("a") is not kept_a
    _check(contexts.of("a"), worlds["a"])
