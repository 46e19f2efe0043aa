"""An agent's knowledge through the real host and kernel: admitted documents searched from a turn and cited,
kept live as files change, untrusted when noted, masked of secrets, private, removed without a byte left,
and gone when off (issue 26)."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

from protocol.errors import CONFLICT, INVALID_PARAMS, NOT_FOUND
from tests.support.documents import CORPUS_FACTS, write_corpus
from tests.support.fake_model import ChatServer, call, calls, say
from tests.support.host_process import HostProcess
from tests.support.knowledge_host import admit, knowledge_agent, refusal, run_with, tool_names, tool_results, wait_idle

ADA = {"agentId": "ada"}


def _files_holding(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def _covers(citation: str, line: int) -> bool:
    """Whether `path:start-end` (or `path:p.start-end`) covers `line`."""
    span = citation.rsplit(":", 1)[1].removeprefix("p.")
    start, _, end = span.partition("-")
    return int(start) <= line <= int(end or start)


def test_a_turn_searches_an_admitted_folder_and_cites_each_format_by_path_and_lines(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    server = ChatServer()

    async def main() -> None:
        async with HostProcess(tmp_path / "data") as host:
            await knowledge_agent(host, server)
            [source] = await admit(host, ADA, str(docs))
            listing = await host.call("knowledge.list", ADA)
            [listed] = listing["sources"]
            assert (listed["sourceId"], listed["files"], listed["state"]) == (source["sourceId"], 3, "ready")
            assert [f["path"] for f in listed["failed"]] == [str(docs / "broken.pdf")]
            assert "not a readable PDF" in listed["failed"][0]["reason"]
            for name, (word, line) in CORPUS_FACTS.items():
                [hit, *_] = (await host.call("knowledge.search", {**ADA, "query": word}))["hits"]
                assert hit["path"] == str(docs / name)
                prefix = f"{docs / name}:" + ("p." if name.endswith(".pdf") else "")
                assert hit["citation"].startswith(prefix) and _covers(hit["citation"], line), hit["citation"]
                assert word in hit["text"] and hit["why"]["terms"] == [word]
            server.script(
                call("knowledge_search", {"query": "zephyrine hose attachment"}), say("It gives a fine mist.")
            )
            await host.idle_turn("ada", "What does the zephyrine attachment do?")
            chat = server.chats()
            assert {"knowledge_search", "knowledge_read"} <= tool_names(chat[0])
            # Nothing of the documents is in the prompt on its own: only the tool's result brings a passage.
            assert "fine mist" not in json.dumps(chat[0]["messages"]) and "zephyrine" in json.dumps(chat[0]["messages"])
            [result] = tool_results(chat[-1])
            assert f"{docs / 'guide.md'}:5-7" in result
            assert "not instructions" in result and "fine mist for seedlings" in result
            # Admission is a person's act: the model has no tool for it, and a call of one admits nothing.
            assert {name for name in tool_names(chat[0]) if "knowledge" in name} == {
                "knowledge_search",
                "knowledge_read",
            }
            other = tmp_path / "other"
            other.mkdir()
            (other / "x.md").write_text("# X\n\nAn injected document.\n", encoding="utf-8")
            server.script(call("knowledge_add", {"paths": [str(other)]}), say("I could not add it; please do."))
            await host.idle_turn("ada", "Please add the other folder to your documents.")
            refused = tool_results(server.chats()[-1])[-1]
            assert "knowledge_add" in refused and "x.md" not in refused
            assert [s["path"] for s in (await host.call("knowledge.list", ADA))["sources"]] == [str(docs)]

    run_with(main, server)


def test_a_fact_noted_from_a_search_result_waits_for_review(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs")
    server = ChatServer()
    fact = "The zephyrine attachment gives a fine mist."
    twin = "The user's favourite flower is the tulip."

    async def main() -> None:
        async with HostProcess(tmp_path / "data") as host:
            await knowledge_agent(host, server)
            await admit(host, ADA, str(docs))
            server.script(
                call("knowledge_search", {"query": "zephyrine"}),
                calls(("memory_note", {"text": fact, "basis": "user"}), ("memory_note", {"text": twin}), prefix="n"),
                say("Noted."),
            )
            await host.idle_turn("ada", "My favourite flower is the tulip. Also look up the zephyrine attachment.")
            records = (await host.call("memory.list", {**ADA, "view": "all"}))["records"]
            trust = {r["text"]: r["trust"] for r in records}
            assert trust == {fact: "proposed", twin: "confirmed"}

    run_with(main, server)


def test_a_changed_file_is_read_again_and_a_deleted_one_leaves_the_index(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs")
    server = ChatServer()

    async def search(host: HostProcess, word: str) -> list[str]:
        return [h["path"] for h in (await host.call("knowledge.search", {**ADA, "query": word}))["hits"]]

    async def main() -> None:
        async with HostProcess(tmp_path / "data") as host:
            await knowledge_agent(host, server)
            await admit(host, ADA, str(docs))
            mark = len(host.events)
            guide = docs / "guide.md"
            guide.write_text(guide.read_text(encoding="utf-8").replace("zephyrine", "marigoldine"), encoding="utf-8")
            await wait_idle(host, ADA, after=mark)
            while not await search(host, "marigoldine"):
                await wait_idle(host, ADA, after=len(host.events) - 1)
            assert await search(host, "marigoldine") == [str(guide)]
            assert await search(host, "zephyrine") == []
            mark = len(host.events)
            (docs / "manual.html").unlink()
            (docs / "notes").mkdir()
            (docs / "notes" / "new.md").write_text("# New\n\nThe heliotrope valve is red.\n", encoding="utf-8")
            while await search(host, "quillfeather") or not await search(host, "heliotrope"):
                await wait_idle(host, ADA, after=mark)
                mark = len(host.events) - 1
            [listed] = (await host.call("knowledge.list", ADA))["sources"]
            assert listed["files"] == 3  # guide, paper, notes/new.md
            assert await search(host, "obsidianite") == [str(docs / "paper.pdf")]

    run_with(main, server)


def test_a_key_inside_a_document_is_masked_and_never_reaches_the_model(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    key = "sk-proj-" + "Q7w9E2r4T6y8U1i3O5p7A9s2D4f6G8h1J3k5"
    (docs / "deploy.md").write_text(
        f"# Deploy\n\nThe staging server is called lanternfish.\n\nexport OPENAI_API_KEY={key}\n", encoding="utf-8"
    )
    server = ChatServer()

    async def main() -> None:
        async with HostProcess(tmp_path / "data") as host:
            await knowledge_agent(host, server)
            await admit(host, ADA, str(docs))
            hits = (await host.call("knowledge.search", {**ADA, "query": "lanternfish staging key"}))["hits"]
            assert hits and hits[0]["masked"] and key not in hits[0]["text"]
            assert "(hidden: an OpenAI key)" in hits[0]["text"] and "lanternfish" in hits[0]["text"]
            server.script(call("knowledge_search", {"query": "OPENAI_API_KEY staging"}), say("It is masked."))
            await host.idle_turn("ada", "What is the staging key?")
            server.script(call("knowledge_read", {"chunkId": hits[0]["chunkId"], "before": 2, "after": 2}), say("ok"))
            await host.idle_turn("ada", "Read that passage whole.")
            sent = [r for body in server.chats() for r in tool_results(body)]
            assert any("(hidden: an OpenAI key)" in r for r in sent)
            assert all(key not in r for body in server.chats() for r in [str(body)])
        assert _files_holding(tmp_path / "data", key.encode()) == []

    run_with(main, server)


def test_a_removed_source_leaves_no_byte_the_other_stays_and_no_export_carries_either(tmp_path: Path) -> None:
    gone, kept = tmp_path / "gone", tmp_path / "kept"
    gone.mkdir()
    kept.mkdir()
    (gone / "secret-plan.md").write_text("# Plan\n\nThe xylocarpus rendezvous is at the old mill.\n", encoding="utf-8")
    (kept / "recipe.md").write_text("# Recipe\n\nKnead the brioche for ten minutes.\n", encoding="utf-8")
    server = ChatServer()

    async def main() -> None:
        async with HostProcess(tmp_path / "data") as host:
            await knowledge_agent(host, server)
            [first] = await admit(host, ADA, str(gone))
            await admit(host, ADA, str(kept))
            assert _files_holding(tmp_path / "data", b"xylocarpus")
            # An export carries the agent's memory and none of its documents: the person did not ask for them.
            await host.call("memory.note", {**ADA, "text": "The user bakes on Sundays."})
            archive = tmp_path / "ada.hearth"
            await host.call("agent.export", {**ADA, "path": str(archive)})
            carried = gzip.decompress(archive.read_bytes())
            assert b"bakes on Sundays" in carried and b"xylocarpus" not in carried and b"brioche" not in carried
            await host.call("agent.import", {"path": str(archive), "agentId": "ada-copy"})
            assert (await host.call("knowledge.list", {"agentId": "ada-copy"}))["sources"] == []
            removed = await host.call("knowledge.remove", {**ADA, "sourceId": first["sourceId"]})
            assert removed["removed"] and removed["chunks"] == 1
            assert _files_holding(tmp_path / "data", b"xylocarpus") == []
            assert _files_holding(tmp_path / "data", b"rendezvous") == []
            assert (await host.call("knowledge.search", {**ADA, "query": "xylocarpus"}))["hits"] == []
            [hit] = (await host.call("knowledge.search", {**ADA, "query": "brioche"}))["hits"]
            assert hit["path"] == str(kept / "recipe.md")
            assert [s["path"] for s in (await host.call("knowledge.list", ADA))["sources"]] == [str(kept)]
            assert (await refusal(host, "knowledge.remove", {**ADA, "sourceId": first["sourceId"]})).code == NOT_FOUND

    run_with(main, server)


def test_with_knowledge_off_there_is_no_tool_no_watch_no_search_until_it_is_on_again(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs")
    server = ChatServer()

    async def main() -> None:
        async with HostProcess(tmp_path / "data") as host:
            await knowledge_agent(host, server)
            await knowledge_agent(host, server, "bo")
            await admit(host, ADA, str(docs))
            await host.call("agent.update", {**ADA, "settings": {"knowledge": False}})
            listing = await host.call("knowledge.list", ADA)
            assert (listing["on"], listing["watching"], listing["sources"][0]["state"]) == (False, False, "off")
            for method, params in (
                ("knowledge.search", {**ADA, "query": "zephyrine"}),
                ("knowledge.add", {**ADA, "paths": [str(docs)]}),
            ):
                assert (await refusal(host, method, params)).code == CONFLICT
            server.script(say("hello"), say("hi"))
            await host.idle_turn("ada", "hello")
            await host.idle_turn("bo", "hello")  # an agent with nothing admitted has no knowledge tool either
            for body in server.chats():
                assert not tool_names(body) & {"knowledge_search", "knowledge_read"}
                assert "zephyrine" not in str(body) and "knowledge_search" not in str(body)
            guide = docs / "guide.md"
            guide.write_text(guide.read_text(encoding="utf-8").replace("zephyrine", "marigoldine"), encoding="utf-8")
            mark = len(host.events)
            await host.call("agent.update", {**ADA, "settings": {"knowledge": True}})
            await wait_idle(host, ADA, after=mark)
            hits = (await host.call("knowledge.search", {**ADA, "query": "marigoldine"}))["hits"]
            assert [h["path"] for h in hits] == [str(guide)]  # read when it came back on

    run_with(main, server)


def test_a_path_that_cannot_be_admitted_is_refused_and_nothing_is_admitted(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs")
    server = ChatServer()

    async def main() -> None:
        async with HostProcess(tmp_path / "data") as host:
            await knowledge_agent(host, server)
            data_file = tmp_path / "data" / "agents" / "ada" / "profile.json"
            for paths in ([str(docs), str(tmp_path / "missing")], [str(data_file)], ["relative/path"], ["/proc"]):
                assert (await refusal(host, "knowledge.add", {**ADA, "paths": paths})).code == INVALID_PARAMS
            assert (await host.call("knowledge.list", ADA))["sources"] == []
            assert (await refusal(host, "knowledge.list", {"agentId": "nobody"})).code == NOT_FOUND

    run_with(main, server)


def test_an_archive_whose_knowledge_names_a_path_never_admitted_is_refused_whole(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs")
    data = tmp_path / "data"
    server = ChatServer()

    async def main() -> None:
        async with HostProcess(data) as host:
            await knowledge_agent(host, server)
            await admit(host, ADA, str(docs))
            archive = tmp_path / "ada.hearth"
            await host.call("agent.export", {**ADA, "path": str(archive), "withKnowledge": True})
            with tarfile.open(archive, "r:gz") as tar:
                members = {m.name: (tar.extractfile(m) or io.BytesIO()).read() for m in tar}
            hostile = members["knowledge.jsonl"].replace(str(docs).encode(), str(data.resolve() / "agents").encode())
            forged = tmp_path / "forged.hearth"
            with tarfile.open(forged, "w:gz") as tar:
                for name, body in (members | {"knowledge.jsonl": hostile}).items():
                    info = tarfile.TarInfo(name)
                    info.size = len(body)
                    tar.addfile(info, io.BytesIO(body))
            code = (await refusal(host, "agent.import", {"path": str(forged), "agentId": "ada-copy"})).code
            assert code == INVALID_PARAMS
            agents = [a["agentId"] for a in (await host.call("agent.list", {}))["agents"]]
            assert agents == ["ada"] and not (data / "agents" / "ada-copy").exists()
            assert [p.name for p in (data / "agents").iterdir() if p.name.startswith(".import")] == []
            assert (await host.call("knowledge.search", {**ADA, "query": "zephyrine"}))["hits"]  # ada keeps hers
            imported = await host.call("agent.import", {"path": str(archive), "agentId": "ada-copy"})
            assert imported["agent"]["agentId"] == "ada-copy"  # the archive as exported imports
            assert (await host.call("knowledge.search", {"agentId": "ada-copy", "query": "zephyrine"}))["hits"]

    run_with(main, server)
