"""Parsing and rendering memory files: untouched files stay byte-for-byte, changed ones become canonical."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault_engine.format import memory
from vault_engine.format.memory import ENUMS, KEY_ORDER, OUTCOMES, Memory, ParsedFile, parse, render

# ---------------------------------------------------------------- corpus


@dataclass(frozen=True)
class Case:
    name: str
    head: str  # everything up to and including the closing fence line
    body: str
    bom: bool = False

    @property
    def text(self) -> str:
        return ("\ufeff" if self.bom else "") + self.head + self.body

    @property
    def newline(self) -> str:
        return "\r\n" if self.head.startswith("---\r\n") else "\n"


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


SPEC_EXAMPLE = """\
---
id: m-01jdx8k3q7r2v5w9t0a1b2c3d4      # stable, never reused; survives renames and moves
title: Use pytest fixtures, not setUp
type: collaboration-policy            # core-profile | collaboration-policy | fact | procedure | episode
class: collaboration-habit             # user-fact | user-preference | collaboration-habit | project-convention
scope: project                         # global | project
project: github.com/acme/api           # stable project key; required when scope is project
paths: [tests/**, src/**/*.py]         # selectors: where it applies (globs)
tasks: [test, refactor]                # selectors: which kinds of task
operations: [edit]                     # selectors: which operations
phases: [build]                        # selectors: which phase (plan, build, review, release, ...)
authority: explicit                    # explicit (the user said so) | inferred (the system learned it)
trust: learned                         # system | learned | external
lifecycle: proven                      # trial | proven | superseded
recall: active                         # passive (always in context) | active (on demand) | both
tier: hot                              # hot (resident, budgeted) | cold (searchable)
importance: 0.8                        # 0..1
summary: Tests use pytest fixtures from conftest.py, never unittest setUp.
trigger: When I am about to write or change tests in this repository
tags: [testing, python]
links: ["[[pytest-conftest-layout]]"]  # Obsidian wikilinks; the engine resolves them to ids
supersedes: m-01jd...                  # optional
superseded_by: m-01je...               # optional, set when lifecycle becomes superseded
source: user                           # user | conversation:<session> | document:<uri> | tool:<name>
evidence: [{event: e-01, quote: "the user said so"}]  # minimal evidence
proof_count: 1
applied: {used-successfully: 2, ignored: 1, overridden: 0, corrected: 0, contributed-to-failure: 0}
last_applied: 2026-11-28T10:02:11Z
occurred_at: 2026-11-20                # when it was true in the world (optional)
created: 2026-11-20T09:14:00Z
updated: 2026-11-28T10:02:11Z
---
"""
SPEC_BODY = """\
The body is the memory itself, in full (raw content is never truncated).

## Detail
A 3-8 sentence detailed summary, generated on first request and cached here [S9].
"""

ENGINE_WRITTEN = """\
---
id: m-01jdx8k3q7r2v5w9t0a1b2c3d5
title: Engine written
type: fact
scope: global
authority: inferred
trust: learned
lifecycle: trial
recall: active
tier: cold
importance: 0.5
summary: "Quoted: because of the colon"
trigger: ""
tags: [a, b]
created: 2026-11-20T09:14:00Z
updated: 2026-11-20T09:14:00Z
---
"""

LONG_PATHS = "".join(f"\n  - src/package_{n:02d}/**/*.py" for n in range(12))

UNKNOWN_KEYS = """\
---
zeta: first unknown
id: unknown-keys
meta: {owner: alice, n: 3, nested: {deep: [1, 2, {x: y}]}}
title: Unknown keys are kept
custom:
  nested:
    - a
    - b: 1
      c: [true, null, 1.5]
  when: 2026-01-02
  moment: 2026-01-02 03:04:05
type: procedure
alpha: [z, y, x]
"quoted key": value
---
"""

COMMENTS_AND_QUOTES = """\
---
# A hand-written header with comments everywhere.
id: 'quoted-id'  # single quoted
title: "It's \\"quoted\\" — with a dash"
type: fact

# blank line above, comment here
summary: 'It''s single quoted'
trigger: >
  folded text
  over two lines
tags:   [ spaced ,   list ]   # odd spacing
custom: |
  literal block
    keeps indentation
importance: 0.90
proof_count: 0x10
---
"""

ENUM_CASES = [
    Case(
        f"enum-{key}-{value}",
        "---\n"
        + "id: enum-case\ntitle: Enum case\n"
        + ("" if key == "type" else "type: fact\n")
        + ("project: github.com/acme/api\n" if key == "scope" else "")
        + f"{key}: {value}\n---\n",
        f"Body for {key}={value}.\n",
    )
    for key, values in ENUMS.items()
    for value in values
]

CORPUS = [
    Case("spec-example", SPEC_EXAMPLE, SPEC_BODY),
    Case("engine-written", ENGINE_WRITTEN, "Body line.\n"),
    Case(
        "unicode",
        "---\nid: unicode-1\ntitle: 日本語のメモ 😀 — Ünïcödé\ntype: fact\n"
        "summary: 中文摘要 🚀\ntags: [日本, émoji😀]\n---\n",
        "本文はここにあります。\n絵文字 👩‍👩‍👧 and ZWJ, RTL: שלום, combining: e\u0301\n",
    ),
    Case(
        "crlf", crlf("---\nid: crlf-1\ntitle: Windows file\ntype: fact\ntags: [a]\n---\n"), crlf("Line one\nLine two\n")
    ),
    Case("bom", "---\nid: bom-1\ntitle: With BOM\ntype: fact\n---\n", "Body.\n", bom=True),
    Case("bom-crlf", crlf("---\nid: bom-2\ntitle: BOM and CRLF\ntype: note\n---\n"), "Body\r\n", bom=True),
    Case("empty-body", "---\nid: empty-1\ntitle: Empty body\ntype: fact\n---\n", ""),
    Case("no-final-newline", "---\nid: nofinal-1\ntitle: No final newline\ntype: fact\n---\n", "last line"),
    Case("fence-at-eof", "---\nid: eof-1\ntitle: Fence at EOF\ntype: fact\n---", ""),
    Case("fence-trailing-spaces", "---  \nid: sp-1\ntitle: Spaces after fences\ntype: fact\n--- \t\n", "Body\n"),
    Case(
        "body-with-dashes",
        "---\nid: dashes-1\ntitle: Body has rules\ntype: fact\n---\n",
        "Intro\n\n---\n\nid: not-a-key\n---\nAfter the rule\n---",
    ),
    Case("body-starts-with-fence", "---\nid: dashes-2\ntitle: T\ntype: fact\n---\n", "---\nstill body\n---\n"),
    Case("mixed-newlines-body", "---\nid: mixed-1\ntitle: Mixed\ntype: fact\n---\n", "lf\ncrlf\r\ncr\rend"),
    Case("long-block-list", f"---\nid: long-1\ntitle: Long lists\ntype: fact\npaths:{LONG_PATHS}\n---\n", "Body\n"),
    Case(
        "long-flow-list",
        "---\nid: long-2\ntitle: Long flow list\ntype: fact\ntags: ["
        + ", ".join(f"tag-number-{n}" for n in range(15))
        + "]\n---\n",
        "Body\n",
    ),
    Case(
        "dates",
        "---\nid: dates-1\ntitle: Dates\ntype: episode\ncreated: 2026-11-20\n"
        "updated: 2026-11-20 10:11:12.5+02:00\nlast_applied: '2026-11-28T10:02:11Z'\n"
        "occurred_at: 2026-11-19\nexpires_at: 2026-12-20T00:00:00.000001Z\n---\n",
        "Body\n",
    ),
    Case("occurred-at-datetime", "---\nid: d2\ntitle: T\ntype: fact\noccurred_at: 2026-11-19T08:00:00Z\n---\n", "x"),
    Case("unknown-keys", UNKNOWN_KEYS, "Body\n"),
    Case("comments-and-quotes", COMMENTS_AND_QUOTES, "Body\n"),
    Case(
        "scrambled-order",
        "---\ntags: [x]\ntype: fact\nupdated: 2026-11-20T09:14:00Z\ntitle: Scrambled\n"
        "tier: hot\nid: scrambled-1\n---\n",
        "Body\n",
    ),
    Case(
        "trashed",
        "---\nid: trashed-1\ntitle: In the trash\ntype: fact\ntrashed_at: 2026-11-20T09:14:00Z\n"
        "expires_at: 2026-12-20T09:14:00Z\ntrashed_from: memories/global/x.md\ntrash_reason: forget\n---\n",
        "Body\n",
    ),
    *ENUM_CASES,
]
IDS = [case.name for case in CORPUS]


def header_keys(text: str) -> list[str]:
    """The top-level keys of a rendered file's header, in order."""
    content = text.lstrip("\ufeff")
    header, _, _ = memory.split(content)
    assert header is not None
    loaded = yaml.safe_load(header)
    assert isinstance(loaded, dict)
    return [str(k) for k in loaded]


def modify(m: Memory) -> Memory:
    return m.replace(
        tier="hot" if m.tier == "cold" else "cold",
        tags=(*m.tags, "added"),
        updated=datetime(2026, 12, 1, 8, 30, tzinfo=UTC),
        applied={**m.applied, "ignored": m.applied["ignored"] + 1},
    )


# ---------------------------------------------------------------- (a) untouched files


@pytest.mark.parametrize("case", CORPUS, ids=IDS)
def test_corpus_parses_to_the_expected_body(case: Case) -> None:
    parsed = parse(case.text, f"memories/{case.name}.md")
    assert not parsed.memory.plain
    assert parsed.memory.body == case.body
    assert parsed.text == case.text
    assert parsed.bom is case.bom
    assert parsed.newline == case.newline


@pytest.mark.parametrize("case", CORPUS, ids=IDS)
def test_untouched_file_renders_byte_for_byte(case: Case) -> None:
    first = parse(case.text, "m.md")
    assert render(first.memory, first) == case.text
    # A fresh parse (a new read of the same file) is the same value, so nothing is rewritten.
    second = parse(case.text, "m.md")
    assert second.memory == first.memory
    assert render(second.memory, first) == case.text
    # Setting a field to the value it already has is not a change either.
    assert render(first.memory.replace(tier=first.memory.tier, tags=first.memory.tags), first) == case.text


def test_spec_example_values() -> None:
    m = parse(SPEC_EXAMPLE + SPEC_BODY, "m.md").memory
    assert m.id == "m-01jdx8k3q7r2v5w9t0a1b2c3d4"
    assert m.type == "collaboration-policy" and m.klass == "collaboration-habit"
    assert m.scope == "project" and m.project == "github.com/acme/api"
    assert m.paths == ("tests/**", "src/**/*.py") and m.links == ("[[pytest-conftest-layout]]",)
    assert m.importance == 0.8 and m.tier == "hot" and m.lifecycle == "proven"
    assert m.evidence == ({"event": "e-01", "quote": "the user said so"},)
    assert m.applied == {"used-successfully": 2, "ignored": 1, "overridden": 0, "corrected": 0,
                         "contributed-to-failure": 0}
    assert m.last_applied == datetime(2026, 11, 28, 10, 2, 11, tzinfo=UTC)
    assert m.occurred_at == date(2026, 11, 20)
    assert m.extra == {}


def test_unknown_keys_are_kept_with_their_values_and_order() -> None:
    m = parse(UNKNOWN_KEYS + "Body\n", "m.md").memory
    assert list(m.extra) == ["zeta", "meta", "custom", "alpha", "quoted key"]
    assert m.extra["meta"] == {"owner": "alice", "n": 3, "nested": {"deep": [1, 2, {"x": "y"}]}}
    assert m.extra["custom"] == {
        "nested": ["a", {"b": 1, "c": [True, None, 1.5]}],
        "when": date(2026, 1, 2),
        "moment": datetime(2026, 1, 2, 3, 4, 5),
    }


def test_comments_and_quotes_are_read() -> None:
    m = parse(COMMENTS_AND_QUOTES + "Body\n", "m.md").memory
    assert m.id == "quoted-id" and m.title == 'It\'s "quoted" — with a dash'
    assert m.summary == "It's single quoted" and m.trigger == "folded text over two lines\n"
    assert m.tags == ("spaced", "list") and m.importance == 0.9 and m.proof_count == 16
    assert m.extra == {"custom": "literal block\n  keeps indentation\n"}


# ---------------------------------------------------------------- (b) modified memories are canonical


@pytest.mark.parametrize("case", CORPUS, ids=IDS)
def test_modified_memory_renders_canonically(case: Case) -> None:
    parsed = parse(case.text, "m.md")
    changed = modify(parsed.memory)
    text = render(changed, parsed)
    assert text != case.text
    keys = header_keys(text)
    known = [k for k in keys if k in KEY_ORDER]
    assert known == [k for k in KEY_ORDER if k in known]  # the one fixed order
    assert keys == known + list(parsed.memory.extra)  # unknown keys after, in their original order
    assert set(keys) >= memory.ALWAYS_WRITTEN
    reparsed = parse(text, "m.md")
    assert reparsed.memory == changed
    assert reparsed.bom is case.bom and reparsed.newline == case.newline


def test_canonical_rendering_of_the_spec_example() -> None:
    parsed = parse(SPEC_EXAMPLE + SPEC_BODY, "m.md")
    text = render(parsed.memory.replace(tier="cold"), parsed)
    assert text == (
        "---\n"
        "id: m-01jdx8k3q7r2v5w9t0a1b2c3d4\n"
        "title: Use pytest fixtures, not setUp\n"
        "type: collaboration-policy\n"
        "class: collaboration-habit\n"
        "scope: project\n"
        "project: github.com/acme/api\n"
        "paths: [tests/**, src/**/*.py]\n"
        "tasks: [test, refactor]\n"
        "operations: [edit]\n"
        "phases: [build]\n"
        "authority: explicit\n"
        "trust: learned\n"
        "lifecycle: proven\n"
        "recall: active\n"
        "tier: cold\n"
        "importance: 0.8\n"
        "summary: Tests use pytest fixtures from conftest.py, never unittest setUp.\n"
        "trigger: When I am about to write or change tests in this repository\n"
        "tags: [testing, python]\n"
        'links: ["[[pytest-conftest-layout]]"]\n'
        "supersedes: m-01jd...\n"
        "superseded_by: m-01je...\n"
        'evidence: [{event: e-01, quote: the user said so}]\n'
        "applied: {used-successfully: 2, ignored: 1, overridden: 0, corrected: 0, contributed-to-failure: 0}\n"
        "last_applied: 2026-11-28T10:02:11Z\n"
        "occurred_at: 2026-11-20\n"
        "created: 2026-11-20T09:14:00Z\n"
        "updated: 2026-11-28T10:02:11Z\n"
        "---\n" + SPEC_BODY
    )


def test_defaults_are_omitted_except_the_always_written_keys() -> None:
    m = Memory(id="m-x", title="T", type="fact")
    assert render(m) == (
        "---\nid: m-x\ntitle: T\ntype: fact\nscope: global\nauthority: inferred\ntrust: learned\n"
        'lifecycle: trial\nrecall: active\ntier: cold\nimportance: 0.5\nsummary: ""\ntrigger: ""\ntags: []\n---\n'
    )


def test_long_lists_switch_to_block_style() -> None:
    m = Memory(id="m-x", title="T", type="fact", paths=tuple(f"src/module_{n:02d}/**" for n in range(10)))
    text = render(m)
    assert "paths:\n  - src/module_00/**\n  - src/module_01/**\n" in text
    assert parse(text, "m.md").memory == m


def test_rendering_without_original_uses_lf_and_no_bom() -> None:
    parsed = parse("\ufeff" + crlf("---\nid: x\ntitle: T\ntype: fact\n---\nbody\n"), "m.md")
    text = render(parsed.memory.replace(tier="hot"))
    assert not text.startswith("\ufeff") and "\r\n---\r\n" not in text.split("body")[0]
    assert text.endswith("---\nbody\r\n")


def test_project_is_written_when_scope_is_project() -> None:
    m = Memory(id="m-x", title="T", type="fact", scope="project", project="github.com/acme/api")
    assert "scope: project\nproject: github.com/acme/api\n" in render(m)
    global_with_project = Memory(id="m-x", title="T", type="fact", project="kept")
    assert "project: kept\n" in render(global_with_project)
    assert parse(render(global_with_project), "m.md").memory == global_with_project


# ---------------------------------------------------------------- (c) determinism


@pytest.mark.parametrize("case", CORPUS, ids=IDS)
def test_rendering_is_deterministic_and_a_fixed_point(case: Case) -> None:
    parsed = parse(case.text, "m.md")
    changed = modify(parsed.memory)
    once = render(changed, parsed)
    assert render(changed, parsed) == once
    assert render(modify(parse(case.text, "m.md").memory), parse(case.text, "m.md")) == once
    again = parse(once, "m.md")
    assert render(again.memory, again) == once
    canonical = render(changed)
    assert render(parse(canonical, "m.md").memory) == canonical


# ---------------------------------------------------------------- (d) the body is kept byte for byte


@pytest.mark.parametrize("case", CORPUS, ids=IDS)
def test_body_survives_frontmatter_changes(case: Case) -> None:
    parsed = parse(case.text, "m.md")
    m = parsed.memory
    for change in (
        {"tier": "hot"},
        {"title": "A new title\nwith a line break"},
        {"summary": "---\nnot a fence"},
        {"tags": tuple(f"tag-{n}" for n in range(30))},
        {"lifecycle": "superseded", "superseded_by": "m-next"},
        {"extra": {**m.extra, "added": {"k": ["---", "v"]}}},
        {"trashed_at": datetime(2026, 1, 1, tzinfo=UTC), "trashed_from": "memories/x.md"},
    ):
        text = render(m.replace(**change), parsed)
        assert text.endswith(case.body) if case.body else text.endswith(("---" + case.newline, "---"))
        reparsed = parse(text, "m.md")
        assert reparsed.memory.body == case.body
        assert reparsed.memory == m.replace(**change)
        head = text[: len(text) - len(case.body)]
        if case.newline == "\r\n":
            assert "\n" not in head.replace("\r\n", "")
        else:
            assert "\r" not in head


def test_crlf_body_is_not_normalised() -> None:
    body = "first\r\nsecond\r\n\r\n---\r\nthird"
    parsed = parse(crlf("---\nid: x\ntitle: T\ntype: fact\n---\n") + body, "m.md")
    text = render(parsed.memory.replace(tags=("a",)), parsed)
    assert text == crlf("---\nid: x\ntitle: T\ntype: fact\nscope: global\nauthority: inferred\ntrust: learned\n"
                        'lifecycle: trial\nrecall: active\ntier: cold\nimportance: 0.5\nsummary: ""\n'
                        'trigger: ""\ntags: [a]\n---\n') + body


# ---------------------------------------------------------------- generated memories


def _text(min_size: int = 0) -> st.SearchStrategy[str]:
    return st.text(max_size=40, min_size=min_size)


plain_scalars = st.one_of(
    _text(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
    st.dates(),
    st.datetimes(timezones=st.just(UTC)),
    st.datetimes(),
)
plain_values = st.recursive(
    plain_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(_text(), st.integers(), st.dates()), inner, max_size=3),
    ),
    max_leaves=8,
)
moments = st.datetimes(timezones=st.sampled_from([UTC, timezone(timedelta(hours=-5, minutes=-30))]))
text_lists = st.lists(_text(), max_size=14).map(tuple)
ids = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,30}", fullmatch=True).filter(lambda s: ".." not in s)


@st.composite
def memories(draw: st.DrawFn) -> Memory:
    scope = draw(st.sampled_from(memory.SCOPES))
    project = draw(_text(1).filter(str.strip)) if scope == "project" else draw(st.none() | _text())
    extra_keys = _text().filter(lambda k: k not in KEY_ORDER)
    return Memory(
        id=draw(ids),
        title=draw(_text(1).filter(str.strip)),
        type=draw(st.sampled_from(memory.TYPES)),
        body=draw(st.text(max_size=200)),
        klass=draw(st.none() | st.sampled_from(memory.CLASSES)),
        scope=scope,
        project=project,
        paths=draw(text_lists),
        tasks=draw(text_lists),
        operations=draw(text_lists),
        phases=draw(text_lists),
        authority=draw(st.sampled_from(memory.AUTHORITIES)),
        trust=draw(st.sampled_from(memory.TRUSTS)),
        lifecycle=draw(st.sampled_from(memory.LIFECYCLES)),
        recall=draw(st.sampled_from(memory.RECALLS)),
        tier=draw(st.sampled_from(memory.TIERS)),
        importance=draw(st.floats(min_value=0, max_value=1)),
        summary=draw(_text()),
        trigger=draw(_text()),
        tags=draw(text_lists),
        links=draw(text_lists),
        supersedes=draw(st.none() | _text()),
        superseded_by=draw(st.none() | _text()),
        source=draw(_text()),
        evidence=tuple(draw(st.lists(st.dictionaries(_text(), plain_values, max_size=3), max_size=3))),
        proof_count=draw(st.integers(min_value=0, max_value=10**6)),
        applied=draw(st.fixed_dictionaries({k: st.integers(min_value=0, max_value=999) for k in OUTCOMES})),
        last_applied=draw(st.none() | moments),
        occurred_at=draw(st.none() | st.dates() | moments),
        created=draw(st.none() | moments),
        updated=draw(st.none() | moments),
        trashed_at=draw(st.none() | moments),
        expires_at=draw(st.none() | moments),
        trashed_from=draw(st.none() | _text()),
        extra=draw(st.dictionaries(extra_keys, plain_values, max_size=4)),
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(m=memories(), newline=st.sampled_from(["\n", "\r\n"]), bom=st.booleans())
def test_generated_memories_round_trip(m: Memory, newline: str, bom: bool) -> None:
    text = render(m)
    reparsed = parse(text, "m.md")
    assert reparsed.memory == m
    assert render(reparsed.memory) == text  # a fixed point
    assert render(m) == text  # deterministic
    keys = header_keys(text)
    assert keys == [k for k in KEY_ORDER if k in keys] + list(m.extra)
    # Through an original file with another newline style and a BOM, the body still survives.
    original = ParsedFile(m.replace(tier="hot" if m.tier == "cold" else "cold"), "unused", newline, bom)
    styled = render(m, original)
    assert styled.startswith("\ufeff" if bom else "---")
    again = parse(styled, "m.md")
    assert again.memory == m and again.bom is bom and again.newline == newline
    assert styled.endswith(m.body)


# ---------------------------------------------------------------- split and helpers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\na: 1\n---\nbody", ("a: 1", "body", "\n")),
        ("---\r\na: 1\r\nb: 2\r\n---\r\nbody\r\n", ("a: 1\r\nb: 2", "body\r\n", "\r\n")),
        ("---\n---\nbody", ("", "body", "\n")),
        ("---\na: 1\n---", ("a: 1", "", "\n")),
        ("---\na: 1\n\n---\n", ("a: 1\n", "", "\n")),
        ("no frontmatter\n", (None, "no frontmatter\n", "\n")),
        ("no frontmatter\r\n", (None, "no frontmatter\r\n", "\r\n")),
        ("----\na: 1\n---\n", (None, "----\na: 1\n---\n", "\n")),
        (" ---\na: 1\n---\n", (None, " ---\na: 1\n---\n", "\n")),
        ("---\na: ---\n--- \nb", ("a: ---", "b", "\n")),
    ],
)
def test_split(text: str, expected: tuple[str | None, str, str]) -> None:
    assert memory.split(text) == expected


def test_fields_and_to_json() -> None:
    m = Memory(
        id="m-x", title="T", type="fact", created=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        occurred_at=date(2026, 1, 1), tags=("a",), extra={"when": datetime(2026, 1, 1, tzinfo=UTC), "n": (1, 2)},
    )
    fields = m.fields()
    assert fields["tags"] == ["a"] and "proof_count" not in fields and "class" not in fields
    data = m.to_json()
    assert list(data)[: len(KEY_ORDER)] == list(KEY_ORDER)
    assert data["created"] == "2026-01-02T03:04:05Z" and data["occurred_at"] == "2026-01-01"
    assert data["tags"] == ["a"] and data["class"] is None and data["proof_count"] == 1
    assert data["extra"] == {"when": "2026-01-01T00:00:00Z", "n": [1, 2]}


def test_memory_value_semantics() -> None:
    m = Memory(id="m-x", title="T", type="fact")
    assert m == Memory(id="m-x", title="T", type="fact")
    assert hash(m) == hash(m.replace(title="Other"))
    assert m.replace(title="Other") != m
    assert not m.is_trashed and m.replace(trashed_at=datetime(2026, 1, 1, tzinfo=UTC)).is_trashed
    with pytest.raises(AttributeError):
        m.title = "changed"  # type: ignore[misc]


def test_content_digest_is_sha256_of_the_bytes() -> None:
    data = "---\nid: x\n---\n日本".encode()
    assert memory.content_digest(data) == hashlib.sha256(data).hexdigest()
    assert memory.content_digest(data + b"\n") != memory.content_digest(data)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Use pytest fixtures", "  use   PYTEST\nfixtures "),
        ("Straße", "STRASSE"),
        ("ﬁle", "file"),  # NFKC folds the ligature
        ("Ｆｕｌｌ width", "full width"),
    ],
)
def test_text_digest_ignores_case_spacing_and_compatibility_forms(a: str, b: str) -> None:
    assert memory.normalize_text(a) == memory.normalize_text(b)
    assert memory.text_digest(a) == memory.text_digest(b)
    assert memory.text_digest(a) == hashlib.sha256(memory.normalize_text(a).encode()).hexdigest()


def test_text_digest_tells_different_text_apart() -> None:
    assert memory.text_digest("use fixtures") != memory.text_digest("use setUp")


def test_memory_text_prefers_body_then_summary_then_title() -> None:
    m = Memory(id="m-x", title="Title", type="fact", summary="Summary", body="  Body text \n")
    assert memory.memory_text(m) == "Body text"
    assert memory.memory_text(m.replace(body=" \n")) == "Summary"
    assert memory.memory_text(m.replace(body="", summary="")) == "Title"


def test_plain_values_in_corpus_cover_every_enum() -> None:
    covered = {(key, value) for key, values in ENUMS.items() for value in values}
    names = {case.name for case in ENUM_CASES}
    assert {f"enum-{k}-{v}" for k, v in covered} == names
