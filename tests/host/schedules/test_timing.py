"""When schedules are due: intervals from their anchor, cron in the person's zone across daylight saving."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from host.errors import InvalidRequestError
from host.schedules.timing import Timing, check_cron, due_times, next_due, parse_at
from protocol.errors import INVALID_PARAMS

BERLIN = ZoneInfo("Europe/Berlin")


def at(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def local(t: float) -> str:
    return datetime.fromtimestamp(t, BERLIN).isoformat()


def test_an_interval_is_due_every_period_after_its_anchor_and_never_at_it() -> None:
    timing = Timing("interval", 1000.0, 60)
    assert next_due(timing, 1000.0, BERLIN) == 1060.0
    assert next_due(timing, 1059.9, BERLIN) == 1060.0
    assert next_due(timing, 1060.0, BERLIN) == 1120.0
    assert due_times(timing, 1000.0, 1200.0, BERLIN, 10) == ([1060.0, 1120.0, 1180.0], 0)


def test_due_times_keep_the_newest_and_count_the_older_ones() -> None:
    timing = Timing("interval", 0.0, 60)
    kept, older = due_times(timing, 0.0, 60.0 * 100, BERLIN, 3)
    assert kept == [60.0 * 98, 60.0 * 99, 60.0 * 100] and older == 97
    cron = Timing("cron", 0.0, cron="* * * * *")
    start = at("2026-05-01T10:00:00+02:00")
    kept, older = due_times(cron, start, start + 600, BERLIN, 4)
    assert len(kept) == 4 and older == 6 and kept[-1] == start + 600


def test_a_cron_expression_is_read_in_the_persons_zone() -> None:
    timing = Timing("cron", 0.0, cron="0 8 * * *")
    due = next_due(timing, at("2026-05-01T12:00:00+00:00"), BERLIN)
    assert due is not None and local(due) == "2026-05-02T08:00:00+02:00"
    tokyo = next_due(timing, at("2026-05-01T12:00:00+00:00"), ZoneInfo("Asia/Tokyo"))
    assert tokyo is not None and tokyo != due


def test_a_daily_0230_on_the_spring_forward_day_fires_once_right_after_the_gap() -> None:
    timing = Timing("cron", 0.0, cron="30 2 * * *")
    dues, _ = due_times(timing, at("2026-03-28T12:00:00+01:00"), at("2026-03-30T12:00:00+02:00"), BERLIN, 10)
    assert [local(d) for d in dues] == ["2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"]


def test_a_daily_0230_on_the_fall_back_day_fires_once_not_twice() -> None:
    timing = Timing("cron", 0.0, cron="30 2 * * *")
    dues, _ = due_times(timing, at("2026-10-24T12:00:00+02:00"), at("2026-10-26T12:00:00+01:00"), BERLIN, 10)
    assert [local(d) for d in dues] == ["2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"]


def test_an_every_hour_cron_fires_in_each_real_hour_of_the_fall_back_day() -> None:
    timing = Timing("cron", 0.0, cron="0 * * * *")
    dues, _ = due_times(timing, at("2026-10-25T00:30:00+02:00"), at("2026-10-25T03:30:00+01:00"), BERLIN, 10)
    assert len(dues) == 4 and len(set(dues)) == 4  # 01:00, 02:00 (+2), 02:00 (+1), 03:00: one real hour apart
    assert all(later - earlier == 3600 for earlier, later in zip(dues, dues[1:], strict=False))


def test_a_one_off_is_due_once() -> None:
    timing = Timing("once", 5000.0)
    assert next_due(timing, 4000.0, BERLIN) == 5000.0 and next_due(timing, 5000.0, BERLIN) is None
    assert due_times(timing, 4000.0, 9000.0, BERLIN, 10) == ([5000.0], 0)
    assert due_times(timing, 5000.0, 9000.0, BERLIN, 10) == ([], 0)


def test_a_time_without_an_offset_is_read_in_the_zone() -> None:
    assert local(parse_at("2026-05-01T08:00", BERLIN)) == "2026-05-01T08:00:00+02:00"
    assert parse_at("2026-05-01T08:00+00:00", BERLIN) == at("2026-05-01T08:00:00+00:00")


@pytest.mark.parametrize("bad", ["61 * * * *", "* * *", "@daily", "0 0 30 2 *", "every morning"])
def test_a_bad_cron_expression_is_refused_with_invalid_params(bad: str) -> None:
    with pytest.raises(InvalidRequestError) as refused:
        check_cron(bad)
    assert refused.value.code == INVALID_PARAMS


def test_a_bad_time_is_refused_and_a_good_expression_is_normalised() -> None:
    with pytest.raises(InvalidRequestError) as refused:
        parse_at("tomorrow at eight", BERLIN)
    assert refused.value.code == INVALID_PARAMS
    assert check_cron(" 0   8 * *  1-5 ") == "0 8 * * 1-5"
