"""Days and spans of days: a memory's date in words, and the calendar under the question's dates.

:func:`date_words` spells a memory's ``occurred_at`` day the ways people write dates in questions
("8 May 2023", "May 8, 2023", "Monday", "May 2023", "spring"), so a full-text index can match them.
:class:`TimeSpan` is an inclusive range of days (what :mod:`..retrieval.temporal` reads from a question), and
:func:`closeness` turns spans into a soft ranking signal for a memory's day (conversations mention
events days after they happened, so it decays rather than cuts off).  The rest is calendar
arithmetic in whole days, ISO weeks (Monday to Sunday), months, northern-hemisphere
meteorological seasons (spring = Mar-May, summer = Jun-Aug, autumn/fall = Sep-Nov, winter of
year Y = 1 Dec Y to the end of Feb Y+1) and years.  English, deterministic and locale-free.
"""

from __future__ import annotations

import calendar
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta


@dataclass(frozen=True)
class TimeSpan:
    """An inclusive range of days, and the phrase of the query it was read from."""

    start: date
    end: date
    text: str


MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December")
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

MONTH_ABBREVIATIONS: dict[str, int] = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8,
    "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}
_SEASON_FIRST_MONTH = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
# Every word that names a month, a weekday or a season, lower-cased: a number next to one writes a date.
CALENDAR_WORDS = frozenset({*(name.lower() for name in (*MONTH_NAMES, *WEEKDAY_NAMES)), *MONTH_ABBREVIATIONS,
                            *_SEASON_FIRST_MONTH})


def date_words(day: date) -> str:
    """``day`` written out for a full-text index, always in this exact shape::

        "<d> <Month> <yyyy> <Month> <d>, <yyyy> <Weekday> <Month> <yyyy> <yyyy> <season>"

    e.g. 2023-05-08 -> ``"8 May 2023 May 8, 2023 Monday May 2023 2023 spring"``: day month year,
    month day year, weekday, month year, year, then the northern-hemisphere season (``spring``
    Mar-May, ``summer`` Jun-Aug, ``autumn fall`` Sep-Nov, ``winter`` Dec-Feb). English names, no
    leading zeros, independent of locale.
    """
    month = MONTH_NAMES[day.month - 1]
    return (f"{day.day} {month} {day.year} {month} {day.day}, {day.year} {WEEKDAY_NAMES[day.weekday()]} "
            f"{month} {day.year} {day.year} {_season_name(day.month)}")


def closeness(day: date, spans: Sequence[TimeSpan], slack_days: int = 14) -> float:
    """1.0 if ``day`` is inside any span, falling linearly to 0.0 at ``slack_days`` days from the
    nearest span (before or after it); 0.0 when there are no spans."""
    if not spans:
        return 0.0
    distance = min(_days_outside(day, span) for span in spans)
    if distance == 0:
        return 1.0
    if slack_days <= 0:
        return 0.0
    return max(0.0, 1.0 - distance / slack_days)


# --- calendar arithmetic ---------------------------------------------------------------------------

def _season_name(month: int) -> str:
    if month in (3, 4, 5):
        return "spring"
    if month in (6, 7, 8):
        return "summer"
    if month in (9, 10, 11):
        return "autumn fall"
    return "winter"


def _days_outside(day: date, span: TimeSpan) -> int:
    if day < span.start:
        return (span.start - day).days
    if day > span.end:
        return (day - span.end).days
    return 0


def _month_index(year: int, month: int, shift: int = 0) -> tuple[int, int]:
    year, zero_based = divmod(year * 12 + month - 1 + shift, 12)
    return year, zero_based + 1


def month_span(year: int, month: int, first_day: int = 1, last_day: int = 31) -> tuple[date, date]:
    length = calendar.monthrange(year, month)[1]
    return date(year, month, first_day), date(year, month, min(last_day, length))


def year_span(year: int) -> tuple[date, date]:
    return date(year, 1, 1), date(year, 12, 31)


def week_span(day: date) -> tuple[date, date]:
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=6)


def season_span(season: str, year: int) -> tuple[date, date]:
    first = _SEASON_FIRST_MONTH[season.lower()]
    end_year, end_month = _month_index(year, first, 2)
    return date(year, first, 1), month_span(end_year, end_month)[1]


def _add_months(day: date, months: int) -> date:
    year, month = _month_index(day.year, day.month, months)
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def weekday_before(day: date, weekday: int) -> date:
    """The latest ``weekday`` strictly before ``day``."""
    return day - timedelta(days=(day.weekday() - weekday) % 7 or 7)


def weekday_after(day: date, weekday: int) -> date:
    """The first ``weekday`` strictly after ``day``."""
    return day + timedelta(days=(weekday - day.weekday()) % 7 or 7)


def unit_span(unit: str, day: date) -> tuple[date, date]:
    """The day, ISO week, month or year holding ``day``."""
    if unit == "day":
        return day, day
    if unit == "week":
        return week_span(day)
    if unit == "month":
        return month_span(day.year, day.month)
    return year_span(day.year)


def shifted(day: date, unit: str, count: int) -> date:
    if unit == "day":
        return day + timedelta(days=count)
    if unit == "week":
        return day + timedelta(weeks=count)
    return _add_months(day, count * (12 if unit == "year" else 1))
