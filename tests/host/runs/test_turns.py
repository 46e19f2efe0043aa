"""Turn preparation over a long life: a turn reads only its new lines and sends what follows the kernel's prefix.

Issue 22.12: preparing a turn read the transcript since the last compaction three times and sent every message
to the kernel, so a turn's cost grew with the conversation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

import host.store.transcript
from host.runs.context import build_messages
from host.runs.turns import TurnPlanner
from host.store.agents import Agent, AgentStore
from host.store.secrets import SecretStore
from protocol.models.agents import AgentSettings
from protocol.models.kernel import (
    ChatMessage,
    KernelInitializeResult,
    ShellAvailability,
    SummarizeParams,
    SummarizeResult,
    TurnStartParams,
    chain_hashes,
)

INFO = KernelInitializeResult(name="k", version="1", tools=[], shell=ShellAvailability(available=True))


async def _no_summary(_: SummarizeParams) -> SummarizeResult:
    raise AssertionError("no compaction expected")


@pytest.fixture
def planner(tmp_path: Path) -> Iterator[tuple[TurnPlanner, AgentStore]]:
    store = AgentStore(tmp_path)
    yield TurnPlanner(store, SecretStore(tmp_path), _no_summary, lambda: INFO), store


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many transcript lines have been parsed so far (one counter, read through the list)."""
    count = [0]
    parse = host.store.transcript._parse

    def counting(line: bytes) -> object:
        count[0] += 1
        return parse(line)

    monkeypatch.setattr(host.store.transcript, "_parse", counting)
    return count


def _agent(store: AgentStore, name: str = "ann") -> Agent:
    return store.create(name, None, AgentSettings.model_validate({"model": {"provider": "scripted"}, "memory": False}))


def _prepare(planner: TurnPlanner, agent: Agent, run_id: str) -> TurnStartParams:
    """`prepare`, and the kernel's acceptance of the turn, as `PrefixLink` reports it."""
    params = asyncio.run(planner.prepare(agent, run_id))
    planner.prefixes.done("turn.start", agent.agent_id, accepted=True)
    return params


def _turn(planner: TurnPlanner, store: AgentStore, agent: Agent, n: int) -> list[ChatMessage]:
    """One turn as the host writes it; returns the messages sent for it."""
    transcript = store.transcript(agent.agent_id)
    transcript.append({"type": "user", "text": f"message {n}"})
    params = _prepare(planner, agent, f"run-{n}")
    transcript.append({"type": "assistant", "runId": f"run-{n}", "text": f"reply {n}"})
    transcript.append({"type": "ended", "runId": f"run-{n}", "reason": "idle"})
    return params.messages


def test_preparing_a_turn_parses_only_the_lines_appended_since_the_last_turn(
    planner: tuple[TurnPlanner, AgentStore], parsed: list[int]
) -> None:
    turns, store = planner
    agent = _agent(store)
    for n in range(300):
        transcript = store.transcript(agent.agent_id)
        transcript.append({"type": "user", "text": f"message {n}"})
        before = parsed[0]
        _prepare(turns, agent, f"run-{n}")
        during = parsed[0] - before
        transcript.append({"type": "assistant", "runId": f"run-{n}", "text": f"reply {n}"})
        transcript.append({"type": "ended", "runId": f"run-{n}", "reason": "idle"})
    # 1,200 lines on disk; the 300th turn parsed its own new lines and the message it answers.
    assert during <= 6


def test_a_later_turn_sends_only_what_follows_the_prefix_the_kernel_holds(
    planner: tuple[TurnPlanner, AgentStore],
) -> None:
    turns, store = planner
    agent = _agent(store)
    transcript = store.transcript(agent.agent_id)
    transcript.append({"type": "user", "text": "first"})
    first = _prepare(turns, agent, "run-1")
    assert first.prefix is None and [m.role for m in first.messages] == ["system", "user"]
    transcript.append({"type": "assistant", "runId": "run-1", "text": "one"})
    transcript.append({"type": "ended", "runId": "run-1", "reason": "idle"})
    transcript.append({"type": "user", "text": "second"})
    second = _prepare(turns, agent, "run-2")
    assert second.prefix is not None and second.prefix.count == 2
    assert second.prefix.hash == chain_hashes(first.messages)[-1]
    assert [(m.role, m.content) for m in second.messages] == [("assistant", "one"), ("user", "second")]
    whole = [*first.messages, *second.messages]
    system = [first.messages[0]]
    assert whole == build_messages(system, transcript.since_last_compact())


def test_a_new_kernel_is_sent_the_whole_list(planner: tuple[TurnPlanner, AgentStore]) -> None:
    turns, store = planner
    agent = _agent(store)
    for n in range(3):
        _turn(turns, store, agent, n)
    turns.prefixes.forget_all()  # what the host does when a kernel comes up
    store.transcript(agent.agent_id).append({"type": "user", "text": "again"})
    params = _prepare(turns, agent, "run-again")
    assert params.prefix is None and params.messages[0].role == "system" and len(params.messages) == 8


def test_one_agents_prefix_is_never_used_for_another(planner: tuple[TurnPlanner, AgentStore]) -> None:
    turns, store = planner
    ann, bob = _agent(store, "ann"), _agent(store, "bob")
    _turn(turns, store, ann, 1)
    store.transcript(bob.agent_id).append({"type": "user", "text": "hello"})
    params = _prepare(turns, bob, "run-bob")
    assert params.prefix is None and params.session == bob.agent_id
