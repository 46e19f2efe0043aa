"""`hearth schedule AGENT add|list|pause|resume|remove|approve|history` and `hearth budget AGENT`, over the wire.

`add` takes the message its runs start with and one of `--at TIME`, `--every DURATION` (`90s`, `15m`, `2h`,
`1d`) or `--cron EXPR` (read in the host's time zone); `--work WORK` makes it that Work's schedule. `list`
shows each schedule with its next wake and its last outcome, proposed ones included (`approve ID` is the
person's yes). `budget` shows what the agent spent today and sets or clears its daily caps. A refusal is
one line on stderr and exit code 1.
"""

from __future__ import annotations

import asyncio
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.client import connect_host
from desktop.names import require_agent
from desktop.tables import print_json, print_table
from protocol.dispatch import Router
from protocol.errors import JsonRpcError
from protocol.peer import JsonRpcPeer

__all__ = [
    "BudgetCommand",
    "ScheduleCommand",
    "describe_budget",
    "describe_firing",
    "describe_timing",
    "parse_duration",
    "run_budget_command",
    "run_schedule_command",
]

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}


@dataclass(frozen=True, slots=True)
class ScheduleCommand:
    action: str
    agent: str
    data_dir: Path
    schedule_id: str | None = None
    message: str | None = None
    at: str | None = None
    every: str | None = None
    cron: str | None = None
    label: str = ""
    when_busy: str = "skip"
    missed: str = "once"
    watch: str | None = None
    work: str | None = None
    as_json: bool = False


@dataclass(frozen=True, slots=True)
class BudgetCommand:
    agent: str
    data_dir: Path
    tokens: int | None = None
    requests: int | None = None
    clear: bool = False
    work: str | None = None
    as_json: bool = False


class _UsageError(Exception):
    pass


def parse_duration(text: str) -> int:
    """`90`, `90s`, `15m`, `2h` or `1d` as seconds.

    Raises:
        ValueError: none of those.
    """
    match = re.fullmatch(r"\s*(\d+)\s*([smhd]?)\s*", text.lower())
    if match is None:
        raise ValueError(f"{text!r} is not a duration such as 90s, 15m, 2h or 1d")
    return int(match.group(1)) * _UNITS[match.group(2) or "s"]


def describe_timing(schedule: dict[str, Any]) -> str:
    """When a schedule fires, as a person reads it."""
    if schedule.get("cron"):
        return f"cron {schedule['cron']} ({schedule['timeZone']})"
    if schedule.get("everySeconds"):
        seconds = int(schedule["everySeconds"])
        unit = next((u for u in ("d", "h", "m") if seconds % _UNITS[u] == 0), "s")
        return f"every {seconds // _UNITS[unit]}{unit}"
    return f"once at {_short(schedule.get('at'))}"


def _short(instant: str | None) -> str:
    return "-" if not instant else instant.replace("T", " ")[:16]


def describe_firing(firing: dict[str, Any] | None) -> str:
    """A firing's outcome in a few words: `ran`, `skipped: busy`, `failed: ...`, or `running`."""
    if firing is None:
        return "-"
    if firing["outcome"] is None:
        return f"running ({_short(firing['due'])})"
    text = (
        firing["outcome"]
        if firing["outcome"] == "ran"
        else f"{firing['outcome']}: {firing.get('reason') or firing.get('detail')}"
    )
    return f"{text} ({_short(firing['due'])})"


def _add_params(cmd: ScheduleCommand, agent_id: str) -> dict[str, Any]:
    given = [flag for flag, value in (("--at", cmd.at), ("--every", cmd.every), ("--cron", cmd.cron)) if value]
    if len(given) != 1:
        raise _UsageError("give exactly one of --at TIME, --every DURATION and --cron EXPR")
    if not cmd.message:
        raise _UsageError("give the message the scheduled runs start with")
    params: dict[str, Any] = {
        "agentId": agent_id,
        "message": cmd.message,
        "label": cmd.label,
        "whenBusy": cmd.when_busy,
        "missed": cmd.missed,
    }
    if cmd.at:
        params["at"] = cmd.at
    elif cmd.every:
        try:
            params["everySeconds"] = parse_duration(cmd.every)
        except ValueError as exc:
            raise _UsageError(str(exc)) from exc
    else:
        params["cron"] = cmd.cron
    if cmd.watch:
        params["watch"] = cmd.watch
    if cmd.work:
        params["workId"] = cmd.work
    return params


async def _one(peer: JsonRpcPeer, cmd: ScheduleCommand, agent_id: str) -> dict[str, Any]:
    if not cmd.schedule_id:
        raise _UsageError(f"`{cmd.action}` needs a schedule id (see `hearth schedule {cmd.agent} list`)")
    found: dict[str, Any] = await peer.request("schedule.get", {"scheduleId": cmd.schedule_id})
    if found["agentId"] != agent_id:
        raise _UsageError(f"schedule {cmd.schedule_id} is not {agent_id}'s")
    return found


def _print_list(schedules: list[dict[str, Any]], agent_id: str) -> None:
    rows = [
        (
            s["scheduleId"],
            s["state"] + (f" (by {s['proposedBy']})" if s["state"] == "proposed" else ""),
            describe_timing(s),
            _short(s.get("nextDue")),
            describe_firing(s.get("last")),
            (f"[{s['workId']}] " if s.get("workId") else "") + (s["label"] or s["message"]),
        )
        for s in schedules
    ]
    print_table(["id", "state", "when", "next", "last", "what"], rows, empty=f"({agent_id} has no schedules)")
    if any(s["state"] == "proposed" for s in schedules):
        print(f"\nproposed schedules do nothing until approved: hearth schedule {agent_id} approve ID")


async def _run(cmd: ScheduleCommand) -> int:
    async with connect_host(cmd.data_dir, Router(), client="hearth-schedule") as peer:
        agent_id = (await require_agent(peer, cmd.agent)).agent_id
        if cmd.action == "add":
            added = await peer.request("schedule.add", _add_params(cmd, agent_id))
            print(f"added {added['scheduleId']}: {describe_timing(added)}, next {_short(added['nextDue'])}")
            return 0
        if cmd.action == "list":
            schedules = (await peer.request("schedule.list", {"agentId": agent_id}))["schedules"]
            if cmd.as_json:
                print_json(schedules)
            else:
                _print_list(schedules, agent_id)
            return 0
        schedule = await _one(peer, cmd, agent_id)
        ref = {"scheduleId": schedule["scheduleId"]}
        if cmd.action == "history":
            firings = (await peer.request("schedule.firings", {**ref, "limit": 50}))["firings"]
            if cmd.as_json:
                print_json(firings)
                return 0
            rows = [
                (_short(f["due"]), describe_firing(f), f.get("runId") or "-", f.get("detail") or "") for f in firings
            ]
            print_table(["due", "outcome", "run", "detail"], rows, empty="(no firings yet)")
            return 0
        if cmd.action == "remove":
            await peer.request("schedule.remove", ref)
            print(f"removed {schedule['scheduleId']}")
            return 0
        changed = await peer.request(f"schedule.{cmd.action}", ref)
        print(f"{changed['scheduleId']} is {changed['state']}; next {_short(changed.get('nextDue'))}")
    return 0


def describe_budget(info: dict[str, Any]) -> str:
    """A `budget.get` as a person reads it: today's use, the caps, and whether one is reached."""
    limits, today = info["limits"], info["today"]
    caps = [
        f"{limits['requestsPerDay']} requests" if limits["requestsPerDay"] else "",
        f"{limits['tokensPerDay']} tokens" if limits["tokensPerDay"] else "",
    ]
    cap = " and ".join(c for c in caps if c) or "no cap"
    spent = " (spent: scheduled and agent-started runs are skipped today)" if info["spent"] else ""
    return f"today ({today['day']}): {today['requests']} model requests, {today['tokens']} tokens; cap: {cap}{spent}"


async def _budget(cmd: BudgetCommand) -> int:
    async with connect_host(cmd.data_dir, Router(), client="hearth-budget") as peer:
        ref = {"workId": cmd.work} if cmd.work else {"agentId": (await require_agent(peer, cmd.agent)).agent_id}
        info = await peer.request("budget.get", ref)
        if cmd.clear or cmd.tokens is not None or cmd.requests is not None:
            limits = info["limits"]
            caps = {
                "tokensPerDay": cmd.tokens if cmd.tokens is not None else limits["tokensPerDay"],
                "requestsPerDay": cmd.requests if cmd.requests is not None else limits["requestsPerDay"],
            }
            info = await peer.request("budget.set", {**ref, **({} if cmd.clear else caps)})
    if cmd.as_json:
        print_json(info)
    else:
        print(describe_budget(info))
    return 0


def _report(coro: Any) -> int:
    try:
        code: int = asyncio.run(coro)
    except (JsonRpcError, _UsageError) as exc:
        message = exc.message if isinstance(exc, JsonRpcError) else str(exc)
        print(f"hearth: {message}", file=sys.stderr)
        return 1
    return code


def run_schedule_command(cmd: ScheduleCommand) -> int:
    """Run one `hearth schedule` command. Returns the exit code."""
    return _report(_run(cmd))


def run_budget_command(cmd: BudgetCommand) -> int:
    """`hearth budget AGENT [--requests N] [--tokens N] [--clear]`. Returns the exit code."""
    return _report(_budget(cmd))
