"""The wire fuzzer's driver: hostile frames through a real host process, every answer checked.

Each case is followed by a `ping` with its own id; everything the host writes up to that ping's answer
(and any late batch answer the case expects) is the case's outcome. A host that exits counts as a death
and is started again, so a run reports every failure instead of stopping at the first.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.hostile_frames import KEEPER, Case, Expect, Pair
from tests.support.raw_host import HostDiedError, RawHost, parse_strict

__all__ = ["FuzzReport", "case_outcome", "check_agent_files", "judge_case", "run_fuzz"]

KEEPER_NOTE = "The keeper's first note."
_LATE_ANSWER_SECONDS = 2.0


@dataclass(slots=True)
class FuzzReport:
    frames: int = 0
    right: int = 0
    wrong: list[str] = field(default_factory=list)
    deaths: int = 0
    not_json: int = 0
    lines: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    after: list[str] = field(default_factory=list)
    """What did not hold once the fuzz was over (ping, a normal create and list, the keeper's one note)."""

    def summary(self) -> str:
        return (
            f"frames sent {self.frames}, answered as expected {self.right}, wrong or missing {len(self.wrong)}, "
            f"host deaths {self.deaths}, stdout lines {self.lines}, non-JSON stdout lines {self.not_json}, "
            f"checks after the fuzz failed {len(self.after)}"
        )


def _pair(answer: Any) -> Pair:
    error = answer.get("error")
    return answer.get("id"), (error.get("code") if isinstance(error, dict) else None)


def _key(pair: Pair) -> str:
    return json.dumps(pair)


def _satisfied(expect: Expect, got: list[Any]) -> bool:
    if expect is None:
        return True
    if isinstance(expect, list):
        return any(isinstance(answer, list) for answer in got)
    return any(isinstance(answer, dict) and answer.get("id") == expect[0] for answer in got)


def judge_case(case: Case, got: list[Any]) -> str | None:
    """None when `got` is exactly what `case` expects; otherwise what was wrong."""
    if case.expect is None:
        return None if not got else f"expected no answer, got {str(got)[:200]}"
    if len(got) != 1:
        return f"expected one answer, got {len(got)}: {str(got)[:200]}"
    answer = got[0]
    if isinstance(case.expect, list):
        if not isinstance(answer, list) or not all(isinstance(a, dict) for a in answer):
            return f"expected a batch answer, got {str(answer)[:200]}"
        want = sorted(_key(p) for p in case.expect)
        have = sorted(_key(_pair(a)) for a in answer)
        return None if want == have else f"batch: expected {want}, got {have}"
    if not isinstance(answer, dict):
        return f"expected an answer object, got {str(answer)[:200]}"
    if _pair(answer) != case.expect or (case.expect[1] is None and "result" not in answer):
        return f"expected {case.expect}, got {_pair(answer)}"
    return None


async def _start(data_dir: Path, stderr_to: Path | None) -> RawHost:
    host = await RawHost(data_dir, stderr_to=stderr_to).__aenter__()
    await host.initialize()
    return host


async def _prepare(host: RawHost) -> None:
    """The keeper agent and its one note: what the fuzz must leave exactly as it is."""
    listed = await host.call("agent.list")
    if KEEPER not in [a["agentId"] for a in listed["result"]["agents"]]:
        assert "result" in await host.call("agent.create", {"name": "Keeper", "agentId": KEEPER})
        assert "result" in await host.call("memory.note", {"agentId": KEEPER, "text": KEEPER_NOTE})


async def case_outcome(host: RawHost, case: Case, sync_id: str, *, sync: bytes = b'"method":"ping"') -> list[Any]:
    """Everything `host` answered to `case`: up to the sync call's answer (a `ping`, or the `sync` given: the
    method and params members of a call answered at once), and a late answer if one is due."""
    await host.send(case.line)
    await host.send(b'{"jsonrpc":"2.0","id":"' + sync_id.encode() + b'",' + sync + b"}\n")
    got: list[Any] = []
    async with asyncio.timeout(60):
        while True:
            answer = await host.next_answer()
            if isinstance(answer, dict) and answer.get("id") == sync_id:
                break
            got.append(answer)
    try:
        async with asyncio.timeout(_LATE_ANSWER_SECONDS):
            while not _satisfied(case.expect, got):
                got.append(await host.next_answer())
    except TimeoutError:
        pass
    return got


async def run_fuzz(data_dir: Path, cases: list[Case], *, stderr_to: Path | None = None) -> FuzzReport:
    """Send every case to a real host in `data_dir` and check each outcome; the host is stopped at the end."""
    report = FuzzReport()
    host = await _start(data_dir, stderr_to)
    await _prepare(host)
    try:
        for n, case in enumerate(cases):
            report.frames += 1
            report.kinds[case.kind] = report.kinds.get(case.kind, 0) + 1
            try:
                got = await case_outcome(host, case, f"sync-{n}")
            except HostDiedError:
                report.deaths += 1
                report.wrong.append(f"#{n} {case.kind}: the host died")
                report.lines += host.lines
                report.not_json += len(host.not_json)
                host = await _start(data_dir, stderr_to)
                continue
            except TimeoutError:
                report.wrong.append(f"#{n} {case.kind}: no answer to the ping after it")
                continue
            problem = judge_case(case, [answer for answer in got if not isinstance(answer, bytes)])
            if problem is None:
                report.right += 1
            else:
                report.wrong.append(f"#{n} {case.kind}: {problem}")
        report.after = await _check_after(host)
    finally:
        report.lines += host.lines
        report.not_json += len(host.not_json)
        await host.stop()
    return report


async def _check_after(host: RawHost) -> list[str]:
    """The host still serves: ping, a normal agent.create and agent.list; the keeper's note is all it has."""
    problems = []
    if (await host.call("ping")).get("result") != {}:
        problems.append("ping after the fuzz failed")
    created = await host.call("agent.create", {"name": "After the fuzz", "agentId": "after-fuzz"})
    if "result" not in created:
        problems.append(f"agent.create after the fuzz failed: {created.get('error')}")
    listed = await host.call("agent.list")
    agents = sorted(a["agentId"] for a in listed.get("result", {}).get("agents", []))
    if agents != sorted([KEEPER, "after-fuzz"]):
        problems.append(f"agents after the fuzz: {agents}")
    notes = await host.call("memory.list", {"agentId": KEEPER, "view": "all"})
    texts = [r.get("text") for r in notes.get("result", {}).get("records", [])]
    if texts != [KEEPER_NOTE]:
        problems.append(f"the keeper's memory after the fuzz: {texts[:5]}")
    return problems


def check_agent_files(data_dir: Path) -> list[str]:
    """Files of any agent holding a replacement character, a lone surrogate or bytes that are not UTF-8."""
    bad = []
    for path in sorted((data_dir / "agents").rglob("*")):
        if not path.is_file() or path.suffix not in {".json", ".jsonl", ".md"}:
            continue
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
            if path.suffix == ".json":
                parse_strict(data)
            elif path.suffix == ".jsonl":
                for line in data.splitlines():
                    parse_strict(line)
        except ValueError:
            bad.append(f"{path}: not strict UTF-8 JSON")
            continue
        if "\ufffd" in text:
            bad.append(f"{path}: holds U+FFFD")
    return bad
