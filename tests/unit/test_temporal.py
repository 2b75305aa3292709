"""Temporal search helpers: dates spelled for the full-text index, and query phrases read as date ranges."""

from __future__ import annotations

import dataclasses
from datetime import date

import pytest

from vault_engine.format.dates import TimeSpan, closeness, date_words
from vault_engine.retrieval.temporal import resolve

TODAY = date(2023, 8, 15)  # a Tuesday in summer
JANUARY = date(2024, 1, 10)  # a Wednesday in winter, just after a year boundary
d = date


def spans(query: str, today: date = TODAY) -> list[tuple[str, date, date]]:
    return [(span.text, span.start, span.end) for span in resolve(query, today)]


# --- date_words ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("day", "words"), [
    (d(2023, 5, 8), "8 May 2023 May 8, 2023 Monday May 2023 2023 spring"),
    (d(2023, 12, 25), "25 December 2023 December 25, 2023 Monday December 2023 2023 winter"),
    (d(2024, 2, 29), "29 February 2024 February 29, 2024 Thursday February 2024 2024 winter"),
    (d(2021, 7, 4), "4 July 2021 July 4, 2021 Sunday July 2021 2021 summer"),
    (d(2022, 10, 31), "31 October 2022 October 31, 2022 Monday October 2022 2022 autumn fall"),
])
def test_date_words_exact_format(day: date, words: str) -> None:
    assert date_words(day) == words


# --- full dates ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("query", "text"), [
    ("What happened on May 3, 2023?", "May 3, 2023"),
    ("what happened on 3 May 2023", "3 May 2023"),
    ("MAY 3RD 2023", "MAY 3RD 2023"),
    ("May 3rd, 2023", "May 3rd, 2023"),
    ("on the 3rd of May, 2023", "3rd of May, 2023"),
    ("Wednesday, May 3, 2023", "Wednesday, May 3, 2023"),
    ("logged 2023-05-03 by the bot", "2023-05-03"),
    ("logged 2023/05/03", "2023/05/03"),
    ("stamp 2023-05-03T10:00Z", "2023-05-03"),
])
def test_full_dates_are_that_single_day(query: str, text: str) -> None:
    assert spans(query) == [(text, d(2023, 5, 3), d(2023, 5, 3))]


def test_session_header_style_date() -> None:
    assert spans("1:56 pm on 8 May, 2023") == [("8 May, 2023", d(2023, 5, 8), d(2023, 5, 8))]


@pytest.mark.parametrize(("query", "today", "day"), [
    ("May 3", TODAY, d(2023, 5, 3)),
    ("May 3", JANUARY, d(2023, 5, 3)),
    ("Sept 5", TODAY, d(2022, 9, 5)),
    ("Sept 5", JANUARY, d(2023, 9, 5)),
    ("the 15th of August", TODAY, d(2023, 8, 15)),
    ("the 16th of August", TODAY, d(2022, 8, 16)),
    ("Feb 29", TODAY, d(2020, 2, 29)),
])
def test_day_without_year_is_the_latest_one_not_in_the_future(query: str, today: date, day: date) -> None:
    assert [(s.start, s.end) for s in resolve(query, today)] == [(day, day)]


@pytest.mark.parametrize("query", ["2023-13-40", "2023-02-30", "May 45"])
def test_impossible_dates_give_nothing(query: str) -> None:
    assert spans(query) == []


def test_impossible_day_keeps_only_the_year() -> None:
    assert spans("June 31, 2023") == [("2023", d(2023, 1, 1), d(2023, 12, 31))]


# --- months -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("query", "expected"), [
    ("May 2023", ("May 2023", d(2023, 5, 1), d(2023, 5, 31))),
    ("what did we do in July 2023", ("July 2023", d(2023, 7, 1), d(2023, 7, 31))),
    ("in may of 2023", ("may of 2023", d(2023, 5, 1), d(2023, 5, 31))),
    ("in Jan. 2023", ("Jan. 2023", d(2023, 1, 1), d(2023, 1, 31))),
    ("report 2024-02", ("2024-02", d(2024, 2, 1), d(2024, 2, 29))),
    ("early June 2023", ("early June 2023", d(2023, 6, 1), d(2023, 6, 10))),
    ("mid June 2023", ("mid June 2023", d(2023, 6, 11), d(2023, 6, 20))),
    ("mid-June 2023", ("mid-June 2023", d(2023, 6, 11), d(2023, 6, 20))),
    ("late February 2024", ("late February 2024", d(2024, 2, 21), d(2024, 2, 29))),
    ("at the end of May 2023", ("end of May 2023", d(2023, 5, 21), d(2023, 5, 31))),
    ("at the beginning of March 2022", ("beginning of March 2022", d(2022, 3, 1), d(2022, 3, 10))),
])
def test_month_and_year(query: str, expected: tuple[str, date, date]) -> None:
    assert spans(query) == [expected]


@pytest.mark.parametrize(("query", "today", "expected"), [
    ("in June", TODAY, ("June", d(2023, 6, 1), d(2023, 6, 30))),
    ("in June", JANUARY, ("June", d(2023, 6, 1), d(2023, 6, 30))),
    ("in June", d(2023, 6, 1), ("June", d(2023, 6, 1), d(2023, 6, 30))),
    ("in June", d(2023, 5, 31), ("June", d(2022, 6, 1), d(2022, 6, 30))),
    ("in December", JANUARY, ("December", d(2023, 12, 1), d(2023, 12, 31))),
    ("last May", TODAY, ("last May", d(2023, 5, 1), d(2023, 5, 31))),
    ("last May", d(2023, 5, 20), ("last May", d(2022, 5, 1), d(2022, 5, 31))),
    ("last May", JANUARY, ("last May", d(2023, 5, 1), d(2023, 5, 31))),
    ("this May", TODAY, ("this May", d(2023, 5, 1), d(2023, 5, 31))),
    ("next May", TODAY, ("next May", d(2024, 5, 1), d(2024, 5, 31))),
    ("next May", d(2023, 5, 20), ("next May", d(2024, 5, 1), d(2024, 5, 31))),
    ("next May", JANUARY, ("next May", d(2024, 5, 1), d(2024, 5, 31))),
    ("in late June", TODAY, ("late June", d(2023, 6, 21), d(2023, 6, 30))),
    ("early July", JANUARY, ("early July", d(2023, 7, 1), d(2023, 7, 10))),
    ("this month", TODAY, ("this month", d(2023, 8, 1), d(2023, 8, 31))),
    ("last month", TODAY, ("last month", d(2023, 7, 1), d(2023, 7, 31))),
    ("last month", JANUARY, ("last month", d(2023, 12, 1), d(2023, 12, 31))),
    ("next month", JANUARY, ("next month", d(2024, 2, 1), d(2024, 2, 29))),
])
def test_months_without_a_year_are_relative_to_today(query: str, today: date, expected: tuple[str, date, date]) -> None:
    assert spans(query, today) == [expected]


# --- "may" the verb, and other month words that are ordinary words ------------------------------------

@pytest.mark.parametrize("query", [
    "What may Tim do?",
    "May I ask what Tim likes?",
    "Tim may go. May I come too?",
    "this may help with the garden",
    "those 3 may help",
    "they march on the capital",
    "an august gathering of scholars",
    "Jan said hello",
])
def test_month_words_used_as_ordinary_words_give_nothing(query: str) -> None:
    assert spans(query) == []


@pytest.mark.parametrize(("query", "text", "month"), [
    ("What did Tim do in may?", "may", 5),
    ("What did Tim do May?", "May", 5),
    ("Tim has been sad since May", "May", 5),
    ("May I ask what we did in May?", "May", 5),
    ("the 3rd of may", "3rd of may", 5),
    ("may 2023", "may 2023", 5),
    ("We march in March", "March", 3),
    ("the trip in August", "August", 8),
    ("we met in jan", "jan", 1),
])
def test_month_words_in_date_contexts_are_months(query: str, text: str, month: int) -> None:
    found = resolve(query, TODAY)
    assert [span.text for span in found] == [text]
    assert found[0].start.month == month and found[0].start.year == 2023


# --- years --------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("query", "today", "expected"), [
    ("what happened in 2023", TODAY, ("2023", d(2023, 1, 1), d(2023, 12, 31))),
    ("2022", TODAY, ("2022", d(2022, 1, 1), d(2022, 12, 31))),
    ("Since 1999, they have met.", TODAY, ("1999", d(1999, 1, 1), d(1999, 12, 31))),
    ("early 2023", TODAY, ("early 2023", d(2023, 1, 1), d(2023, 4, 30))),
    ("mid-2023", TODAY, ("mid-2023", d(2023, 5, 1), d(2023, 8, 31))),
    ("by the end of 2022", TODAY, ("end of 2022", d(2022, 9, 1), d(2022, 12, 31))),
    ("last year", TODAY, ("last year", d(2022, 1, 1), d(2022, 12, 31))),
    ("last year", JANUARY, ("last year", d(2023, 1, 1), d(2023, 12, 31))),
    ("this year", JANUARY, ("this year", d(2024, 1, 1), d(2024, 12, 31))),
    ("next year", TODAY, ("next year", d(2024, 1, 1), d(2024, 12, 31))),
])
def test_years(query: str, today: date, expected: tuple[str, date, date]) -> None:
    assert spans(query, today) == [expected]


@pytest.mark.parametrize("query", [
    "She has 4 kids", "4 kids and 2 dogs", "it took 3 days", "Caroline turned 30", "paid $2000", "1,999 people",
    "room 20231", "the 1850 census", "year 2100", "seasons 2019-2020", "version 2023.5", "at 20:23",
])
def test_numbers_that_are_not_dates_give_nothing(query: str) -> None:
    assert spans(query) == []


# --- seasons ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("query", "today", "expected"), [
    ("summer 2021", TODAY, ("summer 2021", d(2021, 6, 1), d(2021, 8, 31))),
    ("autumn 2022", TODAY, ("autumn 2022", d(2022, 9, 1), d(2022, 11, 30))),
    ("during the winter of 2021", TODAY, ("winter of 2021", d(2021, 12, 1), d(2022, 2, 28))),
    ("winter 2023", TODAY, ("winter 2023", d(2023, 12, 1), d(2024, 2, 29))),
    ("last summer", TODAY, ("last summer", d(2022, 6, 1), d(2022, 8, 31))),
    ("last summer", d(2023, 9, 5), ("last summer", d(2023, 6, 1), d(2023, 8, 31))),
    ("last winter", JANUARY, ("last winter", d(2022, 12, 1), d(2023, 2, 28))),
    ("last winter", TODAY, ("last winter", d(2022, 12, 1), d(2023, 2, 28))),
    ("this winter", TODAY, ("this winter", d(2023, 12, 1), d(2024, 2, 29))),
    ("this winter", JANUARY, ("this winter", d(2023, 12, 1), d(2024, 2, 29))),
    ("this summer", JANUARY, ("this summer", d(2024, 6, 1), d(2024, 8, 31))),
    ("next summer", TODAY, ("next summer", d(2024, 6, 1), d(2024, 8, 31))),
    ("next summer", JANUARY, ("next summer", d(2024, 6, 1), d(2024, 8, 31))),
    ("in the fall", TODAY, ("fall", d(2022, 9, 1), d(2022, 11, 30))),
    ("in spring", TODAY, ("spring", d(2023, 3, 1), d(2023, 5, 31))),
    ("over the summer", TODAY, ("summer", d(2023, 6, 1), d(2023, 8, 31))),
])
def test_seasons(query: str, today: date, expected: tuple[str, date, date]) -> None:
    assert spans(query, today) == [expected]


@pytest.mark.parametrize("query", ["spring cleaning tips", "did he fall off the bike", "winter coats"])
def test_season_words_without_a_qualifier_give_nothing(query: str) -> None:
    assert spans(query) == []


# --- days, weeks, weekends ----------------------------------------------------------------------------

@pytest.mark.parametrize(("query", "today", "start", "end"), [
    ("yesterday", TODAY, d(2023, 8, 14), d(2023, 8, 14)),
    ("Yesterday", d(2024, 1, 1), d(2023, 12, 31), d(2023, 12, 31)),
    ("today", TODAY, TODAY, TODAY),
    ("this morning", TODAY, TODAY, TODAY),
    ("last night", TODAY, d(2023, 8, 14), d(2023, 8, 14)),
    ("tomorrow", TODAY, d(2023, 8, 16), d(2023, 8, 16)),
    ("last week", TODAY, d(2023, 8, 7), d(2023, 8, 13)),
    ("last week", d(2024, 1, 3), d(2023, 12, 25), d(2023, 12, 31)),
    ("this week", TODAY, d(2023, 8, 14), d(2023, 8, 20)),
    ("next week", TODAY, d(2023, 8, 21), d(2023, 8, 27)),
    ("last weekend", TODAY, d(2023, 8, 12), d(2023, 8, 13)),
    ("last weekend", d(2023, 8, 14), d(2023, 8, 12), d(2023, 8, 13)),  # Monday
    ("last weekend", d(2023, 8, 13), d(2023, 8, 5), d(2023, 8, 6)),  # Sunday
    ("last weekend", d(2023, 8, 12), d(2023, 8, 5), d(2023, 8, 6)),  # Saturday
    ("this weekend", TODAY, d(2023, 8, 19), d(2023, 8, 20)),
    ("the past week", TODAY, d(2023, 8, 8), TODAY),
    ("over the past month", TODAY, d(2023, 7, 15), TODAY),
])
def test_relative_days_and_weeks(query: str, today: date, start: date, end: date) -> None:
    assert [(s.start, s.end) for s in resolve(query, today)] == [(start, end)]


@pytest.mark.parametrize(("query", "today", "start", "end"), [
    ("3 days ago", TODAY, d(2023, 8, 12), d(2023, 8, 12)),
    ("three days ago", TODAY, d(2023, 8, 12), d(2023, 8, 12)),
    ("a day ago", TODAY, d(2023, 8, 14), d(2023, 8, 14)),
    ("a few days ago", TODAY, d(2023, 8, 12), d(2023, 8, 12)),
    ("ten days ago", JANUARY, d(2023, 12, 31), d(2023, 12, 31)),
    ("two weeks ago", TODAY, d(2023, 7, 31), d(2023, 8, 6)),
    ("a couple of weeks ago", TODAY, d(2023, 7, 31), d(2023, 8, 6)),
    ("3 weeks ago", JANUARY, d(2023, 12, 18), d(2023, 12, 24)),
    ("a month ago", JANUARY, d(2023, 12, 1), d(2023, 12, 31)),
    ("a couple of months ago", TODAY, d(2023, 6, 1), d(2023, 6, 30)),
    ("a few months ago", TODAY, d(2023, 5, 1), d(2023, 5, 31)),
    ("twelve months ago", TODAY, d(2022, 8, 1), d(2022, 8, 31)),
    ("4 years ago", TODAY, d(2019, 1, 1), d(2019, 12, 31)),
    ("an year ago", TODAY, d(2022, 1, 1), d(2022, 12, 31)),
    ("2 years ago", JANUARY, d(2022, 1, 1), d(2022, 12, 31)),
])
def test_n_units_ago(query: str, today: date, start: date, end: date) -> None:
    assert spans(query, today) == [(query, start, end)]


@pytest.mark.parametrize(("query", "text", "start"), [
    ("in the past few days", "past few days", d(2023, 8, 12)),
    ("over the last 2 weeks", "last 2 weeks", d(2023, 8, 1)),
    ("the last three months", "last three months", d(2023, 5, 15)),
])
def test_rolling_windows_end_today(query: str, text: str, start: date) -> None:
    assert spans(query) == [(text, start, TODAY)]


# --- weekdays -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("query", "today", "text", "day"), [
    ("last Friday", TODAY, "last Friday", d(2023, 8, 11)),
    ("on Friday", TODAY, "Friday", d(2023, 8, 11)),
    ("what did we eat on monday", TODAY, "monday", d(2023, 8, 14)),
    ("last Friday", d(2023, 8, 18), "last Friday", d(2023, 8, 11)),  # today is a Friday
    ("on Friday", d(2023, 8, 19), "Friday", d(2023, 8, 18)),
    ("last Tuesday", TODAY, "last Tuesday", d(2023, 8, 8)),
    ("last Sunday", JANUARY, "last Sunday", d(2024, 1, 7)),
    ("this Friday", TODAY, "this Friday", d(2023, 8, 18)),
    ("next Friday", TODAY, "next Friday", d(2023, 8, 18)),
    ("next Tuesday", TODAY, "next Tuesday", d(2023, 8, 22)),
])
def test_weekdays(query: str, today: date, text: str, day: date) -> None:
    assert spans(query, today) == [(text, day, day)]


def test_plural_weekdays_are_habits_not_dates() -> None:
    assert spans("we swim on Fridays") == []


# --- relations ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("query", "expected"), [
    ("the day after May 3, 2023", ("the day after May 3, 2023", d(2023, 5, 4), d(2023, 5, 4))),
    ("two weeks after May 3, 2023", ("two weeks after May 3, 2023", d(2023, 5, 15), d(2023, 5, 21))),
    ("the week before 9 June 2023", ("the week before 9 June 2023", d(2023, 5, 29), d(2023, 6, 4))),
    ("a month before July 2023", ("a month before July 2023", d(2023, 6, 1), d(2023, 6, 30))),
    ("the day before yesterday", ("the day before yesterday", d(2023, 8, 13), d(2023, 8, 13))),
    ("3 days after last Friday", ("3 days after last Friday", d(2023, 8, 14), d(2023, 8, 14))),
])
def test_relations_to_a_date_shift_it(query: str, expected: tuple[str, date, date]) -> None:
    assert spans(query) == [expected]


@pytest.mark.parametrize("query", [
    "two weeks after the party",
    "What did she do before the move?",
    "a week after her birthday",
    "days before the trip",
])
def test_relations_to_something_that_is_not_a_date_give_nothing(query: str) -> None:
    assert spans(query) == []


# --- choosing among matches ---------------------------------------------------------------------------

def test_longest_phrase_wins_over_the_parts_inside_it() -> None:
    assert spans("Tim left on May 3, 2023 for good") == [("May 3, 2023", d(2023, 5, 3), d(2023, 5, 3))]
    assert spans("in May 2023") == [("May 2023", d(2023, 5, 1), d(2023, 5, 31))]
    assert spans("on Monday, May 8, 2023") == [("Monday, May 8, 2023", d(2023, 5, 8), d(2023, 5, 8))]


def test_spans_come_in_order_of_appearance() -> None:
    assert [s.text for s in resolve("in 2022 and then last week", TODAY)] == ["2022", "last week"]
    assert [s.text for s in resolve("last week, not in 2022", TODAY)] == ["last week", "2022"]
    assert spans("between May 2023 and July 2023") == [
        ("May 2023", d(2023, 5, 1), d(2023, 5, 31)),
        ("July 2023", d(2023, 7, 1), d(2023, 7, 31)),
    ]


def test_the_same_range_is_returned_once() -> None:
    assert spans("June 2023, or rather in June") == [("June 2023", d(2023, 6, 1), d(2023, 6, 30))]
    assert spans("on Friday - yes, last Friday") == [("Friday", d(2023, 8, 11), d(2023, 8, 11))]


def test_case_does_not_matter_and_results_are_deterministic() -> None:
    lower, upper = resolve("last week", TODAY), resolve("LAST WEEK", TODAY)
    assert [(s.start, s.end) for s in lower] == [(s.start, s.end) for s in upper] == [(d(2023, 8, 7), d(2023, 8, 13))]
    assert upper[0].text == "LAST WEEK"
    assert resolve("two weeks after May 3, 2023", TODAY) == resolve("two weeks after May 3, 2023", TODAY)


@pytest.mark.parametrize("query", [
    "", "What did Caroline say about her adoption plans?", "How many years has Sam worked there",
])
def test_queries_without_dates_give_nothing(query: str) -> None:
    assert spans(query) == []


def test_time_span_is_frozen() -> None:
    span = TimeSpan(d(2023, 5, 1), d(2023, 5, 31), "May 2023")
    with pytest.raises(dataclasses.FrozenInstanceError):
        span.text = "June"  # type: ignore[misc]


# --- closeness ----------------------------------------------------------------------------------------

MAY = TimeSpan(d(2023, 5, 1), d(2023, 5, 31), "May 2023")
AUGUST = TimeSpan(d(2023, 8, 1), d(2023, 8, 31), "August 2023")


def test_closeness_inside_a_span_is_one() -> None:
    assert closeness(d(2023, 5, 15), [MAY]) == 1.0
    assert closeness(d(2023, 5, 1), [MAY]) == 1.0
    assert closeness(d(2023, 5, 31), [MAY]) == 1.0
    assert closeness(d(2023, 8, 2), [MAY, AUGUST]) == 1.0


def test_closeness_decays_linearly_to_zero_at_the_slack() -> None:
    assert closeness(d(2023, 6, 7), [MAY]) == pytest.approx(0.5)  # 7 days after
    assert closeness(d(2023, 4, 24), [MAY]) == pytest.approx(0.5)  # 7 days before
    assert closeness(d(2023, 6, 1), [MAY]) == pytest.approx(13 / 14)
    assert closeness(d(2023, 6, 14), [MAY]) == 0.0  # exactly slack_days out
    assert closeness(d(2023, 6, 20), [MAY]) == 0.0
    assert closeness(d(2023, 6, 7), [MAY], slack_days=28) == pytest.approx(0.75)


def test_closeness_uses_the_nearest_span() -> None:
    assert closeness(d(2023, 7, 25), [MAY, AUGUST]) == pytest.approx(0.5)


def test_closeness_without_spans_or_slack() -> None:
    assert closeness(d(2023, 5, 15), []) == 0.0
    assert closeness(d(2023, 6, 1), [MAY], slack_days=0) == 0.0
    assert closeness(d(2023, 5, 2), [MAY], slack_days=0) == 1.0


def test_closeness_of_a_resolved_query() -> None:
    found = resolve("what did we do two weeks ago", TODAY)
    assert closeness(d(2023, 8, 3), found) == 1.0
    assert closeness(d(2023, 8, 13), found) == pytest.approx(1 - 7 / 14)
