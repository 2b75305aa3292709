"""Properties of the file format under arbitrary input: parse, the fast YAML reader, scans, messages.

The seeded end-to-end run over thousands of malformed files is ``python -m stress.fuzz_files``
(exercised by tests/integration/test_fuzz_files.py); these properties let hypothesis
search the same ground around each boundary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stress import fuzz_files
from vault_engine import copies, store
from vault_engine.errors import MemoryFileError, VaultError
from vault_engine.format import yamlsubset
from vault_engine.format.memory import MAX_COUNT, Memory, decode, parse, render
from vault_engine.governance.tags import _SUFFIXES, _singulars, _tag_key, tag_canon
from vault_engine.vault import Vault

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Pieces of frontmatter and of everything that breaks it: joined at random they reach the
# fence splitter, the fast reader, libyaml, the validator and the renderer in odd states.
FRAGMENTS = (
    "---\n", "---\r\n", "---\r", "...\n", "\n", "\r\n", "\r", "id: m-a\n", "id: ", "title: ", "type: fact\n",
    "type: ", "tags: ", "importance: ", "created: ", "proof_count: ", "applied: ", "evidence: ", "x: ", "  - ",
    "[", "]", "{", "}", ", ", ": ", "\"", "'", "&a ", "*a", "!!binary ", "!!set ", "? ", "|", ">", "#", "\t",
    "\\ud800", "\\ud83d\\ude00", "\\x00", "\\U0010ffff", "\u2028", "\ufeff", "\x00", "\x7f", "\x85", "é", "😀",
    "<<<<<<< HEAD\n", "=======\n", ">>>>>>> b\n", "<<: *a\n", "9999-12-31T23:59:59-10:00", "2026-02-30",
    "0001-01-01T00:00:00+10:00", "1e999", ".nan", "99999999999999999999999", "null", "~", "true", "fact",
    "hot", "project", "m-b", "body text\n",
)
frontmatterish = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)


def check_parse(data: bytes, rel: str = "notes/x.md") -> store.Entry | MemoryFileError:
    """Parse ``data``; only a MemoryFileError naming ``rel`` may come out, and a valid file renders to itself."""
    try:
        entry = store.entry_from_bytes(rel, data)
    except MemoryFileError as exc:
        assert exc.path == rel
        assert "\n" not in exc.one_line()
        return exc
    parsed = entry.parsed
    assert render(entry.memory, parsed).encode("utf-8") == data  # never churned
    if not entry.memory.plain:
        again = parse(render(entry.memory), rel).memory  # the canonical form reads back the same
        assert again == entry.memory or render(again) == render(entry.memory)  # (NaN is never ==)
    return entry


@SETTINGS
@given(data=st.binary(max_size=3000))
def test_parse_of_arbitrary_bytes_raises_only_memory_file_errors(data: bytes) -> None:
    check_parse(data)


@SETTINGS
@given(text=frontmatterish, bom=st.booleans(), crlf=st.booleans())
def test_parse_of_frontmatter_fragments_raises_only_memory_file_errors(text: str, bom: bool, crlf: bool) -> None:
    if crlf:
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    check_parse((("\ufeff" if bom else "") + text).encode("utf-8", "surrogatepass"))


@SETTINGS
@given(header=st.lists(st.sampled_from(FRAGMENTS[16:]), max_size=30).map("".join))
def test_a_header_with_an_id_is_a_memory_or_a_bad_file(header: str) -> None:
    data = f"---\nid: m-a\ntitle: T\ntype: fact\n{header}\n---\nbody\n".encode("utf-8", "surrogatepass")
    outcome = check_parse(data)
    assert isinstance(outcome, MemoryFileError) or (outcome.memory.id == "m-a" and not outcome.memory.plain)


@pytest.mark.parametrize(("opener", "closer"), [("[", "]"), ("{a: ", "}"), ("[{a: ", "}]")])
@pytest.mark.parametrize("depth", [10, 64, 65, 200, 999, 1000, 10_000])
def test_nesting_of_any_depth_is_kept_or_refused_never_a_recursion_error(opener: str, closer: str, depth: int) -> None:
    value = opener * depth + "1" + closer * depth
    header = f"id: m-a\ntitle: T\ntype: fact\nx: {value}"
    outcome = check_parse(f"---\n{header}\n---\n".encode())
    # Unknown keys keep at most 32 levels; deeper is reported (libyaml itself stops at 1,000).
    assert isinstance(outcome, store.Entry) if depth * len(closer) <= 30 else isinstance(outcome, MemoryFileError)
    fast = yamlsubset.load(f"x: {value}")  # the fast reader reads its subset or hands over, never raises
    assert fast is None or fast == yaml.safe_load(f"x: {value}")


@SETTINGS
@given(code=st.integers(min_value=0xD800, max_value=0xDFFF), paired=st.booleans())
def test_escaped_surrogates_are_refused_as_yaml_refuses_them(code: int, paired: bool) -> None:
    escape = f"\\u{code:04x}" + ("\\udc00" if paired else "")
    assert yamlsubset.load(f'title: "{escape}"') is None  # JSON would take it: hand over to YAML
    outcome = check_parse(f'---\nid: m-a\ntitle: "{escape}"\ntype: fact\n---\n'.encode())
    assert isinstance(outcome, MemoryFileError) and outcome.line == 3


def test_values_with_lone_surrogates_from_any_source_are_refused() -> None:
    from vault_engine.format.memory import from_fields

    for fields, body in (({"id": "m-a", "title": "a\ud800", "type": "fact"}, ""),
                         ({"id": "m-a", "title": "t", "type": "fact", "x": ["ok", {"k\udfff": 1}]}, ""),
                         ({"id": "m-a", "title": "t", "type": "fact"}, "body \udc80")):
        with pytest.raises(MemoryFileError, match="surrogate") as caught:
            from_fields(fields, body, path="<import>")
        caught.value.one_line().encode("utf-8")  # the message itself can be printed


@SETTINGS
@given(seed=st.integers(min_value=0, max_value=2**32), newline=st.sampled_from(["\n", "\r\n"]), bom=st.booleans())
def test_generated_memories_read_back_as_written(seed: int, newline: str, bom: bool) -> None:
    from vault_engine.format.memory import ParsedFile

    memory = fuzz_files.Gen(seed).memory(seed % 1000)
    text = render(memory)
    assert parse(text, "x.md").memory == memory
    styled = render(memory, ParsedFile(memory.replace(title="before"), "", newline, bom))  # a hand-made file's style
    again = parse(styled, "x.md")
    assert again.memory == memory and again.newline == newline and again.bom is bom
    assert render(again.memory, again) == styled  # and, untouched, it is never rewritten


# ---------------------------------------------------------------- scans and duplicate ids

copy_paths = st.lists(
    st.tuples(st.sampled_from(["memories/global", "trash", "notes", "memories/projects/p", "trash/old", ""]),
              st.from_regex(r"[a-z0-9 _-]{1,12}", fullmatch=True)),
    min_size=2, max_size=5, unique_by=lambda t: (t[0], t[1].strip())).map(
    lambda items: [f"{folder}/{name.strip() or 'x'}.md".lstrip("/") for folder, name in items])


@SETTINGS
@given(paths=copy_paths, data=st.data())
def test_duplicate_ids_resolve_the_same_whatever_the_creation_order(
        paths: list[str], data: st.DataObject, tmp_path_factory: pytest.TempPathFactory) -> None:
    paths = list(dict.fromkeys(paths))
    if len(paths) < 2:
        return
    # No index yet and no created stamps: outside the trash first, then named for the id, then by path.
    expected = min(paths, key=lambda p: (p.startswith("trash/"), not copies.named_for("m-dup", p), p))
    order = data.draw(st.permutations(paths))
    root = tmp_path_factory.mktemp("dup")
    for n, rel in enumerate(order):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"---\nid: m-dup\ntitle: Copy {n}\ntype: fact\n---\ncopy {n}\n")
    scan = store.scan(root)
    assert scan.entries["m-dup"].path == expected
    assert sorted(scan.duplicates["m-dup"]) == sorted(p for p in paths if p != expected)
    reported = Counter(p.path for p in scan.problems)
    assert reported == Counter(p for p in paths if p != expected)  # each losing copy once, with its path
    assert all(f"also in {expected}" in p.message for p in scan.problems)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_a_scan_reports_each_bad_file_once_and_keeps_every_valid_one(
        seed: int, tmp_path_factory: pytest.TempPathFactory) -> None:
    fuzz = fuzz_files
    cases = fuzz.generate(seed, 60, light=True)
    figures = fuzz.Figures(seed, len(cases))
    verdicts = {c.rel: fuzz.judge(c, figures) for c in cases}
    assert not figures.failures
    for case in cases:
        if case.expect != fuzz.ANY:
            assert verdicts[case.rel].outcome == case.expect, (case.category, case.rel, verdicts[case.rel])
    index, reports = fuzz.expected_state(cases, verdicts)
    work = tmp_path_factory.mktemp("scan")
    (work / "outside").mkdir()
    fuzz.build_vault(work / "vault", cases, work / "outside")
    scan = store.scan(work / "vault")
    assert Counter(p.path for p in scan.problems) == reports
    assert {i: e.path for i, e in scan.entries.items()} == index


# ---------------------------------------------------------------- values the indexes and clocks must hold


@pytest.mark.parametrize(("line", "fragment"), [
    (f"proof_count: {MAX_COUNT + 1}", "proof_count"),
    ("proof_count: 99999999999999999999999", "proof_count"),
    ("applied: {ignored: 99999999999999999999}", "applied"),
    ("created: '9999-12-31T23:59:59-10:00'", "out of range once in UTC"),
    ("updated: 0001-01-01T00:00:00+10:00", "out of range once in UTC"),
    ("last_applied: 9999-12-31T23:59:59-12:00", "out of range once in UTC"),
])
def test_values_beyond_what_the_indexes_and_clock_hold_are_reported(line: str, fragment: str) -> None:
    with pytest.raises(MemoryFileError, match=fragment) as caught:
        parse(f"---\nid: m-a\ntitle: T\ntype: fact\n{line}\n---\n", "x.md")
    assert caught.value.line == 5


def test_the_largest_count_is_kept() -> None:
    memory = parse(f"---\nid: m-a\ntitle: T\ntype: fact\nproof_count: {MAX_COUNT}\n---\n", "x.md").memory
    assert memory.proof_count == MAX_COUNT


@pytest.mark.parametrize("moment", ["9999-12-31T23:59:59Z", "9999-12-31", "0001-01-01T00:00:00Z"])
@pytest.mark.parametrize("key", ["created", "updated", "last_applied"])
def test_moments_at_the_ends_of_the_calendar_do_not_stop_maintain(
        make_vault: Callable[..., Vault], moment: str, key: str) -> None:
    from vault_engine.index.fakes import HashEmbedder

    text = (f"---\nid: m-a\ntitle: Dated\ntype: episode\ntier: hot\nimportance: 0.3\n{key}: {moment}\n---\n"
            "done yesterday\n")
    vault = make_vault({"memories/global/a.md": text})
    vault = Vault(vault.root, embedder=HashEmbedder())
    assert not vault.sync().problems
    vault.maintain(now=datetime(2026, 12, 1, tzinfo=UTC))  # planning the next due moment must not overflow
    vault.maintain(dry_run=True)


# ---------------------------------------------------------------- tags at scale


def _tag_canon_pairwise(tags: list[str]) -> dict[str, str]:
    """The rule as first written (every key against every longer one), to compare with."""
    counts = Counter(tags)
    groups: dict[str, list[str]] = {}
    for tag in counts:
        groups.setdefault(_tag_key(tag), []).append(tag)
    joined = {k: k for k in groups}  # a plural whose other reading is a tag in use joins that tag's group

    def root(key: str) -> str:
        while joined[key] != key:
            key = joined[key]
        return key

    for a in counts:
        for b in counts:
            if b.lower() in _singulars(a) and root(_tag_key(a)) != root(_tag_key(b)):
                keep, gone = sorted((root(_tag_key(a)), root(_tag_key(b))), key=lambda k: (len(k), k))
                joined[gone] = keep
    for key in list(groups):
        if root(key) != key:
            groups[root(key)].extend(groups.pop(key))
    keys = sorted(groups, key=lambda k: (len(k), k))
    parent = {k: k for k in keys}
    for n, short in enumerate(keys):
        if len(short) < 4 or parent[short] != short:
            continue
        for long in keys[n + 1:]:
            if parent[long] == long and long.startswith(short) and long[len(short):] in _SUFFIXES:
                parent[long] = short
    members: dict[str, list[str]] = {}
    for key, variants in groups.items():
        members.setdefault(parent[key], []).extend(variants)
    out = {}
    for variants in members.values():
        keep = min(variants, key=lambda t: (len(t), t != t.lower(), -counts[t], t))
        out.update({v: keep for v in variants})
    return out


stems = st.sampled_from(["test", "deploy", "post", "data", "run", "runn", "build", "builder", "abcd", "ca", "cach",
                         "cache", "status"])
endings = st.sampled_from(["", "s", "es", "d", "ed", "er", "ing", "ment", "ion", "ies", "ses", "x"])


@SETTINGS
@given(tags=st.lists(st.tuples(stems, endings, endings, st.booleans()).map(
    lambda t: (t[0] + t[1] + t[2]).upper() if t[3] else t[0] + t[1] + t[2]), max_size=14))
def test_tag_canon_keeps_its_rule(tags: list[str]) -> None:
    assert tag_canon(tags) == _tag_canon_pairwise(tags)


def test_tag_canon_of_a_huge_tag_list_is_linear() -> None:
    import time

    started = time.perf_counter()
    canon = tag_canon([f"t{n}" for n in range(40_000)] + ["deploy", "deployment"])
    assert time.perf_counter() - started < 5  # pairwise: minutes
    assert canon["deployment"] == "deploy"


# ---------------------------------------------------------------- messages


@SETTINGS
@given(path=st.text(max_size=40), message=st.text(max_size=40))
def test_an_error_is_always_one_printable_line(path: str, message: str) -> None:
    line = VaultError(message, path=path, line=3).one_line()
    assert len(line.splitlines()) <= 1
    assert not any((ord(c) < 0x20 and c != "\t") or 0x7F <= ord(c) < 0xA0 for c in line)


def test_decode_names_what_the_bytes_are() -> None:
    text = "---\nid: m-a\ntitle: T\ntype: fact\n---\n"
    for data, fragment in ((text.encode("utf-16"), "byte-order mark"), (text.encode("utf-32"), "byte-order mark"),
                           (text.encode("utf-16-le"), "NUL byte"), (text.encode("utf-16-be"), "NUL byte"),
                           (b"# note\n\nbinary\x00tail", "NUL byte"), ("café".encode("latin-1"), "not valid UTF-8")):
        with pytest.raises(MemoryFileError, match=fragment):
            decode(data, "x.md")


def test_memory_with_every_field_still_round_trips() -> None:
    memory = Memory(id="m-a", title="T", type="fact", proof_count=MAX_COUNT,
                    created=datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC))
    assert parse(render(memory), "x.md").memory == memory
