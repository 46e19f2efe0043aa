"""Wire models for agents on their own time: `schedule.*` (when an agent or a Work wakes by itself, and
how each firing ended), `budget.*` (a day's cap on model use, and what was spent), and `agent.warning`.

A schedule is `once` (`at`), `interval` (`everySeconds`) or `cron` (five fields, read in the host's
`timeZone`); exactly one of the three is given. Every firing ends with one outcome: `ran` (with its run),
`skipped` (with its reason) or `failed` (with the error). Instants are ISO 8601 strings with their offset.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, model_validator

from protocol.ids import AGENT_ID_PATTERN
from protocol.models.base import Params, WireModel

__all__ = [
    "SCHEDULE_ID_PATTERN",
    "FiringOutcome",
    "Missed",
    "ScheduleKind",
    "ScheduleState",
    "SkipReason",
    "WhenBusy",
    "ScheduleTiming",
    "FiringInfo",
    "ScheduleInfo",
    "ScheduleAddParams",
    "ScheduleRef",
    "ScheduleListParams",
    "ScheduleListResult",
    "ScheduleRemoveResult",
    "ScheduleFiringsParams",
    "ScheduleFiringsResult",
    "ScheduleUpdatedEvent",
    "ScheduleFiredEvent",
    "ProposeScheduleArgs",
    "BudgetLimits",
    "BudgetDay",
    "BudgetInfo",
    "BudgetRef",
    "BudgetSetParams",
    "AgentWarningEvent",
    "DebugAdvanceClockParams",
    "DebugAdvanceClockResult",
    "SCHEDULE_METHODS",
    "SCHEDULE_EVENTS",
    "SCHEDULE_TOOLS",
]

SCHEDULE_ID_PATTERN = r"^s-[0-9a-f]{12}$"
"""A schedule's id."""

ScheduleKind = Literal["once", "interval", "cron"]
ScheduleState = Literal["active", "paused", "proposed", "done"]
"""`proposed`: an agent asked for it and it waits for a person's yes; `done`: a one-off that has fired."""
WhenBusy = Literal["skip", "queue"]
"""A firing while the agent works: record it `skipped: busy`, or queue its run behind what is running."""
Missed = Literal["once", "skip"]
"""Firings missed while the host was down: the latest runs once at start (the others are skipped), or each
is recorded `skipped: host_down`."""
FiringOutcome = Literal["ran", "skipped", "failed"]
SkipReason = Literal["busy", "host_down", "budget", "unchanged"]

AgentId = Annotated[str, Field(pattern=AGENT_ID_PATTERN)]
ScheduleId = Annotated[str, Field(pattern=SCHEDULE_ID_PATTERN)]
Message = Annotated[str, Field(min_length=1, max_length=20_000)]


class ScheduleTiming(Params):
    """When a schedule fires: exactly one of `at`, `everySeconds` and `cron`."""

    at: str | None = Field(
        default=None,
        max_length=64,
        description="Once, at this ISO 8601 time; without an offset it is read in the host's time zone.",
    )
    every_seconds: int | None = Field(default=None, ge=60, le=366 * 86_400, description="At this interval.")
    cron: str | None = Field(
        default=None,
        max_length=200,
        description="A five-field cron expression (minute hour day month weekday), in the host's time zone.",
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> ScheduleTiming:
        given = [name for name in ("at", "every_seconds", "cron") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of at, everySeconds and cron")
        return self


class FiringInfo(WireModel):
    """One firing of a schedule. `outcome` is null while its run has not ended."""

    firing_id: str
    schedule_id: str
    agent_id: str
    work_id: str | None = None
    due: str
    decided_at: str
    outcome: FiringOutcome | None = None
    reason: SkipReason | None = Field(default=None, description="Why it was skipped.")
    detail: str = Field(default="", description="The reason or the error, in words.")
    run_id: str | None = None
    count: int = Field(default=1, description="How many due times this record stands for (host_down only).")


class ScheduleInfo(WireModel):
    schedule_id: str
    agent_id: str
    work_id: str | None = Field(default=None, description="Set for a Work's schedule: its runs are Work runs.")
    label: str = ""
    message: str
    kind: ScheduleKind
    at: str | None = None
    every_seconds: int | None = None
    cron: str | None = None
    time_zone: str = Field(description="The zone its times are read in (the host's `timeZone`).")
    when_busy: WhenBusy = "skip"
    missed: Missed = "once"
    watch: str | None = None
    state: ScheduleState = "active"
    proposed_by: str | None = Field(default=None, description="The agent that proposed it, if one did.")
    created_at: str
    next_due: str | None = Field(default=None, description="When it fires next (null: paused, proposed or done).")
    last: FiringInfo | None = None


class ScheduleAddParams(ScheduleTiming):
    """A person's new schedule: its first firing is the first due time after now."""

    agent_id: AgentId
    work_id: AgentId | None = Field(default=None, description="Make it a Work's schedule; the agent must be a member.")
    message: Message
    label: str = Field(default="", max_length=200)
    when_busy: WhenBusy = "skip"
    missed: Missed = "once"
    watch: str | None = Field(
        default=None,
        min_length=1,
        max_length=1000,
        description="A path in the agent's workspace: a firing is `skipped: unchanged` while nothing under it "
        "changed since the last firing that ran.",
    )


class ScheduleRef(Params):
    schedule_id: ScheduleId


class ScheduleListParams(Params):
    """Without `agentId` or `workId`, every schedule."""

    agent_id: AgentId | None = None
    work_id: AgentId | None = None


class ScheduleListResult(WireModel):
    schedules: list[ScheduleInfo]


class ScheduleRemoveResult(WireModel):
    removed: bool


class ScheduleFiringsParams(Params):
    schedule_id: ScheduleId
    limit: int = Field(default=50, ge=1, le=500)


class ScheduleFiringsResult(WireModel):
    """The schedule's latest firings, newest last."""

    firings: list[FiringInfo]


class ScheduleUpdatedEvent(WireModel):
    """A schedule was added, changed, proposed or removed (`schedule` is null when removed)."""

    schedule_id: str
    schedule: ScheduleInfo | None


class ScheduleFiredEvent(WireModel):
    """A firing was decided (`outcome` null: its run is queued or running) or ended with its outcome."""

    firing: FiringInfo


class ProposeScheduleArgs(ScheduleTiming):
    """Propose a schedule for yourself: a time (`at`), an interval (`everySeconds`) or a cron expression in
    the user's time zone, and the message your run will start with. It waits for the user's yes and does
    nothing until then; tell the user what you proposed and why."""

    message: Message
    label: str = Field(default="", max_length=200)
    when_busy: WhenBusy = "skip"


class BudgetLimits(WireModel):
    """A day's cap (in the host's time zone); null: no cap."""

    tokens_per_day: int | None = Field(default=None, ge=1)
    requests_per_day: int | None = Field(default=None, ge=1)


class BudgetDay(WireModel):
    day: str = Field(description="The day, YYYY-MM-DD in the host's time zone.")
    tokens: int = 0
    requests: int = 0


class BudgetInfo(WireModel):
    """Model use of an agent or a Work: turns, extraction and scheduled runs alike."""

    agent_id: str | None = None
    work_id: str | None = None
    limits: BudgetLimits
    today: BudgetDay
    spent: bool = Field(description="A cap is reached: scheduled and agent-started runs are skipped today.")


class BudgetRef(Params):
    """Exactly one of `agentId` and `workId`."""

    agent_id: AgentId | None = None
    work_id: AgentId | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> BudgetRef:
        if (self.agent_id is None) == (self.work_id is None):
            raise ValueError("give exactly one of agentId and workId")
        return self


class BudgetSetParams(BudgetRef):
    """Replaces both caps; a missing or null one is no cap."""

    tokens_per_day: int | None = Field(default=None, ge=1)
    requests_per_day: int | None = Field(default=None, ge=1)


class AgentWarningEvent(WireModel):
    """Something a person should know about a run that still goes on (its agent's budget is spent, say)."""

    agent_id: str
    run_id: str | None = None
    kind: Literal["budget"]
    message: str


class DebugAdvanceClockParams(Params):
    """Test hosts only (`HEARTH_TEST_CLOCK` set at start): move the schedules' clock to `to`, or on by `by`
    seconds, and answer once everything then due is decided. Not in the schema: no production host has it."""

    to: float | None = None
    by: float | None = Field(default=None, ge=0)


class DebugAdvanceClockResult(WireModel):
    now: float
    fired: list[FiringInfo]


SCHEDULE_METHODS: dict[str, tuple[type[BaseModel], type[BaseModel]]] = {
    "schedule.add": (ScheduleAddParams, ScheduleInfo),
    "schedule.list": (ScheduleListParams, ScheduleListResult),
    "schedule.get": (ScheduleRef, ScheduleInfo),
    "schedule.pause": (ScheduleRef, ScheduleInfo),
    "schedule.resume": (ScheduleRef, ScheduleInfo),
    "schedule.approve": (ScheduleRef, ScheduleInfo),
    "schedule.remove": (ScheduleRef, ScheduleRemoveResult),
    "schedule.firings": (ScheduleFiringsParams, ScheduleFiringsResult),
    "budget.get": (BudgetRef, BudgetInfo),
    "budget.set": (BudgetSetParams, BudgetInfo),
}

SCHEDULE_EVENTS: dict[str, type[BaseModel]] = {
    "schedule.updated": ScheduleUpdatedEvent,
    "schedule.fired": ScheduleFiredEvent,
    "agent.warning": AgentWarningEvent,
}

SCHEDULE_TOOLS: dict[str, type[BaseModel]] = {"propose_schedule": ProposeScheduleArgs}
"""The host tool an agent proposes a schedule with (a direct run's)."""
