"""yamlfmt must emit YAML that loads back to exactly the value written."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from vault_engine.format import yamlfmt

LOADERS: list[Any] = [yaml.SafeLoader, yaml.CSafeLoader]
PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Fragments that have a meaning to a YAML scanner or resolver somewhere.
TRICKY = [
    ": ", ":", " #", "#", "- ", "-", "---", "...", "? ", "?", ",", "[", "]", "{", "}", "&a", "*a", "!x", "!!str",
    "|", ">", "%", "@", "`", "'", '"', "\\", "\t", "\n", "\r\n", "\r", "\x00", "\x07", "\x1b", "\x7f", "\x85",
    "\u2028", "\u2029", "\ufeff", "\ufffe", "\uffff", "\u00a0", "\u3000", " ", "  ", "<<", "=", "~",
    "null", "Null", "NULL", "true", "True", "FALSE", "yes", "No", "on", "OFF", "y", "n",
    "0", "1", "-1", "+1", "007", "0o17", "0x1F", "0b101", "1_000", "1e3", "1.0e+3", ".5", "+.5", "1.", "12:30",
    "190:20:30", ".inf", "-.Inf", ".NaN", "2026-11-20", "2026-11-20T09:14:00Z", "2026-1-2 3:04:05 +01:00",
    "é", "日本語", "😀", "\U0010fffd", "a", "b c",
]
tricky_text = st.lists(st.sampled_from(TRICKY), max_size=6).map("".join)
texts = st.one_of(st.text(), tricky_text, st.sampled_from(TRICKY))
# st.text() leaves out surrogates, which are not text YAML (or UTF-8) can carry.


def load(document: str, loader: Any) -> Any:
    return yaml.load(document, Loader=loader)


@pytest.mark.parametrize("loader", LOADERS, ids=["python", "libyaml"])
@PROPERTY
@given(text=texts)
@example(text="a\u2028b")
@example(text="a \u2029 b")
@example(text="x\x85y")
@example(text="k" * 1200)
def test_scalar_text_round_trips(loader: Any, text: str) -> None:
    emitted = yamlfmt.scalar(text)
    assert "\n" not in emitted and "\r" not in emitted
    assert load("k: " + emitted, loader)["k"] == text


@pytest.mark.parametrize("loader", LOADERS, ids=["python", "libyaml"])
@PROPERTY
@given(items=st.lists(texts, max_size=8))
def test_flow_list_of_text_round_trips(loader: Any, items: list[str]) -> None:
    emitted = yamlfmt.flow(items)
    assert "\n" not in emitted
    assert load("k: " + emitted, loader)["k"] == items


@pytest.mark.parametrize("loader", LOADERS, ids=["python", "libyaml"])
@PROPERTY
@given(mapping=st.dictionaries(texts, st.one_of(texts, st.lists(texts, max_size=3)), max_size=5))
def test_flow_mapping_of_text_round_trips(loader: Any, mapping: dict[str, Any]) -> None:
    assert load("k: " + yamlfmt.flow(mapping), loader)["k"] == mapping


@pytest.mark.parametrize("loader", LOADERS, ids=["python", "libyaml"])
@PROPERTY
@given(items=st.lists(texts, min_size=1, max_size=12), pad=st.integers(min_value=0, max_value=3))
def test_long_lists_become_block_lists_and_round_trip(loader: Any, items: list[str], pad: int) -> None:
    items = [*items, "x" * 110] + ["padding"] * pad  # always wider than MAX_FLOW_WIDTH
    emitted = yamlfmt.entry("tags", items)
    lines = emitted.split("\n")
    assert lines[0] == "tags:"
    assert len(lines) == len(items) + 1
    assert all(line.startswith("  - ") for line in lines[1:])
    assert load(emitted + "\nafter: 1", loader) == {"tags": items, "after": 1}


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_block_list_uses_the_requested_newline(newline: str) -> None:
    items = [f"item-{i:02d}" for i in range(20)]
    emitted = yamlfmt.entry("paths", items, newline)
    assert emitted == "paths:" + "".join(f"{newline}  - {item}" for item in items)
    assert yaml.safe_load(emitted) == {"paths": items}


def test_short_lists_stay_in_flow_style() -> None:
    assert yamlfmt.entry("tags", ["testing", "python"]) == "tags: [testing, python]"
    assert yamlfmt.entry("tags", []) == "tags: []"
    wide = ["y" * 200]
    assert yamlfmt.entry("tags", wide) == "tags:\n  - " + "y" * 200


@pytest.mark.parametrize("loader", LOADERS, ids=["python", "libyaml"])
@PROPERTY
@given(key=texts.filter(bool), value=st.one_of(texts, st.integers(), st.lists(texts, max_size=3)))
def test_entry_with_any_key_round_trips(loader: Any, key: str, value: Any) -> None:
    assert load(yamlfmt.entry(key, value) + "\nzz_after: 1", loader) == {key: value, "zz_after": 1}


@pytest.mark.parametrize("loader", LOADERS, ids=["python", "libyaml"])
def test_keys_too_long_for_an_implicit_key_round_trip(loader: Any) -> None:
    key = "k" * 1500
    assert load(yamlfmt.entry(key, "v"), loader) == {key: "v"}
    assert load(yamlfmt.entry(key, ["z" * 80] * 3), loader) == {key: ["z" * 80] * 3}
    assert load("k: " + yamlfmt.flow({key: 1, "b": 2}), loader) == {"k": {key: 1, "b": 2}}


scalar_values = st.one_of(
    texts,
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
    st.dates(),
    st.datetimes(timezones=st.just(UTC)),
    st.datetimes(),
)
nested = st.recursive(
    scalar_values,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(texts, st.integers(), st.booleans(), st.none(), st.dates()), inner, max_size=4),
    ),
    max_leaves=10,
)


@pytest.mark.parametrize("loader", LOADERS, ids=["python", "libyaml"])
@PROPERTY
@given(value=nested)
def test_nested_values_round_trip(loader: Any, value: Any) -> None:
    assert load(yamlfmt.entry("k", value), loader) == {"k": value}


@PROPERTY
@given(value=nested)
def test_emission_is_deterministic(value: Any) -> None:
    assert yamlfmt.entry("k", value) == yamlfmt.entry("k", value)
    assert yamlfmt.flow(value) == yamlfmt.flow(value)


@pytest.mark.parametrize("loader", LOADERS, ids=["python", "libyaml"])
@PROPERTY
@given(number=st.floats(allow_nan=False))
def test_floats_round_trip(loader: Any, number: float) -> None:
    loaded = load("k: " + yamlfmt.scalar(number), loader)["k"]
    assert isinstance(loaded, float)
    assert loaded == number
    assert math.copysign(1.0, loaded) == math.copysign(1.0, number)


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        (1e-05, "1.0e-05"),
        (1e20, "1.0e+20"),
        (1.5e20, "1.5e+20"),
        (1e16, "1.0e+16"),
        (0.1, "0.1"),
        (-2.0, "-2.0"),
        (float("inf"), ".inf"),
        (float("-inf"), "-.inf"),
        (float("nan"), ".nan"),
    ],
)
def test_float_spelling(number: float, expected: str) -> None:
    assert yamlfmt.scalar(number) == expected


def test_nan_loads_back_as_nan() -> None:
    for loader in LOADERS:
        loaded = load("k: " + yamlfmt.scalar(float("nan")), loader)["k"]
        assert isinstance(loaded, float) and math.isnan(loaded)


@pytest.mark.parametrize("loader", LOADERS, ids=["python", "libyaml"])
@PROPERTY
@given(number=st.integers())
def test_ints_round_trip(loader: Any, number: int) -> None:
    loaded = load("k: " + yamlfmt.scalar(number), loader)["k"]
    assert type(loaded) is int and loaded == number


@pytest.mark.parametrize("value", [True, False, None])
def test_bool_and_null_round_trip(value: bool | None) -> None:
    for loader in LOADERS:
        assert load("k: " + yamlfmt.scalar(value), loader)["k"] is value


@pytest.mark.parametrize("loader", LOADERS, ids=["python", "libyaml"])
@PROPERTY
@given(moment=st.datetimes(timezones=st.just(UTC)))
def test_aware_utc_datetimes_round_trip(loader: Any, moment: datetime) -> None:
    emitted = yamlfmt.scalar(moment)
    assert emitted.endswith("Z")
    loaded = load("k: " + emitted, loader)["k"]
    assert loaded == moment and loaded.utcoffset() == timedelta(0)


@pytest.mark.parametrize("loader", LOADERS, ids=["python", "libyaml"])
@PROPERTY
@given(moment=st.datetimes())
def test_naive_datetimes_round_trip_as_naive(loader: Any, moment: datetime) -> None:
    loaded = load("k: " + yamlfmt.scalar(moment), loader)["k"]
    assert loaded.tzinfo is None and loaded == moment


@pytest.mark.parametrize("loader", LOADERS, ids=["python", "libyaml"])
@PROPERTY
@given(day=st.dates())
def test_dates_round_trip(loader: Any, day: date) -> None:
    loaded = load("k: " + yamlfmt.scalar(day), loader)["k"]
    assert type(loaded) is date and loaded == day


def test_other_time_zones_are_written_in_utc() -> None:
    moment = datetime(2026, 11, 20, 10, 14, 0, tzinfo=timezone(timedelta(hours=1)))
    assert yamlfmt.scalar(moment) == "2026-11-20T09:14:00Z"
    assert yaml.safe_load("k: " + yamlfmt.scalar(moment))["k"] == moment


@pytest.mark.parametrize(
    ("moment", "expected"),
    [
        (datetime(2026, 11, 20, 9, 14, tzinfo=UTC), "2026-11-20T09:14:00Z"),
        (datetime(2026, 11, 20, 9, 14, 0, 500000, tzinfo=UTC), "2026-11-20T09:14:00.5Z"),
        (datetime(2026, 11, 20, 9, 14, 0, 123, tzinfo=UTC), "2026-11-20T09:14:00.000123Z"),
        (datetime(5, 1, 2, 3, 4, 5, tzinfo=UTC), "0005-01-02T03:04:05Z"),
        (datetime(2026, 11, 20, 9, 14), "2026-11-20T09:14:00Z"),  # naive is taken as UTC
    ],
)
def test_format_datetime(moment: datetime, expected: str) -> None:
    assert yamlfmt.format_datetime(moment) == expected


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("testing", True),
        ("Use pytest fixtures, not setUp", True),
        ("github.com/acme/api", True),
        ("tests/**", True),
        ("yes", False),
        ("1.0", False),
        ("2026-11-20", False),
        ("a: b", False),
        ("a #b", False),
        ("", False),
        (" lead", False),
        ("trail ", False),
    ],
)
def test_plain_where_unambiguous_quoted_otherwise(text: str, plain: bool) -> None:
    emitted = yamlfmt.scalar(text)
    assert (emitted == text) is plain
    if not plain:
        assert emitted.startswith('"') and emitted.endswith('"')


@pytest.mark.parametrize("text", ["a,b", "a[b", "a]b", "a{b", "a}b", "a?b", "why?"])
def test_flow_indicators_are_quoted_only_in_flow_context(text: str) -> None:
    assert yamlfmt.scalar(text) == text
    assert yamlfmt.scalar(text, flow=True).startswith('"')
    assert yaml.safe_load("k: " + yamlfmt.flow([text])) == {"k": [text]}


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85", "\x7f", "\ufeff", "\x00", "\x1b"])
def test_line_separators_and_controls_are_escaped(char: str) -> None:
    emitted = yamlfmt.scalar(f"a {char} b")
    assert char not in emitted
    assert yaml.safe_load("k: " + emitted)["k"] == f"a {char} b"


def test_unsupported_values_are_refused() -> None:
    with pytest.raises(TypeError):
        yamlfmt.scalar(b"bytes")
    with pytest.raises(TypeError):
        yamlfmt.flow([{1, 2}])


def test_a_moment_with_no_utc_form_keeps_its_offset() -> None:
    from datetime import datetime, timedelta, timezone

    from vault_engine.format.yamlfmt import format_datetime

    late = datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(hours=-10)))
    assert format_datetime(late) == "9999-12-31T23:59:59-10:00"
    assert format_datetime(datetime(2026, 12, 1, 4, 0, tzinfo=timezone(timedelta(hours=2)))) == "2026-12-01T02:00:00Z"
