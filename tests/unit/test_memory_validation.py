"""Validation of memory files: every error says what is wrong, in which file, on which line."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from vault_engine.errors import EncodingError, FrontmatterError, MemoryFileError, ValidationError
from vault_engine.format import memory
from vault_engine.format.ids import is_valid_id
from vault_engine.format.memory import ENUMS, OUTCOMES, Memory, from_fields, parse, render

PATH = "memories/global/example.md"
BASE = ["id: m-01jdx8k3q7r2v5w9t0a1b2c3d4", "title: Use pytest fixtures", "type: fact"]


def doc(*lines: str, base: list[str] | None = None, body: str = "Body.\n", newline: str = "\n") -> str:
    header = [*(BASE if base is None else base), *lines]
    return newline.join(["---", *header, "---", ""]) + body


def error_of(text: str, kind: type[MemoryFileError] = ValidationError) -> MemoryFileError:
    with pytest.raises(kind) as caught:
        parse(text, PATH)
    assert caught.value.path == PATH
    return caught.value


def line_of(text: str, prefix: str) -> int:
    """1-based line number of the first line starting with ``prefix``."""
    for number, line in enumerate(text.split("\n"), start=1):
        if line.lstrip("\ufeff").startswith(prefix):
            return number
    raise AssertionError(f"{prefix!r} not in text")


# ---------------------------------------------------------------- required keys


@pytest.mark.parametrize("key", ["title", "type"])
def test_missing_required_key(key: str) -> None:
    text = doc(base=[line for line in BASE if not line.startswith(key + ":")])
    error = error_of(text)
    assert error.message == f"missing required key '{key}'"
    assert error.line == 1  # no line of its own: the start of the frontmatter
    assert error.one_line() == f"{PATH}:1: missing required key '{key}'"


@pytest.mark.parametrize("key", ["id", "title", "type"])
def test_null_required_key_reports_its_line(key: str) -> None:
    lines = [f"{key}:" if line.startswith(key + ":") else line for line in BASE]
    text = doc("tags: [a]", base=["# a comment", *lines])
    error = error_of(text)
    assert error.message == f"missing required key '{key}'"
    assert error.line == line_of(text, f"{key}:")


def test_missing_required_keys_through_from_fields() -> None:
    base = {"id": "m-x", "title": "T", "type": "fact"}
    for key in base:
        with pytest.raises(ValidationError) as caught:
            from_fields({k: v for k, v in base.items() if k != key}, path="x.md")
        assert caught.value.message == f"missing required key '{key}'"
        assert caught.value.path == "x.md"


@pytest.mark.parametrize("key", ["id", "title"])
@pytest.mark.parametrize("value", ['""', "'   '"])
def test_empty_required_text(key: str, value: str) -> None:
    text = doc(base=[f"{key}: {value}" if line.startswith(key + ":") else line for line in BASE])
    error = error_of(text)
    assert error.message == f"key '{key}' must not be empty"
    assert error.line == line_of(text, f"{key}:")


# ---------------------------------------------------------------- enums


@pytest.mark.parametrize("key", sorted(ENUMS))
def test_every_enum_lists_its_allowed_values(key: str) -> None:
    extra = ["project: github.com/acme/api"] if key == "scope" else []
    base = [line for line in BASE if not line.startswith(key + ":")]
    text = doc(*extra, f"{key}: bogus-value", "tags: [x]", base=base)
    error = error_of(text)
    allowed = ", ".join(ENUMS[key])
    assert error.message == f"key '{key}' has unknown value 'bogus-value'; expected one of {allowed}"
    assert error.line == line_of(text, f"{key}:")


@pytest.mark.parametrize("key", sorted(ENUMS))
def test_every_enum_value_is_accepted(key: str) -> None:
    attr = "klass" if key == "class" else key
    for value in ENUMS[key]:
        extra = ["project: github.com/acme/api"] if key == "scope" else []
        base = [line for line in BASE if not line.startswith(key + ":")]
        parsed = parse(doc(*extra, f"{key}: {value}", base=base), PATH).memory
        assert getattr(parsed, attr) == value


def test_enum_values_are_case_sensitive() -> None:
    assert "expected one of" in error_of(doc("trust: System")).message


def test_enum_that_is_not_text() -> None:
    error = error_of(doc("tier: [hot]"))
    assert error.message == "key 'tier' must be text, got a list"


# ---------------------------------------------------------------- wrong types


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("importance: 1.5", "key 'importance' must be a number between 0 and 1, got 1.5"),
        ("importance: -0.1", "key 'importance' must be a number between 0 and 1, got -0.1"),
        ("importance: high", "key 'importance' must be a number between 0 and 1, got 'high'"),
        ("importance: true", "key 'importance' must be a number between 0 and 1, got True"),
        ("importance: .nan", "key 'importance' must be a number between 0 and 1, got nan"),
        ("importance: [0.5]", "key 'importance' must be a number between 0 and 1, got [0.5]"),
        ("tags: {a: 1}", "key 'tags' must be a list of text values, got a mapping"),
        ("tags: [a, [b]]", "key 'tags' must be a list of text values, got a list"),
        ("tags: [a, true]", "key 'tags' must be a list of text values, got a list"),
        ("paths: 5", "key 'paths' must be a list of text values, got 5"),
        ("links: [null]", "key 'links' must be a list of text values, got a list"),
        ("title: [a, b]", "key 'title' must be text, got a list"),
        ("summary: {a: b}", "key 'summary' must be text, got a mapping"),
        ("trigger: yes", "key 'trigger' must be text, got True"),
        ("proof_count: -1", "key 'proof_count' must be a whole number >= 0, got -1"),
        ("proof_count: 1.5", "key 'proof_count' must be a whole number >= 0, got 1.5"),
        ("proof_count: many", "key 'proof_count' must be a whole number >= 0, got 'many'"),
        ("applied: {used-successfully: 1, helped: 2}",
         f"key 'applied' has unknown outcome 'helped'; expected {', '.join(OUTCOMES)}"),
        ("applied: {ignored: -1}", "key 'applied' count for 'ignored' must be a whole number >= 0"),
        ("applied: {ignored: 1.5}", "key 'applied' count for 'ignored' must be a whole number >= 0"),
        ("applied: [ignored]", "key 'applied' must be a mapping of outcome counts, got a list"),
        ("evidence: e-1", "key 'evidence' must be a list of mappings like {event: e-..., quote: ...}"),
        ("evidence: [e-1, e-2]", "key 'evidence' must be a list of mappings like {event: e-..., quote: ...}"),
        ("evidence: {event: e-1}", "key 'evidence' must be a list of mappings like {event: e-..., quote: ...}"),
        ("created: yesterday", "key 'created' must be a date-time like 2026-11-20T09:14:00Z, got 'yesterday'"),
        ("created: 5", "key 'created' must be a date-time like 2026-11-20T09:14:00Z, got 5"),
        ("updated: '2026-13-01'", "key 'updated' must be a date-time like 2026-11-20T09:14:00Z, got '2026-13-01'"),
        ("last_applied: [2026-01-01]",
         "key 'last_applied' must be a date-time like 2026-11-20T09:14:00Z, got [datetime.date(2026, 1, 1)]"),
        ("occurred_at: soon", "key 'occurred_at' must be a date-time like 2026-11-20T09:14:00Z, got 'soon'"),
        ("occurred_at: '2026-02-30'",
         "key 'occurred_at' must be a date-time like 2026-11-20T09:14:00Z, got '2026-02-30'"),
        ("expires_at: true", "key 'expires_at' must be a date-time like 2026-11-20T09:14:00Z, got True"),
    ],
)
def test_wrong_types(line: str, message: str) -> None:
    key = line.split(":", 1)[0]
    base = [b for b in BASE if not b.startswith(key + ":")]  # a key written twice is an error of its own
    text = doc("summary: fine", line, "tags_after: [x]", base=base) if key != "summary" else doc(line)
    error = error_of(text)
    assert error.message == message
    assert error.line == line_of(text, key + ":")
    assert error.one_line() == f"{PATH}:{error.line}: {message}"


def test_scope_project_requires_a_project() -> None:
    text = doc("summary: s", "scope: project", "tags: []")
    error = error_of(text)
    assert error.message == "key 'project' is required when scope is project"
    assert error.line == line_of(text, "scope:")
    assert error_of(doc("scope: project", "project: ''")).message == error.message
    ok = parse(doc("scope: project", "project: github.com/acme/api"), PATH).memory
    assert (ok.scope, ok.project) == ("project", "github.com/acme/api")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("'../x'", "key 'id' must be lowercase letters, digits, '.', '_' or '-', got '../x'"),
        ("A/B", "key 'id' must be lowercase letters, digits, '.', '_' or '-', got 'A/B'"),
        ('"a\\n"', "key 'id' must be lowercase letters, digits, '.', '_' or '-', got 'a\\n'"),
        ("a..b", "key 'id' must be lowercase letters, digits, '.', '_' or '-', got 'a..b'"),
        ("''", "key 'id' must not be empty"),
        ("[a]", "key 'id' must be text, got a list"),
    ],
)
def test_invalid_ids(value: str, message: str) -> None:
    text = doc(base=["title: T", "type: fact", f"id: {value}"])
    error = error_of(text)
    assert error.message == message
    assert error.line == 4


@pytest.mark.parametrize("yaml_value", ["!!set {a, b}", "!!binary aGVsbG8=", "&a [1, *a]"])
def test_unknown_keys_must_hold_plain_data(yaml_value: str) -> None:
    """Values the engine could not write back are refused up front, not when the file is rewritten."""
    text = doc("tier: cold", f"custom: {yaml_value}")
    error = error_of(text)
    assert error.message.startswith("key 'custom' holds ")
    assert error.line == line_of(text, "custom:")


def test_evidence_must_hold_plain_data() -> None:
    error = error_of(doc("evidence: [{event: e-1, data: !!binary aGVsbG8=}]"))
    assert error.message.startswith("key 'evidence' holds bytes data")


def test_huge_alias_expansion_is_refused() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 10) + "]" for n in range(1, 8)]
    error = error_of(doc(*lines))
    assert "too large" in error.message


# ---------------------------------------------------------------- line numbers


def test_lines_count_comments_blank_lines_crlf_and_bom() -> None:
    text = "\ufeff" + doc("", "# comment: with colon", "summary: ok", "", "tier: warm", newline="\r\n")
    error = error_of(text)
    assert error.message.startswith("key 'tier' has unknown value 'warm'")
    assert error.line == 9
    assert text.split("\r\n")[error.line - 1] == "tier: warm"


def test_quoted_keys_are_found() -> None:
    text = doc("'tier': warm")
    assert error_of(text).line == line_of(text, "'tier':")


def test_nested_keys_with_the_same_name_are_not_the_offending_line() -> None:
    text = doc("custom:", "  tier: fine", "tier: warm")
    assert error_of(text).line == line_of(text, "tier:")


def test_unicode_line_separators_do_not_shift_line_numbers() -> None:
    text = doc('summary: "one\u2028two\x85three"', "tier: warm")
    assert error_of(text).line == line_of(text, "tier:")


def test_impossible_dates_are_reported_with_their_line() -> None:
    text = doc("summary: ok", "updated: 2026-13-01", "tier: hot")
    error = error_of(text, FrontmatterError)
    assert error.message == "invalid YAML in frontmatter: invalid date '2026-13-01' (month must be in 1..12)"
    assert error.line == line_of(text, "updated:")


def test_raw_control_characters_are_reported_with_their_line() -> None:
    text = doc("summary: ok", 'trigger: "a\x0cb"', "tier: hot")
    error = error_of(text, FrontmatterError)
    assert error.message == "invalid YAML in frontmatter: character U+000C is not allowed"
    assert error.line == line_of(text, "trigger:")


# ---------------------------------------------------------------- malformed files


@pytest.mark.parametrize(
    ("lines", "line"),
    [
        (["summary: [unclosed"], 6),
        (["summary: ok", "  bad indent: x"], 6),
        (["tags: [a, b", "tier: hot"], 6),
        (["summary: 'unterminated"], 6),
        (["summary: a", "summary: b: c"], 6),
        (["\tsummary: tab"], 5),
    ],
)
def test_malformed_yaml_is_a_frontmatter_error_with_a_line(lines: list[str], line: int) -> None:
    error = error_of(doc(*lines), FrontmatterError)
    assert error.message.startswith("invalid YAML in frontmatter: ")
    assert error.line is not None and 2 <= error.line <= line + 1


def test_malformed_yaml_line_is_exact() -> None:
    text = doc("summary: ok", "tier: hot", "importance: : 0.5")
    error = error_of(text, FrontmatterError)
    assert error.line == line_of(text, "importance:")


def test_unclosed_frontmatter() -> None:
    error = error_of("---\nid: m-x\ntitle: T\ntype: fact\nbody without a closing fence\n", FrontmatterError)
    assert error.message == "frontmatter opened with '---' is never closed"
    assert error.line == 1


@pytest.mark.parametrize("header", ["- a\n- b", "just text", "42", "[id, title]"])
def test_frontmatter_that_is_not_a_mapping(header: str) -> None:
    error = error_of(f"---\n{header}\n---\nbody\n", FrontmatterError)
    assert error.message == "frontmatter must be a YAML mapping of keys to values"
    assert error.line == 2


def test_frontmatter_too_large() -> None:
    text = doc("summary: " + "x" * (memory.MAX_HEADER_CHARS + 1))
    error = error_of(text, FrontmatterError)
    assert "larger than" in error.message and error.line == 1


def test_non_utf8_bytes_are_an_encoding_error_with_a_line() -> None:
    data = b"---\nid: m-x\ntitle: caf\xe9\ntype: fact\n---\n"
    with pytest.raises(EncodingError) as caught:
        memory.decode(data, PATH)
    assert caught.value.line == 3 and caught.value.path == PATH
    assert caught.value.one_line() == f"{PATH}:3: file is not valid UTF-8 (byte 22)"
    with pytest.raises(EncodingError) as caught:
        memory.decode(b"\xff")
    assert caught.value.line == 1 and caught.value.path is None


def test_decode_keeps_the_bom() -> None:
    assert memory.decode("\ufeff---\n".encode()) == "\ufeff---\n"


# ---------------------------------------------------------------- plain notes


def note_id(path: str) -> str:
    return "note-" + hashlib.sha256(path.encode("utf-8")).hexdigest()[:20]


def test_file_without_frontmatter_is_a_plain_note() -> None:
    text = "Some intro.\n\n## First heading ##\n\n# Second\n"
    parsed = parse(text, "notes/ideas.md")
    m = parsed.memory
    assert m.plain is True and m.type == "note" and m.trust == "learned"
    assert m.title == "First heading"
    assert m.body == text and parsed.text == text
    assert m.id == note_id("notes/ideas.md")
    assert is_valid_id(m.id)


def test_plain_note_id_is_stable_for_a_path_and_differs_between_paths() -> None:
    first = parse("# A\n", "notes/a.md").memory.id
    assert parse("# Completely different\n", "notes/a.md").memory.id == first
    assert parse("# A\n", "notes/b.md").memory.id != first
    assert first.startswith("note-") and len(first) == 25


@pytest.mark.parametrize(
    ("path", "text", "title"),
    [
        ("notes/meeting-notes.md", "no heading here\n", "meeting-notes"),
        ("notes/UPPER.MD", "", "UPPER"),
        ("top.md", "#not-a-heading\n#tag\n", "top"),
        ("a/b/c.md", "```bash\n# a shell comment\n```\n\n# Real title\n", "Real title"),
        ("a/b/c.md", "~~~\n# inside tildes\n~~~\ntext\n", "c"),
        ("x.md", "   \n###### Six deep\n", "Six deep"),
        ("x.md", "####### seven is not a heading\n", "x"),
        ("x.md", "# Title\r\nbody\r\n", "Title"),
        ("x.md", "# 日本語のタイトル 😀\n", "日本語のタイトル 😀"),
    ],
)
def test_plain_note_title(path: str, text: str, title: str) -> None:
    assert parse(text, path).memory.title == title


def test_frontmatter_without_id_is_a_plain_note_read_by_its_properties() -> None:
    text = "---\ntitle: Obsidian note\n# a yaml comment\ntags: [x]\naliases: [obs]\n---\n# Heading in body\n"
    m = parse(text, "notes/obs.md").memory
    assert m.plain and m.type == "note" and m.id == note_id("notes/obs.md")
    assert m.title == "Obsidian note" and m.tags == ("x",) and m.extra == {"aliases": ["obs"]}
    assert m.body == "# Heading in body\n"  # the text, not the YAML
    untitled = parse("---\naliases: [obs]\n---\n# Heading in body\n", "notes/obs.md").memory
    assert untitled.title == "Heading in body"  # the YAML comment is not a heading


def test_a_note_given_memvault_keys_keeps_its_own_in_one_frontmatter() -> None:
    """Forgetting or correcting a note writes memvault's keys: its own stay beside them (they were
    stacked above them as a second frontmatter in the body)."""
    text = "---\ntitle: Wifi rules\naliases: [n2]\ntags: [office]\n---\nThe office wifi password rotates monthly\n"
    m = parse(text, "memories/global/note2.md").memory
    written = render(m.replace(lifecycle="superseded"))
    assert written.count("---\n") == 2 and written.endswith("---\nThe office wifi password rotates monthly\n")
    back = parse(written, "memories/global/note2.md").memory
    assert not back.plain and back.id == m.id and back.lifecycle == "superseded"
    assert (back.title, back.tags, back.extra, back.body) == ("Wifi rules", ("office",), {"aliases": ["n2"]}, m.body)


def test_a_note_whose_properties_are_no_memory_keys_is_read_as_text() -> None:
    text = "---\ntitle: Dune\ntype: book\n---\nA novel by Frank Herbert\n"
    m = parse(text, "notes/dune.md").memory
    assert m.plain and m.type == "note" and m.title == "Dune"
    assert m.body == text  # its frontmatter stays with its text: nothing of it is dropped when it is written


def test_frontmatter_without_id_and_without_heading_uses_the_stem() -> None:
    assert parse("---\naliases: [x]\n---\nplain text\n", "notes/stem-name.md").memory.title == "stem-name"


def test_empty_frontmatter_is_a_plain_note() -> None:
    for text in ("---\n---\n# T\n", "---\n\n---\n# T\n", "---\n---"):
        m = parse(text, "n.md").memory
        assert m.plain and m.type == "note"


def test_plain_note_keeps_a_bom_out_of_the_body() -> None:
    parsed = parse("\ufeff# Title\n", "n.md")
    assert parsed.bom and parsed.memory.body == "# Title\n" and parsed.memory.title == "Title"


# ---------------------------------------------------------------- accepted values


def test_defaults_of_a_minimal_file() -> None:
    m = parse(doc(), PATH).memory
    assert m == Memory(id="m-01jdx8k3q7r2v5w9t0a1b2c3d4", title="Use pytest fixtures", type="fact", body="Body.\n")
    assert (m.scope, m.authority, m.trust, m.lifecycle, m.recall, m.tier) == (
        "global", "inferred", "learned", "trial", "active", "cold",
    )
    assert m.importance == 0.5 and m.proof_count == 1 and m.source == "user"
    assert m.applied == {k: 0 for k in OUTCOMES}
    assert not m.plain and not m.is_trashed


def test_values_are_normalised() -> None:
    m = parse(
        doc(
            "importance: 1",
            "tags: single",
            "paths: [1, 2.5]",
            "created: 2026-11-20",
            "updated: 2026-11-20 10:00:00",
            "last_applied: '2026-11-20T10:00:00+02:00'",
            "occurred_at: '2026-11-20'",
            "applied: {ignored: 2}",
            "evidence: [{event: e-1, quote: q}]",
            "title_extra: 5",
        ),
        PATH,
    ).memory
    assert m.importance == 1.0 and isinstance(m.importance, float)
    assert m.tags == ("single",) and m.paths == ("1", "2.5")
    assert m.created is not None and m.created.isoformat() == "2026-11-20T00:00:00+00:00"
    assert m.updated is not None and m.updated.isoformat() == "2026-11-20T10:00:00+00:00"
    assert m.last_applied is not None and m.last_applied.isoformat() == "2026-11-20T10:00:00+02:00"
    assert type(m.occurred_at).__name__ == "date"
    assert m.applied == {**{k: 0 for k in OUTCOMES}, "ignored": 2}
    assert m.evidence == ({"event": "e-1", "quote": "q"},)
    assert m.extra == {"title_extra": 5}


def test_from_fields_without_a_header_has_no_line() -> None:
    with pytest.raises(ValidationError) as caught:
        from_fields({"id": "m-x", "title": "T", "type": "fact", "tier": "warm"}, path="<new memory>")
    assert caught.value.line is None
    assert caught.value.one_line().startswith("<new memory>: key 'tier'")


def test_errors_are_memory_file_errors() -> None:
    raw: dict[str, Any] = {"id": "m-x", "title": "T", "type": "nope"}
    with pytest.raises(MemoryFileError):
        from_fields(raw)
