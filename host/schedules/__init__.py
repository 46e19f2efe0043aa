"""host.schedules: agents on their own time: schedules that always report, and budgets.

`ScheduleService` fires schedules and gives every firing one outcome (`service`), over the schedule book
(`book`), the firing log (`firings`) and pure timing (`timing`); `ScheduleDesk` is what a person and an
agent's proposal do with them (`desk`); `Budgets` counts model use per day against its caps (`budget`).
"""

from host.schedules.book import Schedule, ScheduleBook
from host.schedules.budget import Budgets
from host.schedules.clock import ManualClock, ScheduleClock, SystemScheduleClock, clock_from_env, zone_named
from host.schedules.desk import ProposeScheduleTool, ScheduleDesk
from host.schedules.firings import Firing, FiringLog
from host.schedules.service import ScheduleService

__all__ = [
    "Budgets",
    "Firing",
    "FiringLog",
    "ManualClock",
    "ProposeScheduleTool",
    "Schedule",
    "ScheduleBook",
    "ScheduleClock",
    "ScheduleDesk",
    "ScheduleService",
    "SystemScheduleClock",
    "clock_from_env",
    "zone_named",
]
