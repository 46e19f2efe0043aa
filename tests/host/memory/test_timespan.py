"""The time a question names, as a valid-time span."""

from __future__ import annotations

from datetime import UTC, datetime

from host.memory.timespan import SLACK_DAYS, Span, named_span

NOW = datetime(2024, 3, 20, 15, 0, tzinfo=UTC)


def day(text: str) -> str:
    return f"{text}T00:00:00.000000Z"


def test_a_named_day_is_widened_by_the_slack_on_each_side() -> None:
    assert SLACK_DAYS == 3
    expected = Span(day("2023-05-05"), day("2023-05-12"))
    assert named_span("What did Gina find on 8 May, 2023?", NOW) == expected
    assert named_span("what happened on May 8th 2023", NOW) == expected
    assert named_span("the note of 2023-05-08", NOW) == expected


def test_a_month_or_a_year_is_taken_whole() -> None:
    assert named_span("Where was Jolene during the last week of August 2023?", NOW) == Span(
        day("2023-08-01"), day("2023-09-01")
    )
    assert named_span("plans for December 2023", NOW) == Span(day("2023-12-01"), day("2024-01-01"))
    assert named_span("How many times did she go to the beach in 2023?", NOW) == Span(
        day("2023-01-01"), day("2024-01-01")
    )


def test_relative_words_count_back_from_now() -> None:
    assert named_span("what did I say yesterday", NOW) == Span(day("2024-03-18"), day("2024-03-21"))
    assert named_span("what did we plan last week?", NOW) == Span(day("2024-03-06"), day("2024-03-20"))
    assert named_span("the trip two weeks ago", NOW) == Span(day("2024-03-03"), day("2024-03-10"))


def test_text_that_names_no_time_gives_no_span() -> None:
    assert named_span("Where does she live?", NOW) is None
    assert named_span("room 2023 is upstairs", NOW) is None, "a bare number is not a year"
    assert named_span("我住在柏林", NOW) is None


def test_an_impossible_day_falls_back_to_its_month() -> None:
    assert named_span("on 31 February 2023", NOW) == Span(day("2023-02-01"), day("2023-03-01"))
