"""`hearth knowledge`: a person admits a folder (with progress), lists it, searches it (with why each passage
matched), pauses it and removes it from the terminal, attached to the running host (issue 26)."""

from __future__ import annotations

import asyncio
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

from tests.support.documents import write_corpus
from tests.support.host_process import REPO_ROOT, HostProcess, scripted_model


def _cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hearth", *args, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
    )


def _hearth(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _cli(data_dir, "knowledge", *args)


def test_a_person_admits_searches_pauses_and_removes_documents_from_the_terminal(tmp_path: Path) -> None:
    data = tmp_path / "data"
    docs = write_corpus(tmp_path / "docs")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 not really")

    def check() -> None:
        added = _hearth(data, "Ann", "add", str(docs))
        assert added.returncode == 0, added.stderr
        assert re.search(r"^read \d+/3 files, \d+ chunks", added.stderr, re.MULTILINE), added.stderr
        assert "ready" in added.stdout and "not read: " + str(docs / "broken.pdf") in added.stdout
        listing = json.loads(_hearth(data, "ann", "list", "--json").stdout)
        [source] = listing["sources"]
        assert (source["files"], source["state"], listing["on"]) == (3, "ready", True)
        found = _hearth(data, "ann", "search", "quillfeather", "brush")
        assert found.returncode == 0, found.stderr
        assert f"1. {docs / 'manual.html'}:8-9  [Espresso machine manual > Cleaning]" in found.stdout
        assert "why: words #1 (quillfeather, brush)" in found.stdout
        paused = _hearth(data, "ann", "pause", source["sourceId"])
        assert paused.returncode == 0 and "paused" in paused.stdout
        assert "quillfeather" in _hearth(data, "ann", "search", "quillfeather").stdout  # still searchable
        removed = _hearth(data, "ann", "remove", source["sourceId"])
        assert removed.returncode == 0 and "5 chunks gone from disk" in removed.stdout, removed.stdout
        assert "(nothing matched" in _hearth(data, "ann", "search", "quillfeather").stdout
        missing = _hearth(data, "ann", "add", str(tmp_path / "nope"))
        assert missing.returncode == 1 and "not a file or folder that exists" in missing.stderr

    async def main() -> None:
        async with HostProcess(data) as host:  # the commands attach to this host through its socket
            await host.call("agent.create", {"name": "Ann", "agentId": "ann", "settings": scripted_model()})
            await asyncio.to_thread(check)

    asyncio.run(main())


def test_a_path_overlapping_an_admitted_folder_is_refused_naming_it_and_a_sibling_or_a_work_may_admit(
    tmp_path: Path,
) -> None:
    """Issue 26: a file or folder inside an admitted folder, or a folder holding it, was a second source and
    search gave the same passage twice."""
    data = tmp_path / "data"
    docs = write_corpus(tmp_path / "shelf" / "docs")
    sibling = tmp_path / "shelf" / "docs-old"
    sibling.mkdir()
    (sibling / "old.md").write_text("# Old\n\nThe archived pelican note.\n", encoding="utf-8")

    def hits(owner: tuple[str, ...], *query: str) -> list[str]:
        found = _hearth(data, *owner, "search", *query, "--json")
        assert found.returncode == 0, found.stderr
        return [hit["citation"] for hit in json.loads(found.stdout)["hits"]]

    def check() -> None:
        assert _hearth(data, "ann", "add", str(docs)).returncode == 0
        [source] = json.loads(_hearth(data, "ann", "list", "--json").stdout)["sources"]
        held = f"{source['sourceId']} ({docs})"
        inside = _hearth(data, "ann", "add", str(docs / "manual.html"))
        assert inside.returncode == 1, inside.stdout
        assert f"is inside the admitted folder {held}" in inside.stderr
        assert f"remove {source['sourceId']} first" in inside.stderr
        holding = _hearth(data, "ann", "add", str(tmp_path / "shelf"))
        assert holding.returncode == 1 and f"holds the admitted folder {held}" in holding.stderr
        other_pattern = _hearth(data, "ann", "add", str(docs), "--pattern", "*.md")
        assert other_pattern.returncode == 1 and f"is admitted already as {held}" in other_pattern.stderr
        again = _hearth(data, "ann", "add", str(docs))
        assert again.returncode == 0, again.stderr
        assert f"{held} was admitted already; it keeps its source" in again.stdout
        listing = json.loads(_hearth(data, "ann", "list", "--json").stdout)
        assert [s["sourceId"] for s in listing["sources"]] == [source["sourceId"]]
        assert hits(("ann",), "quillfeather", "brush") == [f"{docs / 'manual.html'}:8-9"]  # once, not twice
        beside = _hearth(data, "ann", "add", str(sibling))
        assert beside.returncode == 0, beside.stderr
        assert "admitted already" not in beside.stdout
        assert hits(("ann",), "pelican") == [f"{sibling / 'old.md'}:3"]
        assert len(json.loads(_hearth(data, "ann", "list", "--json").stdout)["sources"]) == 2
        work = _hearth(data, "--work", "launch", "add", str(docs))  # another owner may admit the same folder
        assert work.returncode == 0, work.stderr
        assert hits(("--work", "launch"), "quillfeather", "brush") == [f"{docs / 'manual.html'}:8-9"]
        assert hits(("ann",), "quillfeather", "brush") == [f"{docs / 'manual.html'}:8-9"]

    async def main() -> None:
        async with HostProcess(data) as host:
            await host.call("agent.create", {"name": "Ann", "agentId": "ann", "settings": scripted_model()})
            await host.call("work.create", {"name": "Launch", "members": ["ann"]})
            await asyncio.to_thread(check)

    asyncio.run(main())


def test_an_export_carries_knowledge_only_with_the_flag_and_another_data_dir_searches_it_after_import(
    tmp_path: Path,
) -> None:
    data, elsewhere = tmp_path / "data", tmp_path / "elsewhere"
    docs = write_corpus(tmp_path / "docs")
    key = "sk-proj-" + "Q7w9E2r4T6y8U1i3O5p7A9s2D4f6G8h1J3k5"
    (docs / "deploy.md").write_text(f"# Deploy\n\nThe gannetry server.\n\nOPENAI_API_KEY={key}\n", encoding="utf-8")
    plain, carried = tmp_path / "plain.hearth", tmp_path / "carried.hearth"

    def check() -> None:
        assert _hearth(data, "ann", "add", str(docs)).returncode == 0
        left = _cli(data, "export", "ann", str(plain))
        assert left.returncode == 0 and "knowledge" not in left.stdout, left.stdout
        exported = _cli(data, "export", "ann", str(carried), "--with-knowledge")
        assert exported.returncode == 0, exported.stderr
        assert "transcript events and its knowledge to" in exported.stdout  # the person is told it went
        # The default carries no byte of any document; the flag carries them, the key still masked.
        for needle in (b"quillfeather", b"zephyrine", b"gannetry"):
            assert needle not in gzip.decompress(plain.read_bytes())
            assert needle in gzip.decompress(carried.read_bytes())
        assert key.encode() not in gzip.decompress(carried.read_bytes())
        imported = _cli(elsewhere, "import", str(carried))
        assert imported.returncode == 0, imported.stderr
        found = _hearth(elsewhere, "ann", "search", "quillfeather", "brush")
        assert found.returncode == 0, found.stderr
        assert f"1. {docs / 'manual.html'}:8-9" in found.stdout
        listing = json.loads(_hearth(elsewhere, "ann", "list", "--json").stdout)
        [source] = listing["sources"]
        assert (source["path"], source["state"], source["files"]) == (str(docs), "paused", 4)  # read nothing here
        assert _cli(elsewhere, "import", str(plain), "--agent-id", "ann-plain").returncode == 0
        assert json.loads(_hearth(elsewhere, "ann-plain", "list", "--json").stdout)["sources"] == []

    async def main() -> None:
        async with HostProcess(data) as host, HostProcess(elsewhere):
            await host.call("agent.create", {"name": "Ann", "agentId": "ann", "settings": scripted_model()})
            await asyncio.to_thread(check)

    asyncio.run(main())


def test_a_person_lists_accepts_and_declines_an_agents_suggestions_from_the_terminal(tmp_path: Path) -> None:
    """Issue 26: an agent suggests documents; only a person's accept admits one, with add's checks."""
    data = tmp_path / "data"
    docs = write_corpus(tmp_path / "docs")
    guide, manual = docs / "guide.md", docs / "manual.html"
    suggests = {
        "match": r"(?m)^suggest$",
        "on": "user",
        "toolCalls": [
            {"name": "suggest_document", "arguments": {"path": str(guide), "reason": "it has the \x1b[31mhose"}},
            {"name": "suggest_document", "arguments": {"path": str(manual), "reason": "the espresso machine"}},
            {"name": "suggest_document", "arguments": {"path": str(data), "reason": "everything"}},
        ],
    }

    def check() -> None:
        listed = _hearth(data, "ann", "suggestions")
        assert listed.returncode == 0, listed.stderr
        assert str(guide) in listed.stdout and "it has the [31mhose" in listed.stdout and "\x1b" not in listed.stdout
        ids = {
            s["path"]: s["suggestionId"]
            for s in json.loads(_hearth(data, "ann", "suggestions", "--json").stdout)["suggestions"]
        }
        assert _hearth(data, "ann", "list").stdout.strip() == "(nothing admitted)"
        accepted = _hearth(data, "ann", "accept", ids[str(guide)])
        assert accepted.returncode == 0, accepted.stderr
        assert "ready" in accepted.stdout
        admitted = json.loads(_hearth(data, "ann", "list", "--json").stdout)["sources"]
        assert [(s["path"], s["files"]) for s in admitted] == [(str(guide), 1)]
        assert "zephyrine" in _hearth(data, "ann", "search", "zephyrine").stdout
        declined = _hearth(data, "ann", "decline", ids[str(manual)])
        assert declined.returncode == 0 and "nothing was admitted" in declined.stdout
        assert "(nothing matched" in _hearth(data, "ann", "search", "quillfeather").stdout
        refused = _hearth(data, "ann", "accept", ids[str(data)])
        assert refused.returncode == 1 and "inside Hearth's data directory" in refused.stderr
        left = _hearth(data, "ann", "suggestions").stdout
        assert ids[str(data)] in left and ids[str(guide)] not in left and ids[str(manual)] not in left
        assert _hearth(data, "ann", "decline", ids[str(manual)]).returncode == 1  # decided already
        assert _hearth(data, "--work", "ann", "suggestions").returncode == 2

    async def main() -> None:
        async with HostProcess(data) as host:
            rules = scripted_model(suggests, {"match": ".", "on": "tool", "reply": "suggested"})
            await host.call("agent.create", {"name": "Ann", "agentId": "ann", "settings": rules})
            await host.idle_turn("ann", "suggest")
            await asyncio.to_thread(check)

    asyncio.run(main())
