"""``memvault ingest-doc`` and ``memvault remember-output`` through click's CliRunner."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from vault_engine.cli import cli
from vault_engine.llm.fakes import UnreachableLlm
from vault_engine.vault import Vault

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
DOC = "".join(
    f"## Section {n}\n\nThe release process step {n} tags the build and pushes the chart. "
    f"Reviewers check the changelog before step {n + 1}.\n\n"
    for n in range(1, 40)
)


@pytest.fixture(autouse=True)
def no_sync(monkeypatch: pytest.MonkeyPatch) -> None:
    """Writes here do not load the embedding model (one test below turns syncing back on)."""
    monkeypatch.setenv("MEMVAULT_VAULT_AUTO_SYNC", "false")


def run(vault: Vault, *args: str, input: str | bytes | None = None) -> Result:
    return CliRunner().invoke(cli, ["--vault", str(vault.root), *args], input=input, catch_exceptions=False)


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def assert_one_error(result: Result, *fragments: str, code: int = 1) -> str:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output and "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


def documents(vault: Vault) -> list[Path]:
    return sorted((vault.root / "episodes").rglob("*.md"))


def snapshot(vault: Vault) -> dict[str, bytes]:
    return {p.relative_to(vault.root).as_posix(): p.read_bytes() for p in sorted(vault.root.rglob("*"))
            if p.is_file() and ".memvault" not in p.relative_to(vault.root).parts}


# ---------------------------------------------------------------- ingest-doc


def test_ingest_doc_prints_one_line_per_part_then_is_a_no_op(vault: Vault, tmp_path: Path) -> None:
    source = tmp_path / "release.md"
    source.write_text(DOC, encoding="utf-8")
    result = run(vault, "ingest-doc", str(source), "--chunk-size", "800", "--overlap", "80")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == len(documents(vault)) > 3
    for line in lines:
        memory_id, path, title = line.split("  ", 2)
        assert memory_id.startswith("m-") and (vault.root / path).is_file() and title
    before = snapshot(vault)
    again = run(vault, "ingest-doc", source.as_uri())  # the same file as a file:// URI
    assert again.exit_code == 0, again.output
    assert again.stdout.startswith("already ingested: ")
    assert all(line.split("  ", 1)[0] in again.stdout for line in lines)
    assert snapshot(vault) == before
    assert source.read_text(encoding="utf-8") == DOC  # the input is never touched


def test_ingest_doc_json_from_stdin_with_a_project(vault: Vault) -> None:
    data = as_json(run(vault, "ingest-doc", "-", "--project", "github.com/acme/api", "--json", input=DOC))
    assert data["duplicate"] is False and data["chunks"] == len(data["ids"]) == len(data["parts"]) >= 2
    assert data["source"] == "document:stdin" and data["redactions"] == 0
    assert all(p["path"].startswith("episodes/projects/github.com-acme-api/") for p in data["parts"])
    assert [p["part"] for p in data["parts"]] == [f"{i}/{data['chunks']}" for i in range(1, data["chunks"] + 1)]
    shown = as_json(run(vault, "show", data["ids"][1], "--depth", "1", "--json"))
    assert [link["id"] for link in shown["links"]] == [data["ids"][0], data["ids"][2]] if data["chunks"] > 2 \
        else [data["ids"][0]]


def test_ingest_doc_source_and_redaction(vault: Vault, tmp_path: Path) -> None:
    source = tmp_path / "notes.txt"
    source.write_text(f"Our CI token is {SECRET} for now.\n\nRotate it monthly.\n", encoding="utf-8")
    result = run(vault, "ingest-doc", str(source), "--source", "document:wiki/ci")
    assert result.exit_code == 0, result.output
    assert result.stderr == "redacted 1 secret before writing\n"
    data = as_json(run(vault, "ingest-doc", str(source), "--json"))  # the same content: the parts stored
    assert data["duplicate"] is True and data["source"] == "document:wiki/ci" and data["redactions"] == 1
    assert all(SECRET.encode() not in blob for blob in snapshot(vault).values())
    events = [json.loads(line) for p in vault.journal.files() for line in p.read_text().splitlines()]
    assert [e["payload"]["redactions"] for e in events if e["memory"] in data["ids"]] == [1]


@pytest.mark.parametrize(
    ("argument", "fragments"),
    [
        ("https://example.com/doc.md", ("only local files", "https")),
        ("s3://bucket/doc.md", ("only local files", "s3")),
        ("file://otherhost/doc.md", ("only local files", "otherhost")),
        ("{tmp}/missing.md", ("missing.md", "cannot read file")),
        ("{tmp}", ("is a folder",)),
        ("{tmp}/binary.bin", ("binary.bin", "not valid UTF-8")),
    ],
)
def test_ingest_doc_errors_are_one_line(vault: Vault, tmp_path: Path, argument: str,
                                        fragments: Sequence[str]) -> None:
    (tmp_path / "binary.bin").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00")
    before = snapshot(vault)
    assert_one_error(run(vault, "ingest-doc", argument.format(tmp=tmp_path)), *fragments)
    assert snapshot(vault) == before


def test_ingest_doc_bad_sizes_and_empty_input(vault: Vault) -> None:
    assert_one_error(run(vault, "ingest-doc", "-", "--chunk-size", "100", "--overlap", "100", input=DOC),
                     "chunk size must be larger than the overlap")
    assert_one_error(run(vault, "ingest-doc", "-", "--overlap", "-1", input=DOC), "overlap")
    assert_one_error(run(vault, "ingest-doc", "-", input="\n \n"), "empty")
    assert documents(vault) == []


def test_model_failure_is_one_line_and_writes_nothing(vault: Vault, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    def broken(*_args: object, **_kwargs: object) -> UnreachableLlm:
        return UnreachableLlm()

    monkeypatch.setattr("vault_engine.llm.select.select", broken)
    source = tmp_path / "doc.md"
    source.write_text(DOC, encoding="utf-8")
    before = snapshot(vault)
    assert_one_error(run(vault, "ingest-doc", str(source)), "timed out", code=75)
    assert_one_error(run(vault, "remember-output", "--source", "tool:x", "--min-chars", "10", input=DOC),
                     "timed out", code=75)
    assert snapshot(vault) == before
    assert source.read_text(encoding="utf-8") == DOC


# ---------------------------------------------------------------- remember-output


def test_short_output_is_printed_back_unchanged(vault: Vault) -> None:
    output = "\x1b[1;32m3 passed\x1b[0m in 0.12s\r\nno trailing newline"
    before = snapshot(vault)
    result = run(vault, "remember-output", "--source", "tool:pytest", input=output)
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == output.encode("utf-8")
    assert snapshot(vault) == before
    data = as_json(run(vault, "remember-output", "--source", "tool:pytest", "--json", input=output))
    assert data == {"stored": False, "source": "tool:pytest", "chars": len(output), "min_chars": 1500,
                    "text": output}


def test_long_output_prints_a_reference(vault: Vault) -> None:
    output = "".join(f"src/module_{i}.py:{i}: warning: unused import os\n" for i in range(80))
    result = run(vault, "remember-output", "--source", "tool:ruff", "--min-chars", "500", input=output)
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert len(text) < len(output) // 2
    memory_id = next(line[4:] for line in text.splitlines() if line.startswith("id: "))
    assert f"memvault show {memory_id} --depth 2" in text
    assert "title: " in text and "summary: " in text and "tool:ruff" in text
    shown = as_json(run(vault, "show", memory_id, "--depth", "2", "--json"))
    assert output.startswith(shown["body"][:200]) and shown["metadata"]["source"] == "tool:ruff"
    again = as_json(run(vault, "remember-output", "--source", "ruff", "--min-chars", "500", "--json", input=output))
    assert again["stored"] is True and again["duplicate"] is True and again["id"] == memory_id


def test_remember_output_usage_errors(vault: Vault) -> None:
    missing = run(vault, "remember-output", input="text")
    assert missing.exit_code == 2 and len(missing.stderr.splitlines()) == 1 and "--source" in missing.stderr
    assert_one_error(run(vault, "remember-output", "--source", "tool:", input="text"), "tool:NAME")
    assert_one_error(run(vault, "remember-output", "--source", "tool:x", input=b"\xff\xfe bad bytes"),
                     "not valid UTF-8")


# ---------------------------------------------------------------- indexes (loads the embedding model)


def test_ingest_doc_leaves_the_indexes_current(vault: Vault, monkeypatch: pytest.MonkeyPatch,
                                               run_cli: Callable[..., Result]) -> None:
    monkeypatch.delenv("MEMVAULT_VAULT_AUTO_SYNC")
    data = as_json(run_cli("ingest-doc", "-", "--json", input=DOC))
    status = as_json(run_cli("status", "--json"))
    assert str(status["index"]).startswith("current")
    hits = as_json(run_cli("search", "release process changelog reviewers", "--json"))["hits"]
    assert {h["id"] for h in hits} & set(data["ids"])


def test_a_remembered_output_is_searchable_at_once_and_a_default_search_says_it_is_there(
        vault: Vault, monkeypatch: pytest.MonkeyPatch, run_cli: Callable[..., Result]) -> None:
    monkeypatch.delenv("MEMVAULT_VAULT_AUTO_SYNC")
    run_cli("add", "Reviews happen on Thursdays.")
    output = "".join(f"FAILED tests/test_cart.py::test_case_{i} - AssertionError: quokkaberry checksum mismatch\n"
                     for i in range(60))
    reference = run_cli("remember-output", "--source", "tool:pytest", input=output)
    memory_id = next(line[4:] for line in reference.stdout.splitlines() if line.startswith("id: "))
    # Indexed by remember-output itself: no sync in between.
    asked = as_json(run_cli("search", "quokkaberry checksum", "--trust", "external", "--json"))
    assert memory_id in {hit["id"] for hit in asked["hits"]}
    # A tool's output is an external source: never a hit of a default search, but the search says it is there
    # (before: "no matches" and nothing more).
    default = run_cli("search", "quokkaberry checksum")
    assert default.exit_code == 0 and memory_id not in default.stdout
    assert "from external sources match, left out" in default.stderr and "(trust external)" in default.stderr
    data = as_json(run_cli("search", "quokkaberry checksum", "--json"))
    assert data["hits"] == [] and "from external sources match" in data["notice"]
