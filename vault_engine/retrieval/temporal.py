"""The date ranges a question refers to: "last May", "two weeks ago", "summer 2021".

:func:`resolve` finds the temporal expressions in a query ("last May", "two weeks ago",
"summer 2021", "the day after May 3, 2023") and resolves each against a reference day ``today``
to an inclusive :class:`~.dates.TimeSpan`; :func:`.dates.closeness` turns those spans into a soft
ranking signal for a memory's day, and :func:`.dates.date_words` spells that day for the
full-text index (the other side of the same meeting).

Everything is English, deterministic and locale-free. Weeks are ISO weeks (Monday to Sunday);
seasons are northern-hemisphere meteorological seasons (see :mod:`..format.dates`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta

from ..format.dates import (
    MONTH_ABBREVIATIONS,
    MONTH_NAMES,
    WEEKDAY_NAMES,
    TimeSpan,
    month_span,
    season_span,
    shifted,
    unit_span,
    week_span,
    weekday_after,
    weekday_before,
    year_span,
)
from ..patterns import lazy_pattern

_MONTHS: dict[str, int] = {name.lower(): number for number, name in enumerate(MONTH_NAMES, 1)}
_MONTH_NUMBER = {**_MONTHS, **MONTH_ABBREVIATIONS}
_WEEKDAYS: dict[str, int] = {name.lower(): number for number, name in enumerate(WEEKDAY_NAMES)}
# Month words that are also ordinary words or names: alone (no day, year or qualifier) they count
# as months only when capitalised in the middle of a sentence ("What did we do May?" but not
# "May I ask" or "what may Tim do").
_AMBIGUOUS_MONTHS = frozenset({"may", "march", "april", "june", "august"})
# ... and the ones that are common lowercase words, so "3 may" needs a capital, "3rd" or "of".
_WORDLIKE_MONTHS = frozenset({"may", "march", "mar"})
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple": 2, "a couple of": 2, "couple of": 2, "a few": 3, "few": 3, "several": 3,
}
# First and last day of a month part, and first and last month of a year part.
_MONTH_PARTS = {"early": (1, 10), "mid": (11, 20), "late": (21, 31)}
_YEAR_PARTS = {"early": (1, 4), "mid": (5, 8), "late": (9, 12)}
_PART_ALIASES = {"beginning of": "early", "start of": "early", "middle of": "mid", "end of": "late"}

_MONTH_RE = "|".join(sorted(_MONTH_NUMBER, key=len, reverse=True))
_WEEKDAY_RE = "|".join(_WEEKDAYS)
_YEAR_RE = r"(?:19|20)\d\d"
_NUM_END = r"(?!\w|[.,/:-]\d)"  # a number ends here: not "2023x", "2023.5", "2023-05"
_COUNT_RE = (r"\d{1,3}|a\s+couple(?:\s+of)?|couple\s+of|a\s+few|few|several|an?|one|two|three|four"
             r"|five|six|seven|eight|nine|ten|eleven|twelve")
_UNIT_RE = r"day|week|month|year"
_PART_RE = r"early|mid|late|(?:beginning|start|middle|end)\s+of"
_PREPOSITION_RE = r"in|during|of|since|until|till|before|after|through|throughout"
_RELATIVE_RE = r"last|this|next|past|previous|coming"

_FLAGS = re.IGNORECASE
# Cheap gate: which kinds of temporal words a query holds at all (a digit, a month or weekday prefix,
# a season, a day word, a unit, "ago"); each rule below runs only when its kinds are all present.
_TRIGGER = lazy_pattern(
    r"(?P<digit>\d)|\b(?:(?P<dayword>today|tonight|yesterday|tomorrow|last\s+night|this\s+(?:morning|afternoon|evening))"
    r"|(?P<unit>day|week|month|year)|(?P<month>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
    r"|(?P<weekday>mon|tue|wed|thu|fri|sat|sun)|(?P<season>spring|summer|autumn|fall|winter)|(?P<ago>ago))", _FLAGS)
_ISO_DATE = lazy_pattern(
    rf"(?<![\w.,/:-])(?P<year>{_YEAR_RE})(?P<sep>[-/.])(?P<month>\d{{1,2}})(?:(?P=sep)(?P<day>\d{{1,2}}))?"
    r"(?!\d|[-/.]\d)", _FLAGS)
_MONTH_DAY = lazy_pattern(
    rf"\b(?:(?P<weekday>{_WEEKDAY_RE}),?\s+)?(?P<month>{_MONTH_RE})\b\.?\s+(?:the\s+)?"
    rf"(?P<day>\d{{1,2}})(?P<ordinal>st|nd|rd|th)?{_NUM_END}(?:,?\s+(?P<year>{_YEAR_RE}){_NUM_END})?", _FLAGS)
_DAY_MONTH = lazy_pattern(
    rf"(?:\b(?P<weekday>{_WEEKDAY_RE}),?\s+)?(?:\bthe\s+)?(?<![\w.,/:$£€#-])(?P<day>\d{{1,2}})"
    rf"(?P<ordinal>st|nd|rd|th)?\s+(?:(?P<of>of)\s+)?(?P<month>{_MONTH_RE})\b\.?"
    rf"(?:,?\s+(?P<year>{_YEAR_RE}){_NUM_END})?", _FLAGS)
_MONTH = lazy_pattern(
    rf"(?:\b(?P<pre>{_PREPOSITION_RE})\s+(?:the\s+month\s+of\s+)?)?(?:\b(?P<rel>{_RELATIVE_RE})\s+)?"
    rf"(?:\b(?:the\s+)?(?P<part>{_PART_RE})(?:\s+|\s*-\s*))?\b(?P<month>{_MONTH_RE})\b\.?"
    rf"(?:,?\s+(?:of\s+)?(?P<year>{_YEAR_RE}){_NUM_END})?", _FLAGS)
_YEAR = lazy_pattern(
    rf"(?:\b(?:the\s+)?(?P<part>{_PART_RE})(?:\s+|\s*-\s*))?(?<![\w.,/:$£€#])(?<!\d-)(?P<year>{_YEAR_RE}){_NUM_END}",
    _FLAGS)
_SEASON = lazy_pattern(
    rf"(?:\b(?P<pre>in|during|over|through|throughout|since|until|till)\s+(?:the\s+)?|\b(?P<rel>{_RELATIVE_RE})\s+)?"
    rf"\b(?P<season>spring|summer|autumn|fall|winter)\b(?:,?\s+(?:of\s+)?(?P<year>{_YEAR_RE}){_NUM_END})?", _FLAGS)
_DAY_WORD = lazy_pattern(
    r"\b(?:today|tonight|yesterday|tomorrow|last\s+night|this\s+(?:morning|afternoon|evening))\b", _FLAGS)
_RELATIVE_UNIT = lazy_pattern(rf"\b(?P<rel>{_RELATIVE_RE}|current)\s+(?P<unit>week|weekend|month|year)\b", _FLAGS)
_AGO = lazy_pattern(rf"\b(?P<count>{_COUNT_RE})\s+(?P<unit>{_UNIT_RE})s?\s+ago\b", _FLAGS)
_ROLLING = lazy_pattern(rf"\b(?:last|past|previous)\s+(?P<count>{_COUNT_RE})\s+(?P<unit>{_UNIT_RE})s?\b", _FLAGS)
_WEEKDAY = lazy_pattern(rf"\b(?P<rel>on|{_RELATIVE_RE})\s+(?P<weekday>{_WEEKDAY_RE})\b", _FLAGS)
# "two weeks after " / "the day before " right in front of a resolved date.
_RELATION = lazy_pattern(
    rf"\b(?:(?P<count>{_COUNT_RE})\s+|the\s+)?(?P<unit>{_UNIT_RE})s?\s+(?P<direction>before|after|prior\s+to|following)"
    r"\s+(?:the\s+)?\Z", _FLAGS)

_Hit = tuple[int, int, date, date]  # text start, text end, first day, last day
_Rule = Callable[[re.Match[str], date], _Hit | None]


def resolve(query: str, today: date) -> list[TimeSpan]:
    """The date ranges the temporal expressions in ``query`` refer to, in order of appearance.

    ``today`` is the reference day. Matching is case-insensitive; ``text`` is the phrase as written
    (leading prepositions such as "in"/"on" left out). Overlapping matches keep the longest phrase, and
    a range found twice is returned once. Forms:

    * full dates: "May 3, 2023", "3 May 2023", "May 3rd 2023", "the 3rd of May, 2023",
      "Monday, May 8, 2023", "2023-05-03" (also ``/`` or ``.``) -> that day. Without a year
      ("May 3", "3rd of May") -> the most recent such day not after ``today``.
    * months: "May 2023", "May of 2023", "2023-05", "2023/05" -> the month; "early/mid/late June 2023" (also
      "mid-June", "the beginning/middle/end of June") -> days 1-10 / 11-20 / 21-end.
      "in June" (or a bare month) -> the latest June not in the future; "last May" -> the latest May
      before today's month; "this May" -> May of today's year; "next May" -> the first May after
      today's month. "this/last/next month".
    * years: "2023", "in 2023" (1900-2099 standing alone) -> the year; "early/mid/late 2023" -> Jan-Apr /
      May-Aug / Sep-Dec; "this/last/next year".
    * seasons: "summer 2021", "the winter of 2021" (Dec 2021 - Feb 2022); "last summer" -> the latest
      summer that ended before today; "this winter" -> the one of today's season year; "next summer" ->
      the first one starting after today; "in the summer" -> the latest one that has started.
    * days and weeks: "today", "tonight", "this morning", "yesterday", "last night", "tomorrow";
      "this/last/next week" -> that ISO week; "this/last/next weekend" (last = the Saturday-Sunday
      before today); "the past week/month/year" -> from that far back to today.
    * counts (digits, one..twelve, a/an = 1, a couple (of) = 2, a few/several = 3): "N days ago" ->
      that day, "N weeks ago" -> that ISO week, "N months ago" -> that month, "N years ago" -> that
      year; "the last/past N days" -> from N days back to today.
    * weekdays: "last Friday"/"on Friday" -> the latest Friday before today; "this Friday" -> the
      Friday of this ISO week; "next Friday" -> the first Friday after today.
    * relations to a date: "two weeks after May 3, 2023", "the day before yesterday" -> the date
      shifted and sized like the "ago" forms. Relations to anything else ("two weeks after the
      party", "before the move") give nothing.

    "May" (and the other month words that are also ordinary words or names: March, April, June,
    August) alone counts only after a qualifier ("in", "of", "last", "early", ...), before a day or
    year, or capitalised mid-sentence: "What may Tim do" and "May I ..." give nothing; so does
    "this may", the modal after "this". Abbreviations ("Jan", "Sept") need a qualifier, day or year.
    Relation words without a count are not ranges: "before May 2023" and "since 2020" resolve to the
    date itself. Not read: numeric day/month orders ("5/3/2023"), ranges ("May 3-5", "2019-2020").
    """
    kinds = {trigger.lastgroup for trigger in _TRIGGER.finditer(query)}
    if not kinds:
        return []
    hits: list[_Hit] = []
    for needs, pattern, rule in _RULES:
        if not needs <= kinds:
            continue
        for match in pattern.finditer(query):
            try:
                hit = rule(match, today)
            except (ValueError, OverflowError):  # impossible day, or arithmetic off the calendar
                continue
            if hit is not None:
                hits.append(hit)
    spans: list[TimeSpan] = []
    seen: set[tuple[date, date]] = set()
    previous_end = 0
    for start, end, first, last in _longest_first(hits):
        start, first, last = _apply_relation(query, max(previous_end, start - 64), start, first, last)
        previous_end = end
        if (first, last) not in seen:
            seen.add((first, last))
            spans.append(TimeSpan(first, last, query[start:end]))
    return spans


# --- reading the query ------------------------------------------------------------------------------

def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _count(text: str) -> int:
    word = _norm(text)
    return int(word) if word.isdigit() else _NUMBER_WORDS[word]


def _part(text: str) -> str:
    word = _norm(text)
    return _PART_ALIASES.get(word, word)


def _text_end(match: re.Match[str]) -> int:
    end = match.end()
    return end - 1 if match.string[end - 1] == "." else end  # "in May." -> "May"


def _first_start(match: re.Match[str], *groups: str) -> int:
    return min(match.start(group) for group in groups if match.group(group) is not None)


def _starts_sentence(text: str, position: int) -> bool:
    while position > 0 and (text[position - 1].isspace() or text[position - 1] in "\"'“‘([*_"):
        if text[position - 1] == "\n":
            return True
        position -= 1
    return position == 0 or text[position - 1] in ".!?"


def _latest_on_or_before(today: date, month: int, day: int) -> date:
    """The latest ``month``/``day`` not after ``today`` (29 February looks back to a leap year)."""
    for year in range(today.year, today.year - 9, -1):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if candidate <= today:
            return candidate
    raise ValueError("no such day")


def _month_year(month: int, rel: str | None, today: date) -> int:
    """The year of a month named without one: "last May", "this May", "next May", "in May"."""
    if rel in ("last", "past", "previous"):
        return today.year if today.month > month else today.year - 1
    if rel == "this":
        return today.year
    if rel in ("next", "coming"):
        return today.year if today.month < month else today.year + 1
    return today.year if today.month >= month else today.year - 1


# --- rules: one per pattern, each a match -> (text start, text end, first day, last day) or None -----

def _iso_date(match: re.Match[str], today: date) -> _Hit | None:
    year, month = int(match["year"]), int(match["month"])
    if match["day"] is None:
        if match["sep"] == ".":
            return None  # "2023.5" is a version or a decimal, not May 2023
        return (match.start(), match.end(), *month_span(year, month))
    day = date(year, month, int(match["day"]))
    return match.start(), match.end(), day, day


def _day_month(match: re.Match[str], today: date) -> _Hit | None:
    word = match["month"]
    if (match["year"] is None and word.lower() in _WORDLIKE_MONTHS and word.islower()
            and not (match["ordinal"] or match["of"])):
        return None  # "those 3 may help"
    return _full_date(match, today)


def _full_date(match: re.Match[str], today: date) -> _Hit:
    month, day = _MONTH_NUMBER[match["month"].lower()], int(match["day"])
    if match["year"] is not None:
        when = date(int(match["year"]), month, day)
    else:
        when = _latest_on_or_before(today, month, day)
    start = _first_start(match, "weekday", "day", "month")
    return start, _text_end(match), when, when


def _month(match: re.Match[str], today: date) -> _Hit | None:
    word, pre, rel, part = match["month"], match["pre"], match["rel"], match["part"]
    lowered = word.lower()
    month = _MONTH_NUMBER[lowered]
    rel = rel.lower() if rel else None
    if match["year"] is not None:
        year = int(match["year"])
    else:
        if not (pre or rel or part):
            if lowered in MONTH_ABBREVIATIONS:
                return None
            if lowered in _AMBIGUOUS_MONTHS and (word.islower() or _starts_sentence(match.string, match.start())):
                return None
        if rel == "this" and word == "may" and not part:
            return None  # "this may help": the modal verb
        year = _month_year(month, rel, today)
    first_day, last_day = _MONTH_PARTS[_part(part)] if part else (1, 31)
    start = _first_start(match, "rel", "part", "month")
    return (start, _text_end(match), *month_span(year, month, first_day, last_day))


def _year(match: re.Match[str], today: date) -> _Hit | None:
    year = int(match["year"])
    if match["part"] is None:
        return (match.start("year"), match.end(), *year_span(year))
    first_month, last_month = _YEAR_PARTS[_part(match["part"])]
    return (match.start("part"), match.end(), date(year, first_month, 1), month_span(year, last_month)[1])


def _season(match: re.Match[str], today: date) -> _Hit | None:
    season, rel = match["season"].lower(), (match["rel"] or "").lower()
    if match["year"] is not None:
        year = int(match["year"])
    elif rel in ("last", "past", "previous"):
        year = today.year
        while season_span(season, year)[1] >= today:
            year -= 1
    elif rel == "this":
        year = today.year - 1 if season == "winter" and today.month <= 2 else today.year
    elif rel in ("next", "coming"):
        year = today.year - 1
        while season_span(season, year)[0] <= today:
            year += 1
    elif match["pre"] is not None:
        year = today.year if season_span(season, today.year)[0] <= today else today.year - 1
    else:
        return None  # "spring cleaning", "did he fall"
    return (_first_start(match, "rel", "season"), match.end(), *season_span(season, year))


def _day_word(match: re.Match[str], today: date) -> _Hit | None:
    word = _norm(match.group())
    day = today
    if word in ("yesterday", "last night"):
        day = today - timedelta(days=1)
    elif word == "tomorrow":
        day = today + timedelta(days=1)
    return match.start(), match.end(), day, day


def _relative_unit(match: re.Match[str], today: date) -> _Hit | None:
    rel, unit = match["rel"].lower(), match["unit"].lower()
    step = {"last": -1, "previous": -1, "next": 1, "coming": 1}.get(rel, 0)
    if rel == "past" and unit != "weekend":  # "the past month": a rolling window up to today
        return match.start(), match.end(), shifted(today, unit, -1), today
    if unit == "weekend":
        if rel in ("last", "past", "previous"):
            sunday = weekday_before(today, 6)
            return match.start(), match.end(), sunday - timedelta(days=1), sunday
        saturday = weekday_after(today, 5) if step == 1 else week_span(today)[0] + timedelta(days=5)
        return match.start(), match.end(), saturday, saturday + timedelta(days=1)
    return (match.start(), match.end(), *unit_span(unit, shifted(today, unit, step)))


def _ago(match: re.Match[str], today: date) -> _Hit | None:
    unit = match["unit"].lower()
    return (match.start(), match.end(), *unit_span(unit, shifted(today, unit, -_count(match["count"]))))


def _rolling(match: re.Match[str], today: date) -> _Hit | None:
    unit = match["unit"].lower()
    return match.start(), match.end(), shifted(today, unit, -_count(match["count"])), today


def _weekday(match: re.Match[str], today: date) -> _Hit | None:
    rel, weekday = match["rel"].lower(), _WEEKDAYS[match["weekday"].lower()]
    if rel == "this":
        day = week_span(today)[0] + timedelta(days=weekday)
    elif rel in ("next", "coming"):
        day = weekday_after(today, weekday)
    else:
        day = weekday_before(today, weekday)
    start = match.start("weekday") if rel == "on" else match.start()
    return start, match.end(), day, day


# (trigger kinds a rule needs, its pattern, the rule)
_RULES: tuple[tuple[frozenset[str | None], re.Pattern[str], _Rule], ...] = (
    (frozenset({"digit"}), _ISO_DATE, _iso_date),
    (frozenset({"digit", "month"}), _MONTH_DAY, _full_date),
    (frozenset({"digit", "month"}), _DAY_MONTH, _day_month),
    (frozenset({"month"}), _MONTH, _month),
    (frozenset({"digit"}), _YEAR, _year),
    (frozenset({"season"}), _SEASON, _season),
    (frozenset({"dayword"}), _DAY_WORD, _day_word),
    (frozenset({"unit"}), _RELATIVE_UNIT, _relative_unit),
    (frozenset({"ago"}), _AGO, _ago),
    (frozenset({"unit"}), _ROLLING, _rolling),
    (frozenset({"weekday"}), _WEEKDAY, _weekday),
)


def _longest_first(hits: list[_Hit]) -> list[_Hit]:
    """Non-overlapping hits, longer phrases winning (then earlier ones), in order of appearance."""
    chosen: list[_Hit] = []
    for hit in sorted(hits, key=lambda h: (h[0] - h[1], h[0])):
        if all(hit[1] <= other[0] or hit[0] >= other[1] for other in chosen):
            chosen.append(hit)
    return sorted(chosen)


def _apply_relation(query: str, lower: int, start: int, first: date, last: date) -> tuple[int, date, date]:
    """Widen a resolved date to "<count> <unit> before/after" it when the query says so."""
    relation = _RELATION.search(query, lower, start)
    if relation is None:
        return start, first, last
    count = _count(relation["count"]) if relation["count"] else 1
    unit = relation["unit"].lower()
    try:
        if relation["direction"].lower() in ("after", "following"):
            first, last = unit_span(unit, shifted(last, unit, count))
        else:
            first, last = unit_span(unit, shifted(first, unit, -count))
    except (ValueError, OverflowError):
        return start, first, last
    return relation.start(), first, last
