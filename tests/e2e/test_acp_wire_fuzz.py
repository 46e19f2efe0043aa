"""`hearth acp` fuzzed over a raw pipe as the host is (issue 22.9): a few hundred seeded hostile frames, each
followed by an `initialize` whose answer marks the end of what the frame got; then a real session on a real host
still runs a turn. `[]`, `5`, `"x"`, `null` and a one-element batch used to end the process."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.acp_hostile import ACP_KINDS, INITIALIZE, acp_cases
from tests.support.host_process import HostProcess, scripted_model
from tests.support.hostile_frames import Case
from tests.support.raw_acp import RawAcp
from tests.support.raw_host import HostDiedError
from tests.support.wire_fuzz import case_outcome, judge_case

REPLY = "Still here after the fuzz."
_SYNC = b'"method":"initialize","params":' + INITIALIZE
"""The call after each case: answered at once, without a host."""
_ENOUGH_WRONG = 10
"""A run that got this many answers wrong stops there and reports them."""


@dataclass(slots=True)
class _Report:
    right: int = 0
    wrong: list[str] = field(default_factory=list)
    deaths: int = 0
    kinds: set[str] = field(default_factory=set)


async def _fuzz(data: Path, log: Path, cases: list[Case]) -> tuple[_Report, RawAcp]:
    report = _Report()
    acp = await RawAcp(data, "ada", stderr_to=log).__aenter__()
    for n, case in enumerate(cases):
        if len(report.wrong) >= _ENOUGH_WRONG:
            break
        report.kinds.add(case.kind)
        try:
            got = await case_outcome(acp, case, f"sync-{n}", sync=_SYNC)
        except HostDiedError:
            report.deaths += 1
            report.wrong.append(f"#{n} {case.kind}: hearth acp died")
            acp = await RawAcp(data, "ada", stderr_to=log).__aenter__()
            continue
        problem = judge_case(case, [answer for answer in got if not isinstance(answer, bytes)])
        if problem is None:
            report.right += 1
        else:
            report.wrong.append(f"#{n} {case.kind}: {problem}")
    return report, acp


def test_hostile_frames_never_end_hearth_acp_and_each_gets_its_answer(tmp_path: Path) -> None:
    data, project, log = tmp_path / "data", tmp_path / "project", tmp_path / "acp.log"
    project.mkdir()
    cases = acp_cases(seed=22, count=25 * len(ACP_KINDS))

    async def main() -> None:
        async with HostProcess(data) as host:
            rules = [{"match": r"(?m)^hi$", "on": "user", "reply": REPLY}]
            await host.call("agent.create", {"name": "ada", "agentId": "ada", "settings": scripted_model(*rules)})
        report, acp = await _fuzz(data, log, cases)
        try:
            assert report.deaths == 0, report.wrong[:10]
            assert report.wrong == [], "\n".join(report.wrong[:20])
            assert report.right == len(cases) and acp.not_json == []
            assert len(report.kinds) >= 40, sorted(report.kinds)
            opened = await acp.call("session/new", {"cwd": str(project), "mcpServers": []})
            assert opened["result"]["sessionId"] == "ada", opened
            prompt = [{"type": "text", "text": "hi"}]
            done = await acp.call("session/prompt", {"sessionId": "ada", "prompt": prompt})
            assert done["result"]["stopReason"] == "end_turn", done
            said = [n["params"]["update"] for n in acp.notifications if n["method"] == "session/update"]
            chunks = [u["content"]["text"] for u in said if u["sessionUpdate"] == "agent_message_chunk"]
            assert "".join(chunks) == REPLY
        finally:
            await acp.stop()
        assert acp.process is not None and acp.process.returncode == 0

    asyncio.run(main())
    events = [json.loads(line) for line in (data / "agents/ada/transcript.jsonl").read_text("utf-8").splitlines()]
    said = [e["text"] for e in events if e["type"] == "user"]
    assert len(said) == 1 and said[0].endswith("hi"), "only the real prompt reached the agent"
