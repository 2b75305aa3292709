"""The fast header reader must agree with PyYAML wherever it answers."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_engine.format import yamlfmt, yamlsubset
from vault_engine.format.memory import Memory, render_header

texts = st.text(max_size=40)
scalars = st.one_of(
    texts,
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.booleans(),
    st.none(),
    st.datetimes(timezones=st.just(UTC)).map(lambda d: d.replace(microsecond=0)),
    st.dates(),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6), st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _yaml(header: str) -> object:
    return yaml.safe_load(header)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.from_regex(r"[a-z][a-z_]{0,10}", fullmatch=True), values, min_size=1, max_size=6))
def test_engine_written_headers_read_as_yaml_reads_them(mapping: dict[str, object]) -> None:
    header = "\n".join(yamlfmt.entry(k, v) for k, v in mapping.items())
    fast = yamlsubset.load(header)
    if fast is not None:
        assert fast == _yaml(header)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab: -[]{},\"'#\n\\tx0123.TZ&*!|>%@`?")), max_size=60))
def test_arbitrary_text_is_either_refused_or_read_exactly(header: str) -> None:
    fast = yamlsubset.load(header)
    if fast is None:
        return
    try:
        expected = yaml.safe_load(header)
    except yaml.YAMLError:
        pytest.fail(f"fast reader accepted text YAML rejects: {header!r}")
    assert fast == expected


@settings(max_examples=200, deadline=None)
@given(
    title=st.text(min_size=1, max_size=60).filter(lambda s: s.strip()),
    summary=st.text(max_size=80),
    tags=st.lists(st.text(min_size=1, max_size=12), max_size=8),
    importance=st.floats(min_value=0, max_value=1),
)
def test_rendered_memories_round_trip_through_the_fast_reader(
    title: str, summary: str, tags: list[str], importance: float
) -> None:
    memory = Memory(
        id="m-01jdx8k3q7r2v5w9t0a1b2c3d4", title=title, type="fact", summary=summary, tags=tuple(tags),
        importance=importance, created=datetime(2026, 11, 20, 9, 14, tzinfo=UTC), occurred_at=date(2026, 11, 1),
        evidence=({"event": "e-01", "quote": summary},),
    )
    header = render_header(memory)
    fast = yamlsubset.load(header)
    assert fast is None or fast == _yaml(header)


def test_typical_engine_header_takes_the_fast_path() -> None:
    memory = Memory(
        id="m-01jdx8k3q7r2v5w9t0a1b2c3d4", title="Use pytest fixtures, not setUp", type="collaboration-policy",
        scope="project", project="github.com/acme/api", paths=("tests/**", "src/**/*.py"),
        summary="Tests use pytest fixtures from conftest.py, never unittest setUp.",
        trigger="When I am about to write or change tests in this repository", tags=("testing", "python"),
        created=datetime(2026, 11, 20, 9, 14, tzinfo=UTC),
    )
    header = render_header(memory)
    assert yamlsubset.load(header) == _yaml(header)
    assert yamlsubset.load(header) is not None


@pytest.mark.parametrize(
    "header",
    [
        "title: yes",  # YAML 1.1 boolean
        "title: a # comment",
        "title: 'single'",
        "a: &x 1\nb: *x",
        "title: |\n  block",
        "x: 0x1f",
        "x: 1_000",
        "x: .inf",
        "x: 2026-11-20 09:14:00",
        "dup: 1\ndup: 2",
        "x: \"\\x41\"",
        "on: 1",
        "null: 1",
    ],
)
def test_outside_the_subset_falls_back(header: str) -> None:
    assert yamlsubset.load(header) is None
