"""The detail tier: made once by the language model, cached under .memvault/ (never in the file), remade when the
body changes."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from vault_engine.cli import cli
from vault_engine.errors import LlmUnavailable
from vault_engine.format.memory import memory_text, split_detail
from vault_engine.index import details
from vault_engine.index.fakes import HashEmbedder
from vault_engine.ingest.detail import detail
from vault_engine.llm.fakes import UnusedLlm
from vault_engine.server.mcp import call_tool
from vault_engine.server.service import MemoryService
from vault_engine.store import create_vault
from vault_engine.vault import NewMemory, Vault

BODY = ("Deploys run from the main branch.\n\nThe release job tags the commit. Then it builds the image.\n"
        "Staging gets it first. Production follows after a manual approval.\n")


class CountingLlm(UnusedLlm):
    """A fake model that answers ``detail`` with a fixed text and counts its calls."""

    def __init__(self, answer: str = "First sentence. Second sentence. Third sentence.", fail: bool = False):
        self.answer = answer
        self.fail = fail
        self.calls: list[str] = []

    def detail(self, text: str) -> str:
        self.calls.append(text)
        if self.fail:
            raise LlmUnavailable("model down")
        return self.answer


# Commits need an author; the machine running the tests may have none configured.
AUTHOR = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
          "GIT_COMMITTER_EMAIL": "t@example.com"}


def git(where: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **AUTHOR})
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


def add(vault: Vault, text: str = BODY) -> tuple[str, Path]:
    result = vault.add(NewMemory(text=text, title="Deploys"))
    return result.id, vault.root / result.path


def test_the_first_request_asks_the_model_and_caches_the_answer(vault: Vault) -> None:
    memory_id, path = add(vault)
    before = path.read_bytes()
    events = len(list(vault.journal.events()))
    llm = CountingLlm()
    made = detail(vault, memory_id, llm)
    assert (made.text, made.cached, made.saved) == (llm.answer, False, True)
    assert llm.calls == [BODY.strip()]
    assert path.read_bytes() == before  # the memory's file is not touched
    assert len(list(vault.journal.events())) == events  # nor is the journal: a read is not a change
    assert details.cached(vault.root, memory_id, BODY.strip()) == llm.answer
    again = detail(vault, memory_id, llm)
    assert (again.text, again.cached, again.saved) == (llm.answer, True, False)
    assert len(llm.calls) == 1  # the second request makes no model call


def test_a_changed_body_makes_the_detail_again(vault: Vault) -> None:
    memory_id, path = add(vault)
    llm = CountingLlm()
    detail(vault, memory_id, llm)
    text = path.read_text(encoding="utf-8").replace("manual approval", "second approval")
    path.write_text(text, encoding="utf-8")
    llm.answer = "Changed one. Changed two. Changed three."
    made = detail(vault, memory_id, llm)
    assert not made.cached and made.text == "Changed one. Changed two. Changed three."
    assert len(llm.calls) == 2 and "second approval" in llm.calls[1]
    assert "## Detail" not in path.read_text(encoding="utf-8")
    assert detail(vault, memory_id, llm).cached and len(llm.calls) == 2


def test_the_cached_detail_is_not_part_of_what_the_memory_states(vault: Vault) -> None:
    memory_id, _ = add(vault)
    detail(vault, memory_id, CountingLlm())
    assert memory_text(vault.entry(memory_id).memory) == BODY.strip()
    again = vault.add(NewMemory(text=BODY, title="Deploys"))
    assert not again.created and again.id == memory_id  # the same text is still recognised


def test_a_model_failure_writes_nothing(vault: Vault) -> None:
    memory_id, path = add(vault)
    before = path.read_bytes()
    with pytest.raises(LlmUnavailable, match="model down"):
        detail(vault, memory_id, CountingLlm(fail=True))
    assert path.read_bytes() == before
    assert details.cached(vault.root, memory_id, BODY.strip()) is None


def test_a_plain_note_is_summarised_but_never_rewritten(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault({"notes/plain.md": "# Plain\n\nA note without frontmatter. It has two sentences.\n"})
    [note] = [e for e in vault.scan().entries.values() if e.memory.plain]
    before = (vault.root / note.path).read_bytes()
    made = detail(vault, note.memory.id, CountingLlm())
    assert made.saved and made.text
    assert (vault.root / note.path).read_bytes() == before


def test_show_depth_1_shows_the_detail_and_depth_0_asks_no_model(vault: Vault) -> None:
    memory_id, path = add(vault)
    runner = CliRunner()
    shallow = runner.invoke(cli, ["--vault", str(vault.root), "show", memory_id, "--depth", "0"])
    assert shallow.exit_code == 0 and "detail:" not in shallow.stdout
    assert "## Detail" not in path.read_text(encoding="utf-8")
    deep = runner.invoke(cli, ["--vault", str(vault.root), "show", memory_id, "--json"])
    assert deep.exit_code == 0, deep.output
    data = json.loads(deep.stdout)
    assert data["detail"] and data["detail"].startswith("Deploys run from the main branch.")
    assert "## Detail" not in path.read_text(encoding="utf-8")
    full = runner.invoke(cli, ["--vault", str(vault.root), "show", memory_id, "--depth", "2", "--json"])
    assert json.loads(full.stdout)["body"] == BODY  # the body shown is the raw content, detail aside


def legacy_section(raw: str, text: str) -> str:
    """``raw`` followed by the ``## Detail`` section older releases wrote into a memory's file."""
    separator = "" if not raw else ("\n" if raw.endswith("\n") else "\n\n")
    digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()
    return f"{raw}{separator}## Detail\n\n<!-- memvault:detail sha256:{digest} chars:{len(raw)} -->\n{text}\n"


@pytest.mark.parametrize("raw", ["ends mid-line without a newline", "two\n\nparagraphs\n", "trailing blank\n\n\n", ""])
def test_the_raw_body_comes_back_byte_for_byte(raw: str) -> None:
    body = legacy_section(raw, "One. Two. Three.")
    assert split_detail(body) == (raw, "One. Two. Three.", True)


def test_an_edited_body_makes_the_cached_detail_stale() -> None:
    body = legacy_section("The original text.", "One. Two. Three.").replace("original", "edited")
    assert split_detail(body) == ("The edited text.\n", "One. Two. Three.", False)


def test_reads_leave_a_git_vault_clean_and_ask_the_model_once_per_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which("git") is None:
        pytest.fail("this test runs real git: install git and put it on PATH")
    root = tmp_path / "vault"
    create_vault(root, git=True)
    memory_id, path = add(Vault(root))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a vault")
    before = path.read_bytes()
    llm = CountingLlm()
    monkeypatch.setattr("vault_engine.llm.select.select", lambda *args, **kwargs: llm)

    def show() -> dict[str, object]:
        shown = CliRunner().invoke(cli, ["--vault", str(root), "show", memory_id, "--depth", "1", "--json"])
        assert shown.exit_code == 0, shown.output
        return dict(json.loads(shown.stdout))

    assert show()["detail"] == llm.answer and len(llm.calls) == 1
    assert git(root, "status", "--porcelain") == "" and path.read_bytes() == before
    assert show()["detail"] == llm.answer and len(llm.calls) == 1  # the second read makes no model call

    service = MemoryService(Vault(root, auto_sync=True, embedder=HashEmbedder()), source="tool:mcp")
    try:
        outcome = call_tool(service, "memory_read", {"id": memory_id})  # depth 1 by default
        assert not outcome.is_error, outcome.text
        assert outcome.structured["detail"] == llm.answer and len(llm.calls) == 1
        assert git(root, "status", "--porcelain") == "" and path.read_bytes() == before

        edited = path.read_text(encoding="utf-8").replace("manual approval", "second approval")
        path.write_text(edited, encoding="utf-8")
        git(root, "commit", "-q", "-am", "an edit")
        edited_bytes = path.read_bytes()
        llm.answer = "Edited one. Edited two. Edited three."
        outcome = call_tool(service, "memory_read", {"id": memory_id})
        assert outcome.structured["detail"] == llm.answer  # the edited text gets a new detail
        assert len(llm.calls) == 2 and "second approval" in llm.calls[1]
        assert git(root, "status", "--porcelain") == "" and path.read_bytes() == edited_bytes
    finally:
        service.close()
    assert show()["detail"] == llm.answer and len(llm.calls) == 2


def test_a_detail_section_an_older_release_wrote_is_read_and_never_rewritten(vault: Vault) -> None:
    memory_id, path = add(vault)
    text = path.read_text(encoding="utf-8")
    head, body = text[: text.index(BODY)], text[text.index(BODY):]
    assert body == BODY
    path.write_text(head + legacy_section(BODY, "Old one. Old two. Old three."), encoding="utf-8")
    before = path.read_bytes()
    made = detail(vault, memory_id, UnusedLlm())  # current: no model call
    assert (made.text, made.cached) == ("Old one. Old two. Old three.", True)
    assert path.read_bytes() == before

    path.write_text(path.read_text(encoding="utf-8").replace("manual approval", "second approval"),
                    encoding="utf-8")
    stale = path.read_bytes()
    llm = CountingLlm()
    made = detail(vault, memory_id, llm)  # stale: made again from the text before the section, kept aside
    assert (made.text, made.cached, made.saved) == (llm.answer, False, True)
    assert "second approval" in llm.calls[0] and "Old one" not in llm.calls[0]
    assert path.read_bytes() == stale
    assert detail(vault, memory_id, llm).cached and len(llm.calls) == 1


@pytest.mark.parametrize("content", [b"", b"not json", b"[1, 2]", b'{"sha256": 7, "text": "x"}',
                                     b'{"sha256": "0000", "text": "Wrong digest."}', b"\xff\xfe"])
def test_an_unreadable_cache_entry_is_made_again(vault: Vault, content: bytes) -> None:
    memory_id, _ = add(vault)
    entry = vault.root / ".memvault" / "details" / f"{memory_id}.json"
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_bytes(content)
    llm = CountingLlm()
    made = detail(vault, memory_id, llm)
    assert (made.text, made.cached, made.saved) == (llm.answer, False, True)
    assert detail(vault, memory_id, llm).cached and len(llm.calls) == 1


def test_a_cache_that_cannot_be_written_still_answers(vault: Vault) -> None:
    memory_id, _ = add(vault)
    (vault.root / ".memvault").mkdir(exist_ok=True)
    (vault.root / ".memvault" / "details").write_text("a file where the folder should be", encoding="utf-8")
    llm = CountingLlm()
    made = detail(vault, memory_id, llm)
    assert (made.text, made.cached, made.saved) == (llm.answer, False, False)


def test_a_memory_without_raw_content_is_summarised_from_its_summary(vault: Vault) -> None:
    memory_id, path = add(vault)
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: text.index(BODY)], encoding="utf-8")  # the frontmatter alone
    memory = vault.entry(memory_id).memory
    assert memory.body.strip() == "" and memory.summary
    llm = CountingLlm()
    assert detail(vault, memory_id, llm).text == llm.answer
    assert llm.calls == [memory.summary]


def test_sync_drops_the_detail_of_a_purged_memory(vault: Vault) -> None:
    synced = Vault(vault.root, auto_sync=True, embedder=HashEmbedder())
    kept_id, _ = add(synced)
    purged_id, _ = add(synced, "The staging database is reset every night at two.\n")
    for memory_id in (kept_id, purged_id):
        detail(synced, memory_id, CountingLlm())
    folder = vault.root / ".memvault" / "details"
    assert sorted(p.name for p in folder.iterdir()) == sorted([f"{kept_id}.json", f"{purged_id}.json"])
    synced.forget(purged_id, permanent=True)
    assert [p.name for p in folder.iterdir()] == [f"{kept_id}.json"]
    (folder / "m-gone.json").write_text("{}", encoding="utf-8")  # left by a memory deleted outside memvault
    synced.sync()
    assert [p.name for p in folder.iterdir()] == [f"{kept_id}.json"]
