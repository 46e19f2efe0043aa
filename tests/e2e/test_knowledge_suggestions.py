"""An agent suggests a document and a person says yes or no, through the real host and kernel (issue 26,
point 1): a suggestion admits nothing, tells the agent nothing about the path, and is admitted only by
`knowledge.accept`, with exactly `knowledge.add`'s checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from protocol.errors import CONFLICT, INVALID_PARAMS, NOT_FOUND
from protocol.models.knowledge import MAX_SUGGESTED_PATH, MAX_SUGGESTION_REASON
from tests.support.documents import write_corpus
from tests.support.fake_model import ChatServer, call, calls, say
from tests.support.host_process import HostProcess
from tests.support.knowledge_host import admit, knowledge_agent, refusal, run_with, tool_names, tool_results, wait_idle

ADA = {"agentId": "ada"}
WORD = "gloriosa"


def _note(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "lilies.md"
    path.write_text(f"# Lilies\n\nThe {WORD} climbs any trellis by its leaf tips.\n", encoding="utf-8")
    return path


async def _suggest(host: HostProcess, server: ChatServer, *paths: str) -> list[str]:
    """One turn in which the agent suggests each path; the tool results it read."""
    server.script(
        calls(*(("suggest_document", {"path": p, "reason": f"it may answer you ({n})"}) for n, p in enumerate(paths))),
        say("I suggested it."),
    )
    await host.idle_turn("ada", "Which of my files would help you?")
    return tool_results(server.chats()[-1])[-len(paths) :]


async def _pending(host: HostProcess) -> list[dict[str, Any]]:
    suggestions: list[dict[str, Any]] = (await host.call("knowledge.suggestions", ADA))["suggestions"]
    return suggestions


def test_a_suggested_document_is_not_admitted_until_a_person_accepts_it(tmp_path: Path) -> None:
    docs = write_corpus(tmp_path / "docs")
    note = _note(tmp_path / "garden")
    missing = str(tmp_path / "garden" / "roses.md")
    server = ChatServer()

    async def main() -> None:
        async with HostProcess(tmp_path / "data") as host:
            await knowledge_agent(host, server)
            await admit(host, ADA, str(docs))  # so the model's knowledge_search is offered
            mark = len(host.events)
            there, absent = await _suggest(host, server, str(note), missing)
            assert "suggest_document" in tool_names(server.chats()[0])
            [made, ghost] = await _pending(host)
            assert (made["path"], made["reason"], ghost["path"]) == (str(note), "it may answer you (0)", missing)
            ended = await host.wait_for("agent.ended", after=mark)
            assert made["runId"] == ended["runId"]
            event = await host.wait_for("knowledge.suggested", after=mark)
            assert event["suggestion"] == made
            # The agent learns nothing of the path: the answer reads the same whether it exists or not.
            assert "a person decides" in there
            assert there.replace(str(note), "P").replace(made["suggestionId"], "I") == absent.replace(
                missing, "P"
            ).replace(ghost["suggestionId"], "I")
            # Suggested twice, kept once.
            [again] = await _suggest(host, server, str(note))
            assert "suggested already" in again and len(await _pending(host)) == 2
            # Nothing is admitted: neither a person's search nor the model's finds its words.
            assert [s["path"] for s in (await host.call("knowledge.list", ADA))["sources"]] == [str(docs)]
            assert (await host.call("knowledge.search", {**ADA, "query": WORD}))["hits"] == []
            server.script(call("knowledge_search", {"query": WORD}), say("Nothing yet."))
            await host.idle_turn("ada", f"What do my notes say about the {WORD}?")
            assert "No passage" in tool_results(server.chats()[-1])[-1]

            mark = len(host.events)
            accepted = await host.call("knowledge.accept", {**ADA, "suggestionId": made["suggestionId"]})
            assert [(s["path"], s["kind"]) for s in accepted["sources"]] == [(str(note), "file")]
            await wait_idle(host, ADA, after=mark)
            assert [h["path"] for h in (await host.call("knowledge.search", {**ADA, "query": WORD}))["hits"]] == [
                str(note)
            ]
            server.script(call("knowledge_search", {"query": WORD}), say("It climbs."))
            await host.idle_turn("ada", f"What do my notes say about the {WORD}?")
            assert "leaf tips" in tool_results(server.chats()[-1])[-1]
            assert [s["suggestionId"] for s in await _pending(host)] == [ghost["suggestionId"]]
            gone = await refusal(host, "knowledge.accept", {**ADA, "suggestionId": made["suggestionId"]})
            assert gone.code == NOT_FOUND

    run_with(main, server)


def test_a_declined_suggestion_is_never_admitted_nor_is_one_accepted_while_knowledge_is_off(tmp_path: Path) -> None:
    note = _note(tmp_path / "garden")
    server = ChatServer()

    async def main() -> None:
        async with HostProcess(tmp_path / "data") as host:
            await knowledge_agent(host, server)
            await _suggest(host, server, str(note))
            [made] = await _pending(host)
            ref = {**ADA, "suggestionId": made["suggestionId"]}
            # With knowledge off it is still listed, and accepting is refused as adding is.
            await host.call("agent.update", {**ADA, "settings": {"knowledge": False}})
            assert await _pending(host) == [made]
            off = await refusal(host, "knowledge.accept", ref)
            added = await refusal(host, "knowledge.add", {**ADA, "paths": [str(note)]})
            assert (off.code, off.message) == (added.code, added.message) == (CONFLICT, added.message)
            assert await _pending(host) == [made]
            await host.call("agent.update", {**ADA, "settings": {"knowledge": True}})
            assert await host.call("knowledge.decline", ref) == {"declined": True}
            assert await _pending(host) == []
            assert (await host.call("knowledge.list", ADA))["sources"] == []
            assert (await host.call("knowledge.search", {**ADA, "query": WORD}))["hits"] == []
            for method in ("knowledge.accept", "knowledge.decline"):
                assert (await refusal(host, method, ref)).code == NOT_FOUND
            assert (await host.call("knowledge.list", ADA))["sources"] == []

    run_with(main, server)


def test_a_suggestion_add_would_refuse_is_refused_at_accept_with_adds_error_and_stays(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = ChatServer()

    async def main() -> None:
        async with HostProcess(data) as host:
            await knowledge_agent(host, server)
            await knowledge_agent(host, server, "bo")
            refused = [str(data / "agents" / "bo" / "profile.json"), str(data), str(tmp_path / "nothing-here.md")]
            answers = await _suggest(host, server, *refused)
            assert all("a person decides" in answer for answer in answers)
            pending = await _pending(host)
            assert [s["path"] for s in pending] == refused
            for suggestion in pending:
                added = await refusal(host, "knowledge.add", {**ADA, "paths": [suggestion["path"]]})
                accepted = await refusal(host, "knowledge.accept", {**ADA, "suggestionId": suggestion["suggestionId"]})
                assert (
                    (accepted.code, accepted.message) == (added.code, added.message) == (INVALID_PARAMS, added.message)
                )
            assert await _pending(host) == pending  # a refused path stays for the person to decline
            # Past the bounds of path and reason the tool refuses, and keeps nothing.
            server.script(
                calls(
                    ("suggest_document", {"path": "/" + "p" * MAX_SUGGESTED_PATH, "reason": "long"}),
                    ("suggest_document", {"path": "/short.md", "reason": "r" * (MAX_SUGGESTION_REASON + 1)}),
                ),
                say("Too long."),
            )
            await host.idle_turn("ada", "Suggest more.")
            assert all(r.startswith("Not suggested: ") for r in tool_results(server.chats()[-1])[-2:])
            assert await _pending(host) == pending
            assert (await host.call("knowledge.list", ADA))["sources"] == []
            assert await host.call("knowledge.suggestions", {"agentId": "bo"}) == {"suggestions": []}
            # Another agent cannot take ada's suggestion as its own.
            theirs = await refusal(
                host, "knowledge.accept", {"agentId": "bo", "suggestionId": pending[0]["suggestionId"]}
            )
            assert theirs.code == NOT_FOUND
            assert (await refusal(host, "knowledge.suggestions", {"agentId": "nobody"})).code == NOT_FOUND

    run_with(main, server)


def test_with_knowledge_off_the_agent_is_not_offered_suggest_document(tmp_path: Path) -> None:
    note = _note(tmp_path / "garden")
    server = ChatServer()

    async def main() -> None:
        async with HostProcess(tmp_path / "data") as host:
            await knowledge_agent(host, server, knowledge=False)
            await knowledge_agent(host, server, "bo")
            server.script(say("hello"), say("hi"))
            await host.idle_turn("ada", "hello")
            await host.idle_turn("bo", "hello")
            off, on = server.chats()
            assert "suggest_document" not in tool_names(off) and "suggest_document" in tool_names(on)
            # A call by name anyway keeps nothing.
            server.script(call("suggest_document", {"path": str(note), "reason": "why"}), say("I could not."))
            await host.idle_turn("ada", "Suggest my lilies note.")
            assert await _pending(host) == []
            # A Work run is offered no suggest_document: a suggestion is an agent's own.
            work = await host.call("work.create", {"name": "Launch", "members": ["bo"]})
            server.script(say("on it"))
            sent = await host.call("work.dispatch", {"workId": work["workId"], "agentId": "bo", "instruction": "go"})
            done = await host.wait_for("agent.ended", lambda p: p["runId"] == sent["runId"])
            assert done["reason"] == "idle"
            assert "suggest_document" not in tool_names(server.chats()[-1])

    run_with(main, server)
