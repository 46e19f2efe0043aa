"""Budgets: what an agent and a Work spent on models today, and the caps a person set on it.

Every model request the kernel reports counts (each assistant message of a turn, scheduled runs and Work
runs included, and memory extraction's `memory.extracted`): one request and its input plus output tokens,
against the agent and, for a Work run, the Work too. The day is the person's (the host's `timeZone`, on
the schedules' clock). Each tally lives in `budget.json` beside the agent's (or the Work's) files, with its
caps; this module is its one writer, and writes it from its own task a moment after a change (so a run's
stream never waits on it; a SIGKILL may lose the last moment's counts, a clean stop loses none).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from host.errors import CorruptFileError, StorageError
from host.runs.run import Run, TurnEvent
from host.schedules.clock import ScheduleClock
from host.store.atomic import read_json, write_json_atomic
from protocol.models.kernel import TurnMessageEvent
from protocol.models.memory import MemoryExtractedEvent
from protocol.models.schedules import BudgetDay, BudgetInfo, BudgetLimits

__all__ = ["BUDGET_FILE", "Budgets", "Tally"]

logger = logging.getLogger(__name__)

BUDGET_FILE = "budget.json"

Key = tuple[str, str]
"""("agent", id) or ("work", id)."""


@dataclass(frozen=True, slots=True)
class Tally:
    day: str
    tokens: int = 0
    requests: int = 0
    tokens_per_day: int | None = None
    requests_per_day: int | None = None

    def over(self) -> str | None:
        """Which cap is reached, in words (None: neither)."""
        if self.requests_per_day is not None and self.requests >= self.requests_per_day:
            return f"{self.requests} of its {self.requests_per_day} model requests for today"
        if self.tokens_per_day is not None and self.tokens >= self.tokens_per_day:
            return f"{self.tokens} of its {self.tokens_per_day} tokens for today"
        return None


class Budgets:
    """Args:
    data_dir: the host's data directory.
    clock: the schedules' clock (what "today" is).
    zone: the person's time zone, read at each use.
    """

    def __init__(self, data_dir: Path, clock: ScheduleClock, zone: Callable[[], tzinfo]) -> None:
        self._data_dir = data_dir
        self._clock = clock
        self._zone = zone
        self._tallies: dict[Key, Tally] = {}
        self._dirty: set[Key] = set()
        self._wake = asyncio.Event()
        self.per_request: list[Callable[[Run], None]] = []
        """Told of every model request a run makes (the chain budget counts them)."""

    def _path(self, key: Key) -> Path:
        return self._data_dir / ("agents" if key[0] == "agent" else "works") / key[1] / BUDGET_FILE

    def today(self) -> str:
        return datetime.fromtimestamp(self._clock.now(), self._zone()).date().isoformat()

    def _tally(self, key: Key) -> Tally:
        today = self.today()
        tally = self._tallies.get(key)
        if tally is None:
            tally = self._read(key, today)
        if tally.day != today:
            tally = Tally(today, tokens_per_day=tally.tokens_per_day, requests_per_day=tally.requests_per_day)
        self._tallies[key] = tally
        return tally

    def _read(self, key: Key, today: str) -> Tally:
        try:
            raw: dict[str, Any] = read_json(self._path(key), {})
            limits = raw.get("limits") or {}
            return Tally(
                str(raw.get("day") or today),
                int(raw.get("tokens") or 0),
                int(raw.get("requests") or 0),
                limits.get("tokensPerDay"),
                limits.get("requestsPerDay"),
            )
        except (CorruptFileError, TypeError, ValueError, AttributeError) as exc:
            logger.error("%s could not be read (%s); counting from zero with no caps", self._path(key), exc)
            return Tally(today)

    def _change(self, key: Key, tally: Tally) -> None:
        self._tallies[key] = tally
        self._dirty.add(key)
        self._wake.set()

    def count(self, agent_id: str, work_id: str | None, tokens: int, requests: int = 1) -> None:
        """Add one model request's use to the agent (and the Work, for a Work run)."""
        keys: list[Key] = [("agent", agent_id)] + ([("work", work_id)] if work_id else [])
        for key in keys:
            tally = self._tally(key)
            self._change(key, replace(tally, tokens=tally.tokens + tokens, requests=tally.requests + requests))

    def spent(self, agent_id: str | None = None, work_id: str | None = None) -> str | None:
        """Why the agent (or the Work) may not start a run of its own today, in words; None while it may."""
        key: Key = ("agent", agent_id) if agent_id is not None else ("work", work_id or "")
        over = self._tally(key).over()
        if over is None:
            return None
        return f"{key[0]} {key[1]} has used {over}"

    def info(self, agent_id: str | None, work_id: str | None) -> BudgetInfo:
        key: Key = ("agent", agent_id) if agent_id is not None else ("work", work_id or "")
        tally = self._tally(key)
        return BudgetInfo(
            agent_id=agent_id,
            work_id=work_id,
            limits=BudgetLimits(tokens_per_day=tally.tokens_per_day, requests_per_day=tally.requests_per_day),
            today=BudgetDay(day=tally.day, tokens=tally.tokens, requests=tally.requests),
            spent=tally.over() is not None,
        )

    async def set_limits(
        self, agent_id: str | None, work_id: str | None, tokens: int | None, requests: int | None
    ) -> BudgetInfo:
        """Replace the caps (None: no cap) and write them before answering.

        Raises:
            StorageError: the disk refused; the caps in force are unchanged.
        """
        key: Key = ("agent", agent_id) if agent_id is not None else ("work", work_id or "")
        tally = replace(self._tally(key), tokens_per_day=tokens, requests_per_day=requests)
        await asyncio.to_thread(self._write, key, tally)
        self._tallies[key] = tally
        return self.info(agent_id, work_id)

    def _write(self, key: Key, tally: Tally) -> None:
        path = self._path(key)
        if not path.parent.is_dir():
            return  # the agent or Work is gone: its tally goes with it
        limits = {"tokensPerDay": tally.tokens_per_day, "requestsPerDay": tally.requests_per_day}
        write_json_atomic(
            path, {"day": tally.day, "tokens": tally.tokens, "requests": tally.requests, "limits": limits}
        )

    def flush(self) -> None:
        """Write every changed tally now (blocking)."""
        for key in list(self._dirty):
            self._dirty.discard(key)
            try:
                self._write(key, self._tallies[key])
            except StorageError:
                self._dirty.add(key)
                logger.exception("could not store the model use of %s %s; trying again later", *key)
                return

    async def serve(self) -> None:
        """Write changed tallies from this task, until cancelled."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            await asyncio.to_thread(self.flush)

    def counting(
        self, record: Callable[[Run, TurnEvent], Awaitable[None]]
    ) -> Callable[[Run, TurnEvent], Awaitable[None]]:
        """The run manager's `record`, counting each completed model message before it is recorded."""

        async def counted(run: Run, event: TurnEvent) -> None:
            if isinstance(event, TurnMessageEvent):
                usage = event.usage
                tokens = usage.input_tokens + usage.output_tokens if usage is not None else 0
                self.count(run.agent_id, run.origin.work_id, tokens)
                for listener in self.per_request:
                    listener(run)
            await record(run, event)

        return counted

    def counting_notify(
        self, notify: Callable[[str, BaseModel], Awaitable[None]]
    ) -> Callable[[str, BaseModel], Awaitable[None]]:
        """A notify that counts memory extraction's model request (`memory.extracted`) before sending it."""

        async def counted(method: str, event: BaseModel) -> None:
            if isinstance(event, MemoryExtractedEvent):
                self.count(event.agent_id, None, event.usage.input_tokens + event.usage.output_tokens)
            await notify(method, event)

        return counted
