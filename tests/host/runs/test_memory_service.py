"""What extraction reads of a run: its own lines, back to the message that started it, never the whole transcript."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from host.memory.rewrite import SWITCH
from host.runs.memory_service import exchange_since, may_rewrite, may_summarise, run_exchange, run_lines
from host.store.transcript import Transcript
from protocol.models.agents import ModelSettings


@pytest.mark.parametrize("seed", range(8))
def test_a_runs_exchange_from_its_own_lines_is_its_exchange_from_the_whole_context(tmp_path: Path, seed: int) -> None:
    """Issue 22.12: after every turn, extraction read the whole context to find one run's lines."""
    rng = random.Random(seed)
    transcript = Transcript(tmp_path / "transcript.jsonl")
    runs = []
    for n in range(40):
        run = f"run-{n}"
        transcript.append({"type": rng.choice(["user", "wake"]), "text": f"message {n}", "fromAgent": "bob"})
        transcript.append({"type": "context", "runId": run, "epoch": 1})
        for k in range(rng.randrange(3)):
            transcript.append({"type": "assistant", "runId": run, "text": rng.choice(["", f"reply {k}"])})
            transcript.append({"type": "tool", "runId": run, "toolCallId": f"c{k}", "name": "grep", "content": "hit"})
        transcript.append({"type": "ended", "runId": run, "reason": "idle"})
        runs.append(run)
        if rng.random() < 0.1:
            transcript.append({"type": "compact", "summary": "s", "throughSeq": transcript.last_seq - 2})
        run = rng.choice(runs[-3:])
        whole = transcript.since_last_compact()
        assert run_exchange(run_lines(transcript.context_backwards(), run), run) == run_exchange(whole, run)
        since = rng.randrange(transcript.last_seq)
        assert exchange_since(transcript.context_after(since), since) == exchange_since(whole, since)


def test_a_recall_question_is_rewritten_by_a_remote_model_never_by_the_embedded_one_nor_when_switched_off() -> None:
    """Issue 23.4: the rewrite is off for the embedded model, and `HEARTH_RECALL_REWRITE=off` stops it."""
    remote, local = ModelSettings(provider="openai", name="gpt"), ModelSettings(provider="local")
    assert may_rewrite(remote, {}) and may_rewrite(ModelSettings(provider="scripted"), {SWITCH: "on"})
    assert not may_rewrite(local, {}), "the embedded model is never asked"
    assert not may_rewrite(remote, {SWITCH: "off"})


def test_summaries_of_old_log_entries_are_written_by_a_remote_model_never_the_embedded_or_a_scripted_one() -> None:
    """Issue 24: the embedded model is too small for them, and a scripted one answers by rule."""
    assert may_summarise(ModelSettings(provider="openai", name="m"))
    assert may_summarise(ModelSettings(provider="anthropic", name="m"))
    assert not may_summarise(ModelSettings(provider="local")), "the embedded model is never asked"
    assert not may_summarise(ModelSettings(provider="scripted"))
