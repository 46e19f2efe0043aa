"""Check: does what a compaction drops from a long conversation still reach memory? (issue 24, "What must hold").

LoCoMo's conversations (`recall_sets.py`) are fed to a real host over its pipes, one agent per conversation,
each turn one user message "[session date] Speaker: text", with a small context window so compaction runs
many times, and extraction every `--every` turns. The model is a local HTTP server speaking the OpenAI chat
API: chat turns and summaries get a short fixed reply, and an extraction request gets one `assert` of a `log`
fact per user line it shows, holding that line's text as said (a deterministic extractor at the model's
boundary), so the figures measure only which lines ever reach extraction. For each question of categories
1-4 with an evidence turn a compaction dropped, `memory.search` over the wire asks the question and the
evidence recall@10 of those turns is scored (a hit: a result's text is the turn's text).

The host is run three times (`HEARTH_COMPACTION_COVER`, `host/runs/extractor.py`): `on`, the default (a
compaction first extracts what it drops); `late`, nothing extracted before a compaction, but the next
extraction still reads dropped lines from the transcript; `off`, the host before that change, where
extraction read only the context since the last compaction. Ranking is by words only (`HEARTH_EMBEDDINGS`
off): the question is whether a fact is in memory at all, and the embedder would only slow the run.

The default (two conversations, 788 turns, all three variants) takes about 4 minutes on two busy cores; the
figures measured are in docs/memory.md. LoCoMo is read from --locomo (by default as `bench_recall.py` finds it).

Run: python scripts/bench_long_conversation.py [--conversations 2] [--turns N] [--window 2000] [--every 10]
     [--variants on,late,off] [--locomo FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall_sets import Conversation, data_folder, load_locomo

if TYPE_CHECKING:
    from tests.support.host_process import HostProcess

ROOT = Path(__file__).resolve().parents[1]
SCORED = (1, 2, 3, 4)
"""LoCoMo's categories with answers in the conversation (5 is adversarial: nothing to find)."""
REPLY = "Noted."
CLOSING = "That is all for today, thank you for listening."
"""The turn after the conversation (undated, so the extractor stores nothing of it)."""
VARIANTS = {
    "on": "with item 1",
    "late": "no extraction before a compaction",
    "off": "without item 1",
}
_LINE = re.compile(
    r"^\[seq (\d+) · user\] \[(\d{4}-\d{2}-\d{2})\] (.*?)(?=\n\[seq \d+ · |\Z)", re.DOTALL | re.MULTILINE
)
"""One user line of an extraction request's exchange: its seq, its session date and the turn as said."""


def turn_message(text: str, when: str) -> str:
    """The user message for one LoCoMo turn: its session date, then "Speaker: text"."""
    return f"[{when[:10]}] {text}"


def extraction_reply(prompt: str) -> str:
    """The extractor's answer: every user line the exchange shows, asserted as a dated `log` fact, as said."""
    exchange = prompt.rsplit("\nExchange:\n", 1)[-1]
    operations = [
        {"op": "assert", "text": text.strip(), "tier": "log", "validFrom": day, "seq": int(seq), "source": "user"}
        for seq, day, text in _LINE.findall(exchange)
        if text.strip()
    ]
    return json.dumps({"operations": operations})


@dataclass(frozen=True, slots=True)
class Outcome:
    """One conversation in one variant: what compaction did and what memory kept of it."""

    compactions: int
    unfinished: int
    """Compactions that went on before extraction covered what they drop."""
    dropped: int
    """Evidence turns (of scored questions) that a compaction dropped from the context."""
    kept: int
    """Those of them memory holds (as said) at the end, wherever a search ranks them."""
    in_time: int
    """Those of them memory already held when the compaction dropped them from the context."""
    recalls: tuple[float, ...]
    """Recall@10 of each scored question whose evidence a compaction dropped (over those turns)."""


def _events(transcript: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines()]


def _user_seqs(transcript: Path) -> list[int]:
    return [int(e["seq"]) for e in _events(transcript) if e.get("type") == "user"]


def _compaction_facts(transcript: Path, turn_ids: Sequence[str]) -> tuple[int, int, dict[str, datetime]]:
    """(compactions, unfinished ones, each dropped turn's id with when the first compaction that dropped it
    was written), read from the transcript."""
    by_seq = dict(zip(_user_seqs(transcript), turn_ids, strict=False))  # the closing turn has no id
    compacts = [e for e in _events(transcript) if e.get("type") == "compact"]
    dropped: dict[str, datetime] = {}
    for compact in compacts:
        for seq, turn in by_seq.items():
            if int(compact["fromSeq"]) <= seq <= int(compact["throughSeq"]):
                dropped.setdefault(turn, datetime.fromisoformat(compact["ts"]))
    return len(compacts), sum(c.get("extraction") == "unfinished" for c in compacts), dropped


async def _turn(host: HostProcess, agent_id: str, text: str) -> None:
    """One turn, waited for among the notifications after it only (a long run records many)."""
    mark = len(host.events)
    run = (await host.call("agent.send", {"agentId": agent_id, "text": text}))["runId"]
    ended = await host.wait_for("agent.ended", lambda p: p["runId"] == run, after=mark, timeout=300)
    if ended["reason"] != "idle":
        raise RuntimeError(f"a turn of {agent_id} ended {ended['reason']}: {ended.get('error')}")


async def _converse(host: HostProcess, conversation: Conversation, agent_id: str, transcript: Path) -> None:
    """Every turn, then the closing turn; returns once the extraction that follows it has been applied."""
    for _, text, when in conversation.turns:
        await _turn(host, agent_id, turn_message(text, when))
    # With extraction every N turns the conversation ends anywhere in the cycle: one closing turn with
    # extraction after it reads whatever the variant would read next, and its end is seen on the wire.
    await host.call("agent.update", {"agentId": agent_id, "settings": {"extraction": "auto"}})
    mark = len(host.events)
    await _turn(host, agent_id, CLOSING)
    closing = _user_seqs(transcript)[-1]
    await host.wait_for(
        "memory.extracted", lambda p: p["agentId"] == agent_id and p["throughSeq"] >= closing, after=mark, timeout=300
    )


def _said(text: str) -> str:
    """A turn's text as memory stores it (spaces folded), so a record and its turn compare equal."""
    return " ".join(text.split())


async def _score(host: HostProcess, conversation: Conversation, agent_id: str, transcript: Path) -> Outcome:
    turn_ids = [turn for turn, _, _ in conversation.turns]
    compactions, unfinished, dropped = _compaction_facts(transcript, turn_ids)
    texts = {turn: _said(text) for turn, text, _ in conversation.turns}
    recalls, counted = [], set()
    for question in conversation.questions:
        wanted = [turn for turn in question.evidence if turn in dropped]
        if question.category in SCORED and wanted:
            counted.update(wanted)
            found = await host.call("memory.search", {"agentId": agent_id, "query": question.text, "limit": 10})
            top = {_said(hit["record"]["text"]) for hit in found["hits"]}
            recalls.append(sum(texts[turn] in top for turn in wanted) / len(wanted))
    listing = await host.call("memory.list", {"agentId": agent_id, "view": "current"})
    held = {_said(r["text"]): datetime.fromisoformat(r["observedAt"]) for r in listing["records"]}
    kept = sum(texts[turn] in held for turn in counted)
    in_time = sum(texts[turn] in held and held[texts[turn]] <= dropped[turn] for turn in counted)
    return Outcome(compactions, unfinished, len(counted), kept, in_time, tuple(recalls))


async def run_variant(mode: str, conversations: Sequence[Conversation], window: int, every: int) -> list[Outcome]:
    """Feed each conversation to its own agent of one host started with `HEARTH_COMPACTION_COVER=mode`."""
    from host.memory.embedder import SWITCH as EMBEDDINGS
    from host.memory.rewrite import SWITCH as REWRITE
    from host.runs.extractor import COVER_SWITCH
    from tests.support.fake_model import ChatServer, model_settings, say
    from tests.support.host_process import HostProcess

    env = {COVER_SWITCH: mode, EMBEDDINGS: "off", REWRITE: "off"}
    server = ChatServer(lambda r: extraction_reply(r.body["messages"][-1]["content"]), otherwise=say(REPLY))
    server.start()
    outcomes = []
    try:
        with tempfile.TemporaryDirectory(prefix="hearth-long-conversation-") as folder:
            data_dir = Path(folder)
            async with HostProcess(data_dir, env=env, stderr_to=data_dir / "host.log") as host:
                for number, conversation in enumerate(conversations, 1):
                    agent_id = f"talk-{number}"
                    settings = model_settings(server, extraction=every)
                    settings["model"]["contextWindow"] = window
                    await host.call("agent.create", {"name": agent_id, "agentId": agent_id, "settings": settings})
                    transcript = data_dir / "agents" / agent_id / "transcript.jsonl"
                    await _converse(host, conversation, agent_id, transcript)
                    outcomes.append(await _score(host, conversation, agent_id, transcript))
                    server.forget()
    finally:
        server.stop()
    return outcomes


def report(mode: str, outcomes: Sequence[Outcome]) -> float:
    """Print one variant's line; returns its recall@10 in percent."""
    recalls = [value for outcome in outcomes for value in outcome.recalls]
    recall = 100 * statistics.fmean(recalls) if recalls else 0.0
    compactions = sum(o.compactions for o in outcomes)
    unfinished = sum(o.unfinished for o in outcomes)
    dropped = sum(o.dropped for o in outcomes)
    kept = sum(o.kept for o in outcomes)
    in_time = sum(o.in_time for o in outcomes)
    print(
        f"{VARIANTS[mode]:<36} ({mode:>4}): recall@10 {recall:5.1f}% over {len(recalls)} questions; "
        f"{compactions} compactions ({unfinished} went on before extraction covered them) dropped {dropped} "
        f"evidence turns, {kept} of them in memory at the end, {in_time} already when dropped"
    )
    return recall


def _slice(conversation: Conversation, turns: int | None) -> Conversation:
    """The conversation's first `turns` turns and the questions whose evidence lies in them only."""
    if turns is None:
        return conversation
    kept = conversation.turns[:turns]
    ids = {turn for turn, _, _ in kept}
    questions = tuple(q for q in conversation.questions if set(q.evidence) <= ids)
    return Conversation(conversation.name, kept, questions)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", type=Path, default=data_folder(ROOT) / "locomo10.json", help="locomo10.json")
    parser.add_argument("--conversations", type=int, default=2, help="how many of LoCoMo's, from the first")
    parser.add_argument("--turns", type=int, help="only each conversation's first N turns")
    parser.add_argument("--window", type=int, default=2000, help="the model's context window in tokens")
    parser.add_argument("--every", type=int, default=10, help="extraction every N turns")
    parser.add_argument("--variants", default="on,late,off", help="which of on, late, off to run (comma-separated)")
    args = parser.parse_args(argv)
    modes = [mode for mode in args.variants.split(",") if mode]
    if not modes or any(mode not in VARIANTS for mode in modes):
        parser.error(f"--variants takes some of {', '.join(VARIANTS)}")
    if not args.locomo.is_file():
        parser.error(f"no LoCoMo file at {args.locomo} (see docs/memory.md for where to put it)")
    conversations = [_slice(c, args.turns) for c in load_locomo(args.locomo)[: args.conversations]]
    turns = sum(len(c.turns) for c in conversations)
    print(
        f"LoCoMo: {len(conversations)} conversation(s), {turns} turns; context window {args.window} tokens, "
        f"extraction every {args.every} turns"
    )
    sys.path.insert(0, str(ROOT))  # the scripted model lives in tests/support
    figures = {}
    for mode in modes:
        figures[mode] = report(mode, asyncio.run(run_variant(mode, conversations, args.window, args.every)))
    if "on" in figures and "off" in figures:
        ratio = figures["on"] / figures["off"] if figures["off"] else float("inf")
        print(f"with / without item 1: {figures['on']:.1f}% / {figures['off']:.1f}% = {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
