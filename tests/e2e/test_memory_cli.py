"""`hearth memory`: a person lists, reviews, forgets and verifies an agent's memory from the terminal."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model


def _hearth(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hearth", "memory", *args, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
    )


def test_a_person_reviews_the_queue_forgets_a_fact_and_verifies_from_the_terminal(tmp_path: Path) -> None:
    rules = [
        {
            "match": r"^web says (.*)$",
            "toolCalls": [{"name": "memory_note", "arguments": {"text": r"\1", "basis": "tool"}}],
        },
        {"match": ".*", "reply": "ok"},
    ]

    async def main() -> None:
        async with HostProcess(tmp_path) as host:  # the commands attach to this host through its socket
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(*rules)})
            for text in ("web says The library closes at six.", "web says The bakery sells rye bread."):
                await host.send_and_wait("ann", text)
            noted = await host.call("memory.note", {"agentId": "ann", "text": "The user bikes to work."})
            kept = noted["record"]["id"]
            queue = await host.call("memory.list", {"agentId": "ann", "view": "proposed"})
            library = next(r["id"] for r in queue["records"] if "library" in r["text"])
            await asyncio.to_thread(_review_forget_and_verify, tmp_path, library, kept)

    asyncio.run(main())


def _review_forget_and_verify(tmp_path: Path, library: str, kept: str) -> None:
    queue = _hearth(tmp_path, "list", "ann", "--view", "proposed")
    assert queue.returncode == 0, queue.stderr
    assert "library closes at six" in queue.stdout and "proposed" in queue.stdout and " agent " in queue.stdout
    assert _hearth(tmp_path, "review", "ann", library, "confirm").returncode == 0
    current = _hearth(tmp_path, "list", "ann").stdout
    assert "library closes at six" in current and "bakery" not in current
    assert _hearth(tmp_path, "forget", "ann", kept, "--reason", "moved house").returncode == 0
    current = _hearth(tmp_path, "list", "ann").stdout
    assert "bikes to work" not in current and "library closes at six" in current
    assert "bikes to work" in _hearth(tmp_path, "list", "ann", "--view", "retracted").stdout
    verified = _hearth(tmp_path, "verify", "ann")
    assert verified.returncode == 0 and verified.stdout.startswith("ok:")
    missing = _hearth(tmp_path, "list", "nobody")
    assert missing.returncode == 1 and "no agent 'nobody'" in missing.stderr


def test_a_person_erases_from_the_terminal_and_chooses_whether_the_conversation_is_scrubbed(tmp_path: Path) -> None:
    """Issue 22.1: without the flag the conversation keeps the text and the count says so; with it, it is gone."""
    say = [{"match": r"^say (.*)$", "reply": r"\1"}]
    cat, tea = "The user's cat is called Miso.", "The user drinks oolong tea."

    async def main() -> None:
        async with HostProcess(tmp_path) as host:  # the commands attach to this host through its socket
            await host.call("agent.create", {"name": "ann", "settings": scripted_model(*say)})
            ids = [(await host.call("memory.note", {"agentId": "ann", "text": t}))["record"]["id"] for t in (cat, tea)]
            for text in (cat, tea):
                await host.idle_turn("ann", f"say {text}")
            await asyncio.to_thread(_erase_both, tmp_path, ids[0], ids[1])

    asyncio.run(main())
    transcript = (tmp_path / "agents/ann/transcript.jsonl").read_text(encoding="utf-8")
    assert "Miso" not in transcript and "say [erased]" in transcript
    assert transcript.count(tea) == 2, "the conversation erased without the flag keeps its words"


def _erase_both(tmp_path: Path, cat_id: str, tea_id: str) -> None:
    kept = _hearth(tmp_path, "ann", "erase", tea_id)
    assert kept.returncode == 0, kept.stderr
    assert kept.stdout.splitlines() == [
        "erase: erased",
        "2 message(s) of the conversation still hold the text (left as they are)",
    ]
    scrubbed = _hearth(tmp_path, "ann", "erase", cat_id, "--scrub-conversation")
    assert scrubbed.returncode == 0, scrubbed.stderr
    assert scrubbed.stdout.splitlines() == ["erase: erased", "scrubbed from 2 message(s) of the conversation"]
