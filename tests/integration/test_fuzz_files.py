"""Malformed memory files into scan, sync, search, context and maintain: nothing crashes, each bad
file is reported once with its path, every valid file is indexed, no file is rewritten.

The seeded runs call ``python -m stress.fuzz_files`` (every category: broken YAML, wrong types,
huge values, duplicate ids, conflict markers, binary, non-UTF-8, BOMs, line endings, a
10 MB body and one over the size limit, deep nesting, alias bombs, symlinks, odd names,
random mutations...).  The tests after them pin each defect the fuzzing found, one at a time.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from stress import fuzz_files
from vault_engine import store
from vault_engine.errors import MemoryFileError, PathEscapeError
from vault_engine.format.memory import parse
from vault_engine.index.fakes import HashEmbedder
from vault_engine.vault import Vault

REPO = Path(__file__).resolve().parent.parent.parent
Run = Callable[..., subprocess.CompletedProcess[str]]
MUST_BE_ZERO = ("crashes", "tracebacks", "valid_rewritten", "valid_missing", "bad_touched", "bad_unreported",
                "bad_reported_twice", "unexpected_reports", "misclassified", "duplicate_order_mismatches", "failures")


@pytest.fixture
def fuzz() -> ModuleType:
    return fuzz_files


def assert_clean(result: dict[str, Any]) -> None:
    problems = {key: result[key] for key in MUST_BE_ZERO if result[key]}
    assert not problems, (problems, result["failure_examples"][:10], result["traceback_examples"][:1])
    assert result["bad_reported"] == result["bad_expected"] > 0
    assert result["valid_indexed"] == result["valid_expected"] > 0


def test_seeded_fuzz_run_in_process(fuzz: ModuleType, tmp_path: Path) -> None:
    result = fuzz.run(11, 250, tmp_path, cli_runs=False)
    assert_clean(result)
    assert set(result["categories"]) == {name for name, _ in fuzz.CATEGORIES}
    assert result["categories"]["big_body"]["memory"] >= 1  # the 10 MB body, indexed
    assert result["categories"]["big_body"]["bad"] == 1  # the file over store.MAX_FILE_BYTES


@pytest.mark.slow
def test_seeded_fuzz_run_through_the_cli(fuzz: ModuleType, tmp_path: Path) -> None:
    result = fuzz.run(12, 120, tmp_path, cli_per_category=4, light=True)  # the 10 MB body: the test above
    assert_clean(result)
    assert result["cli_runs"] == 6 and result["cli_files"] > 50


def test_the_generator_is_seeded(fuzz: ModuleType) -> None:
    first, again, other = fuzz.generate(5, 80), fuzz.generate(5, 80), fuzz.generate(6, 80)
    assert [(c.rel, c.data) for c in first] == [(c.rel, c.data) for c in again]
    assert [(c.rel, c.data) for c in first] != [(c.rel, c.data) for c in other]


# ---------------------------------------------------------------- defects found by fuzzing, one test each


def synced(vault: Vault) -> tuple[Vault, list[str]]:
    """The vault with the stand-in embedder, after a sync; and the paths its problems name."""
    vault = Vault(vault.root, embedder=HashEmbedder())
    report = vault.sync()
    return vault, [p.path or "" for p in report.problems]


def test_a_symlink_loop_is_reported_not_a_crash(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault({"memories/global/ok.md": "---\nid: m-ok\ntitle: Ok\ntype: fact\n---\nfine\n"})
    folder = vault.root / "memories" / "global"
    os.symlink("loop-b.md", folder / "loop-a.md")
    os.symlink("loop-a.md", folder / "loop-b.md")
    os.symlink("self.md", folder / "self.md")
    scan = store.scan(vault.root)
    assert sorted(p.path or "" for p in scan.problems) == [
        "memories/global/loop-a.md", "memories/global/loop-b.md", "memories/global/self.md"]
    assert "loop" in scan.problems[0].message and list(scan.entries) == ["m-ok"]
    vault, problems = synced(vault)  # was RuntimeError out of Path.resolve(): every sync and maintain failed
    assert len(problems) == 3
    vault.maintain()
    with pytest.raises(PathEscapeError):
        store.inside(vault.root, "memories/global/self.md")


def test_file_and_folder_names_that_are_not_utf8_are_reported(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault({"memories/global/ok.md": "---\nid: m-ok\ntitle: Ok\ntype: fact\n---\nfine\n"})
    base = os.fsencode(vault.root / "notes")
    os.makedirs(base, exist_ok=True)
    with open(base + b"/caf\xe9.md", "wb") as handle:
        handle.write(b"# a note\n")
    os.makedirs(base + b"/dossier-\xff")
    with open(base + b"/dossier-\xff/inside.md", "wb") as handle:
        handle.write(b"# inside\n")
    scan = store.scan(vault.root)
    assert sorted(p.one_line() for p in scan.problems) == [
        "notes/caf\\xe9.md: name is not valid UTF-8; not read (rename it)",
        "notes/dossier-\\xff: name is not valid UTF-8; not read (rename it)",
    ]
    vault, problems = synced(vault)  # was UnicodeEncodeError hashing the path of a note
    assert len(problems) == 2
    assert not store.is_memory_path(os.fsdecode(b"notes/caf\xe9.md"))  # a watcher's event for it is skipped


def test_values_the_fast_reader_took_but_yaml_refuses_are_reported() -> None:
    # JSON reads "\ud800" as a lone surrogate (which no file, index or terminal can hold); libyaml refuses it.
    with pytest.raises(MemoryFileError) as caught:
        parse('---\nid: m-a\ntitle: "\\ud800 lone"\ntype: fact\n---\n', "a.md")
    assert caught.value.line == 3
    # 10,000 nested brackets overflowed the fast reader's recursion (RecursionError out of parse).
    with pytest.raises(MemoryFileError, match="nesting"):
        parse("---\nid: m-a\ntitle: T\ntype: fact\nx: " + "[" * 10_000 + "]" * 10_000 + "\n---\n", "a.md")


def test_a_key_written_twice_is_reported_with_both_lines() -> None:
    # A merge resolved by deleting the markers keeps both sides' lines: YAML took the last silently.
    with pytest.raises(MemoryFileError, match=r"key 'id' appears twice \(first on line 2\)") as caught:
        parse("---\nid: m-ours\ntitle: T\nid: m-theirs\ntype: fact\n---\n", "a.md")
    assert caught.value.line == 4
    with pytest.raises(MemoryFileError, match="appears twice"):
        parse("---\nid: m-a\ntitle: T\ntype: fact\nx: {a: 1, a: 2}\n---\n", "a.md")
    merged = parse("---\nid: m-a\ntitle: T\ntype: fact\nb: &b {a: 1}\nx: {<<: *b, a: 2}\n---\n", "a.md")
    assert merged.memory.extra["x"] == {"a": 2}  # a merge key may still be overridden


@pytest.mark.parametrize(("text", "line"), [
    ("---\nid: m-a\n<<<<<<< HEAD\ntitle: Ours\n=======\ntitle: Theirs\n>>>>>>> b\ntype: fact\n---\n", 3),
    ('---\nid: m-a\ntitle: "x\n<<<<<<< HEAD\n"\ntype: fact\n---\n', 4),  # YAML read it as part of the title
    ("---\r\nid: m-a\r\ntitle: T\r\n=======\r\ntype: fact\r\n---\r\n", 4),
    ("<<<<<<< HEAD\n---\nid: m-a\ntitle: T\ntype: fact\n---\nours\n=======\ntheirs\n>>>>>>> b\n", 1),  # was a note
])
def test_git_conflict_markers_before_the_body_are_reported(text: str, line: int) -> None:
    with pytest.raises(MemoryFileError, match="merge conflict") as caught:
        parse(text, "a.md")
    assert caught.value.line == line


def test_git_conflict_markers_in_the_body_are_the_memory_s_own_text() -> None:
    text = "---\nid: m-a\ntitle: T\ntype: fact\n---\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> b\n"
    assert parse(text, "a.md").memory.body.startswith("<<<<<<< HEAD")
    assert parse("# note\n\n=======\n", "n.md").memory.plain


def test_a_memory_with_lone_cr_line_endings_is_reported_not_turned_into_a_note() -> None:
    with pytest.raises(MemoryFileError, match="lone CR"):
        parse("---\rid: m-a\rtitle: T\rtype: fact\r---\rbody\r", "a.md")
    assert parse("# old mac note\rsecond line\r", "n.md").memory.plain


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le"])
def test_utf16_without_a_byte_order_mark_is_reported_not_indexed_as_garbage(
        make_vault: Callable[..., Vault], encoding: str) -> None:
    text = "---\nid: m-a\ntitle: Wide\ntype: fact\n---\nbody\n"
    vault = make_vault({"memories/global/wide.md": text.encode(encoding)})  # valid UTF-8 byte by byte (NULs)
    vault, problems = synced(vault)
    assert problems == ["memories/global/wide.md"]
    assert store.scan(vault.root).entries == {}


def test_counts_beyond_what_sqlite_holds_are_reported_not_a_crash(make_vault: Callable[..., Vault]) -> None:
    good = "---\nid: m-ok\ntitle: Ok\ntype: fact\n---\nfine\n"
    huge = "---\nid: m-big\ntitle: Big\ntype: fact\nproof_count: 99999999999999999999999\n---\nx\n"
    vault = make_vault({"memories/global/ok.md": good, "memories/global/big.md": huge})
    vault, problems = synced(vault)  # was OverflowError out of the catalog: no file indexed at all
    assert problems == ["memories/global/big.md"]
    assert [h.id for h in vault.search(store_request("fine")).hits] == ["m-ok"]


def store_request(query: str) -> Any:
    from vault_engine.retrieval.searcher import SearchQuery

    return SearchQuery(query)


def test_a_date_near_the_end_of_the_calendar_does_not_stop_maintain(make_vault: Callable[..., Vault]) -> None:
    dated = "---\nid: m-late\ntitle: Late\ntype: episode\ntier: hot\ncreated: 9999-12-31T23:59:59Z\n---\ndone\n"
    shifted = "---\nid: m-shift\ntitle: Shifted\ntype: fact\ncreated: 9999-12-31T23:59:59-10:00\n---\nx\n"
    vault = make_vault({"memories/global/late.md": dated, "memories/global/shifted.md": shifted})
    vault, problems = synced(vault)
    assert problems == ["memories/global/shifted.md"]  # past year 9999 once in UTC: reported
    vault.maintain()  # created + 7 days overflowed while planning when the hot state retires


def test_engine_writes_to_a_file_with_a_name_at_the_length_limit(make_vault: Callable[..., Vault]) -> None:
    name = "x" * 252 + ".md"  # 255 bytes: the temp file beside it was 273, and every write failed
    text = "---\nid: m-long\ntitle: Long\ntype: fact\n---\nbody\n"
    vault = make_vault({f"memories/global/{name}": text, f"trash/{name}": text.replace("m-long", "m-other")})
    vault, problems = synced(vault)
    assert not problems
    vault.feedback("m-long", "used-successfully")
    assert "used-successfully: 1" in (vault.root / "memories" / "global" / name).read_text()
    result = vault.forget("m-long")  # trash/<name> is taken: the suffixed name must still fit
    assert result.path and len(result.path.rsplit("/", 1)[-1].encode()) <= 255
    assert not [p for p in (vault.root / "memories" / "global").iterdir() if p.name.endswith(".tmp")]


HINT = " (`memvault repair` gives it an id of its own)"


def test_duplicate_reports_name_the_copy_in_use(make_vault: Callable[..., Vault]) -> None:
    copy = "---\nid: m-dup\ntitle: Copy {n}\ntype: fact\n---\ncopy {n}\n"
    vault = make_vault({"trash/0.md": copy.format(n=0), "notes/0.md": copy.format(n=1),
                        "memories/global/0.md": copy.format(n=2)})
    vault, _ = synced(vault)
    for problems in (store.scan(vault.root).problems, vault.sync(full=True).problems):
        assert sorted((p.path, p.message) for p in problems) == [
            ("notes/0.md", "duplicate id m-dup (also in memories/global/0.md); this copy is ignored" + HINT),
            ("trash/0.md", "duplicate id m-dup (also in memories/global/0.md); this copy is ignored" + HINT),
        ]


def test_tags_by_the_ten_thousand_do_not_stall_maintain(make_vault: Callable[..., Vault]) -> None:
    import time

    tags = "tags: [" + ", ".join(f"t{n}" for n in range(20_000)) + "]"
    vault = make_vault({"memories/global/tags.md": f"---\nid: m-tags\ntitle: Tags\ntype: fact\n{tags}\n---\nx\n"})
    vault, problems = synced(vault)
    assert not problems
    started = time.perf_counter()
    vault.maintain()
    assert time.perf_counter() - started < 20  # planning tag variants pairwise took minutes


@pytest.mark.slow
def test_cli_warnings_are_single_printable_lines_whatever_the_file_names(
        make_vault: Callable[..., Vault], memvault_proc: Run) -> None:
    vault = make_vault({"memories/global/ok.md": "---\nid: m-ok\ntitle: Ok\ntype: fact\n---\nfine\n"})
    notes = vault.root / "notes"
    names = ["a\rb.md", "c\u2028d.md", "e\x0bf.md", "esc\x1b[31mred.md", "new\nline.md", "bell\x07.md"]
    for name in names:
        (notes / name).parent.mkdir(exist_ok=True)
        (notes / name).write_text("---\nid: [oops\n---\n")
    os.symlink("self.md", vault.root / "notes" / "self.md")
    with open(os.fsencode(notes) + b"/latin-\xe9.md", "wb") as handle:
        handle.write(b"# x\n")
    for args in (["sync"], ["sync", "--json"], ["status"]):
        proc = memvault_proc("--vault", str(vault.root), *args, timeout=120)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr + proc.stdout, proc.stderr
        text = proc.stderr if args == ["sync"] else proc.stdout
        warnings = [line for line in text.split("\n") if "notes/" in line]
        assert len(warnings) == len(names) + 2, text
        for line in warnings:
            assert len(line.splitlines()) == 1 and not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in line)
    document = json.loads(memvault_proc("--vault", str(vault.root), "sync", "--json").stdout)
    assert any("notes/esc\\x1b[31mred.md:" in line for line in document["invalid"])
